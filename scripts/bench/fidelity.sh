#!/usr/bin/env bash
# The fidelity table of docs/conversion.md, reproducibly:
#   1. pandoc (-t html) on every DOCX, RTF, Markdown and HTML file of the corpus, pdftotext
#      on every PDF (pandoc cannot read PDF; there is no pandoc reader for plain text);
#   2. our converter on the same files, and the same detectors applied to both outputs
#      (crates/convert/examples/fidelity.rs + crates/convert/tests/support/fidelity.rs).
#
#   scripts/bench/fidelity.sh [OUT_DIR]     # default /tmp/redline-fidelity; table in OUT_DIR/table.md
#
# Needs pandoc (Debian's 2.17 was used) and poppler-utils. A tool that fails or runs over
# 60 s on a file leaves no output for it, which counts as "feature not kept".
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
corpus="${REDLINE_CORPUS:-$root/tests/fixtures/corpus}"
out="${1:-/tmp/redline-fidelity}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
rm -rf "$out" && mkdir -p "$out/pandoc" "$out/pdftotext" "$out/ours"

tail -n +2 "$corpus/MANIFEST.tsv" | cut -f1 | while read -r name; do
    src="$corpus/$name"
    [ -f "$src" ] || continue
    mkdir -p "$out/pandoc/$(dirname "$name")" "$out/pdftotext/$(dirname "$name")"
    case "${name##*.}" in
        docx) from=docx ;;
        rtf) from=rtf ;;
        md) from=markdown ;;
        html|htm) from=html ;;
        pdf)
            ( ulimit -v 4000000; timeout 60 pdftotext -enc UTF-8 "$src" "$out/pdftotext/$name.txt" ) 2>/dev/null \
                || { echo "pdftotext failed: $name" >&2; rm -f "$out/pdftotext/$name.txt"; }
            continue ;;
        *) continue ;;
    esac
    ( ulimit -v 4000000; timeout 60 pandoc -f "$from" -t html -o "$out/pandoc/$name.html" "$src" ) 2>/dev/null \
        || { echo "pandoc failed: $name" >&2; rm -f "$out/pandoc/$name.html"; }
done

cd "$root"
cargo run --quiet --release -p redline-convert --example fidelity -- \
    --pandoc "$out/pandoc" --pdftotext "$out/pdftotext" --ours "$out/ours" | tee "$out/table.md"
echo "pandoc $(pandoc --version | head -1 | cut -d' ' -f2), $(pdftotext -v 2>&1 | head -1); table in $out/table.md" >&2

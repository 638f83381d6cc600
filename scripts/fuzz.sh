#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/, one at a time, niced, each for FUZZ_SECONDS
# (default 600) under a 2 GB RSS limit, 60 s per input. Seeds come from tests/fixtures/corpus at run time
# (copied into fuzz/corpus/<target>, which is not committed).
#
#   scripts/fuzz.sh                  # all targets, 10 minutes each
#   scripts/fuzz.sh docx pdf         # some targets
#   FUZZ_SECONDS=60 scripts/fuzz.sh  # a shorter smoke run
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
# A crash, timeout or OOM leaves its input in fuzz/artifacts/<target>/ and stops the script.
# Each target's libFuzzer log is kept in fuzz/logs/<target>.log.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
corpus_src="${REDLINE_CORPUS:-$root/tests/fixtures/corpus}"
seconds="${FUZZ_SECONDS:-600}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/../target-fuzz}"
all=(docx pdf rtf markdown html txt sections slices)
targets=("${@:-${all[@]}}")

# Inputs longer than this are cut (libFuzzer -max_len), and seeds longer are not copied:
# the fuzzers' instrumented builds (AddressSanitizer) are ~20x slower than release, and a
# 1 MB PDF then takes 5 s of CPU, which starves the search. Big files are covered by the
# corpus tests (crates/convert/tests/fidelity.rs and the per-format corpus tests).
max_len=262144

seed() {
    local target="$1" dir="$root/fuzz/corpus/$1"
    mkdir -p "$dir"
    case "$target" in
        pdf) find "$corpus_src/pdf" -type f -size -256k -exec cp -n {} "$dir"/ \; ;;
        docx|rtf|html|txt) cp -n "$corpus_src/$target"/* "$dir"/ 2>/dev/null || true ;;
        markdown) cp -n "$corpus_src/md"/* "$dir"/ 2>/dev/null || true ;;
        # The sectioner gets HTML and Markdown-ish text.
        # The slicing target reads the first byte as the slice size (an HTML file's `<`: 61 bytes).
        sections|slices) cp -n "$corpus_src/html"/* "$dir"/ 2>/dev/null || true ;;
    esac
}

cd "$root/fuzz"
mkdir -p logs
for target in "${targets[@]}"; do
    seed "$target"
    echo "== $target: ${seconds}s"
    status=0
    nice -n 19 cargo +nightly fuzz run --release "$target" "corpus/$target" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=60 -max_len="$max_len" -print_final_stats=1 \
        >"logs/$target.log" 2>&1 || status=$?
    grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb|SUMMARY)' "logs/$target.log" || true
    if [ "$status" -ne 0 ]; then
        echo "$target: failed, see fuzz/logs/$target.log and fuzz/artifacts/$target/" >&2
        exit 1
    fi
done

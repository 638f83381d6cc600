#!/usr/bin/env bash
# DOCX → HTML against `pandoc -f docx -t html`, and PDF text against poppler's `pdftotext`,
# on the corpus files, both measured in one run (docs/benchmarks.md section 5).
#
#   scripts/bench/convert_speed.sh [RUNS]     # default 10 interleaved runs per file
#
# Prints two Markdown tables and the median per-file ratios: in-process (our converter called
# in the measuring process) and as a process (crates/convert/examples/convert.rs spawned like
# the reference tool, so both pay a process start, reading the file and writing the output).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
runs="${1:-10}"
cd "$root"
cargo build --quiet --release -p redline-convert --example convert --example speed
echo "pandoc $(pandoc --version | head -1 | cut -d' ' -f2), $(pdftotext -v 2>&1 | head -1), load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$CARGO_TARGET_DIR/release/examples/speed" docx --runs "$runs"
echo
"$CARGO_TARGET_DIR/release/examples/speed" pdf --runs "$runs"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

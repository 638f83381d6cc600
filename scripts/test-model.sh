#!/usr/bin/env bash
# The real-model subset of the test command (issue 38): the evaluation's smoke tasks
# (scripts/eval/tasks, `"smoke": True`) run through Redline with a real open model,
# Qwen2.5-Coder-1.5B-Instruct served by llama.cpp's llama-server (scripts/setup-model.sh puts
# both in a cache outside the clone; the first run downloads the model and builds the server,
# about 12 minutes on 2 cores, later runs reuse them), with the default protocol for that model
# (`REDLINE_EDIT_PROTOCOL=auto`), temperature 0 and a fixed seed. It fails when fewer than
# REDLINE_MODEL_MIN_RIGHT tasks are right, or when any answer claims an edit that did not
# happen or is a raw tool call.
#
#   scripts/test-model.sh target/release/redline
#
# Environment: REDLINE_MODEL_CACHE (see setup-model.sh), REDLINE_MODEL_MIN_RIGHT (default 5 of
# the 8 smoke tasks: 6 measured, docs/benchmarks.md §11, less one, since a llama.cpp build for
# another CPU may round differently).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(realpath "${1:?usage: scripts/test-model.sh path/to/redline}")
min_right=${REDLINE_MODEL_MIN_RIGHT:-5}
cd "$root"

eval "$(scripts/setup-model.sh 1.5b)"
served=$(scripts/serve-model.sh start --model 1.5b --port auto)
eval "$served"
trap 'scripts/serve-model.sh stop --port "${LLAMA_SERVER_URL##*:}" >/dev/null 2>&1 || true' EXIT

out=$(mktemp -d)/eval.json
if ! python3 scripts/eval/run.py --redline-bin "$bin" --model-url "$LLAMA_SERVER_URL/v1" \
        --model qwen2.5-coder-1.5b --protocols auto --no-baseline --tasks smoke \
        --min-right "$min_right" --out "$out"; then
    echo "test-model: the real-model subset failed; each model call is in ${out}.logs/proxy.jsonl" >&2
    exit 1
fi

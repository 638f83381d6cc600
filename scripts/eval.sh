#!/usr/bin/env bash
# The evaluation of the editing loop with the repository's open model, in one command
# (issue 38): sets up the model and llama-server (scripts/setup-model.sh; cached outside the
# clone), serves the model on a free port, runs scripts/eval/run.py against the release binary
# with the arguments given, and stops the server.
#
#   scripts/eval.sh [--model 1.5b|0.5b] [run.py arguments…]
#   scripts/eval.sh --tasks all --out eval-1.5b.json          # Redline (auto) and the baseline
#   scripts/eval.sh --model 0.5b --protocols auto,tools --no-baseline --tasks smoke
#
# Builds target/release/redline first when it is missing (cargo build --release). For another
# OpenAI-compatible endpoint, run scripts/eval/run.py directly (README.md, "Connecting a real
# model").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
model=1.5b
if [ "${1:-}" = --model ]; then
    model=${2:?--model needs 1.5b or 0.5b}
    shift 2
fi
bin=${CARGO_TARGET_DIR:-$root/target}/release/redline
[ -x "$bin" ] || cargo build --release -p redline-app
python3 -c "import requests" 2>/dev/null || python3 -m pip install -q -r scripts/eval/requirements.txt
eval "$(scripts/setup-model.sh "$model")"
eval "$(scripts/serve-model.sh start --model "$model" --port auto)"
trap 'scripts/serve-model.sh stop --port "${LLAMA_SERVER_URL##*:}" >/dev/null 2>&1 || true' EXIT
python3 scripts/eval/run.py --redline-bin "$bin" --model-url "$LLAMA_SERVER_URL/v1" \
    --model "qwen2.5-coder-$model" --protocols auto "$@"

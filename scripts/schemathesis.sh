#!/usr/bin/env bash
# Tests the service against its own OpenAPI document with Schemathesis: every phase
# (examples, coverage, fuzzing, and stateful runs along the document's links), a fixed seed
# and a bounded number of cases, so a run takes a few minutes and repeats. Any finding (a
# server error, a status, header or body the document does not describe, invalid data
# accepted) fails it.
#
#   scripts/schemathesis.sh [path/to/redline]
#
# The binary defaults to the release build. The service runs on a free local port with a
# throw-away data directory (SQLite, local files, mail to an outbox folder, the offline
# `builtin` model). Settings: scripts/schemathesis.toml. Environment:
#   SCHEMATHESIS_SEED          the seed (default 20240601)
#   SCHEMATHESIS_MAX_EXAMPLES  cases per operation and phase (default 250)
#   SCHEMATHESIS_REPORT_DIR    where the JUnit report and the server's log go
#                              (default: a temporary folder, removed on success)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
target=${CARGO_TARGET_DIR:-$root/target}
bin=${1:-$target/release/redline}
seed=${SCHEMATHESIS_SEED:-20240601}
max_examples=${SCHEMATHESIS_MAX_EXAMPLES:-250}

[ -x "$bin" ] || { echo "schemathesis: no binary at $bin (cargo build --release -p redline-app)" >&2; exit 2; }
if [ ! -x .venv/bin/schemathesis ]; then
  [ -x .venv/bin/pip ] || python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check -r scripts/requirements-openapi.txt
fi

work=$(mktemp -d)
report=${SCHEMATHESIS_REPORT_DIR:-$work/report}
mkdir -p "$report"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base=http://127.0.0.1:$port

REDLINE_BIND=127.0.0.1:$port REDLINE_DATA_DIR=$work/data REDLINE_SIGNUP_COOLDOWN_SECS=0 \
  REDLINE_PUBLIC_BASE_URL=$base "$bin" serve >"$report/server.log" 2>&1 &
server=$!
finish() {
  status=$?
  kill "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
  if [ "$status" = 0 ] && [ -z "${SCHEMATHESIS_REPORT_DIR:-}" ]; then
    rm -rf "$work"
  else
    rm -rf "$work/data"
    echo "schemathesis: the report and the server's log are in $report" >&2
  fi
  exit "$status"
}
trap finish EXIT

for _ in $(seq 1 100); do
  curl -fsS "$base/healthz" >/dev/null 2>&1 && break
  kill -0 "$server" 2>/dev/null || { cat "$report/server.log" >&2; exit 1; }
  sleep 0.1
done

# A field of a JSON answer, or a failure that shows the answer.
field() { python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
post() { curl -fsS -X POST -H 'Content-Type: application/json' -d "$2" "$base$1"; }

# The credentials of both security schemes (scripts/schemathesis.toml uses them).
REDLINE_TEST_API_KEY=$(post /v1/agents/signup '{"name": "schemathesis"}' | field api_key)
REDLINE_TEST_EMAIL=schemathesis@example.com
REDLINE_TEST_PASSWORD=correct-horse-battery
post /v1/auth/signup "{\"email\": \"$REDLINE_TEST_EMAIL\", \"password\": \"$REDLINE_TEST_PASSWORD\"}" >/dev/null
export REDLINE_TEST_API_KEY REDLINE_TEST_EMAIL REDLINE_TEST_PASSWORD

started=$(date +%s)
set +e
# From the temporary folder: Hypothesis keeps a `.hypothesis` folder in the working directory.
# One worker: with two, Hypothesis parses lambda sources from two threads at once and CPython
# 3.11's `ast` can fail with "AST constructor recursion depth mismatch", a runtime error of the
# tool that would fail the run with no finding about the service.
(cd "$work" && "$root/.venv/bin/schemathesis" --config-file "$root/scripts/schemathesis.toml" run "$base/openapi.json" \
  --phases examples,coverage,fuzzing,stateful \
  --seed "$seed" \
  --max-examples "$max_examples" \
  --workers 1 \
  --request-timeout 30 \
  --report junit --report-dir "$report" \
  --output-truncate false)
status=$?
set -e
echo "schemathesis: seed $seed, $max_examples cases per operation, $(($(date +%s) - started)) s, exit $status"
exit "$status"

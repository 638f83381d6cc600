#!/usr/bin/env bash
# Checks that a client generated from the OpenAPI document works: openapi-python-client
# generates it from docs/openapi.json (any warning of the generator fails the check), and
# scripts/openapi-client/use_client.py uses it against the service to sign up an agent,
# upload a document and chat with the offline `builtin` model.
#
#   scripts/openapi-client-check.sh [path/to/redline]
#
# The binary defaults to the release build; it runs on a free local port with a throw-away
# data directory.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
target=${CARGO_TARGET_DIR:-$root/target}
bin=${1:-$target/release/redline}

[ -x "$bin" ] || { echo "openapi-client: no binary at $bin (cargo build --release -p redline-app)" >&2; exit 2; }
if [ ! -x .venv/bin/openapi-python-client ]; then
  [ -x .venv/bin/pip ] || python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check -r scripts/requirements-openapi.txt
fi

work=$(mktemp -d)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base=http://127.0.0.1:$port
server=
finish() {
  status=$?
  [ -n "$server" ] && { kill "$server" 2>/dev/null && wait "$server" 2>/dev/null || true; }
  [ "$status" = 0 ] || { echo "openapi-client: the server's log:" >&2; tail -n 30 "$work/server.log" >&2 || true; }
  rm -rf "$work"
  exit "$status"
}
trap finish EXIT

echo "== generating the client from docs/openapi.json"
.venv/bin/openapi-python-client generate --path docs/openapi.json --meta none \
  --config scripts/openapi-client/config.yaml --output-path "$work/client/redline_client" --fail-on-warning
.venv/bin/python -m compileall -q "$work/client/redline_client"

echo "== using it against $bin"
REDLINE_BIND=127.0.0.1:$port REDLINE_DATA_DIR=$work/data REDLINE_SIGNUP_COOLDOWN_SECS=0 \
  REDLINE_PUBLIC_BASE_URL=$base "$bin" serve >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do
  curl -fsS "$base/healthz" >/dev/null 2>&1 && break
  kill -0 "$server" 2>/dev/null || exit 1
  sleep 0.1
done
PYTHONPATH=$work/client .venv/bin/python scripts/openapi-client/use_client.py "$base"

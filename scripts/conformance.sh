#!/usr/bin/env bash
# Runs the black-box conformance suite (../shared/conformance) against a redline binary.
#   scripts/conformance.sh [path/to/redline] [extra pytest args…]
# Tests listed in tests/conformance-deselect.txt are deselected (each line says why).
# REDLINE_CONFORMANCE_ENV may hold extra server variables (e.g. a PostgreSQL URL).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
suite=${REDLINE_CONFORMANCE_DIR:-$root/../shared/conformance}
bin=${1:-${CARGO_TARGET_DIR:-$root/target}/release/redline}
shift || true
bin=$(realpath -m "$bin")
[ -x "$bin" ] || { echo "conformance: no redline binary at $bin (build with cargo build --release)" >&2; exit 2; }
[ -d "$suite" ] || { echo "conformance: suite not found at $suite" >&2; exit 2; }

venv=$root/.venv
[ -x "$venv/bin/pip" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$suite/requirements.txt"

args=()
while IFS= read -r line; do
  id=${line%%#*}
  id=$(echo "$id" | sed -e 's/[[:space:]]*$//' -e 's/^[[:space:]]*//')
  [ -n "$id" ] && args+=(--deselect "$id")
done < "$root/tests/conformance-deselect.txt"

# The suite's e-mailed exports go to fresh addresses from agent keys: Redline mails only an
# account's own (or its organization members') addresses by default, so the suite's servers
# run with the operator's setting that allows any (docs/api.md, "Export by e-mail").
REDLINE_CONFORMANCE_ENV=$(REDLINE_CONFORMANCE_ENV=${REDLINE_CONFORMANCE_ENV:-} python3 -c '
import json, os
env = json.loads(os.environ["REDLINE_CONFORMANCE_ENV"] or "{}")
env.setdefault("REDLINE_EXPORT_MAIL_TO", "any")
print(json.dumps(env))')
export REDLINE_CONFORMANCE_ENV

cd "$suite"
set +e
REDLINE_BIN=$bin "$venv/bin/pytest" -q -p no:cacheprovider "${args[@]}" "$@" .
status=$?
set -e
# 5 = every test deselected: nothing failed, but say so loudly.
if [ $status -eq 5 ]; then echo "conformance: no test was selected" >&2; exit 0; fi
exit $status

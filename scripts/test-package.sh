#!/usr/bin/env bash
# Tests the Debian package on this machine (root only: it installs it): dpkg -i, the unit
# file's command line serves /readyz as the redline user, dpkg --purge keeps the data
# folder. Usage: scripts/test-package.sh target/release/redline
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
binary=${1:?usage: test-package.sh <redline binary>}
if [ "$(id -u)" != 0 ] || ! command -v dpkg >/dev/null 2>&1; then
  if [ "${CI:-false}" = true ]; then echo "package: CI=true needs root and dpkg" >&2; exit 1; fi
  printf '\n!! package: SKIPPED (needs root and dpkg to install the package)\n\n' >&2
  exit 0
fi
fail() { echo "package: FAILED: $*" >&2; exit 1; }
if dpkg -s redline >/dev/null 2>&1; then fail "a redline package is installed already; remove it first"; fi
deb=$("$root/scripts/package-deb.sh" "$binary" "$(mktemp -d)")
echo "   package: built $(basename "$deb") ($(du -h "$deb" | cut -f1))"
unit=/lib/systemd/system/redline.service
cleanup() { pkill -u redline -x redline 2>/dev/null || true; dpkg --purge redline >/dev/null 2>&1 || true; }
trap cleanup EXIT
dpkg -i "$deb" >/dev/null
[ -x /usr/bin/redline ] || fail "/usr/bin/redline is missing"
[ -f "$unit" ] || fail "$unit is missing"
getent passwd redline >/dev/null || fail "the redline user was not made"
[ "$(stat -c %U /var/lib/redline)" = redline ] || fail "/var/lib/redline does not belong to redline"
if command -v systemd-analyze >/dev/null 2>&1; then
  systemd-analyze verify "$unit" 2>&1 | grep -v -e 'Failed to ' -e 'not found' -e 'Unit .* not found' >&2 || true
fi
for setting in 'User=redline' 'StateDirectory=redline' 'ProtectSystem=strict' 'NoNewPrivileges=yes'; do
  grep -qx "$setting" "$unit" || fail "the unit lacks $setting"
done

# The unit's command line, its environment and its user, as systemd would run it.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
workdir=$(sed -n 's/^WorkingDirectory=//p' "$unit")
mapfile -t unit_env < <(sed -n 's/^Environment=//p' "$unit")
log=$(mktemp)
(cd "$workdir" && runuser -u redline -- env -i PATH=/usr/bin:/bin "${unit_env[@]}" "REDLINE_BIND=127.0.0.1:$port" $exec_start >"$log" 2>&1) &
for _ in $(seq 1 100); do
  if curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then break; fi
  sleep 0.1
done
curl -fsS "http://127.0.0.1:$port/readyz" | grep -q '"ready"' || { cat "$log" >&2; fail "/readyz did not answer ready"; }
curl -fsS -X POST "http://127.0.0.1:$port/v1/agents/signup" -H 'content-type: application/json' -d '{}' | grep -q api_key \
  || fail "a signup did not work"
[ -f /var/lib/redline/redline.db ] || fail "the database is not in the state directory"
pkill -TERM -u redline -x redline
for _ in $(seq 1 100); do pgrep -u redline -x redline >/dev/null || break; sleep 0.1; done
! pgrep -u redline -x redline >/dev/null || fail "SIGTERM did not stop the service"

dpkg --purge redline >/dev/null
[ ! -e /usr/bin/redline ] || fail "purge left /usr/bin/redline"
[ ! -e /etc/redline/redline.env ] || fail "purge left the configuration"
[ -f /var/lib/redline/redline.db ] || fail "purge removed the data folder"
echo "   package: installs, serves /readyz as redline from the unit's command line, purges keeping /var/lib/redline"
rm -rf /var/lib/redline
trap - EXIT

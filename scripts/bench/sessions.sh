#!/usr/bin/env bash
# Loopback benchmark of docs/benchmarks.md §1 (foundation issue): authenticated
# `GET /v1/sessions` (a key with three sessions, SQLite) against unauthenticated `/healthz`,
# with wrk at 32 connections, alternating the two endpoints; then the server's idle RSS.
#
# Usage: scripts/bench/sessions.sh path/to/redline [seconds per run, default 20] [pairs, default 3]
# Needs wrk and curl (Debian: apt-get install wrk curl). The server and wrk run at nice -20
# when the script runs as root, so that other work on the machine disturbs them less.
set -euo pipefail
bin=$(realpath "$1")
secs=${2:-20}
pairs=${3:-3}
port=${REDLINE_BENCH_PORT:-18181}
base=http://127.0.0.1:$port
nice=()
[ "$(id -u)" = 0 ] && nice=(nice -n -20)

tmp=$(mktemp -d)
cp "$bin" "$tmp/redline" # a concurrent build cannot replace the binary under test
REDLINE_BIND=127.0.0.1:$port REDLINE_DATA_DIR=$tmp/data REDLINE_LOG=${REDLINE_LOG:-warn} \
  "${nice[@]}" "$tmp/redline" serve >"$tmp/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 1 100); do curl -fs "$base/healthz" >/dev/null && break; sleep 0.1; done
rss() { awk '/VmRSS/ {print $2/1024 " MB"}' "/proc/$pid/status"; }
echo "RSS after start: $(rss)"

key=$(curl -fs -XPOST "$base/v1/agents/signup" -H 'content-type: application/json' -d '{}' |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["api_key"])')
for s in s-alpha s-beta s-gamma; do
  curl -fs -XPUT "$base/v1/documents/$s" -H "Authorization: Bearer $key" \
    -H 'content-type: application/json' \
    -d '{"html":"<h1>Title</h1><p>One paragraph of text.</p><p>Another one.</p>"}' >/dev/null
done
echo "sessions: $(curl -fs "$base/v1/sessions" -H "Authorization: Bearer $key" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')"
echo "RSS after the first requests: $(rss)"

cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; } # utime + stime, clock ticks
run() {
  local name=$1
  shift
  local before after
  before=$(cpu)
  local out
  out=$("${nice[@]}" wrk -t2 -c32 -d"${secs}s" --latency "$@")
  after=$(cpu)
  local rps
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  local n
  n=$(awk '/requests in/ {print $1}' <<<"$out")
  printf '%-12s req/s %10s  p50 %8s  p99 %8s  max %8s  server CPU/request %s µs%s\n' "$name" "$rps" \
    "$(awk '$1=="50%" {print $2}' <<<"$out")" "$(awk '$1=="99%" {print $2}' <<<"$out")" \
    "$(awk '/Latency/ && !/Distribution/ {print $4}' <<<"$out")" \
    "$(awk -v a="$after" -v b="$before" -v n="$n" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.0f", (a-b)/hz/n*1e6}')" \
    "$(grep -q 'Non-2xx' <<<"$out" && echo '  (NON-2xx answers!)' || true)"
  echo "$rps" >>"$tmp/$name"
}
for i in $(seq 1 "$pairs"); do
  run healthz "$base/healthz"
  sleep 2
  run sessions -H "Authorization: Bearer $key" "$base/v1/sessions"
  sleep 2
done
python3 - "$tmp" <<'EOF'
import statistics, sys
h = [float(x) for x in open(sys.argv[1] + "/healthz")]
s = [float(x) for x in open(sys.argv[1] + "/sessions")]
print(f"median healthz {statistics.median(h):.0f} req/s, sessions {statistics.median(s):.0f} req/s: "
      f"ratio of medians {statistics.median(s) / statistics.median(h):.1%}; "
      "per pair " + ", ".join(f"{b / a:.1%}" for a, b in zip(h, s)))
EOF
sleep 10
echo "RSS 10 s after the load: $(rss)"

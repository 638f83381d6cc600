#!/usr/bin/env bash
# Loopback benchmark of docs/benchmarks.md §10: authenticated `GET /v1/sessions` (a key with
# three sessions) on one PostgreSQL replica against the same request on SQLite, with wrk at
# 32 connections, alternating the two servers (the same binary) within one run.
#
# Usage: scripts/bench/sessions_pg.sh path/to/redline [seconds per run, default 20] [pairs, default 3]
# Needs wrk, curl and psql (Debian: apt-get install wrk curl postgresql-client) and PostgreSQL
# at REDLINE_BENCH_PG (default postgres://postgres@127.0.0.1:5432), where the script makes a
# fresh database and drops it at the end. The servers and wrk run at nice -20 as root, and
# so does a local PostgreSQL server's autogroup for the run (set back at the end): at normal
# priority beside them it is starved, and a list read that misses the cache waits for it
# (seconds, when the pool opens a connection).
set -euo pipefail
bin=$(realpath "$1")
secs=${2:-20}
pairs=${3:-3}
pg=${REDLINE_BENCH_PG:-postgres://postgres@127.0.0.1:5432}
sqlite_port=${REDLINE_BENCH_PORT:-18181}
pg_port=$((sqlite_port + 1))
nice=()
[ "$(id -u)" = 0 ] && nice=(nice -n -20)

tmp=$(mktemp -d)
dbname=redline_bench_$$
cp "$bin" "$tmp/redline" # a concurrent build cannot replace the binary under test
psql "$pg/postgres" -qc "CREATE DATABASE $dbname" >/dev/null
pids=()
pg_group= pg_nice=
postmaster=$(pgrep -o -x postgres || true)
if [ "$(id -u)" = 0 ] && [ -n "$postmaster" ]; then
  pg_group=/proc/$postmaster/autogroup
  pg_nice=$(awk '{print $3}' "$pg_group")
  echo -20 >"$pg_group"
fi
cleanup() {
  if [ -n "$pg_group" ]; then echo "$pg_nice" >"$pg_group" || true; fi
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  psql "$pg/postgres" -qc "DROP DATABASE IF EXISTS $dbname WITH (FORCE)" >/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

start() { # name port [database url]
  local name=$1 port=$2
  shift 2
  env REDLINE_BIND=127.0.0.1:$port REDLINE_DATA_DIR="$tmp/$name" REDLINE_LOG=${REDLINE_LOG:-warn} "$@" \
    "${nice[@]}" "$tmp/redline" serve >"$tmp/$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$port/healthz" >/dev/null && return; sleep 0.1; done
  echo "the $name server did not come up:" >&2
  cat "$tmp/$name.log" >&2
  exit 1
}
start sqlite "$sqlite_port"
start postgres "$pg_port" REDLINE_DATABASE_URL="$pg/$dbname" REDLINE_SINGLE_REPLICA=true

# A key with three sessions on each server.
prepare() { # port → key
  local base=http://127.0.0.1:$1 key
  key=$(curl -fs -XPOST "$base/v1/agents/signup" -H 'content-type: application/json' -d '{}' |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["api_key"])')
  for s in s-alpha s-beta s-gamma; do
    curl -fs -XPUT "$base/v1/documents/$s" -H "Authorization: Bearer $key" \
      -H 'content-type: application/json' \
      -d '{"html":"<h1>Title</h1><p>One paragraph of text.</p><p>Another one.</p>"}' >/dev/null
  done
  echo "$key"
}
sqlite_key=$(prepare "$sqlite_port")
pg_key=$(prepare "$pg_port")
for name in sqlite postgres; do
  port=$sqlite_port key=$sqlite_key
  [ "$name" = postgres ] && port=$pg_port key=$pg_key
  echo "$name sessions: $(curl -fs "http://127.0.0.1:$port/v1/sessions" -H "Authorization: Bearer $key" |
    python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')"
done

run() { # name port key
  local name=$1 port=$2 key=$3 out rps
  out=$("${nice[@]}" wrk -t2 -c32 -d"${secs}s" --latency -H "Authorization: Bearer $key" \
    "http://127.0.0.1:$port/v1/sessions")
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  printf '%-9s req/s %10s  p50 %8s  p99 %8s%s\n' "$name" "$rps" \
    "$(awk '$1=="50%" {print $2}' <<<"$out")" "$(awk '$1=="99%" {print $2}' <<<"$out")" \
    "$(grep -q 'Non-2xx' <<<"$out" && echo '  (NON-2xx answers!)' || true)$(grep -o '  Socket errors.*' <<<"$out" || true)"
  echo "$rps" >>"$tmp/$name.rps"
}
for _ in $(seq 1 "$pairs"); do
  run sqlite "$sqlite_port" "$sqlite_key"
  sleep 2
  run postgres "$pg_port" "$pg_key"
  sleep 2
done
python3 - "$tmp" <<'EOF'
import statistics, sys
s = [float(x) for x in open(sys.argv[1] + "/sqlite.rps")]
p = [float(x) for x in open(sys.argv[1] + "/postgres.rps")]
print(f"median sqlite {statistics.median(s):.0f} req/s, postgres {statistics.median(p):.0f} req/s: "
      f"ratio of medians {statistics.median(p) / statistics.median(s):.1%}; "
      "per pair " + ", ".join(f"{b / a:.1%}" for a, b in zip(s, p)))
EOF

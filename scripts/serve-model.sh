#!/usr/bin/env bash
# Starts and stops llama.cpp's llama-server with one of the models of scripts/setup-model.sh, on
# 127.0.0.1, as the OpenAI-compatible endpoint that the evaluation and the real-model tests
# drive (issue 38). Settings are fixed so that runs compare: --jinja (the model's own chat
# template, which also turns Hermes <tool_call> text into tool_calls), 2 threads (the machine's
# cores), an 8,192-token context, one slot (requests queue instead of sharing the batch, so a
# temperature-0 answer does not depend on what else runs) and a fixed seed.
#
#   scripts/serve-model.sh start [--model 1.5b|0.5b|FILE.gguf] [--port N|auto] [-- llama-server args…]
#   scripts/serve-model.sh stop --port N | --all  # --all: every server started with this cache
#   scripts/serve-model.sh status [--port N]
#
# start runs scripts/setup-model.sh for what it needs (a no-op once set up; downloads and
# builds otherwise), starts the server in the background, waits until /health answers ok
# (at most REDLINE_SERVE_TIMEOUT seconds, default 120), and prints on stdout:
#   LLAMA_SERVER_URL=http://127.0.0.1:8091
#   LLAMA_SERVER_PID=12345
#   LLAMA_SERVER_LOG=/var/tmp/redline-model-cache/run/llama-server-8091.log
# llama-server cannot pick a free port itself (--port 0 is not supported): --port auto asks
# the kernel for a free one first. The default port is 8091. If a server this script started
# is already up on that port with the same model, start only prints its lines again.
#
# Environment: REDLINE_MODEL_CACHE (as for setup-model.sh; the pid and log files go to
# its run/ folder), REDLINE_SERVE_TIMEOUT, REDLINE_SERVE_SEED (default 42), REDLINE_SERVE_CTX
# (default 8192), REDLINE_SERVE_THREADS (default 2), OMP_WAIT_POLICY (default passive).
#
# OMP_WAIT_POLICY=passive: llama-server's threads are OpenMP threads, which by default spin
# while they wait for each other. When anything else wants the 2 cores (a cargo build, a
# second server), a spinning thread holds a core that its partner needs, and generation
# collapses: measured here under such load, the 0.5B model made 1.6 tokens/s with spinning
# threads and 14 with passive ones (the same as one thread).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${REDLINE_MODEL_CACHE:-/var/tmp/redline-model-cache}
run=$cache/run
timeout=${REDLINE_SERVE_TIMEOUT:-120}
seed=${REDLINE_SERVE_SEED:-42}
ctx=${REDLINE_SERVE_CTX:-8192}
threads=${REDLINE_SERVE_THREADS:-2}

log() { printf 'serve-model: %s\n' "$*" >&2; }
die() { printf 'serve-model: error: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2; }

[ $# -ge 1 ] || { usage; exit 2; }
cmd=$1; shift
model=1.5b
port=
all=0
extra=()
while [ $# -gt 0 ]; do
    case $1 in
        --model) model=${2:?--model needs a value}; shift 2 ;;
        --port) port=${2:?--port needs a value}; shift 2 ;;
        --all) all=1; shift ;;
        --) shift; extra=("$@"); break ;;
        -h|--help) usage; exit 0 ;;
        *) usage; die "unknown argument: $1" ;;
    esac
done

# The pid of the server on $1 that this script started, if it still runs; else fails.
running_pid() {
    local pidfile=$run/llama-server-$1.pid pid
    [ -f "$pidfile" ] || return 1
    pid=$(cat "$pidfile")
    # The pid must still be a llama-server (not a recycled pid).
    [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q 'llama-server' \
        && echo "$pid"
}

healthy() { curl -fsS --max-time 2 "http://127.0.0.1:$1/health" 2> /dev/null | grep -q '"ok"'; }

print_lines() { # port pid
    echo "LLAMA_SERVER_URL=http://127.0.0.1:$1"
    echo "LLAMA_SERVER_PID=$2"
    echo "LLAMA_SERVER_LOG=$run/llama-server-$1.log"
}

stop_one() { # port
    local pid i
    if pid=$(running_pid "$1"); then
        kill -TERM "$pid"
        for ((i = 0; i < 100; i++)); do
            kill -0 "$pid" 2> /dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2> /dev/null; then
            log "port $1: pid $pid did not stop within 10 s; killing it"
            kill -KILL "$pid" 2> /dev/null || true
        fi
        log "port $1: stopped pid $pid"
    else
        log "port $1: no server of this script runs there"
    fi
    rm -f "$run/llama-server-$1.pid" "$run/llama-server-$1.model"
}

start() {
    local file name setup_args env server pid t0 want
    case $model in
        1.5b|0.5b)
            setup_args=("$model") ;;
        *)
            [ -f "$model" ] || die "no model file $model (use 1.5b, 0.5b or a .gguf path)"
            file=$(realpath "$model")
            setup_args=(--server-only) ;;
    esac
    env=$("$root/scripts/setup-model.sh" "${setup_args[@]}")
    server=$(sed -n 's/^LLAMA_SERVER=//p' <<< "$env")
    case $model in
        1.5b) file=$(sed -n 's/^REDLINE_EVAL_MODEL_1_5B=//p' <<< "$env") ;;
        0.5b) file=$(sed -n 's/^REDLINE_EVAL_MODEL_0_5B=//p' <<< "$env") ;;
    esac
    if [ ! -x "$server" ] || [ ! -f "$file" ]; then die "setup-model.sh gave no server or model"; fi
    name=$(basename "$file" .gguf)

    if [ "${port:-8091}" = auto ]; then
        port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    fi
    port=${port:-8091}
    mkdir -p "$run"
    want="$file ${extra[*]}"
    if pid=$(running_pid "$port"); then
        if [ "$(cat "$run/llama-server-$port.model" 2> /dev/null)" = "$want" ] && healthy "$port"; then
            log "port $port: already serving $name (pid $pid)"
            print_lines "$port" "$pid"
            return 0
        fi
        die "port $port: a server of this script already runs there (pid $pid) with another model or args; stop it first"
    fi
    if curl -s --max-time 2 -o /dev/null "http://127.0.0.1:$port/"; then
        die "port $port: something else answers there"
    fi

    # setsid: the server outlives this script and does not get the caller's terminal signals;
    # stop it with `scripts/serve-model.sh stop`.
    log "port $port: starting $name"
    OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} setsid "$server" --model "$file" --alias "$name" --host 127.0.0.1 --port "$port" \
        --jinja --threads "$threads" --ctx-size "$ctx" --parallel 1 --seed "$seed" \
        "${extra[@]}" < /dev/null > "$run/llama-server-$port.log" 2>&1 &
    pid=$!
    echo "$pid" > "$run/llama-server-$port.pid"
    echo "$want" > "$run/llama-server-$port.model"

    t0=$(date +%s)
    until healthy "$port"; do
        if ! kill -0 "$pid" 2> /dev/null; then
            tail -n 30 "$run/llama-server-$port.log" >&2
            rm -f "$run/llama-server-$port.pid" "$run/llama-server-$port.model"
            die "port $port: llama-server exited while starting (log: $run/llama-server-$port.log)"
        fi
        if [ $(( $(date +%s) - t0 )) -ge "$timeout" ]; then
            tail -n 30 "$run/llama-server-$port.log" >&2
            stop_one "$port"
            die "port $port: /health not ok after $timeout s (log: $run/llama-server-$port.log)"
        fi
        sleep 0.5
    done
    log "port $port: ready in $(( $(date +%s) - t0 )) s (pid $pid)"
    print_lines "$port" "$pid"
}

ports_started() {
    local f
    for f in "$run"/llama-server-*.pid; do
        [ -e "$f" ] || continue
        f=${f##*/llama-server-}
        echo "${f%.pid}"
    done
}

case $cmd in
    start) start ;;
    stop)
        # No default: the cache (and its run/ folder) may be shared by several people or
        # scripts on one machine, each with its own server.
        if [ -n "$port" ]; then
            stop_one "$port"
        elif [ "$all" = 1 ]; then
            for p in $(ports_started); do stop_one "$p"; done
        else
            die "stop needs --port N (or --all)"
        fi ;;
    status)
        status=1
        for p in ${port:-$(ports_started)}; do
            if pid=$(running_pid "$p") && healthy "$p"; then
                log "port $p: pid $pid serving $(cut -d' ' -f1 "$run/llama-server-$p.model")"
                print_lines "$p" "$pid"
                status=0
            else
                log "port $p: not serving"
            fi
        done
        exit "$status" ;;
    *) usage; die "unknown command: $cmd (start, stop or status)" ;;
esac

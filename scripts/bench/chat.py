#!/usr/bin/env python3
"""Loopback benchmarks of chat jobs (docs/benchmarks.md, issue 5).

Starts `redline serve` (SQLite, builtin model) in a temporary folder and measures:
  1. service overhead of a chat turn: sequential POST /v1/chat (sync) and POST /v1/chat/async
     followed by its event stream to the final event; the builtin model answers in microseconds,
     so the latency is the service's own cost;
  2. GET /v1/jobs/{id} against GET /healthz with wrk (if installed);
  3. 1,000 concurrent SSE subscribers on jobs waiting for approval: the server's RSS.

Usage: scripts/bench/chat.py path/to/redline   (run with `ulimit -n 8192` or more)
"""
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def call(base, method, path, key=None, body=None, headers=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method)
    if key:
        req.add_header("Authorization", f"Bearer {key}")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    with urllib.request.urlopen(req, timeout=60) as r:
        raw = r.read()
        return r.status, raw


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main():
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/redline")
    tmp = tempfile.mkdtemp(prefix="redline-bench-")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {"PATH": os.environ.get("PATH", ""), "REDLINE_BIND": f"127.0.0.1:{port}", "REDLINE_DATA_DIR": tmp,
           "REDLINE_SIGNUP_COOLDOWN_SECS": "0", "REDLINE_LOG": "warn"}
    server = subprocess.Popen([binary, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                call(base, "GET", "/healthz")
                break
            except Exception:
                time.sleep(0.1)
        _, raw = call(base, "POST", "/v1/agents/signup", body={})
        key = json.loads(raw)["api_key"]
        html = "".join(f"<p>Paragraph {i} talks about alpha and other things.</p>" for i in range(20))
        one = "<p>The alpha paragraph.</p>" + "".join(f"<p>Paragraph {i} talks about other things.</p>" for i in range(19))
        call(base, "PUT", "/v1/documents/one", key, {"html": one})
        call(base, "PUT", "/v1/documents/bench", key, {"html": html})

        def turn(i):
            a, b = ("alpha", "omega") if i % 2 == 0 else ("omega", "alpha")
            return {"session_id": "bench", "message": f'replace "{a}" with "{b}"'}

        for i in range(10):  # warm-up
            call(base, "POST", "/v1/chat", key, turn(i))
        single = []
        for i in range(200):
            body = turn(i)
            body["session_id"] = "one"
            t = time.perf_counter()
            call(base, "POST", "/v1/chat", key, body)
            single.append((time.perf_counter() - t) * 1000)
        print(f"sync chat turn (1 of 20 sections edited, builtin, 3 model calls): median {statistics.median(single):.2f} ms, p95 {pct(single, 95):.2f} ms, n={len(single)}")
        sync = []
        for i in range(100):
            t = time.perf_counter()
            call(base, "POST", "/v1/chat", key, turn(i))
            sync.append((time.perf_counter() - t) * 1000)
        streamed = []
        for i in range(50):
            t = time.perf_counter()
            _, raw = call(base, "POST", "/v1/chat/async", key, turn(i), {"Accept": "text/event-stream"})
            assert b"event: final" in raw
            streamed.append((time.perf_counter() - t) * 1000)
        streamed_one = []
        for i in range(100):
            body = turn(i)
            body["session_id"] = "one"
            t = time.perf_counter()
            _, raw = call(base, "POST", "/v1/chat/async", key, body, {"Accept": "text/event-stream"})
            assert b"event: final" in raw
            streamed_one.append((time.perf_counter() - t) * 1000)
        print(f"sync chat turn (20 sections edited, builtin): median {statistics.median(sync):.2f} ms, p95 {pct(sync, 95):.2f} ms, n={len(sync)}")
        print(f"async chat turn to its final SSE event (20 sections edited): median {statistics.median(streamed):.2f} ms, p95 {pct(streamed, 95):.2f} ms, n={len(streamed)}")
        print(f"async chat turn to its final SSE event (1 of 20 sections edited, as the sync figure): median {statistics.median(streamed_one):.2f} ms, p95 {pct(streamed_one, 95):.2f} ms, n={len(streamed_one)}")

        _, raw = call(base, "POST", "/v1/chat/async", key, turn(0))
        job_id = json.loads(raw)["job_id"]
        if shutil.which("wrk"):
            def wrk(path, auth):
                cmd = ["wrk", "-t2", "-c32", "-d10s", "--latency"]
                if auth:
                    cmd += ["-H", f"Authorization: Bearer {key}"]
                out = subprocess.run(cmd + [base + path], capture_output=True, text=True).stdout
                rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
                p99 = re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1)
                return rps, p99
            time.sleep(1)
            h = wrk("/healthz", False)
            j = wrk(f"/v1/jobs/{job_id}", True)
            print(f"wrk -t2 -c32 -d10s: /healthz {h[0]:.0f} req/s (p99 {h[1]}); GET /v1/jobs/{{id}} {j[0]:.0f} req/s (p99 {j[1]}) = {100 * j[0] / h[0]:.0f}% of /healthz")

        # 1,000 SSE subscribers on 10 jobs waiting for approval.
        waiting = []
        for i in range(10):
            call(base, "PUT", f"/v1/documents/sse{i}", key, {"html": "<p>kappa</p>"})
            _, raw = call(base, "POST", "/v1/chat/async", key,
                          {"session_id": f"sse{i}", "message": 'replace "kappa" with "lambda"', "require_approval": True})
            waiting.append(json.loads(raw)["job_id"])
        time.sleep(1)
        before = rss_kb(server.pid)
        socks = []
        for n in range(1000):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(f"GET /v1/jobs/{waiting[n % 10]}/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\nAccept: text/event-stream\r\n\r\n".encode())
            socks.append(s)
        ok = 0
        for s in socks:
            s.settimeout(10)
            got = b""
            while b"approval_required" not in got:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
            ok += b"approval_required" in got
        time.sleep(2)
        after = rss_kb(server.pid)
        print(f"1000 SSE subscribers: {ok} received approval_required; server RSS {before / 1024:.0f} MB before, {after / 1024:.0f} MB with them open")
        for s in socks:
            s.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Webhook delivery latency on loopback (docs/benchmarks.md, "Webhooks").

Starts `redline serve` (SQLite, builtin model, webhooks allowed to loopback) in a temporary
folder and a receiver in this process, registers an endpoint for `job.completed`, runs N chat
turns one after another, and reports, per message, the time from the job's end (the
message's `timestamp`, written in the transaction that completed the job) to its arrival at
the receiver: p50, p99 and the most.

Usage: scripts/bench/webhooks.py path/to/redline [N]
"""
import datetime
import json
import statistics
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from serving import free_port, serve


arrivals = []


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        at = time.time()
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        arrivals.append((at, body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def call(base, method, path, key=None, body=None):
    req = urllib.request.Request(base + path, method=method, data=None if body is None else json.dumps(body).encode())
    req.add_header("content-type", "application/json")
    if key:
        req.add_header("authorization", "Bearer " + key)
    with urllib.request.urlopen(req) as r:
        return json.loads(r.read() or b"null")


def main():
    binary, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 200
    receiver = ThreadingHTTPServer(("127.0.0.1", free_port()), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    with serve(binary, REDLINE_WEBHOOK_ALLOW_PRIVATE="on") as base:
        key = call(base, "POST", "/v1/agents/signup", body={})["api_key"]
        url = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
        call(base, "POST", "/v1/webhooks", key, {"url": url, "events": ["job.completed"]})
        call(base, "PUT", "/v1/documents/b", key, {"html": "<p>w0</p>"})
        for i in range(n):
            call(base, "POST", "/v1/chat", key, {"session_id": "b", "message": f'replace "w{i}" with "w{i + 1}"'})
        deadline = time.time() + 30
        while len(arrivals) < n and time.time() < deadline:
            time.sleep(0.05)
    latencies = []
    for at, body in arrivals:
        ended = datetime.datetime.fromisoformat(body["timestamp"].replace("Z", "+00:00")).timestamp()
        latencies.append((at - ended) * 1000)
    latencies.sort()
    p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))]
    print(f"messages {len(latencies)} of {n}; job end -> receiver: p50 {p(0.5):.1f} ms, "
          f"p99 {p(0.99):.1f} ms, max {latencies[-1]:.1f} ms, mean {statistics.mean(latencies):.1f} ms")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The cost of an Idempotency-Key on a hot POST (docs/benchmarks.md, "Idempotency").

Starts `redline serve` (SQLite, builtin model) in a temporary folder and times, over one
keep-alive connection, the same POST with and without a fresh `Idempotency-Key` each time, in
alternating rounds so that drift of the machine falls on both alike:
  - `POST /v1/documents/export` (TXT of a 20-paragraph document: a cheap operation, so the
    key's claim and kept answer weigh most),
  - `POST /v1/chat` (a one-word edit turn with the builtin model).
Reports each one's median latency with and without the key, and the ratio.

Usage: scripts/bench/idempotency.py path/to/redline [rounds]
"""
import http.client
import json
import statistics
import sys
import time
import uuid

from serving import serve


def main():
    binary, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 20
    with serve(binary) as base:
        conn = http.client.HTTPConnection(*base.removeprefix("http://").split(":"))
        def call(method, path, body, headers=None):
            h = {"content-type": "application/json", **(headers or {})}
            if key:
                h["authorization"] = "Bearer " + key
            started = time.perf_counter()
            conn.request(method, path, json.dumps(body), h)
            r = conn.getresponse()
            payload = r.read()
            assert r.status < 300, (r.status, payload[:200])
            return time.perf_counter() - started, payload

        key = None
        _, signup = call("POST", "/v1/agents/signup", {})
        key = json.loads(signup)["api_key"]
        html = "".join(f"<p>paragraph {i} with w0 in it</p>" for i in range(20))
        call("PUT", "/v1/documents/bench", {"html": html})
        cases = {
            "export": lambda n: ("/v1/documents/export", {"session_id": "bench", "format": "txt"}),
            "chat": lambda n: ("/v1/chat", {"session_id": "bench", "message": f'replace "w{n}" with "w{n + 1}"'}),
        }
        times = {(c, k): [] for c in cases for k in (False, True)}
        n = 0
        for _ in range(rounds):
            for case, make in cases.items():
                for with_key in (False, True):
                    for _ in range(10):
                        path, body = make(n)
                        if case == "chat":
                            n += 1
                        headers = {"idempotency-key": str(uuid.uuid4())} if with_key else {}
                        took, _ = call("POST", path, body, headers)
                        times[(case, with_key)].append(took)
    for case in cases:
        plain = statistics.median(times[(case, False)]) * 1000
        keyed = statistics.median(times[(case, True)]) * 1000
        print(f"{case}: median {plain:.2f} ms without a key, {keyed:.2f} ms with one: "
              f"{(keyed / plain - 1) * 100:+.1f} % ({len(times[(case, True)])} requests each)")


if __name__ == "__main__":
    main()

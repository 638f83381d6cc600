#!/usr/bin/env python3
"""The server's resident memory under a repeated mixed load (docs/benchmarks.md section 7,
"Memory under load"; docs/deploy.md "Memory").

Needs python3 with httpx (`/work/main/.venv/bin/python`, or `pip install httpx`).

    scripts/bench/memory.py path/to/redline [--cycles 12] [--config NAME=VAR=VALUE,… ...]

For each configuration (by default `served`, the environment as it is, in which `redline
serve` sets MALLOC_ARENA_MAX=2 itself, and `glibc-default`, with an empty GLIBC_TUNABLES
that makes it keep glibc's default of 8 arenas per core) a fresh server is started (SQLite, builtin model, a temporary data
folder; REDLINE_WRAP="heaptrack -o FILE" runs it under a tool) and the same load is played
in cycles, 8 requests at a time. One cycle, each in new sessions:

  - 20 document uploads (`POST /v1/documents/upload`, 60 KB of Markdown, 200 sections);
  - 40 async chat turns read to their `final` event (`Accept: text/event-stream`);
  - 10 turns with `require_approval`, each approved (`POST /v1/chat/{id}/approve`);
  - 12 exports (`POST /v1/documents/export`: docx, pdf, markdown);
  - 10 attachment uploads (20 KB of text), waited for, then 20 searches;
  - 20 listings (sessions, jobs, a session's jobs) and 20 job polls.

After each cycle the server's VmRSS and each kind of request's p99 latency are printed: a
leak grows by about the same amount every cycle; retention and caches level off. At the end,
each kind's p99 in the last cycle is set against its p99 in the first (the drift of a soak:
a request that costs more as the data grows). The configurations run one after the other in one
invocation, so their figures are comparable; --cycles is per configuration. `BIN=path` in a
configuration runs another build (to compare two commits).
"""
import argparse
import asyncio
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import httpx

WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma "
         "tau upsilon phi chi psi omega").split()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def status_kb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def server_pid(popen, binary):
    """The process running the binary: the child itself, or a descendant under REDLINE_WRAP."""
    for _ in range(100):
        todo, seen = [popen.pid], []
        while todo:
            pid = todo.pop()
            seen.append(pid)
            try:
                with open(f"/proc/{pid}/task/{pid}/children") as f:
                    todo += [int(c) for c in f.read().split()]
            except OSError:
                pass
        for pid in seen:
            try:
                if os.readlink(f"/proc/{pid}/exe") == os.path.realpath(binary):
                    return pid
            except OSError:
                pass
        time.sleep(0.1)
    raise RuntimeError("no redline process")


def kind_of(method, path):
    """The kind of request a latency is recorded under."""
    for prefix, kind in (("/v1/documents/upload", "upload"), ("/v1/documents/export", "export"),
                         ("/v1/attachments/upload", "attachment"), ("/v1/attachments/search", "search"),
                         ("/v1/chat/async", "turn start")):
        if path.startswith(prefix):
            return kind
    if path.endswith("/approve"):
        return "approve"
    if path.startswith("/v1/jobs/"):
        return "job poll"
    return "listing"


def p99(values):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * 0.99))] if values else 0.0


def text(rng, paragraphs, words=45):
    return "\n\n".join(" ".join(rng.choice(WORDS) for _ in range(words)) for _ in range(paragraphs))


async def cycle(c, rng, key, api, lat):
    sem = asyncio.Semaphore(8)
    h = {"Authorization": f"Bearer {key}"}

    async def req(method, path, expect=(200, 201, 202), **kw):
        async with sem:
            t = time.perf_counter()
            r = await api.request(method, path, headers={**h, **kw.pop("headers", {})}, **kw)
            lat.setdefault(kind_of(method, path), []).append((time.perf_counter() - t) * 1000)
        if r.status_code not in expect:
            raise RuntimeError(f"{method} {path}: {r.status_code} {r.text[:300]}")
        return r

    docs = [f"m{c}-{i}" for i in range(20)]
    md = text(rng, 200, 45).encode()
    await asyncio.gather(*(req("POST", "/v1/documents/upload", data={"session_id": s, "open_mode": "replace"},
                               files={"file": (f"{s}.md", md, "text/markdown")}) for s in docs))

    async def turn(s, i):
        async with sem:
            t = time.perf_counter()
            async with api.stream("POST", "/v1/chat/async", headers={**h, "Accept": "text/event-stream"},
                                  json={"session_id": s, "message": f'replace "{WORDS[i % 24]}" with "{WORDS[(i + 1) % 24]}"'}) as r:
                body = b"".join([chunk async for chunk in r.aiter_bytes()])
            lat.setdefault("turn over SSE", []).append((time.perf_counter() - t) * 1000)
        if b"event: final" not in body:
            raise RuntimeError(f"turn on {s}: no final event")

    await asyncio.gather(*(turn(docs[i % 20], i) for i in range(40)))

    async def approved(s, i):
        job = (await req("POST", "/v1/chat/async", json={"session_id": s, "require_approval": True,
                                                         "message": f"append a section: Approved note {i}."})).json()["job_id"]
        for _ in range(200):
            if (await req("GET", f"/v1/jobs/{job}")).json()["status"] == "awaiting_approval":
                break
            await asyncio.sleep(0.05)
        await req("POST", f"/v1/chat/{s}/approve", json={"job_id": job, "approve_all": True})

    await asyncio.gather(*(approved(docs[i], i) for i in range(10)))
    await asyncio.gather(*(req("POST", "/v1/documents/export", json={"session_id": docs[i], "format": f})
                           for i in range(4) for f in ("docx", "pdf", "markdown")))
    att = f"a{c}"
    uploads = await asyncio.gather(*(req("POST", "/v1/attachments/upload", data={"session_id": att},
                                         files={"file": (f"n{i}.txt", text(rng, 60, 50).encode(), "text/plain")})
                                     for i in range(10)))
    for u in uploads:
        job = u.json()["job_id"]
        while (await req("GET", f"/v1/jobs/{job}")).json()["status"] in ("pending", "in_progress"):
            await asyncio.sleep(0.05)
    await asyncio.gather(*(req("GET", f"/v1/attachments/search?session_id={att}&q={rng.choice(WORDS)}+{rng.choice(WORDS)}")
                           for _ in range(20)))
    lists = ["/v1/sessions", "/v1/jobs", "/v1/jobs?compact=true&limit=100", f"/v1/sessions/{docs[0]}/jobs"]
    await asyncio.gather(*(req("GET", lists[i % 4]) for i in range(20)))
    jobs = (await req("GET", "/v1/jobs?limit=20")).json()["jobs"]
    await asyncio.gather(*(req("GET", f"/v1/jobs/{j['job_id']}") for j in jobs))


async def play(base, key, cycles, pid):
    rng = random.Random(7)
    rss, lats = [], []
    async with httpx.AsyncClient(base_url=base, timeout=300, limits=httpx.Limits(max_connections=16)) as api:
        for c in range(cycles):
            t = time.time()
            lat = {}
            await cycle(c, rng, key, api, lat)
            await asyncio.sleep(1)
            rss.append(status_kb(pid, "VmRSS") / 1024)
            lats.append(lat)
            p99s = ", ".join(f"{k} {p99(v):.0f}" for k, v in sorted(lat.items()))
            print(f"  cycle {c + 1:2}: {time.time() - t:5.1f} s, VmRSS {rss[-1]:6.1f} MB; p99 ms: {p99s}", flush=True)
    if len(lats) > 1:
        print("  p99 drift, last cycle / first cycle:", flush=True)
        for kind in sorted(lats[0]):
            first, last = p99(lats[0][kind]), p99(lats[-1].get(kind, []))
            print(f"    {kind:14} {first:8.1f} ms -> {last:8.1f} ms  {last / first if first else 0:5.2f}x", flush=True)
    return rss


def run(binary, name, extra, cycles):
    port = free_port()
    tmp = tempfile.mkdtemp(prefix="redline-memory-")
    env = dict(os.environ, REDLINE_BIND=f"127.0.0.1:{port}", REDLINE_DATA_DIR=tmp, REDLINE_LOG="warn",
               REDLINE_SIGNUP_COOLDOWN_SECS="0", **extra)
    server = subprocess.Popen(os.environ.get("REDLINE_WRAP", "").split() + [binary, "serve"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                httpx.get(base + "/healthz", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        pid = server_pid(server, binary)
        key = httpx.post(base + "/v1/agents/signup", json={"name": "memory"}).json()
        subprocess.run([binary, "admin", "set-plan", "--user-id", key["user_id"], "--plan", "enterprise"],
                       env=env, check=True, stdout=subprocess.DEVNULL)
        idle = status_kb(pid, "VmRSS") / 1024
        print(f"{name} ({' '.join(f'{k}={v}' for k, v in extra.items()) or 'environment as it is'}): idle {idle:.1f} MB", flush=True)
        rss = asyncio.run(play(base, key["api_key"], cycles, pid))
        time.sleep(5)
        end, hwm = status_kb(pid, "VmRSS") / 1024, status_kb(pid, "VmHWM") / 1024
        half = len(rss) // 2
        slope = (rss[-1] - rss[half - 1]) / max(1, len(rss) - half)
        print(f"  {name}: 5 s after the load VmRSS {end:.1f} MB, VmHWM {hwm:.1f} MB; "
              f"growth per cycle over the second half {slope:+.1f} MB", flush=True)
        return end, hwm, slope
    finally:
        server.terminate()
        server.wait(timeout=60)
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("binary", nargs="?", default="target/release/redline")
    p.add_argument("--cycles", type=int, default=12)
    p.add_argument("--config", action="append", metavar="NAME=VAR=VALUE,…",
                   help="a configuration: a name and environment variables (repeatable); "
                        "default: served= and glibc-default=GLIBC_TUNABLES=")
    args = p.parse_args()
    configs = args.config or ["served=", "glibc-default=GLIBC_TUNABLES="]
    binary = os.path.abspath(args.binary)
    results = {}
    for conf in configs:
        name, _, rest = conf.partition("=")
        extra = dict(kv.split("=", 1) for kv in rest.split(",") if kv)
        results[name] = run(os.path.abspath(extra.pop("BIN", binary)), name, extra, args.cycles)
    print("\nconfiguration          RSS after  VmHWM  MB/cycle (2nd half)")
    for name, (end, hwm, slope) in results.items():
        print(f"{name:22} {end:9.1f} {hwm:6.1f} {slope:+8.1f}")
    sys.exit(0)


if __name__ == "__main__":
    main()

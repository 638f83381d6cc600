#!/usr/bin/env python3
"""Listings as one owner's data grows (docs/benchmarks.md section 6, "Growth").

Needs python3 with httpx (`/work/main/.venv/bin/python`, or `pip install httpx`); the timed
requests use the standard library's http.client, one process per connection.

    scripts/bench/growth.py path/to/redline [--database-url postgres://…/EMPTY_DB]
        [--sessions 5000] [--jobs-per-session 2] [--attachments 200] [--requests 2000] [--connections 4]

Starts `redline serve` (builtin model, a temporary data folder; SQLite unless
--database-url names an empty PostgreSQL database). Everything is created through the API:
two agents sign up; the big one is set to the enterprise plan with `redline admin set-plan`.
Each session is one `PUT /v1/documents/{id}`; each job one `POST /v1/chat/async`
(`append a section: …`, require_approval false) or one `POST /v1/attachments/upload` of a
small text file.

  1. small database: the big owner has 200 sessions, 2 chat jobs each and 30 attachments (a full page of 20 for the filtered listing);
     the small owner has 5 sessions, 2 chat jobs each and 3 attachments;
  2. every listing below is timed (requests/s, p50, p99, server CPU per request);
  3. growth: the big owner gets to --sessions sessions, --jobs-per-session chat jobs each and
     --attachments attachments; the script waits until every job has finished;
  4. the same listings are timed again, and each after/before ratio printed;
  5. every session and job of both owners is read by paging (Link / next_cursor): counts
     and no duplicates are checked;
  6. the server's VmRSS and VmHWM are read from /proc.

Deep pages start after 3/4 of the owner's rows (cursors taken by paging), so the small
database's deep page and the grown one's are at the same relative place.
"""
import argparse
import asyncio
import http.client
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
import urllib.parse
from concurrent.futures import ProcessPoolExecutor

import httpx

SMALL = {"sessions": 200, "jobs_per_session": 2, "attachments": 30}
TINY = {"sessions": 5, "jobs_per_session": 2, "attachments": 3}
TEXT = "\n\n".join(f"Paragraph {i} of the attachment about growth, paging and keyset cursors." for i in range(20))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_status(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def server_pid(popen, binary):
    """The `redline` process: the child itself, or (under REDLINE_WRAP, e.g. heaptrack) its
    descendant that runs the binary."""
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


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


# ---- timed requests: one process per connection, http.client, keep-alive ----

def _worker(port, key, paths, count, warm):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Authorization": f"Bearer {key}"}

    def one(path):
        conn.request("GET", path, headers=headers)
        r = conn.getresponse()
        body = r.read()
        if r.status != 200:
            raise RuntimeError(f"GET {path}: {r.status} {body[:200]!r}")

    for i in range(warm):
        one(paths[i % len(paths)])
    lat = []
    t0 = time.perf_counter()
    for i in range(count):
        t = time.perf_counter()
        one(paths[i % len(paths)])
        lat.append(time.perf_counter() - t)
    t1 = time.perf_counter()
    conn.close()
    return t0, t1, lat


def timed(pool, pid, port, key, paths, requests, connections):
    per = requests // connections
    cpu0 = cpu_seconds(pid)
    futures = [pool.submit(_worker, port, key, paths[i::connections] or paths, per, 50) for i in range(connections)]
    results = [f.result() for f in futures]
    cpu1 = cpu_seconds(pid)
    wall = max(r[1] for r in results) - min(r[0] for r in results)
    lat = [x for r in results for x in r[2]]
    n = len(lat)
    return {"rps": n / wall, "p50": pct(lat, 50) * 1000, "p99": pct(lat, 99) * 1000,
            "cpu_us": (cpu1 - cpu0) / (n + 50 * connections) * 1e6}


# ---- the API, through httpx ----

class Api:
    def __init__(self, base):
        self.client = httpx.AsyncClient(base_url=base, timeout=120, limits=httpx.Limits(max_connections=16))

    async def req(self, method, path, key=None, expect=(200, 201, 202), **kw):
        headers = kw.pop("headers", {})
        if key:
            headers["Authorization"] = f"Bearer {key}"
        r = await self.client.request(method, path, headers=headers, **kw)
        if r.status_code not in expect:
            raise RuntimeError(f"{method} {path}: {r.status_code} {r.text[:300]}")
        return r


async def gather_limited(coros, limit=8):
    sem = asyncio.Semaphore(limit)

    async def run(c):
        async with sem:
            return await c

    return await asyncio.gather(*(run(c) for c in coros))


async def create(api, key, prefix, start, stop, jobs_per_session, attachments_from, attachments_to):
    """Sessions prefix-start … prefix-(stop-1), their chat jobs, and attachments in the first sessions."""
    await gather_limited(api.req("PUT", f"/v1/documents/{prefix}-{i:05d}", key,
                                 json={"html": f"<h1>Session {i}</h1><p>The first paragraph of session {i}.</p>"})
                         for i in range(start, stop))
    await gather_limited(api.req("POST", "/v1/chat/async", key,
                                 json={"session_id": f"{prefix}-{i:05d}", "message": f"append a section: Note {j} of session {i}.",
                                       "require_approval": False})
                         for j in range(jobs_per_session) for i in range(start, stop))
    await gather_limited(api.req("POST", "/v1/attachments/upload", key,
                                 data={"session_id": f"{prefix}-{i % max(stop, 1):05d}"},
                                 files={"file": (f"notes-{i}.txt", TEXT.encode(), "text/plain")})
                         for i in range(attachments_from, attachments_to))


async def settle(api, key):
    """Waits until the owner has no job left to run; raises on a failed one."""
    while True:
        busy = 0
        for status in ("pending", "in_progress"):
            r = await api.req("GET", f"/v1/jobs?status={status}&compact=true&limit=1", key)
            busy += len(r.json()["jobs"])
        if not busy:
            break
        await asyncio.sleep(0.5)
    r = await api.req("GET", "/v1/jobs?status=failed&compact=true&limit=5", key)
    if r.json()["jobs"]:
        raise RuntimeError(f"failed jobs: {r.json()['jobs']}")


def next_link(r):
    m = re.search(r'<([^>]+)>;\s*rel="next"', r.headers.get("link", ""))
    return m.group(1) if m else None


async def page_all(api, key, path, jobs):
    """Every row of a listing, following Link (and checking next_cursor agrees); the cursors
    that start each page are returned too."""
    rows, cursors, url = [], [], path
    while url:
        r = await api.req("GET", url, key)
        link = next_link(r)
        if jobs:
            body = r.json()
            page = [j["job_id"] for j in body["jobs"]]
            nc = body["next_cursor"]
            if (nc is None) != (link is None) or (nc and urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)["cursor"][0] != nc):
                raise RuntimeError(f"next_cursor {nc!r} and Link {link!r} disagree")
        else:
            page = [s["session_id"] for s in r.json()]
        rows.extend(page)
        if link:
            cursors.append((len(rows), urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)["cursor"][0]))
        url = link
    return rows, cursors


def check_all(name, rows, expected):
    dup = len(rows) - len(set(rows))
    ok = len(rows) == expected and dup == 0
    print(f"  paging {name}: {len(rows)} rows read, {expected} expected, {dup} duplicates: {'ok' if ok else 'FAIL'}")
    return ok


async def measure_set(api, big, small, port, pid, pool, args):
    """The timed listings: name -> stats."""
    _, s_cursors = await page_all(api, big, "/v1/sessions?limit=50", False)
    jobs, j_cursors = await page_all(api, big, "/v1/jobs?limit=20", True)
    sessions_total = len((await page_all(api, big, "/v1/sessions?limit=1000", False))[0])

    def deep(cursors, total):
        return min(cursors, key=lambda c: abs(c[0] - total * 3 // 4))[1]

    deep_sessions = deep(s_cursors, sessions_total)
    deep_jobs = deep(j_cursors, len(jobs))
    step = max(1, len(jobs) // 200)
    by_id = [f"/v1/jobs/{j}" for j in jobs[::step][:200]]
    cases = [
        ("sessions, first page (100)", big, ["/v1/sessions"]),
        ("sessions, page at 3/4 (50)", big, [f"/v1/sessions?limit=50&cursor={deep_sessions}"]),
        ("jobs, first page (20)", big, ["/v1/jobs"]),
        ("jobs, page at 3/4 (20)", big, [f"/v1/jobs?cursor={deep_jobs}"]),
        ("jobs, attachment_processing + completed", big, ["/v1/jobs?job_type=attachment_processing&status=completed"]),
        ("job by id (200 ids in turn)", big, by_id),
        ("small owner: jobs, attachment_processing + completed", small, ["/v1/jobs?job_type=attachment_processing&status=completed"]),
        ("small owner: sessions", small, ["/v1/sessions"]),
    ]
    runs = {name: [] for name, _, _ in cases}
    for _ in range(args.rounds):  # round-robin: a slow minute of the machine hits every listing
        for name, key, paths in cases:
            runs[name].append(timed(pool, pid, port, key, paths, args.requests, args.connections))
    return {name: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for name, rs in runs.items()}


async def run(args, base, port, pid, env):
    api = Api(base)
    big = (await api.req("POST", "/v1/agents/signup", json={"name": "big"})).json()
    small = (await api.req("POST", "/v1/agents/signup", json={"name": "small"})).json()
    subprocess.run([args.binary, "admin", "set-plan", "--user-id", big["user_id"], "--plan", "enterprise"],
                   env=env, check=True, stdout=subprocess.DEVNULL)
    bk, sk = big["api_key"], small["api_key"]
    t = time.time()
    await create(api, sk, "tiny", 0, TINY["sessions"], TINY["jobs_per_session"], 0, TINY["attachments"])
    await create(api, bk, "s", 0, SMALL["sessions"], SMALL["jobs_per_session"], 0, SMALL["attachments"])
    await settle(api, bk)
    await settle(api, sk)
    print(f"small database made in {time.time() - t:.1f} s; RSS {proc_status(pid, 'VmRSS') / 1024:.0f} MB")
    with ProcessPoolExecutor(args.connections) as pool:
        before = await measure_set(api, bk, sk, port, pid, pool, args)
        t = time.time()
        await create(api, bk, "s", SMALL["sessions"], args.sessions, args.jobs_per_session, SMALL["attachments"], args.attachments)
        await settle(api, bk)
        print(f"growth made in {time.time() - t:.1f} s; RSS {proc_status(pid, 'VmRSS') / 1024:.0f} MB")
        after = await measure_set(api, bk, sk, port, pid, pool, args)

    print(f"\n{args.requests} requests per listing, {args.connections} connections, medians of {args.rounds} rounds;"
          " ratio = after / before"
          " (req/s: higher is better, latencies and CPU: lower)")
    print(f"{'listing':56} {'req/s before':>12} {'after':>7} {'ratio':>6} | {'p50 ms b/a':>11} | {'p99 ms b/a':>11} | {'CPU µs/req b/a':>14} {'ratio':>6}")
    worst = {}
    for name in before:
        b, a = before[name], after[name]
        rr = a["rps"] / b["rps"]
        worst[name] = rr
        print(f"{name:56} {b['rps']:12.0f} {a['rps']:7.0f} {rr:6.2f} | {b['p50']:5.2f}/{a['p50']:5.2f} | "
              f"{b['p99']:5.2f}/{a['p99']:5.2f} | {b['cpu_us']:6.0f}/{a['cpu_us']:6.0f} {a['cpu_us'] / b['cpu_us']:6.2f}")

    print("\nreachability:")
    jobs_expected = args.sessions * args.jobs_per_session + args.attachments
    # SMALL's sessions are part of --sessions; SMALL's jobs too when --jobs-per-session is 2.
    jobs_expected += SMALL["sessions"] * (SMALL["jobs_per_session"] - args.jobs_per_session)
    ok = True
    ok &= check_all("big owner's sessions (limit 1000)", (await page_all(api, bk, "/v1/sessions?limit=1000", False))[0], args.sessions)
    ok &= check_all("big owner's sessions (limit 7)", (await page_all(api, bk, "/v1/sessions?limit=7", False))[0], args.sessions)
    ok &= check_all("big owner's jobs (limit 100, compact)", (await page_all(api, bk, "/v1/jobs?limit=100&compact=true", True))[0], jobs_expected)
    ok &= check_all("big owner's jobs (limit 20, full)", (await page_all(api, bk, "/v1/jobs", True))[0], jobs_expected)
    ok &= check_all("big owner's completed attachment jobs", (await page_all(api, bk, "/v1/jobs?job_type=attachment_processing&status=completed&limit=7", True))[0], args.attachments)
    ok &= check_all("big owner's chat jobs", (await page_all(api, bk, "/v1/jobs?job_type=chat&limit=100&compact=true", True))[0],
                    jobs_expected - args.attachments)
    for i in (0, 1, SMALL["sessions"] - 1, SMALL["sessions"], args.sessions - 1):
        chats = SMALL["jobs_per_session"] if i < SMALL["sessions"] else args.jobs_per_session
        files = sum(1 for a in range(args.attachments) if a % (SMALL["sessions"] if a < SMALL["attachments"] else args.sessions) == i)
        rows, _ = await page_all(api, bk, f"/v1/sessions/s-{i:05d}/jobs?limit=1", True)
        ok &= check_all(f"jobs of session s-{i:05d} (limit 1)", rows, chats + files)
    ok &= check_all("small owner's sessions", (await page_all(api, sk, "/v1/sessions?limit=2", False))[0], TINY["sessions"])
    ok &= check_all("small owner's jobs", (await page_all(api, sk, "/v1/jobs?limit=3", True))[0],
                    TINY["sessions"] * TINY["jobs_per_session"] + TINY["attachments"])
    await api.client.aclose()
    time.sleep(2)
    rss, hwm = proc_status(pid, "VmRSS"), proc_status(pid, "VmHWM")
    print(f"\nserver after the run: VmRSS {rss / 1024:.1f} MB, VmHWM {hwm / 1024:.1f} MB")
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("binary", nargs="?", default="target/release/redline")
    p.add_argument("--database-url", help="an empty PostgreSQL database (default: SQLite in the temporary folder)")
    p.add_argument("--sessions", type=int, default=5000)
    p.add_argument("--jobs-per-session", type=int, default=2)
    p.add_argument("--attachments", type=int, default=200)
    p.add_argument("--requests", type=int, default=2000)
    p.add_argument("--connections", type=int, default=4)
    p.add_argument("--rounds", type=int, default=3, help="each listing is timed this many times, round-robin; medians")
    p.add_argument("--keep-server", action="store_true", help="leave the server running at the end (prints its pid)")
    args = p.parse_args()
    args.binary = os.path.abspath(args.binary)
    tmp = tempfile.mkdtemp(prefix="redline-growth-")
    port = free_port()
    env = dict(os.environ, REDLINE_BIND=f"127.0.0.1:{port}", REDLINE_DATA_DIR=tmp, REDLINE_SIGNUP_COOLDOWN_SECS="0",
               REDLINE_LOG="warn", REDLINE_JOB_RETENTION_SECS="86400")
    if args.database_url:
        env["REDLINE_DATABASE_URL"] = args.database_url
        env["REDLINE_SINGLE_REPLICA"] = "true"
    server = subprocess.Popen(os.environ.get("REDLINE_WRAP", "").split() + [args.binary, "serve"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    ok = False
    try:
        for _ in range(600):
            try:
                httpx.get(base + "/healthz", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        pid = server_pid(server, args.binary)
        print(f"server pid {pid}, {'PostgreSQL' if args.database_url else 'SQLite'}, data in {tmp}")
        ok = asyncio.run(run(args, base, port, pid, env))
    finally:
        if args.keep_server:
            print(f"server left running: pid {server_pid(server, args.binary)}")
        else:
            server.terminate()
            server.wait(timeout=60)
            shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

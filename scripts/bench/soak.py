#!/usr/bin/env python3
"""A soak: a realistic mix for a long time, watched minute by minute (issue 43; docs/benchmarks.md,
"Soak").

Python 3.11 standard library only (and `psql` for --database-url).

    python3 scripts/bench/soak.py path/to/redline [--minutes 30] [--warmup-minutes 0] [--clients 20] [--tenants 10]
        [--database-url postgres://…/EMPTY_DB] [--edit-turns 100] [--json out.json]

Starts `redline serve` (builtin model, a temporary data folder; SQLite unless --database-url
names an empty PostgreSQL database). --tenants agents sign up and are put on the enterprise plan
(`redline admin set-plan`). Then --clients threads each loop over a weighted mix, each request
on a session of a random tenant:

  save 30 %       PUT /v1/documents/{id}: a new session of 5–60 paragraphs, or one word
                  changed in an existing one (over its version)
  read 25 %       GET /v1/documents/{id}
  chat 12 %       POST /v1/chat: replace one word (applied at once)
  chat_async 8 %  POST /v1/chat/async: replace one word; polled until it ends
  attach 5 %      POST /v1/attachments/upload: a small text file
  export 5 %      POST /v1/documents/export: Markdown or text
  list 15 %       GET /v1/sessions, GET /v1/jobs

Every minute it prints and keeps, per kind: requests, p50 and p99 (ms), errors (a 5xx or an
unexpected status); the total throughput; the server's RSS and open files; the database's size
(SQLite: the file and its WAL; PostgreSQL: pg_total_relation_size of every table). At the end,
the size per table (SQLite: from `dbstat`, which reads every page, so not every minute).

After the soak: bytes stored per edit turn — --edit-turns sync chat turns, each changing one
word of a 40-paragraph document of about 3 KB — as the growth of the data in use (SQLite: pages
in use after a checkpoint; PostgreSQL: relation sizes after VACUUM FULL), once at once and
once after the sweep archived the turns' jobs; then a restart check: SIGTERM, start again on
the same data, every session listed and every document readable, no job left pending or in
progress after 10 s.

--warmup-minutes runs that many minutes first, printed but left out of the ratios: the mix
is a closed loop whose job queue starts empty, so its first minute runs faster than the rest.

Exits 1 when a request failed with a 5xx, the restart lost a session, or a job was stuck. The
ratios issue 43 asks for (last minute against the first) are printed; they are the reader's
to judge, not this script's.
"""
import argparse
import collections
import http.client
import json
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid

MIX = [("save", 30), ("read", 25), ("chat", 12), ("chat_async", 8), ("attach", 5), ("export", 5), ("list", 15)]
WORDS = "alpha beta gamma delta harbour meadow lantern copper willow amber quartz falcon".split()


def paragraph(i):
    words = [random.choice(WORDS) for _ in range(14)]
    return f"<p>Paragraph {i}: {' '.join(words)}.</p>"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Client:
    """One keep-alive connection; a request answers (status, parsed JSON or None, ms)."""

    def __init__(self, port):
        self.port = port
        self.conn = None

    def call(self, method, path, key=None, body=None, raw=None, headers=None):
        hdrs = dict(headers or {})
        if key:
            hdrs["Authorization"] = f"Bearer {key}"
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
            hdrs["Content-Type"] = "application/json"
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            start = time.perf_counter()
            try:
                self.conn.request(method, path, body=data, headers=hdrs)
                res = self.conn.getresponse()
                payload = res.read()
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = None
                if attempt == 1:
                    raise
                continue
            ms = (time.perf_counter() - start) * 1000
            if res.getheader("Connection", "").lower() == "close":
                self.conn.close()
                self.conn = None
            try:
                parsed = json.loads(payload) if payload else None
            except ValueError:
                parsed = None
            self.link = res.getheader("Link")
            return res.status, parsed, ms
        raise RuntimeError("unreachable")


class Server:
    def __init__(self, binary, data, database_url):
        self.binary, self.data, self.database_url = binary, data, database_url
        self.port = free_port()
        self.env = dict(os.environ, REDLINE_BIND=f"127.0.0.1:{self.port}", REDLINE_DATA_DIR=data,
                        REDLINE_SIGNUP_COOLDOWN_SECS="0", REDLINE_LOG="warn")
        if database_url:
            self.env["REDLINE_DATABASE_URL"] = database_url
            self.env["REDLINE_SINGLE_REPLICA"] = "true"
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen([self.binary, "serve"], env=self.env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        for _ in range(600):
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=1)
                c.request("GET", "/readyz")
                if c.getresponse().status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise SystemExit("the server did not become ready")

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=120)

    def rss_mib_and_fds(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        return rss / 1024, len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def admin(self, *args):
        subprocess.run([self.binary, "admin", *args], env=self.env, check=True, stdout=subprocess.DEVNULL)


def database_size(server, checkpoint=False, by_table=True):
    """Bytes in all, and by table (SQLite: only the files unless `by_table`, since `dbstat`
    reads every page of the database and holds a read transaction while it does)."""
    if server.database_url:
        sql = ("SELECT relname, pg_total_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
               "WHERE c.relkind = 'r' AND n.nspname = 'public'")
        out = subprocess.run(["psql", server.database_url, "-At", "-F", "\t", "-c", sql], capture_output=True, text=True,
                             check=True).stdout
        tables = {name: int(size) for name, size in (line.split("\t") for line in out.splitlines() if line)}
        return sum(tables.values()), tables
    path = os.path.join(server.data, "redline.db")
    files = lambda: {suffix or "db": os.path.getsize(path + suffix)
                     for suffix in ("", "-wal") if os.path.exists(path + suffix)}
    if not by_table and not checkpoint:
        sizes = files()
        return sum(sizes.values()), {f"file:{k}": v for k, v in sizes.items()}
    db = sqlite3.connect(path, timeout=30)
    try:
        if checkpoint:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        try:
            rows = db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
            tables = {name: int(size) for name, size in rows}
        except sqlite3.OperationalError:
            tables = {}
    finally:
        db.close()
    sizes = files()
    tables.update({f"file:{k}": v for k, v in sizes.items()})
    return sum(sizes.values()), tables


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.minute = collections.defaultdict(list)
        self.errors = collections.Counter()
        self.fives = 0

    def add(self, kind, ms, ok, status):
        with self.lock:
            self.minute[kind].append(ms)
            if not ok:
                self.errors[kind] += 1
            if status >= 500:
                self.fives += 1

    def take(self):
        with self.lock:
            minute, errors = self.minute, self.errors
            self.minute, self.errors = collections.defaultdict(list), collections.Counter()
        return minute, errors


def pct(values, p):
    if not values:
        return None
    values = sorted(values)
    return round(values[min(len(values) - 1, int(len(values) * p / 100))], 1)


def worker(port, tenants, stats, stop, seed):
    rnd = random.Random(seed)
    client = Client(port)
    kinds = [k for k, w in MIX for _ in range(w)]
    while not stop.is_set():
        tenant = rnd.choice(tenants)
        key, sessions = tenant["key"], tenant["sessions"]
        kind = rnd.choice(kinds)
        if kind != "save" and not sessions:
            kind = "save"
        sid = rnd.choice(sessions) if sessions else None
        try:
            if kind == "save":
                if not sessions or rnd.random() < 0.3:
                    sid = f"s-{uuid.uuid4().hex[:12]}"
                    html = "".join(paragraph(i) for i in range(rnd.randint(5, 60)))
                    status, body, ms = client.call("PUT", f"/v1/documents/{sid}", key, {"html": html})
                    if status == 200:
                        with stats.lock:
                            sessions.append(sid)
                else:
                    status, doc, _ = client.call("GET", f"/v1/documents/{sid}", key)
                    old, new = rnd.choice(WORDS), rnd.choice(WORDS)
                    html = doc["html"].replace(old, new, 1)
                    status, body, ms = client.call("PUT", f"/v1/documents/{sid}", key,
                                                   {"html": html, "base_version_id": doc["version_id"]})
                ok = status in (200, 409)
            elif kind == "read":
                status, body, ms = client.call("GET", f"/v1/documents/{sid}", key)
                ok = status == 200
            elif kind == "chat":
                msg = f'replace "{rnd.choice(WORDS)}" with "{rnd.choice(WORDS)}"'
                status, body, ms = client.call("POST", "/v1/chat", key, {"session_id": sid, "message": msg})
                ok = status in (200, 409)
            elif kind == "chat_async":
                msg = f'replace "{rnd.choice(WORDS)}" with "{rnd.choice(WORDS)}"'
                status, body, ms = client.call("POST", "/v1/chat/async", key,
                                               {"session_id": sid, "message": msg, "require_approval": False})
                ok = status in (200, 202, 409)
                if status in (200, 202):
                    job = body["job_id"]
                    for _ in range(600):
                        s, j, _ = client.call("GET", f"/v1/jobs/{job}", key)
                        if s != 200 or j["status"] in ("completed", "failed", "cancelled"):
                            break
                        time.sleep(0.1)
            elif kind == "attach":
                boundary = uuid.uuid4().hex
                text = "\n\n".join(paragraph(i)[3:-4] for i in range(20)).encode()
                raw = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"session_id\"\r\n\r\n{sid}\r\n"
                       f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"notes.txt\"\r\n"
                       f"Content-Type: text/plain\r\n\r\n").encode() + text + f"\r\n--{boundary}--\r\n".encode()
                status, body, ms = client.call("POST", "/v1/attachments/upload", key, raw=raw,
                                               headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
                ok = status in (200, 202)
            elif kind == "export":
                status, body, ms = client.call("POST", "/v1/documents/export", key,
                                               {"session_id": sid, "format": rnd.choice(["markdown", "txt"])})
                ok = status == 200
            else:
                path = rnd.choice(["/v1/sessions?limit=50", "/v1/jobs?limit=20"])
                status, body, ms = client.call("GET", path, key)
                ok = status == 200
        except (OSError, http.client.HTTPException, KeyError, TypeError) as e:
            print(f"{kind}: {e}", file=sys.stderr)
            stats.add(kind, 0.0, False, 599)
            continue
        stats.add(kind, ms, ok, status)


def autovacuum(database_url, on):
    """Turns PostgreSQL's autovacuum on (`on`) or back to the server's own setting. A soak
    stands for a deployment, where it is on (its default); a test machine may turn it off
    (this one's CI configuration does). Answers whether it was off before."""
    psql = lambda sql: subprocess.run(["psql", database_url, "-Atq", "-c", sql], capture_output=True, text=True,
                                      check=True).stdout.strip()
    if on:
        if psql("SHOW autovacuum") == "on":
            return False
        psql("ALTER SYSTEM SET autovacuum = on")
    else:
        psql("ALTER SYSTEM RESET autovacuum")
    psql("SELECT pg_reload_conf()")
    return True


def used_bytes(server):
    """Bytes the data takes, without the space that writes reuse: on SQLite the pages in use
    (the file less its free list, after a checkpoint); on PostgreSQL every relation after
    `VACUUM FULL` (which gives back dead rows' space)."""
    if server.database_url:
        subprocess.run(["psql", server.database_url, "-q", "-c", "VACUUM FULL"], check=True, capture_output=True)
        return database_size(server)[0]
    db = sqlite3.connect(os.path.join(server.data, "redline.db"), timeout=30)
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = db.execute("PRAGMA page_count").fetchone()[0] - db.execute("PRAGMA freelist_count").fetchone()[0]
        return pages * db.execute("PRAGMA page_size").fetchone()[0]
    finally:
        db.close()


def edit_turn_bytes(server, key, turns):
    """Bytes the database grows by per sync chat turn that changes one word of a ~5 KB document."""
    client = Client(server.port)
    sid = f"edit-{uuid.uuid4().hex[:8]}"
    html = "".join(f"<p>Paragraph {i} of the document, steady words for a steady size, number {i}.</p>"
                   for i in range(40))
    status, doc, _ = client.call("PUT", f"/v1/documents/{sid}", key, {"html": html})
    assert status == 200, doc
    # The soak's last jobs are archived first, so that only these turns change the size.
    time.sleep(15)
    before = used_bytes(server)
    for i in range(turns):
        # Paragraph n's full stop becomes "!", and back on the next pass: every turn changes one.
        n, (old, new) = i % 40, ((".", "!"), ("!", "."))[(i // 40) % 2]
        status, body, _ = client.call("POST", "/v1/chat", key,
                                      {"session_id": sid, "message": f'replace "number {n}{old}" with "number {n}{new}"'})
        assert status == 200, body
        assert body["document_changes"]["changes"], body
    at_once = used_bytes(server)
    # The sweep archives each finished job 10 s after it finished (docs/deploy.md, "Storage").
    time.sleep(15)
    after = used_bytes(server)
    return len(html), (at_once - before) / turns, (after - before) / turns


def main():
    p = argparse.ArgumentParser()
    p.add_argument("binary")
    p.add_argument("--minutes", type=float, default=30)
    p.add_argument("--warmup-minutes", type=int, default=0,
                   help="minutes run first and printed, but left out of the ratios and the JSON's minutes")
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--tenants", type=int, default=10)
    p.add_argument("--database-url")
    p.add_argument("--edit-turns", type=int, default=100)
    p.add_argument("--json")
    args = p.parse_args()
    data = tempfile.mkdtemp(prefix="redline-soak-")
    server = Server(os.path.abspath(args.binary), data, args.database_url)
    vacuum_was_off = args.database_url and autovacuum(args.database_url, True)
    if vacuum_was_off:
        print("PostgreSQL's autovacuum was off: on for this soak, as deployed")
    server.start()
    failed = []
    report = {"backend": "postgres" if args.database_url else "sqlite", "minutes": []}
    try:
        setup = Client(server.port)
        tenants = []
        for i in range(args.tenants):
            status, body, _ = setup.call("POST", "/v1/agents/signup", body={"name": f"tenant {i}"})
            assert status == 201, body
            server.admin("set-plan", "--user-id", body["user_id"], "--plan", "enterprise")
            tenants.append({"key": body["api_key"], "sessions": []})
        stats, stop = Stats(), threading.Event()
        threads = [threading.Thread(target=worker, args=(server.port, tenants, stats, stop, n), daemon=True)
                   for n in range(args.clients)]
        for t in threads:
            t.start()
        started = time.time()
        minute = 0
        while time.time() - started < (args.warmup_minutes + args.minutes) * 60:
            time.sleep(max(0.0, started + (minute + 1) * 60 - time.time()))
            minute += 1
            lat, errors = stats.take()
            rss, fds = server.rss_mib_and_fds()
            size, tables = database_size(server, by_table=False)
            row = {"minute": minute, "requests_per_s": round(sum(len(v) for v in lat.values()) / 60, 1),
                   "rss_mib": round(rss, 1), "fds": fds, "db_bytes": size, "tables": tables,
                   "kinds": {k: {"n": len(v), "p50": pct(v, 50), "p99": pct(v, 99), "errors": errors[k]}
                             for k, v in sorted(lat.items())}}
            warm = minute <= args.warmup_minutes
            report.setdefault("warmup" if warm else "minutes", []).append(row)
            kinds = " ".join(f"{k}={v['p50']}/{v['p99']}" for k, v in row["kinds"].items())
            print(f"min {minute}{' (warm-up)' if warm else ''}: {row['requests_per_s']} req/s, "
                  f"rss {row['rss_mib']} MiB, fds {fds}, "
                  f"db {size / 2**20:.1f} MiB (wal {tables.get('file:-wal', 0) / 2**20:.1f}) | p50/p99 ms {kinds}",
                  flush=True)
        stop.set()
        for t in threads:
            t.join(timeout=180)
        if stats.fives:
            failed.append(f"{stats.fives} answers were 5xx")
        first, last = report["minutes"][0], report["minutes"][-1]
        report["throughput_ratio"] = round(last["requests_per_s"] / max(first["requests_per_s"], 0.1), 2)
        report["p99_ratio"] = {k: round((last["kinds"][k]["p99"] or 0) / max(first["kinds"][k]["p99"] or 0.1, 0.1), 2)
                               for k in first["kinds"] if k in last["kinds"]}
        print(f"throughput last/first minute: {report['throughput_ratio']}")
        print(f"p99 last/first minute: {report['p99_ratio']}")
        _, final_tables = database_size(server, checkpoint=True)
        report["final_tables"] = final_tables
        print("database by table (bytes):", json.dumps(dict(sorted(final_tables.items(), key=lambda kv: -kv[1])[:12])))

        doc_bytes, at_once, per_turn = edit_turn_bytes(server, tenants[0]["key"], args.edit_turns)
        report["edit_turn"] = {"document_bytes": doc_bytes, "bytes_per_turn": round(per_turn),
                               "bytes_per_turn_before_archiving": round(at_once)}
        print(f"bytes stored per one-word edit turn on a {doc_bytes}-byte document: {per_turn:.0f} "
              f"({at_once:.0f} before its job is archived)")

        # Restart: every session and document is there, no job is stuck.
        expected = {t["key"]: sorted(t["sessions"]) for t in tenants}
        server.stop()
        server.start()
        check = Client(server.port)
        lost = 0
        for key, sids in expected.items():
            listed, path = set(), "/v1/sessions?limit=1000"
            while path:
                status, body, _ = check.call("GET", path, key)
                listed.update(s["session_id"] for s in body)
                # The next page's address is in the Link header (rel="next").
                nxt = re.search(r'<([^>]+)>;\s*rel="next"', check.link or "")
                path = nxt.group(1) if nxt else None
                if path and path.startswith("http"):
                    path = "/" + path.split("/", 3)[3]
            lost += len(set(sids) - listed)
            for sid in sids[:50]:
                if check.call("GET", f"/v1/documents/{sid}", key)[0] != 200:
                    lost += 1
        time.sleep(10)
        stuck = 0
        for key in expected:
            for status_name in ("pending", "in_progress"):
                status, body, _ = check.call("GET", f"/v1/jobs?status={status_name}&limit=100", key)
                stuck += len(body.get("jobs", [])) if status == 200 and isinstance(body, dict) else 0
        report["restart"] = {"sessions_lost": lost, "jobs_stuck": stuck}
        print(f"restart: {lost} sessions or documents lost, {stuck} jobs pending or in progress after 10 s")
        if lost:
            failed.append(f"{lost} sessions or documents lost over the restart")
        if stuck:
            failed.append(f"{stuck} jobs stuck after the restart")
    finally:
        try:
            server.stop()
        finally:
            shutil.rmtree(data, ignore_errors=True)
            if vacuum_was_off:
                autovacuum(args.database_url, False)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    print(json.dumps({k: v for k, v in report.items() if k not in ("minutes", "final_tables")}))
    if failed:
        print("FAILED: " + "; ".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()

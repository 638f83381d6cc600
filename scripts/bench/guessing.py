#!/usr/bin/env python3
"""What the sign-in throttle costs an attacker, and what it costs a real user (docs/benchmarks.md
section 12; docs/api.md, "Sign-in throttling").

Python 3.11 standard library only.

    python3 scripts/bench/guessing.py path/to/redline [--seconds 120] [--accounts 80] [--threads 4]

Starts `redline serve` from a copy of the binary (SQLite, a temporary data folder,
REDLINE_LOG=warn, REDLINE_SIGNUP_COOLDOWN_SECS=0 so that many accounts can sign up, and
REDLINE_TRUSTED_PROXIES=127.0.0.1 so that each request can name its own client address in
`X-Forwarded-For`: a botnet). Signs up 2 × --accounts accounts, a target and a real user, then,
in one run:

  1. quiet: the real user signs in with the right password every 0.5 s (20 times), nothing else
     running: median and p95 latency;
  2. baseline ("as before the throttle"): --threads threads send wrong passwords, each guess at
     another account and from a fresh address, each account guessed at most 4 times (under its
     5 free failures), each address once (under its 20): nothing throttles them, every answer is
     401. Evaluated guesses per second, seconds per guess (wall time / guesses, all threads
     together) and the median latency of one wrong guess. The throttle's bookkeeping still runs,
     so this baseline is if anything slower than a build without a throttle: the ratios below
     are conservative;
  3. one target account: --threads threads hammer wrong passwords at ONE account as fast as they
     can for --seconds, each request from a fresh address (only the account scope brakes them).
     401s are evaluated guesses, 429s refused. Seconds per evaluated guess = --seconds /
     evaluated, and its ratio to the baseline's. Meanwhile the real user signs in to another
     account from its own address every 0.5 s (a separate process, so that the attacking
     threads do not hold its interpreter lock): median and p95 latency, and whether the median
     is under 100 ms. The time 100 and 1,000 guesses at one account take is computed from the
     documented schedule (5 free, then 1 s, 2 s, 4 s … capped at 900 s);
  4. spraying: --threads threads guess at the other --accounts accounts in turn, all from ONE
     address, for --seconds / 2: evaluated guesses, seconds per guess, ratio to the baseline.

Prints a summary table and, last, one line of JSON with every figure. Exits 1 when a claim
fails (the one-account attack under 100 times the baseline's seconds per guess, or the real
user's median sign-in during it at 100 ms or more) or an answer was not the expected one (a
5xx, a 429 in the baseline, a real sign-in refused).
"""
import argparse
import collections
import http.client
import json
import math
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

RIGHT = "violet tram at dusk 123"
USER_ADDRESS = "10.250.0.1"  # the real user's own address
SPRAY_ADDRESS = "10.200.0.1"  # the sprayer's one address
FREE_PER_ACCOUNT, FREE_PER_ADDRESS, BASE_S, CAP_S = 5, 20, 1, 900  # docs/api.md, "Sign-in throttling"
BASELINE_ROUNDS = 4  # guesses per baseline account: under its 5 free failures


# ---------------------------------------------------------------- HTTP


class Client:
    """One keep-alive connection; POSTs JSON with an optional X-Forwarded-For."""

    def __init__(self, port):
        self.port = port
        self.conn = None

    def post(self, path, body, xff=None):
        headers = {"Content-Type": "application/json", "User-Agent": "guessing-bench"}
        if xff:
            headers["X-Forwarded-For"] = xff
        data = json.dumps(body).encode()
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            t0 = time.perf_counter()
            try:
                self.conn.request("POST", path, body=data, headers=headers)
                r = self.conn.getresponse()
                payload = r.read()
            except (ConnectionError, http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise
                continue
            elapsed = time.perf_counter() - t0
            if r.getheader("Connection", "").lower() == "close":
                self.conn.close()
                self.conn = None
            return r.status, r.getheader("Retry-After"), payload, elapsed

    def close(self):
        if self.conn is not None:
            self.conn.close()


class Addresses:
    """Fresh client addresses 10.0.0.1, 10.0.0.2, … (second octet under 128, so never one of
    the fixed addresses above)."""

    def __init__(self):
        self.n = 0
        self.lock = threading.Lock()

    def fresh(self):
        with self.lock:
            self.n += 1
            n = self.n
        assert n < 1 << 23, "out of fresh addresses"
        return f"10.{n >> 16}.{(n >> 8) & 255}.{n & 255}"


def login(client, email, password, xff):
    return client.post("/v1/auth/login", {"email": email, "password": password}, xff)


# ---------------------------------------------------------------- the real user (own process)


def probe_main(argv):
    """`guessing.py --probe PORT EMAIL SECONDS INTERVAL`: signs in with the right password every
    INTERVAL s from USER_ADDRESS for SECONDS s; prints {"latencies_ms": [...], "statuses": {...}}."""
    port, email, seconds, interval = int(argv[0]), argv[1], float(argv[2]), float(argv[3])
    client = Client(port)
    lat, statuses = [], collections.Counter()
    start = time.monotonic()
    k = 0
    while True:
        due = start + k * interval
        if due - start >= seconds:
            break
        time.sleep(max(0.0, due - time.monotonic()))
        status, _, _, elapsed = login(client, email, RIGHT, USER_ADDRESS)
        statuses[status] += 1
        if status == 200:
            lat.append(elapsed * 1000)
        k += 1
    client.close()
    print(json.dumps({"latencies_ms": lat, "statuses": dict(statuses)}))


def start_probe(port, email, seconds, interval=0.5):
    return subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--probe", str(port), email, str(seconds), str(interval)],
        stdout=subprocess.PIPE,
        text=True,
    )


def finish_probe(proc):
    out, _ = proc.communicate()
    if proc.returncode != 0:
        sys.exit(f"the real user's process failed (exit {proc.returncode})")
    r = json.loads(out)
    r["statuses"] = {int(k): v for k, v in r["statuses"].items()}
    return r


def pct(values, p):
    """The p-th percentile (nearest rank) of values."""
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(p / 100 * len(s)) - 1))]


# ---------------------------------------------------------------- phases


def sign_up_all(port, emails, threads, addresses):
    todo = list(emails)
    lock = threading.Lock()
    failed = []

    def work():
        c = Client(port)
        while True:
            with lock:
                if not todo:
                    break
                email = todo.pop()
            status, _, body, _ = c.post("/v1/auth/signup", {"email": email, "password": RIGHT}, addresses.fresh())
            if status != 201:
                failed.append((email, status, body[:200]))
        c.close()

    ts = [threading.Thread(target=work) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if failed:
        sys.exit(f"sign-up failed: {failed[:3]}")


def baseline(port, accounts, threads, addresses):
    """Every guess at another account (round-major: an account is guessed again only after all
    the others) and from a fresh address."""
    todo = collections.deque((n, email) for n in range(BASELINE_ROUNDS) for email in accounts)
    lock = threading.Lock()
    statuses, lat = collections.Counter(), []

    def work():
        c = Client(port)
        while True:
            with lock:
                if not todo:
                    break
                n, email = todo.popleft()
            status, _, _, elapsed = login(c, email, f"wrong guess {n}", addresses.fresh())
            with lock:
                statuses[status] += 1
                if status == 401:
                    lat.append(elapsed)
        c.close()

    ts = [threading.Thread(target=work) for _ in range(threads)]
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    wall = time.perf_counter() - t0
    evaluated = statuses[401]
    return {
        "guesses": sum(statuses.values()),
        "evaluated": evaluated,
        "wall_s": wall,
        "guesses_per_s": evaluated / wall,
        "s_per_guess": wall / evaluated,
        "median_latency_ms": statistics.median(lat) * 1000,
        "p95_latency_ms": pct(lat, 95) * 1000,
        "statuses": dict(statuses),
    }


def hammer(port, threads, seconds, target):
    """`threads` threads send guesses as fast as they can for `seconds`; target() gives the
    (email, address) of each. Returns the counts and the times of the evaluated guesses."""
    lock = threading.Lock()
    statuses, evaluated_at, retry_after = collections.Counter(), [], []
    counter = [0]
    t0 = time.monotonic()
    deadline = t0 + seconds

    def work():
        c = Client(port)
        while time.monotonic() < deadline:
            with lock:
                counter[0] += 1
                n = counter[0]
            email, address = target(n)
            status, ra, _, _ = login(c, email, f"guess number {n}", address)
            with lock:
                statuses[status] += 1
                if status == 401:
                    evaluated_at.append(time.monotonic() - t0)
                elif status == 429 and ra is not None:
                    retry_after.append(int(ra))
        c.close()

    ts = [threading.Thread(target=work) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    evaluated = statuses[401]
    return {
        "seconds": seconds,
        "requests": sum(statuses.values()),
        "evaluated": evaluated,
        "refused_429": statuses[429],
        "s_per_guess": seconds / evaluated if evaluated else float("inf"),
        "evaluated_at_s": [round(t, 2) for t in sorted(evaluated_at)],
        "max_retry_after_s": max(retry_after, default=None),
        "statuses": dict(statuses),
    }


def schedule_seconds(guesses, free):
    """Seconds from the first guess to the `guesses`-th at one scope, each made the moment the
    documented schedule allows: `free` at once, then waits of 1 s, 2 s, 4 s … capped at 900 s."""
    return sum(min(BASE_S * 2 ** (j - free - 1), CAP_S) for j in range(free + 1, guesses + 1))


# ---------------------------------------------------------------- main


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(port, server, log_path):
    for _ in range(300):
        if server.poll() is not None:
            sys.exit(f"redline serve exited ({server.returncode}):\n{open(log_path).read()[-3000:]}")
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/healthz")
            if c.getresponse().status == 200:
                c.close()
                return
            c.close()
        except OSError:
            pass
        time.sleep(0.1)
    sys.exit("redline serve did not answer /healthz within 30 s")


def fmt_duration(s):
    if s < 120:
        return f"{s:,.0f} s"
    if s < 2 * 3600:
        return f"{s / 60:,.1f} min"
    if s < 2 * 86400:
        return f"{s / 3600:,.1f} h"
    return f"{s / 86400:,.1f} days"


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--probe":
        return probe_main(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary")
    ap.add_argument("--seconds", type=float, default=120, help="the one-account attack's length (spraying: half)")
    ap.add_argument("--accounts", type=int, default=80, help="accounts of the baseline, and as many to spray")
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--quiet-samples", type=int, default=20, help="real sign-ins with no attack running")
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="redline-guessing-")
    binary = os.path.join(tmp, "redline")
    shutil.copy2(args.binary, binary)  # a concurrent build cannot replace the binary under test
    port = free_port()
    env = dict(
        os.environ,
        REDLINE_BIND=f"127.0.0.1:{port}",
        REDLINE_DATA_DIR=os.path.join(tmp, "data"),
        REDLINE_LOG=os.environ.get("REDLINE_LOG", "warn"),
        REDLINE_SIGNUP_COOLDOWN_SECS="0",
        REDLINE_TRUSTED_PROXIES="127.0.0.1",
    )
    nice = ["nice", "-n", "-20"] if os.geteuid() == 0 else []
    log_path = os.path.join(tmp, "server.log")
    log = open(log_path, "w")
    server = subprocess.Popen(nice + [binary, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_healthy(port, server, log_path)
        return run(args, port, log_path)
    finally:
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


def run(args, port, log_path):
    addresses = Addresses()
    base_accounts = [f"guess-base-{i}@example.com" for i in range(args.accounts)]
    spray_accounts = [f"guess-spray-{i}@example.com" for i in range(args.accounts)]
    target, user = "guess-target@example.com", "real-user@example.com"
    t = time.perf_counter()
    sign_up_all(port, base_accounts + spray_accounts + [target, user], args.threads, addresses)
    print(f"signed up {2 * args.accounts + 2} accounts in {time.perf_counter() - t:.1f} s", flush=True)

    # 1. the real user with nothing else running
    quiet = finish_probe(start_probe(port, user, args.quiet_samples * 0.5))
    q = quiet["latencies_ms"]
    print(f"quiet: {len(q)} real sign-ins, median {statistics.median(q):.1f} ms, p95 {pct(q, 95):.1f} ms, "
          f"statuses {quiet['statuses']}", flush=True)

    # 2. baseline
    b = baseline(port, base_accounts, args.threads, addresses)
    print(f"baseline: {b['evaluated']} wrong guesses evaluated in {b['wall_s']:.2f} s: {b['guesses_per_s']:.1f}/s, "
          f"{b['s_per_guess'] * 1000:.1f} ms per guess; one guess median {b['median_latency_ms']:.1f} ms; "
          f"statuses {b['statuses']}", flush=True)

    # 3. one target account, a fresh address per request; the real user meanwhile
    print(f"attacking one account for {args.seconds:.0f} s …", flush=True)
    probe = start_probe(port, user, args.seconds)
    one = hammer(port, args.threads, args.seconds, lambda n: (target, addresses.fresh()))
    during = finish_probe(probe)
    d = during["latencies_ms"]
    one["ratio"] = one["s_per_guess"] / b["s_per_guess"]
    print(f"one account: {one['requests']} requests, {one['evaluated']} evaluated, {one['refused_429']} refused (429), "
          f"{one['s_per_guess']:.2f} s per guess = {one['ratio']:,.0f}× the baseline; evaluated at {one['evaluated_at_s']} s; "
          f"statuses {one['statuses']}", flush=True)
    print(f"real user during it: {len(d)} sign-ins, median {statistics.median(d):.1f} ms, p95 {pct(d, 95):.1f} ms, "
          f"max {max(d):.1f} ms, statuses {during['statuses']}", flush=True)

    # 4. spraying from one address
    spray_seconds = args.seconds / 2
    print(f"spraying {args.accounts} accounts from one address for {spray_seconds:.0f} s …", flush=True)
    spray = hammer(port, args.threads, spray_seconds,
                   lambda n: (spray_accounts[n % len(spray_accounts)], SPRAY_ADDRESS))
    spray["ratio"] = spray["s_per_guess"] / b["s_per_guess"]
    print(f"spraying: {spray['requests']} requests, {spray['evaluated']} evaluated, {spray['refused_429']} refused (429), "
          f"{spray['s_per_guess']:.2f} s per guess = {spray['ratio']:,.0f}× the baseline; evaluated at "
          f"{spray['evaluated_at_s']} s; statuses {spray['statuses']}", flush=True)

    # computed from the schedule
    computed = {}
    for k in (100, 1000):
        s = schedule_seconds(k, FREE_PER_ACCOUNT)
        computed[k] = {"seconds": s, "s_per_guess": s / k, "ratio": (s / k) / b["s_per_guess"],
                       "baseline_seconds": k * b["s_per_guess"]}

    # checks
    problems = []
    five_xx = {p: sum(v for s, v in r["statuses"].items() if s >= 500)
               for p, r in (("baseline", b), ("one account", one), ("spraying", spray), ("quiet", quiet), ("during", during))}
    for phase, n in five_xx.items():
        if n:
            problems.append(f"{n} answers of 5xx in {phase}")
    if set(b["statuses"]) != {401}:
        problems.append(f"baseline answers other than 401: {b['statuses']}")
    for name, r in (("quiet", quiet), ("during the attack", during)):
        if set(r["statuses"]) != {200}:
            problems.append(f"real sign-ins {name} not all 200: {r['statuses']}")
    for name, r in (("one account", one), ("spraying", spray)):
        other = {s: v for s, v in r["statuses"].items() if s not in (401, 429)}
        if other:
            problems.append(f"{name}: answers other than 401/429: {other}")
    holds_ratio = one["ratio"] >= 100
    holds_latency = statistics.median(d) < 100

    print()
    print("| figure | measured |")
    print("| --- | --- |")
    print(f"| real sign-in, no attack: median / p95 | {statistics.median(q):.1f} / {pct(q, 95):.1f} ms ({len(q)} sign-ins) |")
    print(f"| baseline: wrong guesses evaluated, {args.threads} threads, fresh account and address each | "
          f"{b['evaluated']} in {b['wall_s']:.2f} s: **{b['guesses_per_s']:.1f} guesses/s, "
          f"{b['s_per_guess'] * 1000:.1f} ms per guess**; one guess median {b['median_latency_ms']:.1f} ms |")
    print(f"| one account, {args.threads} threads, {one['seconds']:.0f} s, fresh address each request | "
          f"{one['evaluated']} evaluated, {one['refused_429']:,} refused: **{one['s_per_guess']:.2f} s per guess, "
          f"{one['ratio']:,.0f}× the baseline** |")
    print(f"| real sign-in during that attack: median / p95 | **{statistics.median(d):.1f}** / {pct(d, 95):.1f} ms "
          f"({len(d)} sign-ins, max {max(d):.1f} ms) |")
    print(f"| spraying {args.accounts} accounts from one address, {spray['seconds']:.0f} s | {spray['evaluated']} evaluated, "
          f"{spray['refused_429']:,} refused: **{spray['s_per_guess']:.2f} s per guess, {spray['ratio']:,.0f}× the baseline** |")
    for k, c in computed.items():
        unthrottled = c["baseline_seconds"]
        unthrottled = fmt_duration(unthrottled) if unthrottled >= 2 else f"{unthrottled:.2f} s"
        print(f"| {k:,} guesses at one account, computed from the schedule | {fmt_duration(c['seconds'])} "
              f"({c['s_per_guess']:,.0f} s per guess, {c['ratio']:,.0f}× the baseline; unthrottled: {unthrottled}) |")
    print()
    print(f"claim: one-account guessing costs ≥ 100× the baseline's time per guess: "
          f"{'HOLDS' if holds_ratio else 'FAILS'} ({one['ratio']:,.0f}×)")
    print(f"claim: a real sign-in during the attack has a median under 100 ms: "
          f"{'HOLDS' if holds_latency else 'FAILS'} ({statistics.median(d):.1f} ms)")
    for p in problems:
        print(f"PROBLEM: {p}")
    if any(five_xx.values()):
        print("server log (last 3,000 characters):\n" + open(log_path).read()[-3000:])

    summary = {
        "threads": args.threads,
        "seconds": args.seconds,
        "accounts": args.accounts,
        "quiet_median_ms": round(statistics.median(q), 2),
        "quiet_p95_ms": round(pct(q, 95), 2),
        "baseline_evaluated": b["evaluated"],
        "baseline_wall_s": round(b["wall_s"], 3),
        "baseline_guesses_per_s": round(b["guesses_per_s"], 2),
        "baseline_s_per_guess": round(b["s_per_guess"], 5),
        "baseline_median_latency_ms": round(b["median_latency_ms"], 2),
        "baseline_statuses": b["statuses"],
        "one_account_requests": one["requests"],
        "one_account_evaluated": one["evaluated"],
        "one_account_refused": one["refused_429"],
        "one_account_s_per_guess": round(one["s_per_guess"], 3),
        "one_account_ratio": round(one["ratio"], 1),
        "one_account_evaluated_at_s": one["evaluated_at_s"],
        "one_account_statuses": one["statuses"],
        "during_median_ms": round(statistics.median(d), 2),
        "during_p95_ms": round(pct(d, 95), 2),
        "during_max_ms": round(max(d), 2),
        "during_statuses": during["statuses"],
        "spray_seconds": spray["seconds"],
        "spray_requests": spray["requests"],
        "spray_evaluated": spray["evaluated"],
        "spray_refused": spray["refused_429"],
        "spray_s_per_guess": round(spray["s_per_guess"], 3),
        "spray_ratio": round(spray["ratio"], 1),
        "spray_statuses": spray["statuses"],
        "computed_100_guesses_s": computed[100]["seconds"],
        "computed_1000_guesses_s": computed[1000]["seconds"],
        "computed_100_ratio": round(computed[100]["ratio"]),
        "computed_1000_ratio": round(computed[1000]["ratio"]),
        "claim_ratio_holds": holds_ratio,
        "claim_latency_holds": holds_latency,
        "problems": problems,
    }
    print(json.dumps(summary))
    return 0 if holds_ratio and holds_latency and not problems else 1


if __name__ == "__main__":
    sys.exit(main())

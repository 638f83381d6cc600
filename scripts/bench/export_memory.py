#!/usr/bin/env python3
"""Time and peak memory of the server during one PDF export of a large document
(docs/benchmarks.md section 5, "PDF export memory").

    scripts/bench/export_memory.py path/to/redline [SECTIONS ...]      default: 20000 100000

For each size, a fresh server (SQLite, local blob folder, temporary data dir) is started, an
agent signs up, and a document of SECTIONS paragraphs of 45 random Greek-letter words (about
240 bytes of HTML each; 100,000 is the section cap) is saved with PUT /v1/documents/{id}.
VmHWM (the kernel's high-water mark of resident memory) is read from /proc/<pid>/status
before and after POST /v1/documents/export {format: pdf}; the export is timed by the client.
Set OUT=file.pdf to keep the last file (to compare two builds' output byte for byte).
Set ONE=1 to put all the words in one paragraph (one section of the same size) instead.
Set MIXED=1 for the mixed document of docs/export.md instead: SECTIONS paragraphs with a table
(10 rows of 3 cells, a header row) and a three-level list after every 100 of them (4000: 1.3 MB).
"""
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma "
         "tau upsilon phi chi psi omega").split()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def peak_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) // 1024
    return -1


def measure(binary, sections):
    port = free_port()
    data = tempfile.mkdtemp()
    env = dict(os.environ, REDLINE_BIND=f"127.0.0.1:{port}", REDLINE_DATA_DIR=data + "/data", REDLINE_LOG="warn")
    server = subprocess.Popen([binary, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"

    def call(method, path, body=None, key=None, raw=False):
        payload = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(base + path, data=payload, method=method)
        if payload is not None:
            req.add_header("Content-Type", "application/json")
        if key:
            req.add_header("Authorization", "Bearer " + key)
        with urllib.request.urlopen(req, timeout=900) as resp:
            out = resp.read()
            return out if raw else json.loads(out or b"null")

    try:
        for _ in range(200):
            try:
                call("GET", "/healthz")
                break
            except OSError:
                time.sleep(0.05)
        key = call("POST", "/v1/agents/signup", {"name": "bench"})["api_key"]
        rng = random.Random(1)
        paragraphs = (" ".join(rng.choice(WORDS) for _ in range(45)) for _ in range(sections))
        if os.environ.get("ONE"):
            html = "<p>" + " ".join(paragraphs) + "</p>"
        elif os.environ.get("MIXED"):
            def words(n):
                return " ".join(rng.choice(WORDS) for _ in range(n))
            parts = []
            for i, p in enumerate(paragraphs):
                parts.append("<p>" + p + "</p>")
                if i % 100 == 99:
                    rows = "".join("<tr>" + "".join(f"<td>{words(4)}</td>" for _ in range(3)) + "</tr>" for _ in range(10))
                    parts.append("<table><thead><tr><th>One</th><th>Two</th><th>Three</th></tr></thead><tbody>" + rows + "</tbody></table>")
                    inner = "<ul>" + "".join(f"<li>{words(6)}</li>" for _ in range(3)) + "</ul>"
                    middle = "<ol>" + "".join(f"<li>{words(6)}{inner}</li>" for _ in range(3)) + "</ol>"
                    parts.append("<ul>" + "".join(f"<li>{words(6)}{middle}</li>" for _ in range(3)) + "</ul>")
            html = "".join(parts)
        else:
            html = "".join("<p>" + p + "</p>" for p in paragraphs)
        call("PUT", "/v1/documents/bench", {"html": html}, key)
        before = peak_mb(server.pid)
        started = time.time()
        pdf = call("POST", "/v1/documents/export", {"session_id": "bench", "format": "pdf"}, key, raw=True)
        took = time.time() - started
        after = peak_mb(server.pid)
        if os.environ.get("OUT"):
            with open(os.environ["OUT"], "wb") as f:
                f.write(pdf)
        shape = "one section of" if os.environ.get("ONE") else "mixed," if os.environ.get("MIXED") else "sections,"
        print(f"{sections} paragraphs' words, {shape} HTML {len(html) / 1e6:.1f} MB: PDF {len(pdf) / 1e6:.1f} MB in {took:.2f} s; "
              f"VmHWM {before} MB before the export, {after} MB after (+{after - before} MB)")
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(data)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sizes = [int(a) for a in sys.argv[2:]] or [20000, 100000]
    for n in sizes:
        measure(sys.argv[1], n)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Which features of the corpus survive an export, as third-party readers see them, through
Redline and through LibreOffice's own conversion (docs/export.md, "Features × formats on the
corpus").

    scripts/bench/export_features.py path/to/redline [corpus-dir]   default: tests/fixtures/corpus

Every DOCX, HTML, Markdown and RTF source of the corpus (except those MANIFEST.tsv marks
`broken` or `encrypted`) is uploaded to a fresh server (SQLite, temporary data dir) with
POST /v1/documents/upload and exported as DOCX, PDF, HTML and Markdown; LibreOffice converts
the same source to DOCX and PDF (`soffice --headless --convert-to`; it does not read
Markdown). The readers: pandoc (`-t html`) for DOCX, HTML and Markdown, python-docx (.venv)
for the colours, pictures and direction of a DOCX, pdftotext and pdfimages for PDF. A
feature counts for a source when the reader finds it in the source itself; it is kept by an
output when the same reader finds it there. The table gives "kept / sources that have it"
per feature and output, and "—" where the output's reader cannot tell. It also checks that
LibreOffice opens every DOCX and PDF export: LibreOffice converts each DOCX export to PDF, and
poppler reads each PDF export without reporting an error (LibreOffice's Writer, the Debian
package the tests install, does not open PDFs; that takes its Draw, libreoffice-draw-nogui).
"""
import csv
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON = os.path.join(ROOT, ".venv", "bin", "python")
FEATURES = ["headings", "lists", "tables", "bold/italic", "links", "colours", "pictures", "footnotes", "RTL"]
OUTPUTS = ["redline docx", "redline pdf", "redline html", "redline md", "libreoffice docx", "libreoffice pdf"]
PANDOC_FROM = {"docx": "docx", "html": "html", "htm": "html", "md": "markdown", "rtf": "rtf"}
RTL = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")

DOCX_PROBE = r"""
import sys, json
from docx import Document
W = '{http://schemas.openxmlformats.org/wordprocessingml/2006/main}'
d = Document(sys.argv[1])
body = d.element.body
colours = any(c.get(W + 'val', 'auto').lower() not in ('auto', '000000') for c in body.iter(W + 'color'))
colours = colours or any(h.get(W + 'val', 'none') != 'none' for h in body.iter(W + 'highlight'))
rtl = any(True for _ in body.iter(W + 'bidi')) or any(r.get(W + 'val', 'true') not in ('0', 'false') for r in body.iter(W + 'rtl'))
print(json.dumps({'colours': colours, 'pictures': len(d.inline_shapes) > 0, 'RTL': rtl}))
"""


def run(args, timeout=180, **kw):
    return subprocess.run(args, capture_output=True, timeout=timeout, **kw)


def pandoc_html(path, fmt):
    out = run(["pandoc", "-f", fmt, "-t", "html", "--wrap=none", path])
    return out.stdout.decode("utf-8", "replace") if out.returncode == 0 else None


def from_html(html, raw=None):
    """The features pandoc's HTML shows (`raw`: the file itself, for colours and `dir`)."""
    raw = raw if raw is not None else html
    body, _ = split_notes(html)
    return {
        "headings": bool(re.search(r"<h[1-6][ >]", html)),
        "lists": "<li" in body,
        "tables": "<table" in html,
        "bold/italic": bool(re.search(r"<(strong|em|b|i)[ >]", html)),
        "links": bool(re.search(r"<a [^>]*href=\"(https?|mailto):", html)),
        "colours": bool(re.search(r"(?<!-)color:\s*(?!#?0{3,6}\b|black|inherit)[#a-z0-9]", raw, re.I)),
        "pictures": "<img" in html,
        "footnotes": "footnote-ref" in html or "doc-noteref" in html,
        "RTL": bool(re.search(r"dir=\"rtl\"", raw)) or bool(RTL.search(raw) and re.search(r"dir=\"rtl\"", html)),
    }


def split_notes(html):
    """The HTML before its notes section (pandoc's or ours), and that section."""
    at = re.search(r"<(?:section|div|aside)[^>]*(?:doc-endnotes|footnotes)", html)
    return (html[:at.start()], html[at.start():]) if at else (html, "")


def docx_features(path):
    html = pandoc_html(path, "docx")
    if html is None:
        return None
    found = from_html(html, raw="")
    probe = run([PYTHON, "-c", DOCX_PROBE, path])
    if probe.returncode == 0:
        found.update(json.loads(probe.stdout))
    else:
        found.update({"colours": None, "RTL": None})
    return found


def pdf_text(path):
    """The text, or None when poppler reports the file broken (an error, or a syntax error
    it recovered from)."""
    out = run(["pdftotext", "-enc", "UTF-8", path, "-"])
    if out.returncode != 0 or b"Error" in out.stderr:
        return None
    return out.stdout.decode("utf-8", "replace")


def words(text):
    return [w for w in re.findall(r"\w+", text) if len(w) > 3]


def pdf_features(path, source_text, notes_text, rtl_words):
    text = pdf_text(path)
    if text is None:
        return None
    pics = run(["pdfimages", "-list", path]).stdout.decode("utf-8", "replace").splitlines()[2:]
    raw = open(path, "rb").read()
    have = set(re.findall(r"\w+", text))
    notes = words(notes_text)
    return {
        "headings": None,
        "lists": None,
        "tables": None,
        "bold/italic": None,
        "links": bool(re.search(rb"/URI\s*\(", raw)) or _links_in_streams(raw),
        "colours": None,
        "pictures": len(pics) > 0,
        # The notes' words are in the text (where the note sits is not read).
        "footnotes": bool(notes) and sum(w in have for w in notes) / len(notes) >= 0.9,
        # Right-to-left words come back in logical order.
        "RTL": bool(rtl_words) and sum(w in have for w in rtl_words) / len(rtl_words) >= 0.9,
        "recall": (sum(w in have for w in source_text) / len(source_text)) if source_text else None,
    }


def _links_in_streams(raw):
    """A URI action inside a compressed object stream."""
    for m in re.finditer(rb"stream\r?\n", raw):
        end = raw.find(b"endstream", m.end())
        try:
            data = zlib.decompress(raw[m.end():end])
        except zlib.error:
            continue
        if b"/URI" in data:
            return True
    return False


class Server:
    def __init__(self, binary):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        self.data = tempfile.mkdtemp()
        env = dict(os.environ, REDLINE_BIND=f"127.0.0.1:{self.port}", REDLINE_DATA_DIR=self.data + "/data",
                   REDLINE_LOG="warn")
        self.proc = subprocess.Popen([binary, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{self.port}"
        for _ in range(400):
            try:
                self.call("GET", "/healthz")
                break
            except OSError:
                time.sleep(0.05)
        self.key = self.call("POST", "/v1/agents/signup", {"name": "features"})["api_key"]

    def call(self, method, path, body=None, raw=False, data=None, ctype=None):
        payload = json.dumps(body).encode() if body is not None else data
        req = urllib.request.Request(self.base + path, data=payload, method=method)
        if body is not None:
            req.add_header("Content-Type", "application/json")
        if ctype:
            req.add_header("Content-Type", ctype)
        if getattr(self, "key", None):
            req.add_header("Authorization", "Bearer " + self.key)
        with urllib.request.urlopen(req, timeout=300) as resp:
            out = resp.read()
            return out if raw else json.loads(out or b"null")

    def upload(self, session, path):
        boundary = uuid.uuid4().hex
        name = os.path.basename(path)
        parts = [f"--{boundary}\r\nContent-Disposition: form-data; name=\"session_id\"\r\n\r\n{session}\r\n".encode(),
                 f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
                 f"Content-Type: application/octet-stream\r\n\r\n".encode() + open(path, "rb").read() + b"\r\n",
                 f"--{boundary}--\r\n".encode()]
        return self.call("POST", "/v1/documents/upload", data=b"".join(parts),
                         ctype=f"multipart/form-data; boundary={boundary}")

    def export(self, session, fmt):
        return self.call("POST", "/v1/documents/export", {"session_id": session, "format": fmt}, raw=True)

    def stop(self):
        self.proc.terminate()
        self.proc.wait()
        shutil.rmtree(self.data, ignore_errors=True)


def soffice(files, target, outdir, profile):
    """Converts the files in one LibreOffice run (one start-up for all)."""
    for at in range(0, len(files), 40):
        args = ["soffice", f"-env:UserInstallation=file://{profile}", "--headless", "--convert-to", target,
                "--outdir", outdir] + files[at:at + 40]
        run(args, timeout=1800)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    corpus = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "tests", "fixtures", "corpus")
    skip = set()
    with open(os.path.join(corpus, "MANIFEST.tsv")) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if {"broken", "encrypted"} & set(row["features"].split(",")):
                skip.add(row["file"])
    sources = sorted(f"{d}/{n}" for d in ("docx", "html", "md", "rtf") for n in os.listdir(os.path.join(corpus, d))
                     if f"{d}/{n}" not in skip)
    work = tempfile.mkdtemp()
    profile = os.path.join(work, "lo-profile")
    for sub in ("src", "redline", "lo", "check"):
        os.makedirs(os.path.join(work, sub))
    have = {f: 0 for f in FEATURES}
    kept = {(f, o): 0 for f in FEATURES for o in OUTPUTS}
    lo_sources = {f: 0 for f in FEATURES}
    opens = {"docx": [0, 0], "pdf": [0, 0]}
    recalls = {"redline pdf": [], "libreoffice pdf": []}
    # 1. Redline: upload and export every source (files named by their index).
    server = Server(binary)
    exported = {}
    try:
        for i, rel in enumerate(sources):
            src = os.path.join(corpus, rel)
            try:
                server.upload(f"s{i}", src)
                for fmt, ext in (("docx", "docx"), ("pdf", "pdf"), ("html", "html"), ("markdown", "md")):
                    path = os.path.join(work, "redline", f"{i}.{ext}")
                    with open(path, "wb") as out:
                        out.write(server.export(f"s{i}", fmt))
                exported[i] = True
            except urllib.error.HTTPError as e:
                print(f"{rel}: Redline refused it ({e.code}), counted as lost", file=sys.stderr)
    finally:
        server.stop()
    # 2. LibreOffice: the same sources (not Markdown) to DOCX and PDF, and Redline's DOCX to PDF.
    lo_inputs = []
    for i, rel in enumerate(sources):
        if not rel.startswith("md/"):
            copy = os.path.join(work, "src", f"{i}.{rel.rsplit('.', 1)[1]}")
            shutil.copy(os.path.join(corpus, rel), copy)
            lo_inputs.append(copy)
    soffice(lo_inputs, "docx:MS Word 2007 XML", os.path.join(work, "lo"), profile)
    soffice(lo_inputs, "pdf:writer_pdf_Export", os.path.join(work, "lo"), profile)
    docx_exports = [os.path.join(work, "redline", f"{i}.docx") for i in exported]
    soffice(docx_exports, "pdf", os.path.join(work, "check"), profile)
    # 3. The readers.
    try:
        for i, rel in enumerate(sources):
            src = os.path.join(corpus, rel)
            ext = rel.rsplit(".", 1)[1].lower()
            html = pandoc_html(src, PANDOC_FROM[ext])
            if html is None:
                print(f"{rel}: pandoc cannot read the source, left out", file=sys.stderr)
                continue
            raw = open(src, "rb").read().decode("utf-8", "replace")
            source = from_html(html, raw=raw if ext in ("html", "htm") else "")
            if ext == "docx":
                source.update({k: v for k, v in (docx_features(src) or {}).items() if k in ("colours", "pictures", "RTL") and v})
            if ext == "rtf":
                source["colours"] = bool(re.search(r"\\cf[1-9]", raw)) or source["colours"]
            source["RTL"] = source["RTL"] or bool(RTL.search(re.sub(r"<[^>]+>", " ", html)))
            plain = re.sub(r"<[^>]+>", " ", html)
            body_html, note_html = split_notes(html)
            notes_text = re.sub(r"<[^>]+>", " ", note_html)
            source_words = words(re.sub(r"<[^>]+>", " ", body_html))
            rtl_words = [w for w in re.findall(r"\w+", plain) if RTL.search(w)][:50]
            for f in FEATURES:
                have[f] += bool(source[f])
                if ext != "md":
                    lo_sources[f] += bool(source[f])
            outs = {}
            if i in exported:
                for ext_out in ("docx", "pdf", "html", "md"):
                    outs[f"redline {ext_out}"] = os.path.join(work, "redline", f"{i}.{ext_out}")
            for ext_out in ("docx", "pdf"):
                path = os.path.join(work, "lo", f"{i}.{ext_out}")
                if ext != "md" and os.path.exists(path):
                    outs[f"libreoffice {ext_out}"] = path
            found = {}
            for name, path in outs.items():
                if name.endswith("docx"):
                    found[name] = docx_features(path)
                elif name.endswith("pdf"):
                    found[name] = pdf_features(path, source_words, notes_text, rtl_words)
                    if found[name] and found[name]["recall"] is not None:
                        recalls[name].append(found[name]["recall"])
                elif name.endswith("html"):
                    body = open(path, encoding="utf-8", errors="replace").read()
                    found[name] = from_html(pandoc_html(path, "html") or "", raw=body)
                    # pandoc does not read DPUB-ARIA notes from HTML: the file keeps them.
                    found[name]["footnotes"] = found[name]["footnotes"] or "doc-noteref" in body
                else:
                    found[name] = from_html(pandoc_html(path, "markdown") or "", raw="")
            for f in FEATURES:
                if not source[f]:
                    continue
                for o in OUTPUTS:
                    v = (found.get(o) or {}).get(f, False)
                    if v is None:
                        kept[(f, o)] = None
                    elif kept[(f, o)] is not None:
                        kept[(f, o)] += bool(v)
            # Every DOCX and PDF export opens: LibreOffice converted the DOCX, poppler reads the PDF.
            if i in exported:
                opens["docx"][1] += 1
                opens["docx"][0] += os.path.exists(os.path.join(work, "check", f"{i}.pdf"))
                opens["pdf"][1] += 1
                opens["pdf"][0] += found.get("redline pdf") is not None
            print(f"{rel}: " + ", ".join(f for f in FEATURES if source[f]), file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"\n{len(sources)} sources; LibreOffice does not read Markdown, so its columns count the "
          f"{len([s for s in sources if not s.startswith('md/')])} others.\n")
    print("| feature | sources with it | " + " | ".join(f"`{o}`" for o in OUTPUTS) + " |")
    print("| --- | --- |" + " --- |" * len(OUTPUTS))
    for f in FEATURES:
        cells = []
        for o in OUTPUTS:
            n = lo_sources[f] if o.startswith("libreoffice") else have[f]
            k = kept[(f, o)]
            cells.append("—" if k is None else f"{k} / {n}")
        print(f"| {f} | {have[f]} ({lo_sources[f]} not Markdown) | " + " | ".join(cells) + " |")
    for name, values in recalls.items():
        if values:
            print(f"\n{name}: pdftotext word recall mean {sum(values) / len(values):.3f}, "
                  f"min {min(values):.3f} over {len(values)} files")
    print(f"\nDOCX exports LibreOffice converts to PDF: {opens['docx'][0]} / {opens['docx'][1]}; "
          f"PDF exports poppler reads without an error: {opens['pdf'][0]} / {opens['pdf'][1]}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Peak memory of the server during one POST /v1/documents/upload of a ~50 MB file
(docs/benchmarks.md section 5, issue 4: under 3x the file size).

    scripts/bench/upload_memory.py path/to/redline [KIND ...]      KIND: docx-images, docx-text, txt, pdf

For each kind, a fresh server (SQLite, local blob folder, temporary data dir) is started;
one small upload warms it up; VmHWM (the kernel's high-water mark of resident memory) is
read from /proc/<pid>/status before and after the big upload. Reported: the file size,
VmHWM before and after, and the growth (after - before) divided by the file size; the
absolute peak over the file size is printed too. REDLINE_MAX_ATTACHMENT_BYTES is raised to
60 MB (its default, 50 MiB, would also admit 50,000,000 bytes).

Files (generated, deterministic, into a temporary folder):
- docx-images: one page of text and one 50 MB picture (incompressible bytes behind a PNG
  signature, as photos are): what makes real DOCX files big;
- docx-text: ~50 MB of paragraphs (deflated to a few MB), the worst case for conversion
  and sectioning: every byte becomes HTML and sections;
- txt: 50 MB of plain-text paragraphs;
- pdf: a PDF with one 50 MB image stream and a line of text.
"""
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
import zipfile
import io
import json
import socket

SIZE = 50_000_000


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def vmhwm(pid):
    status = open(f"/proc/{pid}/status").read()
    hwm = int(re.search(r"^VmHWM:\s+(\d+)\s+kB", status, re.M).group(1)) * 1024
    rss = int(re.search(r"^VmRSS:\s+(\d+)\s+kB", status, re.M).group(1)) * 1024
    return hwm, rss


def paragraphs(total):
    rnd = random.Random(4)
    words = "the quick brown fox jumps over lazy dog contract clause party agrees shall notice term".split()
    out, n = [], 0
    while n < total:
        p = " ".join(rnd.choice(words) for _ in range(60))
        out.append(p)
        n += len(p) + 2
    return out


def docx(body_xml, media=None):
    rels = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            + ('<Relationship Id="rIdImg" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/image1.png"/>' if media else '')
            + '</Relationships>')
    doc = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
           '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
           'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" '
           'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
           'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
           'xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><w:body>'
           + body_xml + '</w:body></w:document>')
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml",
                   '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
                   '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
                   '<Default Extension="xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/>'
                   '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>')
        z.writestr("_rels/.rels",
                   '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
                   '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>')
        z.writestr("word/document.xml", doc)
        z.writestr("word/_rels/document.xml.rels", rels)
        if media:
            z.writestr(zipfile.ZipInfo("word/media/image1.png"), media, compress_type=zipfile.ZIP_STORED)
    return buf.getvalue()


def para(text):
    return f"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>"


def make(kind, folder):
    rnd = random.Random(7)
    if kind == "docx-images":
        media = b"\x89PNG\r\n\x1a\n" + rnd.randbytes(SIZE - 8 - 4096)
        drawing = ('<w:p><w:r><w:drawing><wp:inline><wp:extent cx="5000000" cy="3000000"/><wp:docPr id="1" name="p" descr="photo"/>'
                   '<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic>'
                   '<pic:blipFill><a:blip r:embed="rIdImg"/></pic:blipFill></pic:pic></a:graphicData></a:graphic>'
                   '</wp:inline></w:drawing></w:r></w:p>')
        data = docx("".join(para(p) for p in paragraphs(3000)) + drawing, media)
        name = "big.docx"
    elif kind == "docx-text":
        body, size = [], 0
        for p in paragraphs(SIZE):
            x = para(p)
            body.append(x)
            size += len(x)
            if size > SIZE:
                break
        data = docx("".join(body))
        name = "big.docx"
    elif kind == "txt":
        data = "\n\n".join(paragraphs(SIZE)).encode()[:SIZE]
        name = "big.txt"
    elif kind == "pdf":
        image = rnd.randbytes(SIZE - 2048)
        objs = [b"<< /Type /Catalog /Pages 2 0 R >>",
                b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> /XObject << /Im1 6 0 R >> >> /Contents 4 0 R >>",
                None,
                b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
                None]
        content = b"BT /F1 12 Tf 72 720 Td (A fifty megabyte scan with one line of text.) Tj ET q 400 0 0 300 72 300 cm /Im1 Do Q"
        objs[3] = b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream"
        objs[5] = (b"<< /Type /XObject /Subtype /Image /Width 4000 /Height %d /ColorSpace /DeviceRGB /BitsPerComponent 8 /Length %d >>\nstream\n"
                   % (len(image) // 12000, len(image)) + image + b"\nendstream")
        out = bytearray(b"%PDF-1.4\n")
        offsets = []
        for i, o in enumerate(objs, 1):
            offsets.append(len(out))
            out += b"%d 0 obj\n" % i + o + b"\nendobj\n"
        xref = len(out)
        out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
        for off in offsets:
            out += b"%010d 00000 n \n" % off
        out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
        data = bytes(out)
        name = "big.pdf"
    else:
        raise SystemExit(f"unknown kind {kind}")
    path = os.path.join(folder, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def multipart(fields, file_name, file_bytes):
    boundary = uuid.uuid4().hex
    parts = []
    for k, v in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode())
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{file_name}"\r\n'
                 f'Content-Type: application/octet-stream\r\n\r\n'.encode() + file_bytes + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def upload(base, key, path):
    body, ctype = multipart({"session_id": "bench-" + uuid.uuid4().hex[:8], "open_mode": "replace"},
                            os.path.basename(path), open(path, "rb").read())
    req = urllib.request.Request(base + "/v1/documents/upload", data=body, method="POST",
                                 headers={"Authorization": f"Bearer {key}", "Content-Type": ctype})
    start = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=600) as r:
            answer = json.loads(r.read())
            status = r.status
    except urllib.error.HTTPError as e:
        status, answer = e.code, e.read()[:300]
    return status, time.monotonic() - start, answer


def run(binary, kind):
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
        env.update({"REDLINE_BIND": f"127.0.0.1:{port}", "REDLINE_DATA_DIR": os.path.join(tmp, "data"),
                    "REDLINE_PUBLIC_BASE_URL": f"http://127.0.0.1:{port}",
                    "REDLINE_MAX_ATTACHMENT_BYTES": "60000000", "REDLINE_LLM_PROVIDER": "builtin"})
        admin = lambda *a: json.loads(subprocess.run([binary, "admin", *a], env=env, cwd=tmp, check=True,
                                                     capture_output=True, text=True).stdout.strip().splitlines()[-1])
        user = admin("create-user", "--email", "bench@example.org", "--password", "correct horse battery staple", "--plan", "pro")
        user_id = user.get("user_id") or user.get("id")
        key = admin("create-key", "--user-id", user_id)
        key = key.get("key") or key.get("api_key")
        path = make(kind, tmp)
        size = os.path.getsize(path)
        server = subprocess.Popen([binary], env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "log"), "w"))
        try:
            base = f"http://127.0.0.1:{port}"
            for _ in range(600):
                try:
                    urllib.request.urlopen(base + "/v1/sessions", timeout=1)
                except urllib.error.HTTPError:
                    break
                except OSError:
                    time.sleep(0.1)
            small = os.path.join(tmp, "small.txt")
            open(small, "w").write("warm up\n\nsecond paragraph\n")
            upload(base, key, small)
            before, _ = vmhwm(server.pid)
            status, secs, answer = upload(base, key, path)
            after, rss = vmhwm(server.pid)
            sections = answer.get("section_count") if isinstance(answer, dict) else answer
            mb = 1e6
            print(f"| {kind} | {size / mb:.1f} MB | {status} ({sections} sections) | {secs:.1f} s | {before / mb:.0f} MB | "
                  f"{after / mb:.0f} MB | {(after - before) / size:.2f}× | {after / size:.2f}× | {rss / mb:.0f} MB |", flush=True)
        finally:
            server.terminate()
            server.wait(timeout=30)


def main():
    binary = sys.argv[1]
    kinds = sys.argv[2:] or ["docx-images", "docx-text", "txt", "pdf"]
    print("| file | size | answer | time | VmHWM before | VmHWM after | growth ÷ size | peak ÷ size | RSS after |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for kind in kinds:
        run(binary, kind)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Which reader reads which kind of DOCX tracked change, measured (docs/conversion.md,
"Tracked changes").

    python3 scripts/bench/revision_kinds.py BASE_URL API_KEY

For each revision kind it writes a small DOCX by hand (one revision of that kind by one
author) and asks each reader for the document with every revision accepted and with every
one rejected: Redline (POST /v1/documents/upload with track_changes=accept|reject at
BASE_URL, a running `redline serve`), pandoc (--track-changes=accept|reject), LibreOffice
(scripts/lo-revisions.py: "Accept All", "Reject All") and mammoth (which has no choice: its
one reading is compared with both). A cell says which readings came out right. Prints a
Markdown table.

Needs pandoc, soffice with python3-uno, and mammoth (pip install mammoth) in this Python.
"""
import html
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.request
import uuid
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
REV = 'w:id="{n}" w:author="Ann Lee" w:date="2024-01-02T03:04:05Z"'


def rev(n):
    return REV.format(n=n)


def p(text, ppr=""):
    return f'<w:p>{ppr}<w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>'


def row(cells, trpr="", wrap=None):
    out = "<w:tr>" + trpr
    for c in cells:
        run = f'<w:r><w:t>{c}</w:t></w:r>' if wrap != "del" else f'<w:r><w:delText>{c}</w:delText></w:r>'
        if wrap:
            run = f"<w:{wrap} {rev(90)}>{run}</w:{wrap}>"
        out += f'<w:tc><w:tcPr><w:tcW w:w="2000" w:type="dxa"/></w:tcPr><w:p>{run}</w:p></w:tc>'
    return out + "</w:tr>"


def table(*rows):
    return (
        '<w:tbl><w:tblPr><w:tblW w:w="0" w:type="auto"/></w:tblPr><w:tblGrid><w:gridCol w:w="2000"/><w:gridCol w:w="2000"/></w:tblGrid>'
        + "".join(rows)
        + "</w:tbl>"
    )


# kind: (body, paragraphs accepted, paragraphs rejected)
KINDS = {
    "inserted text (`w:ins`)": (
        f'<w:p><w:r><w:t xml:space="preserve">alpha </w:t></w:r><w:ins {rev(1)}><w:r><w:t xml:space="preserve">beta </w:t></w:r></w:ins><w:r><w:t>gamma</w:t></w:r></w:p>',
        ["alpha beta gamma"],
        ["alpha gamma"],
    ),
    "deleted text (`w:del`)": (
        f'<w:p><w:r><w:t xml:space="preserve">alpha </w:t></w:r><w:del {rev(1)}><w:r><w:delText xml:space="preserve">beta </w:delText></w:r></w:del><w:r><w:t>gamma</w:t></w:r></w:p>',
        ["alpha gamma"],
        ["alpha beta gamma"],
    ),
    "moved text (`w:moveFrom`/`w:moveTo`)": (
        f'<w:p><w:moveFrom {rev(1)}><w:r><w:t>moved</w:t></w:r></w:moveFrom></w:p>{p("still")}'
        f'<w:p><w:moveTo {rev(2)}><w:r><w:t>moved</w:t></w:r></w:moveTo></w:p>',
        ["still", "moved"],
        ["moved", "still"],
    ),
    "inserted paragraph (mark `w:pPr/w:rPr/w:ins`)": (
        p("one") + f'<w:p><w:pPr><w:rPr><w:ins {rev(1)}/></w:rPr></w:pPr><w:ins {rev(2)}><w:r><w:t>two</w:t></w:r></w:ins></w:p>' + p("three"),
        ["one", "two", "three"],
        ["one", "three"],
    ),
    "deleted paragraph (mark `w:pPr/w:rPr/w:del`)": (
        p("one") + f'<w:p><w:pPr><w:rPr><w:del {rev(1)}/></w:rPr></w:pPr><w:del {rev(2)}><w:r><w:delText>two</w:delText></w:r></w:del></w:p>' + p("three"),
        ["one", "three"],
        ["one", "two", "three"],
    ),
    "inserted table row (`w:trPr/w:ins`)": (
        table(row(["r1a", "r1b"]), row(["r2a", "r2b"], f"<w:trPr><w:ins {rev(1)}/></w:trPr>", "ins")) + p("end"),
        ["r1a", "r1b", "r2a", "r2b", "end"],
        ["r1a", "r1b", "end"],
    ),
    "deleted table row (`w:trPr/w:del`)": (
        table(row(["r1a", "r1b"]), row(["r2a", "r2b"], f"<w:trPr><w:del {rev(1)}/></w:trPr>", "del")) + p("end"),
        ["r1a", "r1b", "end"],
        ["r1a", "r1b", "r2a", "r2b", "end"],
    ),
}

DOC = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>{body}'
    "<w:sectPr/></w:body></w:document>"
)
TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
)
RELS = (
    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>'
)


def docx(path, body):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", TYPES)
        z.writestr("_rels/.rels", RELS)
        z.writestr("word/document.xml", DOC.format(body=body))


def words(text):
    """The text's words, in order (where paragraphs and cells break does not matter)."""
    return re.findall(r"\w+", text)


def strip_tags(markup):
    return html.unescape(re.sub(r"<[^>]+>", " ", markup))


def redline(base, key, path, how):
    boundary = uuid.uuid4().hex
    with open(path, "rb") as f:
        data = f.read()
    parts = []
    for name, value in (("session_id", "kinds-" + uuid.uuid4().hex[:8]), ("track_changes", how)):
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="k.docx"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n"
    )
    parts.append(f"--{boundary}--\r\n".encode())
    req = urllib.request.Request(
        base + "/v1/documents/upload",
        data=b"".join(parts),
        headers={"Authorization": f"Bearer {key}", "Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    with urllib.request.urlopen(req) as r:
        return strip_tags(json.load(r)["html"])


def pandoc(path, how):
    return subprocess.run(
        ["pandoc", f"--track-changes={how}", "-f", "docx", "-t", "plain", path], capture_output=True, text=True, check=True
    ).stdout


def libreoffice(path, how, tmp):
    out = os.path.join(tmp, f"lo-{how}.txt")
    subprocess.run(["/usr/bin/python3", os.path.join(HERE, "..", "lo-revisions.py"), how, path, out], check=True)
    with open(out, encoding="utf-8-sig") as f:
        return f.read()


def mammoth_text(path, _how):
    import mammoth

    with open(path, "rb") as f:
        return mammoth.extract_raw_text(f).value


def cell(accepted, rejected):
    if accepted and rejected:
        return "accept ✓ reject ✓"
    return f"accept {'✓' if accepted else '✗'} reject {'✓' if rejected else '✗'}"


def main():
    base, key = sys.argv[1].rstrip("/"), sys.argv[2]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind, (body, acc, rej) in KINDS.items():
            path = os.path.join(tmp, "k.docx")
            docx(path, body)
            want_acc, want_rej = words(" ".join(acc)), words(" ".join(rej))
            out = [kind]
            for reader in (
                lambda how: redline(base, key, path, how),
                lambda how: pandoc(path, how),
                lambda how: libreoffice(path, how, tmp),
            ):
                out.append(cell(words(reader("accept")) == want_acc, words(reader("reject")) == want_rej))
            one = words(mammoth_text(path, None))
            out.append("its one reading: " + ("the accepted" if one == want_acc else "the rejected" if one == want_rej else "neither"))
            rows.append(out)
    print("| revision kind | Redline | pandoc | LibreOffice | mammoth |")
    print("| --- | --- | --- | --- | --- |")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Side-by-side page images of what a Word user sees (docs/conversion.md, "What Word users
see, side by side"): for each DOCX named, LibreOffice's own rendering of the original (left)
and of the DOCX Redline exports after uploading it (right), page 1, at 40 dpi.

    scripts/bench/side_by_side.py path/to/redline [FILE.docx ...]

Defaults to the four corpus files of the Word round-trip issue. Needs LibreOffice
(`soffice`), `pdftoppm` (poppler-utils) and ImageMagick's `convert`; writes
docs/side-by-side/NAME.png.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_features import Server, soffice  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CORPUS = os.path.join(ROOT, "tests", "fixtures", "corpus", "docx")
DEFAULT = ["python-docx-hdr-header-footer.docx", "python-docx-having-images.docx", "pandoc-tables.docx",
           "tika-testWORD_various.docx"]


def page_one(pdf, png_stem):
    subprocess.run(["pdftoppm", "-r", "40", "-f", "1", "-l", "1", "-png", "-singlefile", pdf, png_stem], check=True)
    return png_stem + ".png"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    files = sys.argv[2:] or [os.path.join(CORPUS, f) for f in DEFAULT]
    work = tempfile.mkdtemp()
    profile = os.path.join(work, "lo-profile")
    for sub in ("orig", "redline"):
        os.makedirs(os.path.join(work, sub))
    server = Server(sys.argv[1])
    try:
        for i, src in enumerate(files):
            name = os.path.splitext(os.path.basename(src))[0]
            shutil.copy(src, os.path.join(work, "orig", name + ".docx"))
            upload = server.upload(f"s{i}", src)
            for warning in upload.get("warnings", []):
                print(f"{name}: warning: {warning}")
            with open(os.path.join(work, "redline", name + ".docx"), "wb") as out:
                out.write(server.export(f"s{i}", "docx"))
    finally:
        server.stop()
    for sub in ("orig", "redline"):
        folder = os.path.join(work, sub)
        soffice(sorted(os.path.join(folder, f) for f in os.listdir(folder)), "pdf", folder, profile)
    out_dir = os.path.join(ROOT, "docs", "side-by-side")
    os.makedirs(out_dir, exist_ok=True)
    for src in files:
        name = os.path.splitext(os.path.basename(src))[0]
        left = page_one(os.path.join(work, "orig", name + ".pdf"), os.path.join(work, "orig", name))
        right = page_one(os.path.join(work, "redline", name + ".pdf"), os.path.join(work, "redline", name))
        target = os.path.join(out_dir, name + ".png")
        subprocess.run(["convert", left, right, "-background", "white", "-splice", "8x0", "+append", "-strip",
                        target], check=True)
        print(target)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

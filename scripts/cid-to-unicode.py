#!/usr/bin/env python3
"""Writes the CID → Unicode tables of Adobe's four CJK character collections that the PDF
reader uses for CID fonts without a ToUnicode map (crates/convert/src/pdf/cid/).

    python3 scripts/cid-to-unicode.py CMAP_RESOURCES_DIR crates/convert/src/pdf/cid

CMAP_RESOURCES_DIR is a checkout of https://github.com/adobe-type-tools/cmap-resources
(BSD-3-Clause, see crates/convert/src/pdf/cid/LICENSE). Each collection's UTF-16 CMaps
(horizontal, then vertical) map Unicode to CIDs; a CID's character is the lowest code point
that maps to it outside the radical and compatibility blocks (else the lowest). The table is runs of
consecutive CIDs with consecutive code points, each run little-endian (u16 first CID, u32
first code point, u16 length), zlib-compressed.
"""
import os
import re
import struct
import sys
import zlib

COLLECTIONS = {
    "Japan1": ("Adobe-Japan1-7", "UniJIS-UTF16"),
    "GB1": ("Adobe-GB1-6", "UniGB-UTF16"),
    "CNS1": ("Adobe-CNS1-7", "UniCNS-UTF16"),
    "Korea1": ("Adobe-Korea1-2", "UniKS-UTF16"),
}


def code_point(hexstr):
    return bytes.fromhex(hexstr).decode("utf-16-be")


def read(path, table):
    text = open(path, encoding="latin-1").read()
    for block in re.finditer(r"begincidrange(.*?)endcidrange", text, re.S):
        for lo, hi, cid in re.findall(r"<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]+)>\s*(\d+)", block.group(1)):
            first, last = ord(code_point(lo)), ord(code_point(hi))
            for i in range(last - first + 1):
                table.setdefault(int(cid) + i, []).append(first + i)
    for block in re.finditer(r"begincidchar(.*?)endcidchar", text, re.S):
        for code, cid in re.findall(r"<([0-9a-fA-F]+)>\s*(\d+)", block.group(1)):
            chars = code_point(code)
            if len(chars) == 1:
                table.setdefault(int(cid), []).append(ord(chars))


def compatibility(cp):
    """Radicals and compatibility ideographs: the ideograph itself is preferred."""
    return 0x2E80 <= cp <= 0x2FDF or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F


def main():
    source, out = sys.argv[1], sys.argv[2]
    for name, (folder, cmap) in COLLECTIONS.items():
        table = {}
        for direction in ("H", "V"):
            read(os.path.join(source, folder, "CMap", f"{cmap}-{direction}"), table)
        runs = []
        for cid in sorted(table):
            cp = min(table[cid], key=lambda c: (compatibility(c), c))
            if runs and runs[-1][0] + runs[-1][2] == cid and runs[-1][1] + runs[-1][2] == cp and runs[-1][2] < 0xFFFF:
                runs[-1][2] += 1
            else:
                runs.append([cid, cp, 1])
        raw = b"".join(struct.pack("<HIH", *run) for run in runs)
        with open(os.path.join(out, f"{name}.bin"), "wb") as f:
            f.write(zlib.compress(raw, 9))
        print(f"{name}: {len(table)} CIDs in {len(runs)} runs")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""LibreOffice's own verdict on a DOCX's tracked changes, for the tests.

    lo-revisions.py accept|reject|list IN.docx OUT
    lo-revisions.py decide IN.docx OUT.docx [WORDS=DECISION ...] [+TEXT]

accept / reject: opens IN in a headless LibreOffice, runs "Accept All" or "Reject All"
(Edit > Track Changes) and stores the result as UTF-8 text in OUT (as HTML when OUT ends in
.html, which shows the formatting).
list: writes one line per revision LibreOffice reads (type, author, date, text) to OUT.
decide: a reviewer's pass, saved as a DOCX in OUT: each revision in a paragraph whose text
holds WORDS is accepted or rejected (Edit > Track Changes > Accept / Reject) as DECISION says:
`accept`, `reject`, or `mixed` (insertions accepted, deletions rejected); revisions of other
paragraphs are left as they are. `+TEXT` then types a new last paragraph TEXT with changes
recorded: a tracked insertion of the reviewer's own.

Needs Debian's libreoffice-writer-nogui and python3-uno (scripts/setup-tests.sh installs
them). Each run starts its own soffice with its own profile, so runs may overlap.

Comments are taken out of the copy that is opened: LibreOffice 7.4 (Debian 12) opened
through its UNO bridge without a display answers no document, or ends, for a DOCX or ODT
with comments (its command-line conversion opens the same file). The tests check that
the file with its comments opens with `soffice --convert-to`.
"""
import os
import subprocess
import sys
import tempfile
import time

import re
import zipfile

import uno
from com.sun.star.beans import PropertyValue


def prop(name, value):
    p = PropertyValue()
    p.Name = name
    p.Value = value
    return p


def without_comments(source, copy):
    """Writes `source` to `copy` without its comments part and their anchors."""
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(copy, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "word/comments.xml":
                continue
            if item.filename in ("word/document.xml", "word/_rels/document.xml.rels", "[Content_Types].xml"):
                text = data.decode("utf-8")
                text = re.sub(r"<w:commentRange(Start|End) [^>]*/>", "", text)
                text = re.sub(r"<w:r>(<w:rPr>(?:(?!</w:rPr>).)*</w:rPr>)?<w:commentReference [^>]*/></w:r>", "", text)
                text = re.sub(r"<Relationship [^>]*Target=\"comments.xml\"[^>]*/>", "", text)
                text = re.sub(r"<Override PartName=\"/word/comments.xml\"[^>]*/>", "", text)
                data = text.encode("utf-8")
            zout.writestr(item, data)


def paragraph_of(redline):
    """The text of the paragraph a revision starts in."""
    cursor = redline.RedlineStart.getText().createTextCursorByRange(redline.RedlineStart)
    cursor.gotoStartOfParagraph(False)
    cursor.gotoEndOfParagraph(True)
    return cursor.getString()


def decide(doc, smgr, context, target, rules):
    """Accepts or rejects revisions by the paragraph they are in, types `+TEXT`, saves as DOCX."""
    decisions = [r.split("=", 1) for r in rules if "=" in r]
    added = [r[1:] for r in rules if r.startswith("+")]
    dispatcher = smgr.createInstanceWithContext("com.sun.star.frame.DispatchHelper", context)
    controller = doc.getCurrentController()
    frame = controller.getFrame()
    skipped = set()
    for _ in range(500):
        chosen = None
        for i in range(doc.Redlines.Count):
            r = doc.Redlines.getByIndex(i)
            if i in skipped:
                continue
            para = paragraph_of(r)
            for words, decision in decisions:
                if words in para:
                    if decision == "mixed":
                        decision = "accept" if r.RedlineType == "Insert" else "reject"
                    chosen = (i, r, decision)
                    break
            if chosen:
                break
            skipped.add(i)
        if chosen is None:
            break
        _, r, decision = chosen
        before = doc.Redlines.Count
        cursor = r.RedlineStart.getText().createTextCursorByRange(r.RedlineStart)
        cursor.gotoRange(r.RedlineEnd, True)
        controller.select(cursor)
        command = {"accept": ".uno:AcceptTrackedChange", "reject": ".uno:RejectTrackedChange"}[decision]
        dispatcher.executeDispatch(frame, command, "", 0, ())
        if doc.Redlines.Count >= before:
            sys.exit("LibreOffice did not %s the revision in: %s" % (decision, paragraph_of(r)))
        skipped = set()
    if added:
        doc.RecordChanges = True
        text = doc.Text
        for line in added:
            end = text.createTextCursor()
            end.gotoEnd(False)
            text.insertControlCharacter(end, 0, False)  # PARAGRAPH_BREAK
            text.insertString(end, line, False)
    doc.storeToURL(uno.systemPathToFileUrl(target), (prop("FilterName", "MS Word 2007 XML"),))


def main():
    action, source, target = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    with tempfile.TemporaryDirectory(prefix="lo-revisions-") as tmp:
        pipe = "lo_revisions_%d" % os.getpid()
        soffice = subprocess.Popen(
            [
                "soffice",
                "-env:UserInstallation=file://%s/profile" % tmp,
                "--headless",
                "--invisible",
                "--norestore",
                "--accept=pipe,name=%s;urp;" % pipe,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            local = uno.getComponentContext()
            resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
            context = None
            for _ in range(600):
                try:
                    context = resolver.resolve("uno:pipe,name=%s;urp;StarOffice.ComponentContext" % pipe)
                    break
                except Exception:
                    if soffice.poll() is not None:
                        sys.exit("soffice ended before it could be reached")
                    time.sleep(0.1)
            if context is None:
                sys.exit("soffice could not be reached in 60 s")
            smgr = context.ServiceManager
            desktop = smgr.createInstanceWithContext("com.sun.star.frame.Desktop", context)
            copy = os.path.join(tmp, "copy.docx")
            without_comments(source, copy)
            doc = desktop.loadComponentFromURL(uno.systemPathToFileUrl(copy), "_blank", 0, (prop("Hidden", True),))
            if doc is None:
                sys.exit("LibreOffice could not open %s" % source)
            if action == "decide":
                decide(doc, smgr, context, target, sys.argv[4:])
            elif action == "list":
                lines = []
                for i in range(doc.Redlines.Count):
                    r = doc.Redlines.getByIndex(i)
                    text = r.RedlineStart.getText().createTextCursorByRange(r.RedlineStart)
                    text.gotoRange(r.RedlineEnd, True)
                    date = r.RedlineDateTime
                    lines.append(
                        "%s\t%s\t%04d-%02d-%02d\t%s"
                        % (r.RedlineType, r.RedlineAuthor, date.Year, date.Month, date.Day, text.getString())
                    )
                with open(target, "w", encoding="utf-8") as out:
                    out.write("\n".join(lines) + ("\n" if lines else ""))
            else:
                command = {"accept": ".uno:AcceptAllTrackedChanges", "reject": ".uno:RejectAllTrackedChanges"}[action]
                dispatcher = smgr.createInstanceWithContext("com.sun.star.frame.DispatchHelper", context)
                frame = doc.getCurrentController().getFrame()
                dispatcher.executeDispatch(frame, command, "", 0, ())
                if target.endswith(".html"):
                    store = (prop("FilterName", "HTML (StarWriter)"),)
                else:
                    store = (prop("FilterName", "Text (encoded)"), prop("FilterOptions", "UTF8,LF"))
                doc.storeToURL(uno.systemPathToFileUrl(target), store)
            doc.close(True)
            try:
                desktop.terminate()
            except Exception:
                pass
        finally:
            try:
                soffice.wait(timeout=30)
            except subprocess.TimeoutExpired:
                soffice.kill()


if __name__ == "__main__":
    main()

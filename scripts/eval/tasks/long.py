"""The tasks on the 50- and 500-section operations manuals (tasks/docs.py).

Each task names its chapter by the asset's name, and its expected facts and section indexes
are computed from the generated manual, so they stay right if the generator changes.
"""
import html
import re

from .docs import CONTRACTOR, manual_50, manual_500

NEW_CONTRACTOR = "Keystone Maintenance"


def _plain(block):
    return html.unescape(re.sub(r"<[^>]+>", "", block))


def _first_words(m, i, n=6):
    """The first words of block `i`, as many as make them the start of no other block."""
    words = _plain(m.blocks[i]).split()
    while n < len(words):
        prefix = " ".join(words[:n])
        if sum(_plain(b).startswith(prefix) for b in m.blocks) == 1:
            return prefix
        n += 1
    return " ".join(words)


def _tasks_for(m, tag, picks):
    """The tasks on manual `m`; `picks` chooses the chapters (by index) each task works on."""
    size = len(m.blocks)
    chapters = m.chapters
    out = []
    hits = m.index_of(CONTRACTOR)
    out.append(dict(
        id=f"{tag}-contractor", category="replace throughout",
        request=f"{CONTRACTOR} has been renamed {NEW_CONTRACTOR}. Update every mention of it in the manual.",
        targets=hits, changes=len(hits),
        checks=[{"absent": CONTRACTOR}, {"count": [NEW_CONTRACTOR, len(hits)]}]))

    c = chapters[picks["interval"]]
    sec = c.first + 4
    new_interval = 21 if c.interval != 21 else 35
    out.append(dict(
        id=f"{tag}-interval", category="local rewrite",
        request=f"At {c.name}, inspections now take place every {new_interval} days instead of every "
                f"{c.interval} days. Update its maintenance paragraph.",
        targets=[sec], changes=1,
        checks=[{"section": sec, "present": f"every {new_interval} days"},
                {"section": sec, "absent": f"every {c.interval} days"}]))

    c = chapters[picks["delete"]]
    sec = c.first + 9
    out.append(dict(
        id=f"{tag}-delete", category="delete",
        request=f"In the chapter on {c.name}, delete the paragraph that begins "
                f"\"{_first_words(m, sec)}\".",
        targets=[sec], changes=1,
        checks=[{"deleted": sec}]))

    c = chapters[picks["insert"]]
    out.append(dict(
        id=f"{tag}-insert", category="insert",
        request=f"Add a paragraph right after the heading of the {c.name} chapter that says: "
                f"\"This site is due to be decommissioned in 2028.\"",
        targets=[], changes=1,
        checks=[{"new": "This site is due to be decommissioned in 2028", "after": c.first, "before": c.first + 1}]))

    c = chapters[picks["question"]]
    out.append(dict(
        id=f"{tag}-question", category="questions", kind="question",
        request=f"Who is the asset manager of {c.name}, and on which extension can they be reached?",
        checks=[{"answer": c.manager}, {"answer": str(c.extension)}]))

    c = chapters[picks["list"]]
    sec = c.first + 3
    items = [html.unescape(t) for t in re.findall(r"<li>(.*?)</li>", m.blocks[sec])]
    out.append(dict(
        id=f"{tag}-list", category="list items",
        request=f"Add \"Emergency eyewash station\" to the end of the equipment list of {c.name}.",
        targets=[sec], changes=1,
        checks=[{"list": sec, "items": items + ["Emergency eyewash station"]}]))

    for t in out:
        t["doc_name"] = f"manual-{size}"
        t["size"] = size
    return out


def tasks():
    m50 = manual_50()
    m500 = manual_500()
    docs = {"manual-50": m50.html, "manual-500": m500.html}
    # Chapters far from both ends of the 500-section manual: Redline's outline of a long
    # document shows its headings and both ends only (docs/api.md, "The model").
    t = _tasks_for(m50, "m50", dict(interval=1, delete=2, insert=3, question=1, list=0)) + \
        _tasks_for(m500, "m500", dict(interval=17, delete=24, insert=31, question=12, list=20))
    for task in t:
        task["doc"] = docs[task["doc_name"]]
    return t

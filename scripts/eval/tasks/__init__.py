"""The evaluation's tasks: tasks/short.py (short documents, by hand) and tasks/long.py (the
generated 50- and 500-section manuals of tasks/docs.py).

A task is a dict:

* `id`, `category` (what it covers), `smoke` (true for the subset the test command runs);
* `doc`: the document, HTML of top-level blocks (each block becomes one Redline section);
* `request`: what the user asks in chat;
* `kind`: `edit` (default), `question` (must not edit; the answer must hold a fact) or
  `impossible` (cannot be done: the document stays unchanged and the answer must not claim a
  change);
* `attachment` (optional): `{filename, text}`, uploaded to the session as a TXT attachment
  before the request;
* `targets`: the indexes of the sections the edit may change; every other section must stay
  byte-identical with its chunk id (what is not is counted as collateral damage);
* `changes`: how many sections the edit changes (edited + deleted + created);
* `checks`: a list, each one of

  | check | passes when |
  | - | - |
  | `{"present": T}` / `{"absent": T}` | the document's text holds / lacks T (T may be a list: any of them) |
  | `{"count": [T, n]}` | T occurs n times in the document's text |
  | `{"section": i, "present": T}` / `{"section": i, "absent": T}` | the same, in section i (by its chunk id) |
  | `{"deleted": i}` | section i is gone |
  | `{"new": T, "after": i, "before": j}` | a new section holding T sits right after section i and right before section j (`null`: the start / the end) |
  | `{"tag": [names], "text": T, "section": i?}` | an element of one of those tags has exactly the text T |
  | `{"no_tag": [names], "section": i}` | section i holds no such element |
  | `{"link": URL, "text": T}` | a link to URL has the text T |
  | `{"heading": T, "level": n}` | an `h<n>` has the text T |
  | `{"list": i, "items": [...]}` | list section i has exactly these items, in order |
  | `{"cell": [i, r, c], "text": T}` | row r, column c (from 0, header row included) of table section i is T |
  | `{"rows": [i, n]}` | table section i has n rows |
  | `{"answer": T}` | the answer holds T (case-insensitive; a list: any of them) |

  Text comparisons are case-sensitive unless the check has `"ci": true`.

Every task also gets, from run.py: the document is valid (checks.split_sections), no
collateral damage, the number of changed sections is `changes` (0 for questions and
impossible requests), and, for impossible requests, the answer claims no change.
"""
from . import long, short
from .docs import manual_50, manual_500  # noqa: F401 (re-exported for scripts)


def all_tasks():
    out = []
    for t in short.TASKS + long.tasks():
        t = dict(t)
        t.setdefault("kind", "edit")
        t.setdefault("smoke", False)
        t.setdefault("checks", [])
        if t["kind"] != "edit":
            t["targets"], t["changes"] = [], 0
        t.setdefault("size", t["doc"].count("\n"))
        out.append(t)
    ids = [t["id"] for t in out]
    dupes = {i for i in ids if ids.count(i) > 1}
    assert not dupes, f"duplicate task ids: {dupes}"
    return out


def select(spec):
    """`all`, `smoke`, or comma-separated ids and categories."""
    tasks = all_tasks()
    if spec == "all":
        return tasks
    if spec == "smoke":
        return [t for t in tasks if t["smoke"]]
    wanted = [s.strip() for s in spec.split(",") if s.strip()]
    known = {t["id"] for t in tasks} | {t["category"] for t in tasks}
    unknown = [w for w in wanted if w not in known]
    if unknown:
        raise SystemExit(f"unknown task ids or categories: {', '.join(unknown)}")
    return [t for t in tasks if t["id"] in wanted or t["category"] in wanted]

"""Deterministic checks of an evaluation task's outcome (see run.py for the whole procedure).

The document before and after a turn is Redline's stored HTML (GET /v1/documents/{session}):
top-level blocks, each with a `data-chunk-id`, written by html5ever (every non-void element
closed). `split_sections` cuts it into sections with their exact source text, so "untouched"
means byte-identical, id included.

Matching the sections after a turn to those before (`match_sections`):

* by chunk id first: a section whose id is still there is that section (edited when its HTML
  differs);
* with `align=True` (the baseline only: the model retyped the whole document and may have
  dropped ids), the sections left on both sides are aligned in order on their HTML without the
  `data-chunk-id` attribute and with white space collapsed (difflib); aligned equal sections
  count as untouched, the rest of an aligned replaced run is paired in order (edited), and what
  remains is deleted or created. Redline's own turns get no such help: a section that lost its id
  is deleted, and a new id is a new section.

A task's checks (tasks/__init__.py lists them) then run on the matched sections. Text checks
read the text content (entities decoded, white space collapsed, typographic quotes made
straight, NFC), case-sensitive unless the check says `"ci": true`.
"""
import difflib
import re
import unicodedata
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
BLOCKISH = {"p", "li", "td", "th", "tr", "br", "h1", "h2", "h3", "h4", "h5", "h6", "div", "blockquote", "pre",
            "ul", "ol", "table", "caption", "figcaption", "hr", "thead", "tbody", "tfoot"}
QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "})


def norm_text(s):
    return re.sub(r"\s+", " ", unicodedata.normalize("NFC", s).translate(QUOTES)).strip()


class Node:
    __slots__ = ("tag", "attrs", "children")

    def __init__(self, tag, attrs):
        self.tag, self.attrs, self.children = tag, dict(attrs), []

    def iter(self):
        yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.iter()

    def text(self):
        out = []

        def walk(n):
            for c in n.children:
                if isinstance(c, str):
                    out.append(c)
                else:
                    if c.tag in BLOCKISH:
                        out.append(" ")
                    walk(c)
                    if c.tag in BLOCKISH:
                        out.append(" ")

        walk(self)
        return norm_text("".join(out))


class _Tree(HTMLParser):
    """A small DOM of well-formed HTML; `errors` lists what is not well-formed."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", [])
        self.stack = [self.root]
        self.errors = []

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs)
        self.stack[-1].children.append(n)
        if tag not in VOID:
            self.stack.append(n)

    def handle_startendtag(self, tag, attrs):
        self.stack[-1].children.append(Node(tag, attrs))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if len(self.stack) > 1 and self.stack[-1].tag == tag:
            self.stack.pop()
        else:
            self.errors.append(f"</{tag}> closes <{self.stack[-1].tag}>")
            for i in range(len(self.stack) - 1, 0, -1):
                if self.stack[i].tag == tag:
                    del self.stack[i:]
                    break

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def parse(html):
    t = _Tree()
    t.feed(html)
    t.close()
    if len(t.stack) > 1:
        t.errors.append("unclosed " + ", ".join(f"<{n.tag}>" for n in t.stack[1:]))
    return t.root, t.errors


class Section:
    __slots__ = ("id", "html", "node")

    def __init__(self, sid, html, node):
        self.id, self.html, self.node = sid, html, node

    @property
    def text(self):
        return self.node.text()

    @property
    def tag(self):
        return self.node.tag

    def key(self):
        """The HTML without its chunk id, white space collapsed: what the baseline alignment compares."""
        return re.sub(r"\s+", " ", re.sub(r'\sdata-chunk-id="[^"]*"', "", self.html, count=1)).strip()


class _Splitter(HTMLParser):
    def __init__(self, src):
        super().__init__(convert_charrefs=True)
        self.src = src
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", src)]
        self.depth = 0
        self.start = None
        self.spans = []
        self.stray = []

    def _pos(self):
        line, col = self.getpos()
        return self.line_starts[line - 1] + col

    def handle_starttag(self, tag, attrs):
        if self.depth == 0:
            self.start = self._pos()
            if tag in VOID:
                end = self._pos() + len(self.get_starttag_text())
                self.spans.append((self.start, end))
                return
        if tag not in VOID:
            self.depth += 1

    def handle_startendtag(self, tag, attrs):
        if self.depth == 0:
            s = self._pos()
            self.spans.append((s, s + len(self.get_starttag_text())))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        self.depth -= 1
        if self.depth == 0:
            end = self.src.index(">", self._pos()) + 1
            self.spans.append((self.start, end))
        elif self.depth < 0:
            self.depth = 0
            self.stray.append(tag)

    def handle_data(self, data):
        if self.depth == 0 and data.strip():
            self.stray.append(data.strip()[:40])


def split_sections(html):
    """The stored document's sections in order, and a list of problems (empty when valid).

    Valid means: well-formed, nothing outside the top-level blocks, every block with a unique
    `data-chunk-id`."""
    sp = _Splitter(html)
    sp.feed(html)
    sp.close()
    problems = [f"text or tag outside a section: {s!r}" for s in sp.stray]
    if sp.depth:
        problems.append("an unclosed top-level element")
    sections, seen = [], set()
    for a, b in sp.spans:
        frag = html[a:b]
        root, errors = parse(frag)
        problems += errors
        nodes = [c for c in root.children if isinstance(c, Node)]
        node = nodes[0] if nodes else Node("#empty", [])
        sid = node.attrs.get("data-chunk-id")
        if not sid:
            problems.append(f"a <{node.tag}> section without data-chunk-id")
        elif sid in seen:
            problems.append(f"chunk id {sid} used twice")
        seen.add(sid)
        sections.append(Section(sid, frag, node))
    return sections, problems


class Matching:
    """How the sections after a turn relate to those before it."""

    def __init__(self, before, after, align=False):
        self.before, self.after = before, after
        self.pair = {}  # index before -> index after
        pos_after = {s.id: j for j, s in enumerate(after) if s.id}
        for i, s in enumerate(before):
            if s.id in pos_after:
                self.pair[i] = pos_after[s.id]
        if align:
            rest_b = [i for i in range(len(before)) if i not in self.pair]
            used = set(self.pair.values())
            rest_a = [j for j in range(len(after)) if j not in used]
            sm = difflib.SequenceMatcher(None, [before[i].key() for i in rest_b], [after[j].key() for j in rest_a],
                                         autojunk=False)
            for op, i1, i2, j1, j2 in sm.get_opcodes():
                if op in ("equal", "replace"):
                    for k in range(min(i2 - i1, j2 - j1)):
                        self.pair[rest_b[i1 + k]] = rest_a[j1 + k]
        self.align = align
        paired_after = set(self.pair.values())
        self.created = [j for j in range(len(after)) if j not in paired_after]
        self.deleted = [i for i in range(len(before)) if i not in self.pair]

    def untouched(self, i):
        j = self.pair.get(i)
        if j is None:
            return False
        if self.align:
            return self.before[i].key() == self.after[j].key()
        return self.before[i].html == self.after[j].html

    def edited(self):
        return [i for i in self.pair if not self.untouched(i)]

    def changed_count(self):
        return len(self.edited()) + len(self.deleted) + len(self.created)

    def section_after(self, i):
        j = self.pair.get(i)
        return None if j is None else self.after[j]


# --- checks -------------------------------------------------------------------------------------

def _has(hay, needle, ci):
    hay, needle = norm_text(hay), norm_text(needle)
    return needle.lower() in hay.lower() if ci else needle in hay


def _alts(v):
    return v if isinstance(v, list) else [v]


def _doc_text(sections):
    return " ".join(s.text for s in sections)


def _rows(node):
    return [[c.text() for c in tr.children if isinstance(c, Node) and c.tag in ("td", "th")]
            for tr in node.iter() if tr.tag == "tr"]


def _items(node):
    top = node
    return [li.text() for li in top.children if isinstance(li, Node) and li.tag == "li"]


def run_check(c, m, answer):
    """One check: (ok, description of what failed or passed)."""
    after = m.after
    ci = c.get("ci", False)

    def target(i):
        s = m.section_after(i)
        return s

    if "answer" in c:
        alts = _alts(c["answer"])
        ok = any(_has(answer or "", a, True) for a in alts)
        return ok, f"answer mentions {' or '.join(map(repr, alts))}"
    if "new" in c:
        alts = _alts(c["new"])
        hits = [j for j in m.created if any(_has(after[j].text, a, ci) for a in alts)]
        if not hits:
            return False, f"a new section with {alts[0]!r}"
        j = hits[0]
        desc = f"new section with {alts[0]!r}"
        if "after" in c:
            if c["after"] is None:
                prev_ok = j == 0 or all(k in m.created for k in range(j))
            else:
                pj = m.pair.get(c["after"])
                prev_ok = pj is not None and pj < j and all(k in m.created for k in range(pj + 1, j))
            if not prev_ok:
                return False, desc + f" placed right after section {c['after']}"
        if "before" in c:
            if c["before"] is None:
                next_ok = all(k in m.created for k in range(j + 1, len(after)))
            else:
                nj = m.pair.get(c["before"])
                next_ok = nj is not None and nj > j and all(k in m.created for k in range(j + 1, nj))
            if not next_ok:
                return False, desc + f" placed right before section {c['before']}"
        return True, desc
    if "deleted" in c:
        return c["deleted"] in m.deleted, f"section {c['deleted']} deleted"
    if "section" in c and ("present" in c or "absent" in c):
        s = target(c["section"])
        if s is None:
            return False, f"section {c['section']} kept (with its id)"
        if "present" in c:
            alts = _alts(c["present"])
            return any(_has(s.text, a, ci) for a in alts), f"section {c['section']} has {alts[0]!r}"
        return not _has(s.text, c["absent"], ci), f"section {c['section']} lacks {c['absent']!r}"
    if "present" in c:
        alts = _alts(c["present"])
        return any(_has(_doc_text(after), a, ci) for a in alts), f"document has {alts[0]!r}"
    if "absent" in c:
        return not _has(_doc_text(after), c["absent"], ci), f"document lacks {c['absent']!r}"
    if "count" in c:
        needle, n = c["count"]
        text = norm_text(_doc_text(after))
        got = text.count(norm_text(needle))
        return got == n, f"{needle!r} occurs {n} times (got {got})"
    if "order" in c:
        a, b = c["order"]
        text = norm_text(_doc_text(after))
        ia, ib = text.find(norm_text(a)), text.find(norm_text(b))
        return 0 <= ia < ib, f"{a!r} before {b!r}"
    if "tag" in c:
        tags = _alts(c["tag"])
        scope = [target(c["section"])] if "section" in c else after
        for s in scope:
            if s is None:
                continue
            for n in s.node.iter():
                if n.tag in tags and norm_text(n.text()) == norm_text(c["text"]):
                    return True, f"<{tags[0]}>{c['text']}</{tags[0]}>"
        return False, f"<{tags[0]}>{c['text']}</{tags[0]}>"
    if "no_tag" in c:
        tags = _alts(c["no_tag"])
        s = target(c["section"])
        if s is None:
            return False, f"section {c['section']} kept (with its id)"
        found = [n.tag for n in s.node.iter() if n.tag in tags and n is not s.node]
        return not found, f"no <{tags[0]}> in section {c['section']}"
    if "link" in c:
        for s in after:
            for n in s.node.iter():
                if n.tag == "a" and n.attrs.get("href", "").rstrip("/") == c["link"].rstrip("/") \
                        and norm_text(n.text()) == norm_text(c["text"]):
                    return True, f"link {c['text']!r} -> {c['link']}"
        return False, f"link {c['text']!r} -> {c['link']}"
    if "heading" in c:
        want = f"h{c['level']}"
        for s in after:
            for n in s.node.iter():
                if n.tag == want and norm_text(n.text()) == norm_text(c["heading"]):
                    return True, f"<{want}>{c['heading']}</{want}>"
        return False, f"<{want}>{c['heading']}</{want}>"
    if "list" in c:
        s = target(c["list"])
        if s is None or s.tag not in ("ul", "ol"):
            return False, f"section {c['list']} still a list (with its id)"
        items = _items(s.node)
        if "items" in c:
            return items == c["items"], f"list items {c['items']} (got {items})"
        return False, "bad list check"
    if "cell" in c:
        i, r, col = c["cell"]
        s = target(i)
        if s is None:
            return False, f"section {i} kept (with its id)"
        rows = _rows(s.node)
        got = rows[r][col] if r < len(rows) and col < len(rows[r]) else None
        alts = _alts(c["text"])
        return got is not None and any(norm_text(got) == norm_text(a) for a in alts), \
            f"cell ({r},{col}) of section {i} is {alts[0]!r} (got {got!r})"
    if "rows" in c:
        i, n = c["rows"]
        s = target(i)
        got = len(_rows(s.node)) if s is not None else None
        return got == n, f"section {i} has {n} table rows (got {got})"
    raise ValueError(f"unknown check {c}")


CLAIM_VERBS = (r"changed|added|removed|replaced|updated|deleted|inserted|renamed|modified|rewritten|rewrote|"
               r"corrected|fixed|translated|bolded|italici[sz]ed|edited|revised|appended|made")
NEGATION = re.compile(r"\b(not|no(?! problem)|never|nothing|unable|cannot|without|neither|nor|would|could|can|"
                      r"should|if|please|unfortunately|sorry)\b|n't\b", re.I)
CLAIM = re.compile(rf"\b({CLAIM_VERBS})\b", re.I)


def claims_change(answer):
    """Whether the answer says it changed the document: a sentence with a verb of editing in
    the past tense (changed, added, removed, replaced, updated, …) and no negation, modal or
    condition (not, cannot, would, could, if, sorry, …), outside quotations (text in double
    quotes or code fences is the document's, not the model's claim). A heuristic: it reads
    English only."""
    if not answer:
        return False
    answer = re.sub(r"```.*?(```|$)|\"[^\"]*(\"|$)|\u201c[^\u201d]*(\u201d|$)", " ", answer, flags=re.S)
    for sentence in re.split(r"(?<=[.!?\n])\s+", answer):
        if CLAIM.search(sentence) and not NEGATION.search(sentence):
            return True
    return False


TOOL_NAMES = "edit_section|create_section|delete_section|read_sections|search_document|search_attachments"
RAW_TOOL = re.compile(rf"<tool_call>|<tools>|<function[\s>=]|<({TOOL_NAMES})\b|\"arguments\"|\{{\s*\"name\"", re.S)
JSON_FENCE = re.compile(r"```json\s*(.*?)```", re.S)


def raw_tool_call(answer):
    """Whether the answer is (or holds) a tool call written as text: Hermes `<tool_call>` tags,
    XML-like `<tools>`/`<function …>` or `<edit_section …>` tags, JSON with `"arguments"` or
    starting `{"name"`, or a ```json fence with a `"name"`."""
    if not answer:
        return False
    if RAW_TOOL.search(answer):
        return True
    return any('"name"' in m.group(1) for m in JSON_FENCE.finditer(answer))

//! From parsed HTML to the document model (`model.rs`).
//!
//! The walk recurses on the DOM, so it is bounded twice: below [`MAX_WALK_DEPTH`] elements
//! only the text is kept (collected with an explicit stack), and lists, tables and quotes
//! nested deeper than [`MAX_BLOCK_NESTING`] become plain paragraphs.

use html5ever::Attribute;
use markup5ever_rcdom::{Handle, NodeData};
use redline_domain::document::{ENDNOTES_ROLE, PAGE_FOOTER_ROLE, PAGE_HEADER_ROLE};

use crate::css;
use crate::model::{Align, Block, Cell, Doc, Inline, List, Note, Numbering, Row, Style, Table, MAX_BLOCK_NESTING};
use crate::parse;
use crate::styles::{attr, block_align, element_style, image, numbering};
use crate::table::MAX_COLUMNS;

/// Elements below this depth are read as text only.
const MAX_WALK_DEPTH: usize = 300;

/// Largest `rowspan` honoured (the HTML limit).
const MAX_ROWSPAN: usize = 65_534;

/// Elements left out with everything inside them.
const SKIPPED: [&str; 24] = [
    "script", "style", "title", "template", "head", "noscript", "iframe", "object", "embed", "applet", "svg", "math",
    "textarea", "select", "datalist", "audio", "video", "canvas", "meta", "link", "base", "noembed", "noframes",
    "input",
];

/// Blocks whose content flows into the surrounding flow, with a paragraph break around.
const CONTAINERS: [&str; 22] = [
    "div",
    "p",
    "section",
    "article",
    "header",
    "footer",
    "main",
    "nav",
    "aside",
    "address",
    "figure",
    "figcaption",
    "center",
    "dl",
    "dt",
    "dd",
    "details",
    "summary",
    "form",
    "fieldset",
    "legend",
    "hgroup",
];

/// Table parts met outside a table (or below the nesting limit): containers too.
const TABLE_PARTS: [&str; 7] = ["tr", "td", "th", "thead", "tbody", "tfoot", "caption"];

/// The blocks of an HTML fragment, its notes (if any) as a numbered list at the end.
#[cfg(test)]
pub(crate) fn document(html: &str) -> Vec<Block> {
    let doc = doc(html);
    let mut blocks = doc.header;
    blocks.extend(doc.blocks);
    blocks.extend(doc.footer);
    if !doc.notes.is_empty() {
        blocks.push(Block::Rule);
        let items = doc.notes.into_iter().map(|n| n.blocks).collect();
        blocks.push(Block::List(List { numbering: Numbering::Decimal, start: 1, items, item_revs: Vec::new() }));
    }
    blocks
}

/// The document of an HTML fragment with its notes apart: the `li`s of a top-level element
/// with `role="doc-endnotes"` (how the sanitizer keeps notes, docs/conversion.md). Notes
/// that the text references are kept, numbered in the order of their first reference; the
/// others (those only notes reference too) stay in the blocks, as a numbered list at the end,
/// and a note's reference to one of them is plain text.
pub(crate) fn doc(html: &str) -> Doc {
    doc_of(html, false)
}

/// [`doc`], with the notes that only other notes reference kept as notes too: numbered in
/// the order in which the notes are read, each note's own references right after it (depth
/// first), for writers that set a note's notes after it (PDF). A note referencing itself or a
/// cycle of notes is kept once.
pub(crate) fn doc_with_nested_notes(html: &str) -> Doc {
    doc_of(html, true)
}

/// One part of a document whose notes were numbered over the whole of it (`numbers`, note id
/// → number; a tracked export reads each change apart): references to those notes take
/// their number, and the part's notes among them are left out (the caller writes them once);
/// its other notes stay in the blocks as [`doc`] leaves them.
pub(crate) fn part_of(html: &str, numbers: &NoteNumbers) -> Doc {
    let mut read = read(html);
    let mut notes = std::mem::take(&mut read.notes);
    notes.retain(|n| !numbers.contains_key(&n.id));
    read.loose.extend(notes.into_iter().map(|n| n.blocks));
    read.finish(Vec::new(), numbers)
}

/// Note id → the note's number, from 1.
pub(crate) type NoteNumbers = std::collections::HashMap<std::rc::Rc<str>, usize>;

/// An HTML fragment read: its blocks, page header and footer, and apart the notes of its
/// notes sections (by id) and the `li`s there that are no note (`loose`).
struct Read {
    blocks: Vec<Block>,
    header: Vec<Block>,
    footer: Vec<Block>,
    notes: Vec<Note>,
    loose: Vec<Vec<Block>>,
}

fn read(html: &str) -> Read {
    let fragment = parse::parse_fragment(html);
    let root = fragment.root();
    let mut flow = Flow::default();
    let mut notes: Vec<Note> = Vec::new();
    let mut loose: Vec<Vec<Block>> = Vec::new();
    let (mut header, mut footer) = (Vec::new(), Vec::new());
    let kids: Vec<Handle> = root.children.borrow().clone();
    for child in &kids {
        if has_role(child, ENDNOTES_ROLE) {
            flow.flush();
            collect_notes(child, &mut notes, &mut loose);
        } else if has_role(child, PAGE_HEADER_ROLE) || has_role(child, PAGE_FOOTER_ROLE) {
            let mut part = Flow::default();
            walk(child, &mut part, &Style::default(), 1, 0);
            let into = if has_role(child, PAGE_HEADER_ROLE) { &mut header } else { &mut footer };
            into.extend(part.finish());
        } else {
            walk(child, &mut flow, &Style::default(), 1, 0);
        }
    }
    Read { blocks: flow.finish(), header, footer, notes, loose }
}

impl Read {
    /// The document with the `kept` notes: the loose `li`s as a numbered list at the end,
    /// and every note reference numbered by `numbers` (others plain text).
    fn finish(self, mut kept: Vec<Note>, numbers: &NoteNumbers) -> Doc {
        let Read { mut blocks, mut header, mut footer, loose, .. } = self;
        if !loose.is_empty() {
            blocks.push(Block::List(List {
                numbering: Numbering::Decimal,
                start: 1,
                items: loose,
                item_revs: Vec::new(),
            }));
        }
        number_note_refs(&mut blocks, numbers);
        for note in &mut kept {
            number_note_refs(&mut note.blocks, numbers);
        }
        // A page header or footer has no notes of its own: a reference in it is plain text.
        number_note_refs(&mut header, &NoteNumbers::new());
        number_note_refs(&mut footer, &NoteNumbers::new());
        Doc { blocks, notes: kept, header, footer }
    }
}

fn doc_of(html: &str, nested: bool) -> Doc {
    let mut read = read(html);
    let mut notes = std::mem::take(&mut read.notes);
    let mut kept = Vec::new();
    let mut pending: Vec<std::rc::Rc<str>> = note_refs(&read.blocks);
    pending.reverse();
    while let Some(id) = pending.pop() {
        if let Some(i) = notes.iter().position(|n| n.id == id) {
            let note = notes.remove(i);
            if nested {
                pending.extend(note_refs(&note.blocks).into_iter().rev());
            }
            kept.push(note);
        }
    }
    read.loose.extend(notes.into_iter().map(|n| n.blocks));
    let numbers: NoteNumbers = kept.iter().enumerate().map(|(i, n)| (n.id.clone(), i + 1)).collect();
    read.finish(kept, &numbers)
}

/// Each reference to a note becomes one run whose text is the note's number (its place in
/// `Doc::notes`, from 1); a reference to a note the document does not hold is plain text.
/// (Recursion is bounded by `MAX_BLOCK_NESTING`.)
fn number_note_refs(blocks: &mut [Block], numbers: &NoteNumbers) {
    let fix = |content: &mut Vec<Inline>| {
        let mut previous: Option<std::rc::Rc<str>> = None;
        content.retain_mut(|inline| {
            let Inline::Text(text, style) = inline else {
                previous = None;
                return true;
            };
            let Some(id) = style.note.clone() else {
                previous = None;
                return true;
            };
            let Some(n) = numbers.get(&id) else {
                style.note = None;
                previous = None;
                return true;
            };
            if previous.as_ref() == Some(&id) {
                return false;
            }
            *text = n.to_string();
            previous = Some(id);
            true
        });
    };
    for block in blocks {
        match block {
            Block::Heading { content, .. } | Block::Paragraph { content, .. } => fix(content),
            Block::List(list) => list.items.iter_mut().for_each(|item| number_note_refs(item, numbers)),
            Block::Quote(inner) => number_note_refs(inner, numbers),
            Block::Table(t) => {
                fix(&mut t.caption);
                for cell in t.rows.iter_mut().flat_map(|r| r.cells.iter_mut()) {
                    number_note_refs(&mut cell.blocks, numbers);
                }
            }
            Block::Code(_) | Block::Rule => {}
        }
    }
}

fn has_role(node: &Handle, role: &str) -> bool {
    match &node.data {
        NodeData::Element { attrs, .. } => attr(&attrs.borrow(), "role").is_some_and(|r| r.trim() == role),
        _ => false,
    }
}

/// The `li`s below a notes element (not those inside another `li`): notes by their `id`,
/// `loose` when they have none.
fn collect_notes(node: &Handle, notes: &mut Vec<Note>, loose: &mut Vec<Vec<Block>>) {
    let mut stack: Vec<(Handle, usize)> = node.children.borrow().iter().rev().map(|c| (c.clone(), 2)).collect();
    while let Some((n, depth)) = stack.pop() {
        let NodeData::Element { name, attrs, .. } = &n.data else { continue };
        if &*name.local != "li" {
            if depth < MAX_WALK_DEPTH {
                stack.extend(n.children.borrow().iter().rev().map(|c| (c.clone(), depth + 1)));
            }
            continue;
        }
        let id = attr(&attrs.borrow(), "id").map(str::trim).filter(|id| !id.is_empty()).map(std::rc::Rc::<str>::from);
        let mut inner = Flow::default();
        children(&n, &mut inner, &Style::default(), depth, 1);
        let blocks = inner.finish();
        match id {
            Some(id) if !notes.iter().any(|note| note.id == id) => notes.push(Note { id, blocks }),
            _ if !blocks.is_empty() => loose.push(blocks),
            _ => {}
        }
    }
}

/// The note ids that runs reference, in order of first reference.
pub(crate) fn note_refs(blocks: &[Block]) -> Vec<std::rc::Rc<str>> {
    let mut out: Vec<std::rc::Rc<str>> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut stack: Vec<&Block> = blocks.iter().rev().collect();
    let mut visit = |content: &[Inline], out: &mut Vec<std::rc::Rc<str>>| {
        for inline in content {
            if let Inline::Text(_, Style { note: Some(id), .. }) = inline {
                if seen.insert(id.clone()) {
                    out.push(id.clone());
                }
            }
        }
    };
    while let Some(block) = stack.pop() {
        match block {
            Block::Heading { content, .. } | Block::Paragraph { content, .. } => visit(content, &mut out),
            Block::List(list) => stack.extend(list.items.iter().rev().flat_map(|i| i.iter().rev())),
            Block::Quote(inner) => stack.extend(inner.iter().rev()),
            Block::Table(t) => {
                visit(&t.caption, &mut out);
                stack
                    .extend(t.rows.iter().rev().flat_map(|r| r.cells.iter().rev()).flat_map(|c| c.blocks.iter().rev()));
            }
            Block::Code(_) | Block::Rule => {}
        }
    }
    out
}

pub(crate) fn is_html_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0C')
}

/// Blocks being built, and the inline content of the paragraph in progress.
#[derive(Default)]
struct Flow {
    blocks: Vec<Block>,
    inlines: Vec<Inline>,
    align: Align,
}

impl Flow {
    /// Whether a space here would be leading or doubled.
    fn at_space(&self) -> bool {
        match self.inlines.last() {
            None | Some(Inline::Break) => true,
            Some(Inline::Text(t, _)) => t.ends_with(' '),
            Some(Inline::Image(_)) => false,
        }
    }

    fn text(&mut self, raw: &str, style: &Style) {
        let mut space = self.at_space();
        let mut s = String::with_capacity(raw.len());
        for c in raw.chars() {
            if is_html_space(c) {
                if !space {
                    s.push(' ');
                    space = true;
                }
            } else if !c.is_control() {
                s.push(c);
                space = false;
            }
        }
        if s.is_empty() {
            return;
        }
        match self.inlines.last_mut() {
            Some(Inline::Text(t, st)) if st == style => t.push_str(&s),
            _ => self.inlines.push(Inline::Text(s, style.clone())),
        }
    }

    fn trim_end(&mut self) {
        loop {
            match self.inlines.last_mut() {
                Some(Inline::Text(t, _)) if t.ends_with(' ') => {
                    t.pop();
                    if t.is_empty() {
                        self.inlines.pop();
                    }
                }
                Some(Inline::Break) => {
                    self.inlines.pop();
                }
                _ => return,
            }
        }
    }

    fn push_break(&mut self) {
        if let Some(Inline::Text(t, _)) = self.inlines.last_mut() {
            if t.ends_with(' ') {
                t.pop();
                if t.is_empty() {
                    self.inlines.pop();
                }
            }
        }
        self.inlines.push(Inline::Break);
    }

    /// Ends the paragraph in progress (dropped when it has neither text nor image).
    fn flush(&mut self) {
        self.trim_end();
        let content = std::mem::take(&mut self.inlines);
        if content.iter().any(|i| !matches!(i, Inline::Break)) {
            self.blocks.push(Block::Paragraph { align: self.align, content });
        }
    }

    fn block(&mut self, block: Block) {
        self.flush();
        self.blocks.push(block);
    }

    fn finish(mut self) -> Vec<Block> {
        self.flush();
        self.blocks
    }

    /// The content as one run of inlines (for headings and captions): blocks joined by breaks.
    fn into_inlines(self) -> Vec<Inline> {
        let mut out: Vec<Inline> = Vec::new();
        for block in self.finish() {
            if !out.is_empty() {
                out.push(Inline::Break);
            }
            flatten_block(block, &mut out);
        }
        out
    }
}

fn flatten_block(block: Block, out: &mut Vec<Inline>) {
    let mut stack = vec![block];
    let mut first = true;
    while let Some(block) = stack.pop() {
        let text_block = |out: &mut Vec<Inline>, first: &mut bool| {
            if !*first {
                out.push(Inline::Break);
            }
            *first = false;
        };
        match block {
            Block::Heading { content, .. } | Block::Paragraph { content, .. } => {
                text_block(out, &mut first);
                out.extend(content);
            }
            Block::Code(text) => {
                text_block(out, &mut first);
                out.push(Inline::Text(text, Style { code: true, ..Style::default() }));
            }
            Block::Rule => {}
            Block::Quote(blocks) => stack.extend(blocks.into_iter().rev()),
            Block::List(list) => stack.extend(list.items.into_iter().rev().flat_map(|i| i.into_iter().rev())),
            Block::Table(table) => stack.extend(
                table
                    .rows
                    .into_iter()
                    .rev()
                    .flat_map(|r| r.cells.into_iter().rev())
                    .flat_map(|c| c.blocks.into_iter().rev()),
            ),
        }
    }
}

fn children(node: &Handle, flow: &mut Flow, style: &Style, depth: usize, nest: usize) {
    let kids: Vec<Handle> = node.children.borrow().clone();
    for child in &kids {
        walk(child, flow, style, depth + 1, nest);
    }
}

fn walk(node: &Handle, flow: &mut Flow, style: &Style, depth: usize, nest: usize) {
    let (name, attrs) = match &node.data {
        NodeData::Text { contents } => {
            flow.text(&contents.borrow(), style);
            return;
        }
        NodeData::Element { name, attrs, .. } => (name.local.to_ascii_lowercase(), attrs.borrow().clone()),
        _ => return,
    };
    let tag: &str = &name;
    if SKIPPED.contains(&tag) || has_role(node, "doc-backlink") {
        return;
    }
    if depth >= MAX_WALK_DEPTH {
        flow.text(&text_content(node, false), style);
        return;
    }
    let own = element_style(tag, &attrs, style);
    let align = block_align(&attrs, own.dir);
    let nested_ok = nest < MAX_BLOCK_NESTING;
    match tag {
        "br" => flow.push_break(),
        "img" => {
            if let Some(image) = image(&attrs, style) {
                flow.inlines.push(Inline::Image(image));
            }
        }
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
            flow.flush();
            let mut inner = Flow { align: align.unwrap_or(flow.align), ..Flow::default() };
            children(node, &mut inner, &own, depth, nest);
            let level = tag.as_bytes()[1] - b'0';
            let align = inner.align;
            let content = inner.into_inlines();
            if !content.is_empty() {
                flow.block(Block::Heading { level, align, content });
            }
        }
        "ul" | "ol" | "menu" | "dir" if nested_ok => {
            flow.flush();
            let list = list(node, tag, &attrs, &own, depth, nest + 1);
            if !list.items.is_empty() {
                flow.block(Block::List(list));
            }
        }
        "li" if nested_ok => {
            flow.flush();
            let mut inner = Flow::default();
            children(node, &mut inner, &own, depth, nest + 1);
            let list =
                List { numbering: Numbering::Bullet, start: 1, items: vec![inner.finish()], item_revs: Vec::new() };
            flow.block(Block::List(list));
        }
        "table" if nested_ok => {
            flow.flush();
            let table = table(node, &own, depth, nest + 1);
            if !table.rows.is_empty() || !table.caption.is_empty() {
                flow.block(Block::Table(table));
            }
        }
        "blockquote" if nested_ok => {
            flow.flush();
            let mut inner = Flow::default();
            children(node, &mut inner, &own, depth, nest + 1);
            let blocks = inner.finish();
            if !blocks.is_empty() {
                flow.block(Block::Quote(blocks));
            }
        }
        "pre" | "listing" | "xmp" | "plaintext" => {
            flow.flush();
            let text = text_content(node, true);
            let text = text.trim_end_matches(['\n', '\r', ' ', '\t']);
            if !text.trim().is_empty() {
                flow.block(Block::Code(text.to_string()));
            }
        }
        "hr" => flow.block(Block::Rule),
        _ if CONTAINERS.contains(&tag)
            || TABLE_PARTS.contains(&tag)
            || matches!(tag, "ul" | "ol" | "menu" | "dir" | "li" | "table" | "blockquote" | "body" | "html") =>
        {
            flow.flush();
            let saved = flow.align;
            if let Some(a) = align {
                flow.align = a;
            }
            children(node, flow, &own, depth, nest);
            flow.flush();
            flow.align = saved;
        }
        _ => children(node, flow, &own, depth, nest),
    }
}

/// The text below `node`, read with an explicit stack. `pre` keeps white space and turns
/// `<br>` into line breaks.
fn text_content(node: &Handle, pre: bool) -> String {
    let mut out = String::new();
    let mut stack: Vec<Handle> = node.children.borrow().iter().rev().cloned().collect();
    while let Some(n) = stack.pop() {
        match &n.data {
            NodeData::Text { contents } => out.push_str(&contents.borrow()),
            NodeData::Element { name, .. } => {
                let tag = &*name.local;
                if SKIPPED.contains(&tag) {
                    continue;
                }
                if tag == "br" {
                    out.push(if pre { '\n' } else { ' ' });
                } else if !pre {
                    out.push(' ');
                }
                stack.extend(n.children.borrow().iter().rev().cloned());
            }
            _ => {}
        }
    }
    out.replace("\r\n", "\n")
        .replace('\r', "\n")
        .chars()
        .filter(|&c| c == '\n' || c == '\t' || !c.is_control())
        .collect()
}

fn list(node: &Handle, tag: &str, attrs: &[Attribute], style: &Style, depth: usize, nest: usize) -> List {
    let start = attr(attrs, "start")
        .and_then(|s| s.trim().parse::<i64>().ok())
        .map_or(1, |s| s.clamp(-1_000_000_000, 1_000_000_000));
    let mut items: Vec<Vec<Block>> = Vec::new();
    let kids: Vec<Handle> = node.children.borrow().clone();
    for child in &kids {
        let is_li = matches!(&child.data, NodeData::Element { name, .. } if &*name.local == "li");
        if is_li {
            let NodeData::Element { attrs: li_attrs, .. } = &child.data else { continue };
            let li_style = element_style("li", &li_attrs.borrow(), style);
            let mut inner = Flow::default();
            children(child, &mut inner, &li_style, depth + 1, nest);
            items.push(inner.finish());
            continue;
        }
        // Anything else in a list (a nested list written as a sibling of the items, stray
        // text) belongs to the item before it.
        let mut inner = Flow::default();
        walk(child, &mut inner, style, depth + 1, nest);
        let blocks = inner.finish();
        if blocks.is_empty() {
            continue;
        }
        match items.last_mut() {
            Some(last) => last.extend(blocks),
            None => items.push(blocks),
        }
    }
    List { numbering: numbering(tag, attrs), start, items, item_revs: Vec::new() }
}

fn table(node: &Handle, style: &Style, depth: usize, nest: usize) -> Table {
    let mut table = Table { caption: Vec::new(), rows: Vec::new() };
    let kids: Vec<Handle> = node.children.borrow().clone();
    for child in &kids {
        let NodeData::Element { name, .. } = &child.data else { continue };
        match &*name.local {
            "caption" => {
                let mut inner = Flow::default();
                children(child, &mut inner, style, depth + 1, nest);
                table.caption = inner.into_inlines();
            }
            "thead" | "tbody" | "tfoot" => {
                let header = &*name.local == "thead";
                let rows: Vec<Handle> = child.children.borrow().clone();
                for tr in &rows {
                    if let NodeData::Element { name, .. } = &tr.data {
                        if &*name.local == "tr" {
                            table.rows.push(row(tr, header, style, depth + 2, nest));
                        }
                    }
                }
            }
            "tr" => table.rows.push(row(child, false, style, depth + 1, nest)),
            _ => {}
        }
    }
    table
}

fn row(tr: &Handle, header: bool, style: &Style, depth: usize, nest: usize) -> Row {
    let mut cells = Vec::new();
    let (tr_style, tr_align) = match &tr.data {
        NodeData::Element { attrs, .. } => {
            let attrs = attrs.borrow();
            let tr_style = element_style("tr", &attrs, style);
            let align = block_align(&attrs, tr_style.dir);
            (tr_style, align)
        }
        _ => (style.clone(), None),
    };
    let kids: Vec<Handle> = tr.children.borrow().clone();
    for td in &kids {
        let NodeData::Element { name, attrs, .. } = &td.data else { continue };
        let tag = &*name.local;
        if tag != "td" && tag != "th" {
            continue;
        }
        let attrs = attrs.borrow();
        let cell_style = element_style(tag, &attrs, &tr_style);
        let colspan =
            attr(&attrs, "colspan").and_then(|v| v.trim().parse::<usize>().ok()).map_or(1, |v| v.clamp(1, MAX_COLUMNS));
        let rowspan =
            attr(&attrs, "rowspan").and_then(|v| v.trim().parse::<usize>().ok()).map_or(1, |v| v.min(MAX_ROWSPAN));
        let background = attr(&attrs, "style").and_then(|s| {
            css::declarations(s)
                .filter(|(n, _)| n == "background-color" || n == "background")
                .filter_map(|(_, v)| css::background_color(v))
                .last()
        });
        let align = block_align(&attrs, cell_style.dir).or(tr_align).unwrap_or_default();
        let mut inner = Flow { align, ..Flow::default() };
        children(td, &mut inner, &cell_style, depth + 1, nest);
        cells.push(Cell { header: tag == "th" || header, colspan, rowspan, background, blocks: inner.finish() });
    }
    Row { header, cells, rev: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Inline {
        Inline::Text(s.into(), Style::default())
    }

    #[test]
    fn paragraphs_collapse_white_space() {
        let blocks = document("<p>  a \n b <b> c</b> </p>loose <i>text</i><br> ");
        let bold = Style { bold: true, ..Style::default() };
        let italic = Style { italic: true, ..Style::default() };
        assert_eq!(
            blocks,
            [
                Block::Paragraph { align: Align::Start, content: vec![text("a b "), Inline::Text("c".into(), bold)] },
                Block::Paragraph {
                    align: Align::Start,
                    content: vec![text("loose "), Inline::Text("text".into(), italic)]
                },
            ]
        );
    }

    #[test]
    fn lists_nest_and_stray_lists_join_the_item_before() {
        let blocks =
            document("<ol start=\"3\" type=\"a\"><li>one<ul><li>deep</li></ul></li><ul><li>stray</li></ul></ol>");
        let [Block::List(list)] = blocks.as_slice() else { panic!("{blocks:?}") };
        assert_eq!(list.numbering, Numbering::LowerAlpha);
        assert_eq!(list.start, 3);
        assert_eq!(list.items.len(), 1);
        assert_eq!(list.items[0].len(), 3, "{:?}", list.items[0]);
    }

    #[test]
    fn tables_and_styles() {
        let blocks = document(
            "<table><thead><tr><th colspan=\"2\" style=\"background-color: #eeeeee\">H</th></tr></thead>\
             <tbody><tr><td rowspan=\"2\"><span style=\"color: #ff0000\">red</span></td><td>x</td></tr></tbody></table>",
        );
        let [Block::Table(t)] = blocks.as_slice() else { panic!("{blocks:?}") };
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0].cells[0].colspan, 2);
        assert!(t.rows[0].cells[0].header);
        assert_eq!(t.rows[0].cells[0].background, Some(crate::model::Rgb(0xee, 0xee, 0xee)));
        assert_eq!(t.rows[1].cells[0].rowspan, 2);
        let Block::Paragraph { content, .. } = &t.rows[1].cells[0].blocks[0] else { panic!() };
        let Inline::Text(_, style) = &content[0] else { panic!() };
        assert_eq!(style.color, Some(crate::model::Rgb(255, 0, 0)));
    }

    #[test]
    fn deep_nesting_keeps_the_text() {
        let html = "<blockquote>".repeat(400) + "bottom" + &"</blockquote>".repeat(400);
        let blocks = document(&html);
        let mut texts = String::new();
        let mut stack: Vec<&Block> = blocks.iter().collect();
        while let Some(b) = stack.pop() {
            match b {
                Block::Quote(inner) => stack.extend(inner.iter()),
                Block::Paragraph { content, .. } => texts.push_str(&crate::model::plain_text(content)),
                _ => {}
            }
        }
        assert_eq!(texts, "bottom");
    }

    #[test]
    fn notes_of_notes_are_kept_depth_first_once_each() {
        let r = |n: u32| format!("<a href=\"#n{n}\" role=\"doc-noteref\"><sup>x</sup></a>");
        let html = format!(
            "<p>A{}B{}</p><section role=\"doc-endnotes\"><ol>\
             <li id=\"n1\"><p>one{}</p></li><li id=\"n2\"><p>two{}{}</p></li>\
             <li id=\"n3\"><p>three</p></li><li id=\"n4\"><p>four</p></li></ol></section>",
            r(1),
            r(4),
            r(2),
            r(1),
            r(3),
        );
        let ids = |doc: &Doc| doc.notes.iter().map(|n| n.id.to_string()).collect::<Vec<_>>();
        // n1 → n2 → (n1 again, n3), then n4 from the text.
        let nested = doc_with_nested_notes(&html);
        assert_eq!(ids(&nested), ["n1", "n2", "n3", "n4"]);
        assert_eq!(
            crate::model::plain_text(match &nested.blocks[0] {
                Block::Paragraph { content, .. } => content,
                other => panic!("{other:?}"),
            }),
            "A1B4"
        );
        assert_eq!(nested.blocks.len(), 1, "no loose note left");
        // Without nesting, the notes only notes reference stay loose, at the end.
        let flat = doc(&html);
        assert_eq!(ids(&flat), ["n1", "n4"]);
        assert_eq!(flat.blocks.len(), 2);
    }
}

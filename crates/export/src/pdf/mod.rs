//! PDF: A4 pages of shaped text (rustybuzz, bidi, UAX #14 line breaks) in embedded fonts
//! (the bundled set, then the system's, per character; subset, Identity-H, with a
//! `ToUnicode` map so that the text can be selected and extracted in logical order),
//! headings larger and bold, wrapped paragraphs, list markers, bordered tables, pictures,
//! link annotations, footnotes at the foot of the page of their first reference, the page
//! header and footer in the margins of every page, the title in the document information.
//!
//! `layout.rs` turns blocks into lines (`shape.rs` shapes their text with the fonts of
//! `fonts.rs` and `system.rs`), this module stacks the lines into pages, and `writer.rs`
//! writes the objects with lopdf.

mod fonts;
mod images;
mod layout;
mod line;
mod shape;
mod system;
mod table;
mod writer;

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use redline_ports::ImageSource;

use crate::model::{Block, Doc, Rgb};
use fonts::Fonts;
use layout::{Ctx, Kind, Layout, Line, Op};
pub use system::{SystemFonts, SYSTEM_FONT_DIR};

/// A4 in points.
pub(crate) const PAGE_W: f32 = 595.28;
pub(crate) const PAGE_H: f32 = 841.89;
/// 2 cm.
pub(crate) const MARGIN: f32 = 56.69;
/// The text area of the default page (the widest a table is measured at).
pub(crate) const CONTENT_W: f32 = PAGE_W - 2.0 * MARGIN;
#[cfg(test)]
pub(crate) const CONTENT_H: f32 = PAGE_H - 2.0 * MARGIN;

/// The page of a PDF export, in points (1/72 inch): A4 with 2 cm margins by default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PageSetup {
    pub width: f32,
    pub height: f32,
    /// The same on all four sides.
    pub margin: f32,
}

impl Default for PageSetup {
    fn default() -> Self {
        PageSetup { width: PAGE_W, height: PAGE_H, margin: MARGIN }
    }
}

impl PageSetup {
    /// US Letter with 1 inch margins.
    pub const LETTER: PageSetup = PageSetup { width: 612.0, height: 792.0, margin: 72.0 };

    /// Within bounds: sides of 144–14,400 pt (2 in to 200 in, the PDF limit), a text area of
    /// at least 72 pt each way.
    pub(crate) fn clamped(self) -> PageSetup {
        let side = |v: f32, default: f32| if v.is_finite() { v.clamp(144.0, 14_400.0) } else { default };
        let (width, height) = (side(self.width, PAGE_W), side(self.height, PAGE_H));
        let most = (width.min(height) - 72.0) / 2.0;
        let margin = if self.margin.is_finite() { self.margin.clamp(0.0, most) } else { MARGIN.min(most) };
        PageSetup { width, height, margin }
    }

    pub(crate) fn content_w(self) -> f32 {
        self.width - 2.0 * self.margin
    }

    pub(crate) fn content_h(self) -> f32 {
        self.height - 2.0 * self.margin
    }
}

/// The PDF and its warnings (characters no font has, by the font package to install).
/// Notes are set at the foot of the page where they are first referenced.
pub(crate) fn export(
    doc: &Doc,
    title: &str,
    images: &dyn ImageSource,
    system: Arc<SystemFonts>,
    page: PageSetup,
) -> Result<(Vec<u8>, Vec<String>), String> {
    let page = page.clamped();
    let fonts = Fonts::new(system)?;
    let mut layout = Layout::new(&fonts, images);
    layout.notes = doc.notes.iter().enumerate().map(|(i, n)| (n.id.clone(), i)).collect();
    let mut pager = Pager::sized(writer::PdfWriter::new(page), page.content_h());
    let (content_w, content_h) = (page.content_w(), page.content_h());
    pager.rule_w = content_w / 3.0;
    let ctx = Ctx { tight: false, lists: 0, max_h: content_h, size: layout::BODY_SIZE };
    pager.head = running(&mut layout, &doc.header, content_w, page.margin);
    pager.tail = running(&mut layout, &doc.footer, content_w, page.margin);
    let mut lines = Vec::new();
    let mut set = vec![false; doc.notes.len()];
    let mut pending = Vec::new();
    for block in &doc.blocks {
        // The notes this block references first, and the notes those reference, are laid
        // out before it, for the pager to set at the foot of the page where the reference
        // lands. Each note is laid out once, so references in a cycle end.
        pending.extend(crate::build::note_refs(std::slice::from_ref(block)).into_iter().rev());
        while let Some(id) = pending.pop() {
            let Some(&i) = layout.notes.get(&id) else { continue };
            if !std::mem::replace(&mut set[i], true) {
                let note = &doc.notes[i];
                pending.extend(crate::build::note_refs(&note.blocks).into_iter().rev());
                let note_lines = layout.note_lines(i, note, content_w, content_h / 2.0);
                pager.stock.insert(i, note_lines);
            }
        }
        match block {
            // Top-level tables go to the pages row by row, to cut a tall row where the page ends.
            Block::Table(table) => {
                layout.table(table, content_w, ctx, &mut pager);
                pager.push(Line::spacer(layout::TABLE_GAP));
            }
            // Paragraphs, headings and code go to the pages line by line as they are set.
            _ if layout.flow(block, content_w, ctx, &mut pager) => {}
            _ => {
                layout.block(block, content_w, ctx, &mut lines);
                for line in lines.drain(..) {
                    pager.push(line);
                }
            }
        }
    }
    let pictures = std::mem::take(&mut layout.pictures);
    let bytes = pager.finish().finish(&fonts, pictures, title)?;
    Ok((bytes, fonts.warnings()))
}

/// The size of the text of the page header and footer.
const RUNNING_SIZE: f32 = 9.0;
/// The space between the page header (or footer) and the text area.
const RUNNING_GAP: f32 = 8.0;

/// The lines of a page header or footer, set in the margin of every page: in smaller text,
/// as many of them as the margin holds (the rest is left out).
fn running(layout: &mut Layout<'_>, blocks: &[Block], width: f32, margin: f32) -> Vec<Line> {
    let ctx = Ctx { tight: true, lists: 0, max_h: margin, size: RUNNING_SIZE };
    let mut lines = Vec::new();
    for block in blocks {
        layout.block(block, width, ctx, &mut lines);
    }
    let room = margin - RUNNING_GAP;
    let mut used = 0.0;
    lines
        .into_iter()
        .filter(|l| l.kind != Kind::Spacer)
        .take_while(|l| {
            used += l.height;
            used <= room
        })
        .collect()
}

/// A page: its lines and where each starts, measured down from the top margin.
pub(crate) type Page = Vec<(f32, Line)>;

/// Less room than this at the bottom of a page is not worth starting a cut table row in.
const MIN_ROOM: f32 = 48.0;

/// The strip above a page's notes that holds the separator rule.
const FOOT_SEP: f32 = 10.0;

/// Where finished pages go, one by one.
pub(crate) trait PageSink {
    fn page(&mut self, page: Page);
}

impl PageSink for Vec<Page> {
    fn page(&mut self, page: Page) {
        self.push(page);
    }
}

/// Stacks lines into pages as they come: a line that does not fit starts a new page,
/// space between blocks is dropped at the top of a page, and headings are held back until
/// the line after them is known, so that they move to the next page with it. Each page goes
/// to the sink as soon as the next one starts.
///
/// Footnotes: a line with [`Op::NoteRef`]s brings the lines of those notes (laid out
/// beforehand, in `stock`), each followed by the notes it references in turn, to the foot
/// of its page, under a short rule; the line moves to the next page when it and its notes do
/// not fit. Note lines that do not fit even on a fresh page continue at the foot of the next
/// pages (at most half of each).
pub(crate) struct Pager<S> {
    page: Page,
    sink: S,
    y: f32,
    /// Headings (and the space after them) waiting for the next content line.
    held: Vec<Line>,
    /// Set at the top of every new page (a table's header rows).
    repeat: Option<Line>,
    /// The height of the text area.
    content_h: f32,
    /// Lines of notes waiting for their first reference, by note index.
    pub(crate) stock: HashMap<usize, Vec<Line>>,
    /// The notes at the foot of the open page, and their height with the rule.
    foot: Vec<Line>,
    foot_h: f32,
    /// Note lines that did not fit at the foot of their page: for the next pages.
    carry: VecDeque<Line>,
    /// The length of the rule above the notes.
    pub(crate) rule_w: f32,
    /// The page header and footer, set in the top and bottom margins of every page.
    pub(crate) head: Vec<Line>,
    pub(crate) tail: Vec<Line>,
}

impl<S: PageSink> Pager<S> {
    #[cfg(test)]
    pub(crate) fn new(sink: S) -> Self {
        Pager::sized(sink, CONTENT_H)
    }

    pub(crate) fn sized(sink: S, content_h: f32) -> Self {
        Pager {
            page: Vec::new(),
            sink,
            y: 0.0,
            held: Vec::new(),
            repeat: None,
            content_h,
            stock: HashMap::new(),
            foot: Vec::new(),
            foot_h: 0.0,
            carry: VecDeque::new(),
            rule_w: CONTENT_W / 3.0,
            head: Vec::new(),
            tail: Vec::new(),
        }
    }

    /// The room the notes first referenced in `line` need at the foot of the page the line
    /// goes on: all of them, or, when they would not fit under it even on a fresh page, their
    /// first line (the rest goes on at the next page's foot).
    fn notes_need(&self, line: &Line) -> f32 {
        let brought = self.brought(line);
        let mut lines = brought.iter().filter_map(|i| self.stock.get(i)).flatten().peekable();
        let Some(first) = lines.peek().map(|l| l.height) else { return 0.0 };
        let sep = if self.foot.is_empty() { FOOT_SEP } else { 0.0 };
        let all: f32 = lines.map(|l| l.height).sum();
        let fresh = self.content_h - self.repeat.as_ref().map_or(0.0, |l| l.height) - FOOT_SEP;
        sep + if line.height + all <= fresh { all } else { first }
    }

    /// The waiting notes a line brings to its page's foot, in the order they are set: each
    /// note it references, followed by the notes that note's text references (depth first),
    /// each once.
    fn brought(&self, line: &Line) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack: Vec<usize> = note_refs(line).collect();
        if stack.is_empty() {
            return out;
        }
        stack.reverse();
        let mut seen = HashSet::new();
        while let Some(i) = stack.pop() {
            if !seen.insert(i) {
                continue;
            }
            let Some(lines) = self.stock.get(&i) else { continue };
            out.push(i);
            let inner: Vec<usize> = lines.iter().flat_map(note_refs).collect();
            stack.extend(inner.into_iter().rev());
        }
        out
    }

    /// Sets notes at the foot of the open page, or after the notes carried on.
    fn add_foot(&mut self, notes: Vec<Line>) {
        for note in notes {
            let sep = if self.foot.is_empty() { FOOT_SEP } else { 0.0 };
            if !self.carry.is_empty() || self.y + self.foot_h + sep + note.height > self.content_h {
                self.carry.push_back(note);
            } else {
                self.foot_h += sep + note.height;
                self.foot.push(note);
            }
        }
    }

    /// Hands the open page to the sink, its notes at the foot under a rule.
    fn close_page(&mut self) {
        let mut page = std::mem::take(&mut self.page);
        if !self.foot.is_empty() {
            let mut y = self.content_h - self.foot_h;
            let rule = Op::Fill { x: 0.0, y: FOOT_SEP - 4.0, w: self.rule_w, h: 0.5, color: Rgb(0, 0, 0) };
            page.push((y, Line { height: FOOT_SEP, ops: vec![rule], kind: Kind::Content }));
            y += FOOT_SEP;
            for line in self.foot.drain(..) {
                let h = line.height;
                page.push((y, line));
                y += h;
            }
            self.foot_h = 0.0;
        }
        // The page header above the text area, the footer below it.
        let mut y = -RUNNING_GAP - self.head.iter().map(|l| l.height).sum::<f32>();
        for line in &self.head {
            page.push((y, line.clone()));
            y += line.height;
        }
        let mut y = self.content_h + RUNNING_GAP;
        for line in &self.tail {
            page.push((y, line.clone()));
            y += line.height;
        }
        self.sink.page(page);
    }

    fn at_top(&self) -> bool {
        self.page.is_empty()
    }

    fn held_height(&self) -> f32 {
        self.held.iter().map(|l| l.height).sum()
    }

    /// The height the next content line may have to fit on the page it will be placed on.
    pub(crate) fn room(&self) -> f32 {
        let held = self.held_height();
        let here = self.content_h - self.y - held - self.foot_h;
        if here >= MIN_ROOM || self.at_top() {
            here
        } else {
            let carried = self.carry.iter().map(|l| l.height).sum::<f32>().min(self.content_h / 2.0);
            self.content_h - held - self.repeat.as_ref().map_or(0.0, |l| l.height) - carried
        }
    }

    fn new_page(&mut self) {
        self.close_page();
        self.y = 0.0;
        if let Some(line) = self.repeat.clone() {
            self.y = line.height;
            self.page.push((0.0, line));
        }
        // Notes continued from the page before: at least one line, at most half the page.
        while let Some(first) = self.carry.front() {
            let sep = if self.foot.is_empty() { FOOT_SEP } else { 0.0 };
            if !self.foot.is_empty() && self.foot_h + sep + first.height > self.content_h / 2.0 {
                break;
            }
            self.foot_h += sep + first.height;
            if let Some(line) = self.carry.pop_front() {
                self.foot.push(line);
            }
        }
    }

    fn place(&mut self, line: Line) {
        if line.kind == Kind::Spacer && self.at_top() {
            return;
        }
        if !self.at_top() && self.y + line.height + self.foot_h + self.notes_need(&line) > self.content_h {
            if line.kind == Kind::Spacer {
                return;
            }
            self.new_page();
        }
        let notes: Vec<Line> =
            self.brought(&line).into_iter().filter_map(|i| self.stock.remove(&i)).flatten().collect();
        let h = line.height;
        self.page.push((self.y, line));
        self.y += h;
        self.add_foot(notes);
    }

    pub(crate) fn push(&mut self, line: Line) {
        match line.kind {
            Kind::KeepWithNext => self.held.push(line),
            Kind::Spacer if !self.held.is_empty() => self.held.push(line),
            Kind::Spacer => self.place(line),
            Kind::Content => {
                let notes_h = self.held.iter().chain([&line]).map(|l| self.notes_need(l)).sum::<f32>();
                let need = (self.held_height() + line.height + notes_h).min(self.content_h);
                if !self.at_top() && self.y + self.foot_h + need > self.content_h {
                    self.new_page();
                }
                for held in std::mem::take(&mut self.held) {
                    self.place(held);
                }
                self.place(line);
            }
        }
    }

    /// The sink, given the last page (the only one, empty, when there was no line).
    pub(crate) fn finish(mut self) -> S {
        for held in std::mem::take(&mut self.held) {
            self.place(held);
        }
        while !self.carry.is_empty() {
            self.new_page();
        }
        self.close_page();
        self.sink
    }
}

/// The notes a line references.
fn note_refs(line: &Line) -> impl Iterator<Item = usize> + '_ {
    line.ops.iter().filter_map(|op| match op {
        Op::NoteRef(i) => Some(*i),
        _ => None,
    })
}

impl<S: PageSink> layout::Lines for Pager<S> {
    fn put(&mut self, line: Line) {
        self.push(line);
    }
}

/// Where a table's lines go, and how tall a cut row may be.
pub(crate) trait LineSink {
    /// The tallest the next line should be.
    fn room(&self) -> f32;
    fn emit(&mut self, line: Line);
    /// A line to set at the top of each new page from now on (`None`: no more).
    fn repeat(&mut self, _line: Option<Line>) {}
}

impl<S: PageSink> LineSink for Pager<S> {
    fn room(&self) -> f32 {
        Pager::room(self)
    }

    fn emit(&mut self, line: Line) {
        self.push(line);
    }

    fn repeat(&mut self, line: Option<Line>) {
        self.repeat = line;
    }
}

/// Lines collected for a nested block, each at most `max_h` tall.
pub(crate) struct Nested<'o> {
    pub out: &'o mut Vec<Line>,
    pub max_h: f32,
}

impl LineSink for Nested<'_> {
    fn room(&self) -> f32 {
        self.max_h
    }

    fn emit(&mut self, line: Line) {
        self.out.push(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn content(h: f32) -> Line {
        Line { height: h, ops: Vec::new(), kind: Kind::Content }
    }

    fn paginate(lines: Vec<Line>) -> Vec<Page> {
        let mut pager = Pager::new(Vec::new());
        for line in lines {
            pager.push(line);
        }
        pager.finish()
    }

    #[test]
    fn pages_break_between_lines_and_headings_move_with_their_text() {
        let pages = paginate((0..60).map(|_| content(12.0)).collect());
        assert_eq!(pages.len(), 1, "60 × 12 pt fit on a page");
        let pages = paginate((0..61).map(|_| content(12.0)).collect());
        assert_eq!(pages.len(), 2);

        let mut lines = vec![content(CONTENT_H - 30.0), Line::spacer(10.0)];
        lines.push(Line { height: 15.0, ops: Vec::new(), kind: Kind::KeepWithNext });
        lines.push(Line::spacer(4.0));
        lines.push(content(12.0));
        let pages = paginate(lines);
        assert_eq!(pages.len(), 2);
        assert_eq!(pages[1][0].1.kind, Kind::KeepWithNext, "the heading went to the text's page");
        assert_eq!(pages[1][0].0, 0.0);
    }

    #[test]
    fn each_page_leaves_the_pager_when_the_next_one_starts() {
        let mut pager = Pager::new(Vec::new());
        for _ in 0..60 {
            pager.push(content(12.0));
        }
        assert!(pager.sink.is_empty(), "the first page is still open");
        pager.push(content(12.0));
        assert_eq!(pager.sink.len(), 1, "a full page is handed on, not kept");
        assert_eq!(pager.sink[0].len(), 60);
        assert_eq!(pager.page.len(), 1, "only the open page's lines stay");
        let pages = pager.finish();
        assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [60, 1]);
        assert_eq!(Pager::new(Vec::new()).finish().len(), 1, "no line: one empty page");
    }

    struct NoImages;
    impl ImageSource for NoImages {
        fn image(&self, _: &str) -> Option<(String, Vec<u8>)> {
            None
        }
    }

    /// A paragraph laid out straight onto the pages (`Layout::flow`) makes the pages that its
    /// lines collected in a list would, and they leave the pager as the paragraph is set.
    #[test]
    fn a_long_paragraph_flows_onto_the_pages_as_its_lines_are_set() {
        use crate::model::{Inline, Style};
        let fonts = Fonts::new(SystemFonts::from_dirs(Vec::new())).expect("fonts");
        let mut layout = Layout::new(&fonts, &NoImages);
        let text: String = (0..20_000).map(|i| format!("word{} ", i % 97)).collect();
        let block = Block::Paragraph { align: Default::default(), content: vec![Inline::Text(text, Style::default())] };
        let ctx = Ctx { tight: false, lists: 0, max_h: CONTENT_H, size: layout::BODY_SIZE };
        let mut listed = Vec::new();
        layout.block(&block, CONTENT_W, ctx, &mut listed);
        let expected = paginate(listed);
        assert!(expected.len() > 20, "{} pages", expected.len());

        let mut pager = Pager::new(Vec::new());
        assert!(layout.flow(&block, CONTENT_W, ctx, &mut pager));
        assert_eq!(pager.sink.len(), expected.len() - 1, "every page but the open one has left");
        let pages = pager.finish();
        let shape = |pages: &[Page]| -> Vec<Vec<(f32, f32, usize)>> {
            pages.iter().map(|p| p.iter().map(|(y, l)| (*y, l.height, l.ops.len())).collect()).collect()
        };
        assert_eq!(shape(&pages), shape(&expected));
        let ops = |pages: &[Page]| -> Vec<Op> { pages.iter().flatten().flat_map(|(_, l)| l.ops.clone()).collect() };
        assert!(ops(&pages) == ops(&expected), "the same drawing operations");
    }

    /// A line referencing a note brings the note's lines to its page's foot, under a rule;
    /// when the two do not fit, the line goes to the next page with its note.
    #[test]
    fn notes_go_to_the_foot_of_the_page_of_their_reference() {
        let noted = |h: f32, note: usize| Line { height: h, ops: vec![Op::NoteRef(note)], kind: Kind::Content };
        let mut pager = Pager::new(Vec::new());
        pager.stock.insert(0, vec![content(20.0), content(20.0)]);
        pager.stock.insert(1, vec![content(30.0)]);
        pager.push(noted(12.0, 0));
        pager.push(noted(12.0, 0));
        assert!(!pager.stock.contains_key(&0), "set once");
        assert_eq!(pager.foot_h, FOOT_SEP + 40.0);
        pager.push(content(CONTENT_H - 24.0 - 40.0 - FOOT_SEP - 20.0));
        pager.push(noted(12.0, 1)); // fits, its note does not
        let pages = pager.finish();
        assert_eq!(pages.len(), 2);
        let ys = |p: &Page| p.iter().map(|(y, l)| (*y, l.height)).collect::<Vec<_>>();
        let foot = CONTENT_H - FOOT_SEP - 40.0;
        assert_eq!(ys(&pages[0])[3..], [(foot, FOOT_SEP), (foot + FOOT_SEP, 20.0), (foot + FOOT_SEP + 20.0, 20.0)]);
        assert_eq!(ys(&pages[1]), [(0.0, 12.0), (CONTENT_H - 40.0, FOOT_SEP), (CONTENT_H - 30.0, 30.0)]);
    }

    #[test]
    fn the_room_left_counts_held_headings() {
        let mut pager = Pager::new(Vec::new());
        pager.push(content(100.0));
        pager.push(Line { height: 20.0, ops: Vec::new(), kind: Kind::KeepWithNext });
        assert_eq!(pager.room(), CONTENT_H - 120.0);
        pager.push(content(CONTENT_H - 150.0));
        assert_eq!(pager.room(), CONTENT_H, "too little room left: the next line starts a page");
    }
}

//! Layout: blocks become a list of [`Line`]s, each a strip of the page's width holding
//! positioned drawing operations. Pagination (in `mod.rs`) only stacks lines, so every
//! block kind (paragraph lines, list items, table rows) is a line or a run of lines.
//!
//! Inline content is shaped (`shape.rs`) and broken greedily at the line break
//! opportunities of UAX #14 (`unicode-linebreak`: at spaces, between CJK characters, after
//! hyphens; over-long words at any glyph); runs keep their font, size, colour, decorations,
//! link and bidi level, and each line puts them in visual order (`line.rs`).

use std::collections::HashMap;
use std::rc::Rc;

use redline_ports::ImageSource;

use unicode_linebreak::BreakOpportunity;

use super::fonts::{FontId, Fonts, ASCENT, DESCENT};
use super::images::{self, PdfImage};
use super::line::LineBuilder;
use super::shape::{self, Gl, Shaper};
use super::Nested;
use crate::image;
use crate::model::{
    item_number, paragraph_dir, Align, Block, Dir, ImageRef, Inline, List, Note, Numbering, Rgb, Script, Style,
};

pub(crate) const BLACK: Rgb = Rgb(0, 0, 0);
const LINK_BLUE: Rgb = Rgb(0x05, 0x63, 0xC1);
const GREY: Rgb = Rgb(0x99, 0x99, 0x99);
const CODE_BG: Rgb = Rgb(0xF3, 0xF3, 0xF3);
const MARK_YELLOW: Rgb = Rgb(0xFF, 0xF1, 0x76);

/// Body text size (points).
pub(crate) const BODY_SIZE: f32 = 11.0;
const CODE_SIZE: f32 = 9.0;
pub(crate) const HEADING_SIZES: [f32; 6] = [22.0, 18.0, 15.0, 13.0, 12.0, 11.0];
/// Extra space between lines, in ems of the largest text.
pub(crate) const LEADING: f32 = 0.22;
/// CSS pixels to points.
pub(crate) const PX: f32 = 0.75;
const QUOTE_INDENT: f32 = 16.0;
/// Footnote text size (points).
pub(crate) const NOTE_SIZE: f32 = 9.0;
/// Space after a table (not in a list or cell).
pub(crate) const TABLE_GAP: f32 = 9.0;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Op {
    /// Shaped glyphs from `(x, y)`, `y` the baseline; `skew` slants a font that has no
    /// italic of its own.
    Text {
        x: f32,
        y: f32,
        font: FontId,
        size: f32,
        color: Rgb,
        skew: bool,
        glyphs: Vec<Gl>,
    },
    Fill {
        x: f32,
        y: f32,
        w: f32,
        h: f32,
        color: Rgb,
    },
    Stroke {
        x: f32,
        y: f32,
        w: f32,
        h: f32,
        color: Rgb,
        width: f32,
    },
    Image {
        x: f32,
        y: f32,
        w: f32,
        h: f32,
        image: usize,
    },
    Link {
        x: f32,
        y: f32,
        w: f32,
        h: f32,
        to: LinkTo,
    },
    /// Where the elements of these ids start (`y`: the top of the line): the destination of
    /// internal links. Draws nothing.
    Dest {
        x: f32,
        y: f32,
        ids: Vec<Rc<str>>,
    },
    /// A reference to the note of this index (`Doc::notes`) on this line: draws nothing, but
    /// the pager sets the note at the foot of the page the line lands on.
    NoteRef(usize),
}

impl Op {
    pub(crate) fn translate(&mut self, dx: f32, dy: f32) {
        match self {
            Op::Text { x, y, .. }
            | Op::Fill { x, y, .. }
            | Op::Stroke { x, y, .. }
            | Op::Image { x, y, .. }
            | Op::Link { x, y, .. }
            | Op::Dest { x, y, .. } => {
                *x += dx;
                *y += dy;
            }
            Op::NoteRef(_) => {}
        }
    }
}

/// Where a link goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LinkTo {
    /// An external address (`http`, `https`, `mailto`, `tel`): a URI action.
    Uri(Rc<str>),
    /// An element of the document, by its `id` (`href="#…"`, a note reference): a
    /// destination on the page where that element starts.
    Id(Rc<str>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Content,
    /// White space between blocks: dropped at the top of a page.
    Spacer,
    /// A heading line: not left alone at the bottom of a page.
    KeepWithNext,
}

/// A strip of content; `y` of its operations is measured down from its top.
#[derive(Debug, Clone)]
pub(crate) struct Line {
    pub height: f32,
    pub ops: Vec<Op>,
    pub kind: Kind,
}

impl Line {
    pub(crate) fn spacer(height: f32) -> Line {
        Line { height, ops: Vec::new(), kind: Kind::Spacer }
    }

    pub(crate) fn translate(&mut self, dx: f32) {
        if dx != 0.0 {
            for op in &mut self.ops {
                op.translate(dx, 0.0);
            }
        }
    }
}

/// How text of a block is set.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TextBase {
    pub size: f32,
    pub bold: bool,
    /// A right-to-left paragraph (its first strong character is).
    pub rtl: bool,
}

/// Where blocks are laid out.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ctx {
    /// Inside a list item or a table cell: less space after paragraphs.
    pub tight: bool,
    /// Enclosing lists (for bullet shapes).
    pub lists: usize,
    /// The tallest a line may be (a page, or less inside a table cell).
    pub max_h: f32,
    /// The size of paragraph and list text ([`BODY_SIZE`], smaller in footnotes).
    pub size: f32,
}

/// A run of glyphs with one look.
#[derive(Debug, Clone)]
pub(crate) struct Piece {
    pub font: FontId,
    pub size: f32,
    pub color: Rgb,
    pub rise: f32,
    pub underline: bool,
    pub strike: bool,
    pub background: Option<Rgb>,
    pub link: Option<LinkTo>,
    /// The ids of the elements that start with this piece (the first piece of a run that
    /// carries them).
    pub ids: Vec<Rc<str>>,
    pub glyphs: Vec<Gl>,
    pub width: f32,
    /// Bidi level (odd: right to left; the glyphs are already in visual order).
    pub level: u8,
    pub skew: bool,
    /// A picture instead of glyphs: (image index, height).
    pub image: Option<(usize, f32)>,
    /// A note reference: the note's index in `Doc::notes`.
    pub note: Option<usize>,
}

/// What line breaking works on.
#[derive(Debug, Clone)]
pub(crate) enum Atom {
    /// Pieces with no break opportunity between them.
    Word(Vec<Piece>, f32),
    Space(Piece),
    Break,
}

/// How a paragraph's lines are set.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ParaLook {
    pub base: TextBase,
    pub align: Align,
    pub kind: Kind,
}

pub(crate) struct Layout<'a> {
    pub fonts: &'a Fonts,
    shaper: Shaper,
    images: &'a dyn ImageSource,
    pub pictures: Vec<PdfImage>,
    picture_index: HashMap<String, Option<usize>>,
    /// Bytes of decoded samples still allowed.
    sample_budget: usize,
    /// The index of each note (in `Doc::notes`) by its id; references to them become
    /// [`Op::NoteRef`]s.
    pub notes: HashMap<Rc<str>, usize>,
}

impl<'a> Layout<'a> {
    pub(crate) fn new(fonts: &'a Fonts, images: &'a dyn ImageSource) -> Self {
        Layout {
            fonts,
            shaper: Shaper::default(),
            images,
            pictures: Vec::new(),
            picture_index: HashMap::new(),
            sample_budget: crate::image::DOCUMENT_SAMPLES,
            notes: HashMap::new(),
        }
    }

    /// The index of a usable picture (decoded once per `src`).
    fn picture(&mut self, src: &str) -> Option<usize> {
        if let Some(known) = self.picture_index.get(src) {
            return *known;
        }
        let budget = &mut self.sample_budget;
        let found = match image::bytes_of(src, self.images) {
            Some(bytes) => image::picture(bytes).and_then(|pic| images::prepare(pic, budget)),
            None => None,
        };
        let found = found.map(|img| {
            self.pictures.push(img);
            self.pictures.len() - 1
        });
        self.picture_index.insert(src.to_string(), found);
        found
    }

    fn piece(&self, style: &Style, base: TextBase) -> Piece {
        let mut size = style.size_pt.unwrap_or(base.size);
        let mut rise = 0.0;
        let note = style.note.as_ref().and_then(|id| self.notes.get(id).copied());
        // A note's mark is a superscript, whatever the HTML around it says.
        let script = if note.is_some() { Script::Super } else { style.script };
        match script {
            Script::Normal => {}
            Script::Super => {
                rise = size * 0.33;
                size *= 0.7;
            }
            Script::Sub => {
                rise = -size * 0.15;
                size *= 0.7;
            }
        }
        let font = FontId::pick(style.bold || base.bold, style.italic, style.code);
        // A note's mark links to the note; other internal links look like external ones.
        let link = match (&style.link, &style.anchor) {
            (Some(uri), _) => Some(LinkTo::Uri(uri.clone())),
            (None, Some(id)) => Some(LinkTo::Id(id.clone())),
            (None, None) => None,
        };
        let looks_linked = link.is_some();
        let link = match (note, &style.note) {
            (Some(_), Some(id)) => Some(LinkTo::Id(id.clone())),
            _ => link,
        };
        let color = style.color.unwrap_or(if looks_linked { LINK_BLUE } else { BLACK });
        let background = style.background.or(style.mark.then_some(MARK_YELLOW));
        Piece {
            font,
            size,
            color,
            rise,
            underline: style.underline || looks_linked,
            strike: style.strike,
            background,
            link,
            ids: Vec::new(),
            glyphs: Vec::new(),
            width: 0.0,
            image: None,
            level: 0,
            skew: false,
            note,
        }
    }

    /// `text` in the look of `proto`, shaped in runs of one font and one bidi level
    /// (`level_at` answers the level of a byte of `text`).
    fn shape(&self, text: &str, proto: &Piece, level_at: &dyn Fn(usize) -> u8, out: &mut Vec<Piece>) {
        let mut runs = Vec::new();
        shape::runs(self.fonts, proto.font, text, level_at, &mut runs);
        for run in runs {
            let glyphs = self.shaper.shape(self.fonts, run.font, &text[run.start..run.end], run.level % 2 == 1);
            if glyphs.is_empty() {
                continue;
            }
            let mut p = proto.clone();
            p.font = run.font;
            p.level = run.level;
            p.skew = proto.font.italic() && !self.fonts.get(run.font).italic;
            p.width = glyphs.iter().map(|g| g.adv).sum::<f32>() * p.size;
            p.glyphs = glyphs.to_vec();
            out.push(p);
        }
    }

    /// Left-to-right text in the look of `proto`.
    fn shape_ltr(&self, text: &str, proto: &Piece, out: &mut Vec<Piece>) {
        self.shape(text, proto, &|_| 0, out);
    }

    /// The width of `text` in `font` at `size` points.
    pub(crate) fn text_width(&self, text: &str, font: FontId, size: f32) -> f32 {
        let mut proto = self.piece(&Style::default(), TextBase { size, bold: false, rtl: false });
        proto.font = font;
        let mut pieces = Vec::new();
        self.shape_ltr(text, &proto, &mut pieces);
        pieces.iter().map(|p| p.width).sum()
    }

    /// Inline content as atoms. Pictures are sized to fit `max_w` × `max_h`.
    pub(crate) fn atoms(&mut self, content: &[Inline], base: TextBase, max_w: f32, max_h: f32) -> Vec<Atom> {
        let mut atoms = Vec::new();
        self.each_atom(content, base, max_w, max_h, &mut |atom| atoms.push(atom));
        atoms
    }

    /// [`Layout::atoms`] handed to `f` one by one as they are made, so that a paragraph of
    /// any length never holds more than a word of them.
    fn each_atom(&mut self, content: &[Inline], base: TextBase, max_w: f32, max_h: f32, f: &mut dyn FnMut(Atom)) {
        let mut word: Vec<Piece> = Vec::new();
        let flush = |word: &mut Vec<Piece>, f: &mut dyn FnMut(Atom)| {
            if !word.is_empty() {
                let w = word.iter().map(|p| p.width).sum();
                f(Atom::Word(std::mem::take(word), w));
            }
        };
        for inline in content {
            match inline {
                Inline::Text(text, style) => {
                    let proto = self.piece(style, base);
                    // The ids go with the run's first glyphs only.
                    let mut ids = style.ids.clone();
                    let levels = shape::levels(text, base.rtl);
                    let level_of = |i: usize| levels.as_ref().map_or(0, |l| l.get(i).copied().unwrap_or(0));
                    let mut last = 0;
                    for (pos, opportunity) in unicode_linebreak::linebreaks(text) {
                        let (seg_start, seg) = (last, &text[last..pos]);
                        last = pos;
                        let body = seg.trim_end_matches([' ', '\t', '\n', '\r']);
                        if !body.is_empty() {
                            let first = word.len();
                            self.shape(body, &proto, &|i| level_of(seg_start + i), &mut word);
                            if !ids.is_empty() {
                                if let Some(p) = word.get_mut(first) {
                                    p.ids = std::mem::take(&mut ids);
                                }
                            }
                        }
                        let trailing = &seg[body.len()..];
                        let inside = pos < text.len();
                        if trailing.contains('\n') || (opportunity == BreakOpportunity::Mandatory && inside) {
                            flush(&mut word, f);
                            f(Atom::Break);
                        } else if !trailing.is_empty() {
                            flush(&mut word, f);
                            let mut space = Vec::new();
                            self.shape(" ", &proto, &|_| level_of(seg_start + body.len()), &mut space);
                            if let Some(p) = space.pop() {
                                f(Atom::Space(p));
                            }
                        } else if inside {
                            flush(&mut word, f);
                        }
                    }
                }
                Inline::Break => {
                    flush(&mut word, f);
                    f(Atom::Break);
                }
                Inline::Image(img) => {
                    flush(&mut word, f);
                    let atom = self.image_atom(img, base, max_w, max_h);
                    f(atom);
                }
            }
        }
        flush(&mut word, f);
    }

    fn image_atom(&mut self, img: &ImageRef, base: TextBase, max_w: f32, max_h: f32) -> Atom {
        match self.picture(&img.src) {
            Some(index) => {
                let pic = &self.pictures[index];
                let (w, h) = image::display_px(img, pic.width, pic.height);
                let (w, h) = image::fit(w * PX, h * PX, max_w.max(1.0), max_h.max(1.0));
                let style = Style { link: img.link.clone(), ..Style::default() };
                let mut p = self.piece(&style, base);
                p.underline = false;
                p.note = None;
                p.width = w;
                p.image = Some((index, h));
                Atom::Word(vec![p], w)
            }
            None => {
                let style = Style { italic: true, link: img.link.clone(), ..Style::default() };
                let proto = self.piece(&style, base);
                let mut pieces = Vec::new();
                let alt = if img.alt.is_empty() { String::new() } else { format!("[{}]", img.alt) };
                self.shape_ltr(&alt, &proto, &mut pieces);
                let w = pieces.iter().map(|p| p.width).sum();
                Atom::Word(pieces, w)
            }
        }
    }

    /// Breaks inline content into lines of at most `width`, each handed to `out` as soon as
    /// it is set.
    pub(crate) fn paragraph(
        &mut self,
        content: &[Inline],
        look: ParaLook,
        width: f32,
        max_h: f32,
        out: &mut dyn Lines,
    ) {
        // The direction rule of every writer (`model::paragraph_dir`): a `dir` around the
        // text, else its first strong character.
        let base = TextBase { rtl: paragraph_dir(content) == Dir::Rtl, ..look.base };
        let look = ParaLook { base, ..look };
        let mut breaker = Breaker { line: LineBuilder { pieces: Vec::new(), used: 0.0, width, look }, space: None };
        self.each_atom(content, base, width, max_h, &mut |atom| breaker.take(atom, out));
        if !breaker.line.pieces.is_empty() {
            breaker.line.finish(out);
        }
    }

    /// Lays out blocks in `width`, appending lines to `out`.
    pub(crate) fn blocks(&mut self, blocks: &[Block], width: f32, ctx: Ctx, out: &mut Vec<Line>) {
        for block in blocks {
            self.block(block, width, ctx, out);
        }
    }

    pub(crate) fn block(&mut self, block: &Block, width: f32, ctx: Ctx, out: &mut Vec<Line>) {
        if self.flow(block, width, ctx, out) {
            return;
        }
        let gap = if ctx.tight { 3.0 } else { 7.0 };
        match block {
            Block::List(list) => {
                self.list(list, width, ctx, out);
                if !ctx.tight {
                    out.push(Line::spacer(4.0));
                }
            }
            Block::Table(table) => {
                self.table(table, width, ctx, &mut Nested { out, max_h: ctx.max_h });
                out.push(Line::spacer(if ctx.tight { 5.0 } else { TABLE_GAP }));
            }
            Block::Quote(blocks) => {
                let start = out.len();
                self.blocks(blocks, (width - QUOTE_INDENT).max(20.0), ctx, out);
                while out.len() > start && out.last().is_some_and(|l| l.kind == Kind::Spacer) {
                    out.pop();
                }
                for line in &mut out[start..] {
                    line.translate(QUOTE_INDENT);
                    line.ops
                        .insert(0, Op::Fill { x: 3.0, y: 0.0, w: 2.5, h: line.height, color: Rgb(0xCC, 0xCC, 0xCC) });
                }
                out.push(Line::spacer(gap));
            }
            Block::Paragraph { .. } | Block::Heading { .. } | Block::Code(_) | Block::Rule => {}
        }
    }

    /// Lays out a block whose lines are final as they are set (a paragraph, heading, code or
    /// rule), handing them to `out` one by one: at the top level they go straight onto the
    /// pages, so a huge paragraph is never held whole. False for other blocks (nothing done).
    pub(crate) fn flow(&mut self, block: &Block, width: f32, ctx: Ctx, out: &mut dyn Lines) -> bool {
        let gap = if ctx.tight { 3.0 } else { 7.0 };
        match block {
            Block::Paragraph { align, content } => {
                let look = ParaLook {
                    base: TextBase { size: ctx.size, bold: false, rtl: false },
                    align: *align,
                    kind: Kind::Content,
                };
                self.paragraph(content, look, width, ctx.max_h, out);
                out.put(Line::spacer(gap));
            }
            Block::Heading { level, align, content } => {
                let size = HEADING_SIZES[usize::from((*level).clamp(1, 6)) - 1];
                out.put(Line::spacer(size * 0.6));
                let look = ParaLook {
                    base: TextBase { size, bold: true, rtl: false },
                    align: *align,
                    kind: Kind::KeepWithNext,
                };
                self.paragraph(content, look, width, ctx.max_h, out);
                out.put(Line::spacer(4.0));
            }
            Block::Code(text) => {
                self.code(text, width, out);
                out.put(Line::spacer(gap));
            }
            Block::Rule => {
                out.put(Line {
                    height: 10.0,
                    ops: vec![Op::Fill { x: 0.0, y: 4.6, w: width, h: 0.8, color: GREY }],
                    kind: Kind::Content,
                });
                out.put(Line::spacer(4.0));
            }
            Block::List(_) | Block::Table(_) | Block::Quote(_) => return false,
        }
        true
    }

    fn code(&mut self, text: &str, width: f32, out: &mut dyn Lines) {
        let base = TextBase { size: CODE_SIZE, bold: false, rtl: false };
        let proto = self.piece(&Style { code: true, ..Style::default() }, base);
        let line_h = CODE_SIZE * (ASCENT + DESCENT + LEADING);
        let inner = (width - 8.0).max(CODE_SIZE);
        for source in text.split('\n') {
            let expanded = source.replace('\t', "    ");
            let mut pieces = Vec::new();
            let levels = shape::levels(&expanded, false);
            self.shape(
                &expanded,
                &proto,
                &|i| levels.as_ref().map_or(0, |l| l.get(i).copied().unwrap_or(0)),
                &mut pieces,
            );
            // Break at any glyph: code keeps its spaces.
            let mut rows: Vec<Vec<Piece>> = vec![Vec::new()];
            let mut row_w = 0.0;
            for mut piece in pieces {
                let glyphs = std::mem::take(&mut piece.glyphs);
                let empty = Piece { width: 0.0, ..piece };
                let mut part = empty.clone();
                for g in glyphs {
                    let adv = g.adv * part.size;
                    if row_w + adv > inner && row_w > 0.0 {
                        if !part.glyphs.is_empty() {
                            let done = std::mem::replace(&mut part, empty.clone());
                            if let Some(r) = rows.last_mut() {
                                r.push(done);
                            }
                        }
                        rows.push(Vec::new());
                        row_w = 0.0;
                    }
                    part.glyphs.push(g);
                    part.width += adv;
                    row_w += adv;
                }
                if !part.glyphs.is_empty() {
                    if let Some(r) = rows.last_mut() {
                        r.push(part);
                    }
                }
            }
            for mut row in rows {
                shape::reorder(&mut row, |p| p.level);
                let mut ops = vec![Op::Fill { x: 0.0, y: 0.0, w: width, h: line_h, color: CODE_BG }];
                let baseline = CODE_SIZE * (ASCENT + LEADING / 2.0);
                let mut x = 4.0;
                for p in row {
                    let w = p.width;
                    let (font, size, skew) = (p.font, p.size, p.skew);
                    ops.push(Op::Text { x, y: baseline, font, size, color: BLACK, skew, glyphs: p.glyphs });
                    x += w;
                }
                out.put(Line { height: line_h, ops, kind: Kind::Content });
            }
        }
    }

    fn list(&mut self, list: &List, width: f32, ctx: Ctx, out: &mut Vec<Line>) {
        let base = TextBase { size: ctx.size, bold: false, rtl: false };
        let proto = self.piece(&Style::default(), base);
        let markers: Vec<String> = (0..list.items.len())
            .map(|i| {
                if list.ordered() {
                    format!("{}.", item_number(list.numbering, list.start.saturating_add(i as i64)))
                } else {
                    ["\u{2022}", "\u{25E6}", "\u{25AA}"][ctx.lists % 3].to_string()
                }
            })
            .collect();
        let widest = markers.iter().map(|m| self.text_width(m, proto.font, base.size)).fold(0.0f32, f32::max);
        let indent = (widest + 8.0).max(18.0).min(width / 2.0);
        let inner_ctx = Ctx { tight: true, lists: ctx.lists + 1, ..ctx };
        let inner_w = (width - indent).max(20.0);
        for (item, marker) in list.items.iter().zip(&markers) {
            let start = out.len();
            self.blocks(item, inner_w, inner_ctx, out);
            while out.len() > start && out.last().is_some_and(|l| l.kind == Kind::Spacer) {
                out.pop();
            }
            if out.len() == start {
                let h = base.size * (ASCENT + DESCENT + LEADING);
                out.push(Line { height: h, ops: Vec::new(), kind: Kind::Content });
            }
            for line in &mut out[start..] {
                line.translate(indent);
            }
            let mut glyphs = Vec::new();
            self.shape_ltr(marker, &proto, &mut glyphs);
            let marker_w: f32 = glyphs.iter().map(|p| p.width).sum();
            if let Some(first) = out[start..].iter_mut().find(|l| l.kind != Kind::Spacer) {
                let baseline = first
                    .ops
                    .iter()
                    .find_map(|op| match op {
                        Op::Text { y, .. } => Some(*y),
                        _ => None,
                    })
                    .unwrap_or(base.size * (ASCENT + LEADING / 2.0));
                let mut x = indent - 6.0 - marker_w;
                for (i, p) in glyphs.into_iter().enumerate() {
                    let w = p.width;
                    let (font, size, skew) = (p.font, p.size, p.skew);
                    let op = Op::Text { x, y: baseline, font, size, color: BLACK, skew, glyphs: p.glyphs };
                    first.ops.insert(i, op);
                    x += w;
                }
            }
            out.push(Line::spacer(2.0));
        }
        while out.last().is_some_and(|l| l.kind == Kind::Spacer) {
            out.pop();
        }
    }
}

impl Layout<'_> {
    /// The lines of note `index` (from 0) for the foot of a page `width` wide: its blocks
    /// after its number, in [`NOTE_SIZE`] text, at most `max_h` each, the note's `id` the
    /// destination of its first line. References inside the note are [`Op::NoteRef`]s like
    /// any other: the pager sets those notes after this one.
    pub(crate) fn note_lines(&mut self, index: usize, note: &Note, width: f32, max_h: f32) -> Vec<Line> {
        let list = List {
            numbering: Numbering::Decimal,
            start: index as i64 + 1,
            items: vec![note.blocks.clone()],
            item_revs: Vec::new(),
        };
        let ctx = Ctx { tight: true, lists: 0, max_h, size: NOTE_SIZE };
        let mut out = Vec::new();
        self.list(&list, width, ctx, &mut out);
        if let Some(first) = out.iter_mut().find(|l| l.kind != Kind::Spacer) {
            first.ops.push(Op::Dest { x: 0.0, y: 0.0, ids: vec![note.id.clone()] });
        }
        out
    }
}

/// Where laid-out lines go: a list (whose lines are moved or measured afterwards) or, at the
/// top level, straight onto the pages.
pub(crate) trait Lines {
    fn put(&mut self, line: Line);
}

impl Lines for Vec<Line> {
    fn put(&mut self, line: Line) {
        self.push(line);
    }
}

/// Greedy line breaking over atoms as they come: the line being filled and the space that
/// would go before the next word.
struct Breaker {
    line: LineBuilder,
    space: Option<Piece>,
}

impl Breaker {
    fn take(&mut self, atom: Atom, out: &mut dyn Lines) {
        let width = self.line.width;
        match atom {
            Atom::Break => {
                self.space = None;
                self.line.finish(out);
            }
            Atom::Space(p) => {
                if !self.line.pieces.is_empty() && self.space.is_none() {
                    self.space = Some(p);
                }
            }
            Atom::Word(pieces, w) => {
                let line = &mut self.line;
                let sw = if line.pieces.is_empty() { 0.0 } else { self.space.as_ref().map_or(0.0, |s| s.width) };
                if line.used + sw + w <= width {
                    if let Some(s) = self.space.take() {
                        if !line.pieces.is_empty() {
                            line.push(s);
                        }
                    }
                    line.extend(pieces, w);
                } else {
                    self.space = None;
                    if !line.pieces.is_empty() {
                        line.finish(out);
                    }
                    if w <= width {
                        line.extend(pieces, w);
                    } else {
                        self.split_word(pieces, out);
                    }
                }
            }
        }
    }

    /// Places a word wider than the line, breaking it between glyphs.
    fn split_word(&mut self, pieces: Vec<Piece>, out: &mut dyn Lines) {
        let line = &mut self.line;
        let width = line.width;
        for piece in pieces {
            if piece.image.is_some() || piece.glyphs.is_empty() {
                if !line.pieces.is_empty() && line.used + piece.width > width {
                    line.finish(out);
                }
                line.push(piece);
                continue;
            }
            let mut piece = piece;
            let glyphs = std::mem::take(&mut piece.glyphs);
            let empty = Piece { width: 0.0, ..piece };
            let mut part = empty.clone();
            for g in glyphs {
                let adv = g.adv * part.size;
                if line.used + part.width + adv > width && (!line.pieces.is_empty() || !part.glyphs.is_empty()) {
                    if !part.glyphs.is_empty() {
                        line.push(std::mem::replace(&mut part, empty.clone()));
                    }
                    line.finish(out);
                }
                part.glyphs.push(g);
                part.width += adv;
            }
            if !part.glyphs.is_empty() {
                line.push(part);
            }
        }
    }
}

//! `word/document.xml`: the blocks as WordprocessingML paragraphs, runs and tables, with the
//! relationships (links, pictures), media and numbering instances they need.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::rc::Rc;

use redline_ports::ImageSource;

use super::parts::{self, BULLET_NUM, TEXT_H, TEXT_W};
use crate::image::{self, Picture};
use crate::model::{self, Align, Block, Dir, ImageRef, Inline, List, Note, Rev, RevKind, Script, Style, Table};
use crate::table::{Grid, Slot};
use crate::xml::{escape_xml, push_xml};

/// English Metric Units per twip.
const EMU_PER_TWIP: i64 = 635;
/// EMUs per CSS pixel (96 per inch).
const EMU_PER_PX: f32 = 9525.0;
/// Left indent added per level of quotation (twips).
const QUOTE_INDENT: i64 = 540;
/// A cell's left plus right margin (twips).
const CELL_MARGINS: i64 = 216;
/// Average width of a character of body text (11 pt), and of code (10 pt Courier), in twips.
const CHAR_W: f32 = 130.0;
const CODE_CHAR_W: f32 = 120.0;
/// A cell's margins plus room for the estimate's error (twips).
const CELL_SLACK: f32 = CELL_MARGINS as f32 + 120.0;
/// Twips per CSS pixel.
const TWIPS_PER_PX: f32 = 15.0;
/// The narrowest width content is laid out in (twips).
const MIN_WIDTH: i64 = 360;

/// A media part of the package.
pub(crate) struct Media {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// Where a block is written.
#[derive(Clone, Copy)]
struct Ctx {
    /// Width available, in twips.
    width: i64,
    /// Quotation depth.
    quote: u32,
    /// Enclosing lists.
    lists: usize,
}

#[derive(Default, Clone, Copy)]
struct ParaProps<'s> {
    style: Option<&'s str>,
    num: Option<(usize, usize)>,
    left: Option<i64>,
    hanging: Option<i64>,
    align: Align,
    rule: bool,
    /// A right-to-left paragraph (`w:bidi`).
    bidi: bool,
}

/// Where an inline's link goes.
#[derive(Clone, Copy, PartialEq)]
enum Target<'s> {
    Url(&'s str),
    /// An id of the document (a bookmark).
    Anchor(&'s str),
}

pub(crate) struct Body<'a> {
    images: &'a dyn ImageSource,
    /// Decoded samples left for the WebP pictures of this document (turned into PNGs).
    webp_budget: usize,
    pub out: String,
    /// `<Relationship>` elements beyond the fixed ones.
    pub rels: String,
    next_rel: usize,
    link_rels: HashMap<String, String>,
    /// Resolved pictures by `src`: relationship id and pixel size (`None`: unusable).
    pictures: HashMap<String, Option<(String, u32, u32)>>,
    pub media: Vec<Media>,
    /// Ordered lists' `w:num`s: (abstract id, level, start).
    pub nums: Vec<(usize, usize, i64)>,
    next_drawing: u32,
    /// Bookmark names by HTML id, and the names taken.
    bookmarks: HashMap<Rc<str>, String>,
    bookmark_names: HashSet<String>,
    /// Bookmarks written (by name), and the next `w:id` of one.
    placed: HashSet<String>,
    next_bookmark: u32,
    /// Footnote `w:id`s by note id.
    notes: HashMap<Rc<str>, usize>,
    /// The revision that inserted or deleted the blocks being written whole.
    rev: Option<Rev>,
    /// Tracked changes: who made them, and when each was made (`w:date`, by change).
    pub(crate) author: String,
    pub(crate) dates: Vec<String>,
}

impl<'a> Body<'a> {
    pub(crate) fn new(images: &'a dyn ImageSource) -> Self {
        Body {
            images,
            out: String::new(),
            rels: String::new(),
            next_rel: 10,
            link_rels: HashMap::new(),
            pictures: HashMap::new(),
            media: Vec::new(),
            webp_budget: image::DOCUMENT_SAMPLES,
            nums: Vec::new(),
            next_drawing: 1,
            bookmarks: HashMap::new(),
            bookmark_names: HashSet::new(),
            placed: HashSet::new(),
            next_bookmark: 0,
            notes: HashMap::new(),
            rev: None,
            author: String::new(),
            dates: Vec::new(),
        }
    }

    /// Numbers the notes (footnotes 1, 2, … in order) before the body refers to them.
    pub(crate) fn set_notes(&mut self, notes: &[Note]) {
        for (i, note) in notes.iter().enumerate() {
            self.notes.insert(note.id.clone(), i + 1);
        }
    }

    /// `word/footnotes.xml`'s `w:footnote` elements for the notes, and the relationships
    /// their links and pictures need (the part's own, `footnotes.xml.rels`).
    pub(crate) fn footnotes(&mut self, notes: &[Note]) -> (String, String) {
        self.apart(|body| {
            let mut xml = String::new();
            let mark = "<w:r><w:rPr><w:rStyle w:val=\"FootnoteReference\"/></w:rPr><w:footnoteRef/></w:r>\
                        <w:r><w:t xml:space=\"preserve\"> </w:t></w:r>";
            for (i, note) in notes.iter().enumerate() {
                let ctx = Ctx { width: TEXT_W, quote: 0, lists: 0 };
                body.blocks(&note.blocks, ctx);
                let mut text = std::mem::take(&mut body.out);
                // The mark opens the first paragraph (one of its own when the note starts with
                // something else).
                match text.strip_prefix("<w:p><w:pPr>").and_then(|rest| rest.find("</w:pPr>")) {
                    Some(at) => text.insert_str("<w:p><w:pPr>".len() + at + "</w:pPr>".len(), mark),
                    None => text
                        .insert_str(0, &format!("<w:p><w:pPr><w:pStyle w:val=\"FootnoteText\"/></w:pPr>{mark}</w:p>")),
                }
                let _ = write!(xml, "<w:footnote w:id=\"{}\">{text}</w:footnote>", i + 1);
            }
            body.out = xml;
        })
    }

    /// The content of a page header or footer part (`w:hdr`, `w:ftr`), and the relationships
    /// its links and pictures need (the part's own `.rels`). It ends with a paragraph, as
    /// Word requires of a header.
    pub(crate) fn page_part(&mut self, blocks: &[Block]) -> (String, String) {
        self.apart(|body| {
            body.blocks(blocks, Ctx { width: TEXT_W, quote: 0, lists: 0 });
            if !body.out.ends_with("</w:p>") {
                body.out.push_str("<w:p/>");
            }
        })
    }

    /// What `write` writes, as a part of its own beside the document: its XML and the
    /// relationships it needs (links and pictures are resolved again for the part). A note
    /// reference in it stays text: notes belong to the document.
    fn apart(&mut self, write: impl FnOnce(&mut Self)) -> (String, String) {
        let body = std::mem::take(&mut self.out);
        let rels = std::mem::take(&mut self.rels);
        let link_rels = std::mem::take(&mut self.link_rels);
        let pictures = std::mem::take(&mut self.pictures);
        let numbers = std::mem::take(&mut self.notes);
        write(self);
        let xml = std::mem::replace(&mut self.out, body);
        let part_rels = std::mem::replace(&mut self.rels, rels);
        self.notes = numbers;
        self.link_rels = link_rels;
        self.pictures = pictures;
        (xml, part_rels)
    }

    /// The bookmark name of an HTML id: letters, digits and `_`, at most 40 characters,
    /// starting with a letter, one name per id.
    fn bookmark(&mut self, id: &Rc<str>) -> String {
        if let Some(name) = self.bookmarks.get(id) {
            return name.clone();
        }
        let bare = id.strip_prefix("user-content-").unwrap_or(id);
        let mut base: String =
            bare.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).take(32).collect();
        if !base.starts_with(|c: char| c.is_ascii_alphabetic()) {
            base.insert(0, 'b');
        }
        let mut name = base.clone();
        let mut n = 1;
        while self.bookmark_names.contains(&name) {
            n += 1;
            name = format!("{base}_{n}");
        }
        self.bookmark_names.insert(name.clone());
        self.bookmarks.insert(id.clone(), name.clone());
        name
    }

    pub(crate) fn document(&mut self, blocks: &[Block]) {
        let ctx = Ctx { width: TEXT_W, quote: 0, lists: 0 };
        self.blocks(blocks, ctx);
        if blocks.is_empty() {
            self.out.push_str("<w:p/>");
        }
    }

    /// A top-level block of a tracked document, inserted or deleted whole by `rev`.
    pub(crate) fn tracked_block(&mut self, block: &Block, rev: Option<Rev>) {
        self.rev = rev;
        self.block(block, Ctx { width: TEXT_W, quote: 0, lists: 0 }, None);
        self.rev = None;
    }

    /// The start and end of a move's range (`w:moveFromRangeStart`/`…End`, or `moveTo`) around
    /// the blocks of one side of move number `name`, made by change `rev.change`.
    pub(crate) fn move_range(&mut self, rev: Rev, name: usize) -> (String, String) {
        let side = if rev.kind == RevKind::MovedFrom { "moveFrom" } else { "moveTo" };
        let attrs = self.rev_attrs(rev);
        let id = attrs.split('"').nth(1).unwrap_or("0").to_owned();
        (format!("<w:{side}RangeStart {attrs} w:name=\"move{name}\"/>"), format!("<w:{side}RangeEnd w:id=\"{id}\"/>"))
    }

    /// A new annotation id (bookmarks, revisions and comments share one space).
    pub(crate) fn annotation_id(&mut self) -> u32 {
        let n = self.next_bookmark;
        self.next_bookmark += 1;
        n
    }

    /// `w:id`, `w:author` and `w:date` of a revision element.
    fn rev_attrs(&mut self, rev: Rev) -> String {
        let id = self.annotation_id();
        let date = self.dates.get(rev.change).map(String::as_str).unwrap_or("1970-01-01T00:00:00Z");
        format!("w:id=\"{id}\" w:author=\"{}\" w:date=\"{date}\"", escape_xml(&self.author))
    }

    /// The mark of a paragraph or row a revision inserted or deleted (`<w:ins …/>`).
    fn rev_mark(&mut self, rev: Rev) -> String {
        let tag = rev_tag(rev.kind);
        format!("<w:{tag} {}/>", self.rev_attrs(rev))
    }

    /// Opens the `w:ins`/`w:del` around a run of `rev` (the run's own, else its block's).
    fn rev_open(&mut self, rev: Option<Rev>) -> Option<RevKind> {
        let rev = rev.or(self.rev)?;
        let attrs = self.rev_attrs(rev);
        let _ = write!(self.out, "<w:{} {attrs}>", rev_tag(rev.kind));
        Some(rev.kind)
    }

    fn rev_close(&mut self, kind: Option<RevKind>) {
        if let Some(kind) = kind {
            let _ = write!(self.out, "</w:{}>", rev_tag(kind));
        }
    }

    fn blocks(&mut self, blocks: &[Block], ctx: Ctx) {
        for block in blocks {
            self.block(block, ctx, None);
        }
    }

    /// Indentation of a paragraph that is not a list item's first.
    fn left(&self, ctx: Ctx) -> Option<i64> {
        let list = if ctx.lists > 0 { parts::list_indent(ctx.lists.min(9) - 1) } else { 0 };
        let left = list + QUOTE_INDENT * i64::from(ctx.quote);
        (left > 0).then_some(left)
    }

    /// Writes a block; `num` numbers its first paragraph (a list item's marker).
    fn block(&mut self, block: &Block, ctx: Ctx, num: Option<(usize, usize)>) {
        let quote_style = (ctx.quote > 0).then_some("Quote");
        let mut props = ParaProps { style: quote_style, left: self.left(ctx), ..ParaProps::default() };
        if let Some((num_id, ilvl)) = num {
            props.num = Some((num_id, ilvl));
            props.style = Some(quote_style.unwrap_or("ListParagraph"));
            props.left = Some(parts::list_indent(ilvl) + QUOTE_INDENT * i64::from(ctx.quote));
            props.hanging = Some(360);
        } else if ctx.lists > 0 && ctx.quote == 0 {
            props.style = Some("ListParagraph");
        }
        match block {
            Block::Paragraph { align, content } => {
                props.align = *align;
                self.paragraph(&props, content, ctx);
            }
            Block::Heading { level, align, content } => {
                let style = format!("Heading{}", (*level).clamp(1, 6));
                props.style = Some(&style);
                props.align = *align;
                self.paragraph(&props, content, ctx);
            }
            Block::List(list) => {
                if num.is_some() {
                    self.paragraph(&props, &[], ctx);
                }
                self.list(list, ctx);
            }
            Block::Table(table) => {
                if num.is_some() {
                    self.paragraph(&props, &[], ctx);
                }
                self.table(table, ctx);
                // Space below the table; two tables in a row would also merge into one.
                let mark = self.rev.map(|rev| format!("<w:rPr>{}</w:rPr>", self.rev_mark(rev))).unwrap_or_default();
                let _ = write!(
                    self.out,
                    "<w:p><w:pPr><w:spacing w:before=\"0\" w:after=\"0\" w:line=\"160\" w:lineRule=\"exact\"/>{mark}</w:pPr></w:p>",
                );
            }
            Block::Quote(blocks) => {
                if num.is_some() {
                    self.paragraph(&props, &[], ctx);
                }
                self.blocks(
                    blocks,
                    Ctx { quote: ctx.quote + 1, width: (ctx.width - QUOTE_INDENT).max(MIN_WIDTH), ..ctx },
                );
            }
            Block::Code(text) => {
                props.style = Some("SourceCode");
                self.p_open(&props);
                let rev = self.rev_open(None);
                let t = if rev == Some(RevKind::Deleted) { "w:delText" } else { "w:t" };
                for (i, line) in text.split('\n').enumerate() {
                    self.out.push_str("<w:r>");
                    if i > 0 {
                        self.out.push_str("<w:br/>");
                    }
                    for (j, part) in line.split('\t').enumerate() {
                        if j > 0 {
                            self.out.push_str("<w:tab/>");
                        }
                        if !part.is_empty() {
                            let _ = write!(self.out, "<{t} xml:space=\"preserve\">");
                            push_xml(&mut self.out, part);
                            let _ = write!(self.out, "</{t}>");
                        }
                    }
                    self.out.push_str("</w:r>");
                }
                self.rev_close(rev);
                self.out.push_str("</w:p>");
            }
            Block::Rule => {
                props.rule = true;
                self.paragraph(&props, &[], ctx);
            }
        }
    }

    fn p_open(&mut self, p: &ParaProps<'_>) {
        self.out.push_str("<w:p><w:pPr>");
        if let Some(style) = p.style {
            let _ = write!(self.out, "<w:pStyle w:val=\"{style}\"/>");
        }
        if let Some((num_id, ilvl)) = p.num {
            let _ = write!(self.out, "<w:numPr><w:ilvl w:val=\"{ilvl}\"/><w:numId w:val=\"{num_id}\"/></w:numPr>");
        }
        if p.rule {
            self.out
                .push_str("<w:pBdr><w:bottom w:val=\"single\" w:sz=\"6\" w:space=\"1\" w:color=\"999999\"/></w:pBdr>");
        }
        if p.bidi {
            self.out.push_str("<w:bidi/>");
        }
        if p.left.is_some() || p.hanging.is_some() {
            self.out.push_str("<w:ind");
            if let Some(left) = p.left {
                let _ = write!(self.out, " w:left=\"{left}\"");
            }
            if let Some(h) = p.hanging {
                let _ = write!(self.out, " w:hanging=\"{h}\"");
            }
            self.out.push_str("/>");
        }
        let jc = match p.align {
            Align::Start => None,
            Align::Center => Some("center"),
            Align::End => Some("right"),
            Align::Justify => Some("both"),
        };
        if let Some(jc) = jc {
            let _ = write!(self.out, "<w:jc w:val=\"{jc}\"/>");
        }
        if let Some(rev) = self.rev {
            let mark = self.rev_mark(rev);
            let _ = write!(self.out, "<w:rPr>{mark}</w:rPr>");
        }
        self.out.push_str("</w:pPr>");
    }

    fn paragraph(&mut self, props: &ParaProps<'_>, content: &[Inline], ctx: Ctx) {
        let bidi = model::paragraph_dir(content) == Dir::Rtl;
        let props = &ParaProps { bidi, ..*props };
        self.p_open(props);
        self.inlines(content, ctx);
        self.out.push_str("</w:p>");
    }

    fn list(&mut self, list: &List, ctx: Ctx) {
        let ilvl = ctx.lists.min(8);
        let num_id = if list.ordered() {
            self.nums.push((parts::abstract_id(list.numbering), ilvl, list.start.clamp(0, 32_767)));
            BULLET_NUM + self.nums.len()
        } else {
            BULLET_NUM
        };
        let inner = Ctx { lists: ctx.lists + 1, width: (ctx.width - 720).max(MIN_WIDTH), ..ctx };
        let outer = self.rev;
        for (k, item) in list.items.iter().enumerate() {
            self.rev = list.item_revs.iter().find(|(at, _)| *at == k).map(|(_, rev)| *rev).or(outer);
            let Some((first, rest)) = item.split_first() else {
                let props = ParaProps {
                    style: Some("ListParagraph"),
                    num: Some((num_id, ilvl)),
                    left: Some(parts::list_indent(ilvl) + QUOTE_INDENT * i64::from(ctx.quote)),
                    hanging: Some(360),
                    ..ParaProps::default()
                };
                self.paragraph(&props, &[], inner);
                continue;
            };
            self.block(first, inner, Some((num_id, ilvl)));
            for block in rest {
                self.block(block, inner, None);
            }
        }
        self.rev = outer;
    }

    fn table(&mut self, table: &Table, ctx: Ctx) {
        let grid = Grid::new(table);
        if !table.caption.is_empty() {
            let props = ParaProps { style: Some("Caption"), left: self.left(ctx), ..ParaProps::default() };
            self.paragraph(&props, &table.caption, ctx);
        }
        if grid.ncols == 0 {
            return;
        }
        let indent = self.left(ctx).unwrap_or(0);
        let (mins, maxs) = crate::table::column_bounds(&grid, 400.0, |id| {
            let (mut lo, mut hi) = (0.0f32, 0.0f32);
            for block in grid.content(table, id) {
                let (l, h) = self.measure(block);
                lo = lo.max(l);
                hi = hi.max(h);
            }
            (lo + CELL_SLACK, hi + CELL_SLACK)
        });
        let widths: Vec<i64> = crate::table::distribute(&mins, &maxs, ctx.width as f32)
            .into_iter()
            .map(|w| (w.round() as i64).max(MIN_WIDTH / 2))
            .collect();
        let mut xs = vec![0i64; widths.len() + 1];
        for (i, w) in widths.iter().enumerate() {
            xs[i + 1] = xs[i] + w;
        }
        let span_w = |c: usize, span: usize| xs[(c + span).min(widths.len())] - xs[c];
        let _ = write!(
            self.out,
            "<w:tbl><w:tblPr><w:tblStyle w:val=\"TableGrid\"/><w:tblW w:w=\"{}\" w:type=\"dxa\"/>\
             <w:tblInd w:w=\"{indent}\" w:type=\"dxa\"/>{}<w:tblLayout w:type=\"fixed\"/>\
             <w:tblLook w:val=\"04A0\" w:firstRow=\"1\" w:lastRow=\"0\" w:firstColumn=\"1\" w:lastColumn=\"0\" w:noHBand=\"0\" w:noVBand=\"1\"/>\
             </w:tblPr><w:tblGrid>",
            xs[widths.len()],
            parts::table_borders()
        );
        for w in &widths {
            let _ = write!(self.out, "<w:gridCol w:w=\"{w}\"/>");
        }
        self.out.push_str("</w:tblGrid>");
        let cell_ctx = |width: i64| Ctx { width: (width - CELL_MARGINS).max(MIN_WIDTH), quote: 0, lists: 0 };
        let outer = self.rev;
        // Header rows: `<thead>` rows, and leading rows of `<th>` cells (as the PDF repeats).
        let leading = table
            .rows
            .iter()
            .take_while(|r| r.header || (!r.cells.is_empty() && r.cells.iter().all(|c| c.header)))
            .count();
        for r in 0..grid.nrows() {
            self.rev = table.rows[r].rev.or(outer);
            self.out.push_str("<w:tr>");
            let mark = self.rev.map(|rev| self.rev_mark(rev)).unwrap_or_default();
            let header_row = r < leading && leading < table.rows.len();
            if header_row || !mark.is_empty() {
                let header = if header_row { "<w:tblHeader/>" } else { "" };
                let _ = write!(self.out, "<w:trPr>{header}{mark}</w:trPr>");
            }
            let mut c = 0;
            while c < grid.ncols {
                match grid.slot(r, c) {
                    Slot::Start { cell, colspan, rowspan } => {
                        let data = crate::table::cell(table, *cell);
                        let shade = data.background.or(data.header.then_some(crate::model::Rgb(0xF2, 0xF2, 0xF2)));
                        let width = span_w(c, *colspan);
                        self.tc_open(width, *colspan, if *rowspan > 1 { Some("restart") } else { None }, shade);
                        let content = grid.content(table, *cell);
                        let start = self.out.len();
                        for block in &content {
                            self.block(block, cell_ctx(width), None);
                        }
                        if self.out.len() == start || self.out.ends_with("</w:tbl>") {
                            self.out.push_str("<w:p/>");
                        }
                        self.out.push_str("</w:tc>");
                        c += colspan;
                    }
                    Slot::Covered { row, col } if *row < r && *col == c => {
                        let span = match grid.slot(*row, *col) {
                            Slot::Start { colspan, .. } => *colspan,
                            _ => 1,
                        };
                        self.tc_open(span_w(c, span), span, Some("continue"), None);
                        self.out.push_str("<w:p/></w:tc>");
                        c += span;
                    }
                    _ => {
                        self.tc_open(span_w(c, 1), 1, None, None);
                        self.out.push_str("<w:p/></w:tc>");
                        c += 1;
                    }
                }
            }
            self.out.push_str("</w:tr>");
        }
        self.rev = outer;
        self.out.push_str("</w:tbl>");
    }

    /// The narrowest and widest width of a block in twips, from character counts (an
    /// estimate: Word sets the text, these only share a table's width among its columns).
    fn measure(&mut self, block: &Block) -> (f32, f32) {
        match block {
            Block::Paragraph { content, .. } | Block::Heading { content, .. } => {
                let scale = match block {
                    Block::Heading { level, .. } => {
                        [1.8, 1.5, 1.3, 1.2, 1.1, 1.1][usize::from((*level).clamp(1, 6)) - 1]
                    }
                    _ => 1.0,
                };
                let (mut lo, mut hi, mut line) = (0.0f32, 0.0f32, 0.0f32);
                for inline in content {
                    match inline {
                        Inline::Text(text, style) => {
                            let k = if style.code { CODE_CHAR_W } else { CHAR_W }
                                * scale
                                * if style.bold { 1.15 } else { 1.0 }
                                * style.size_pt.map_or(1.0, |pt| pt / 11.0);
                            for (i, word) in text.split(' ').enumerate() {
                                let w = word.chars().count() as f32 * k;
                                lo = lo.max(w);
                                line += w + if i > 0 { k } else { 0.0 };
                            }
                        }
                        Inline::Break => {
                            hi = hi.max(line);
                            line = 0.0;
                        }
                        Inline::Image(img) => {
                            if let Some((_, pw, ph)) = self.picture(&img.src) {
                                let w = image::display_px(img, pw, ph).0 * TWIPS_PER_PX;
                                lo = lo.max(w);
                                line += w;
                            }
                        }
                    }
                }
                (lo.min(TEXT_W as f32 / 3.0), hi.max(line))
            }
            Block::List(list) => {
                let (mut lo, mut hi) = (0.0f32, 0.0f32);
                for b in list.items.iter().flatten() {
                    let (l, h) = self.measure(b);
                    lo = lo.max(l);
                    hi = hi.max(h);
                }
                (lo + 720.0, hi + 720.0)
            }
            Block::Quote(blocks) => {
                let (mut lo, mut hi) = (0.0f32, 0.0f32);
                for b in blocks {
                    let (l, h) = self.measure(b);
                    lo = lo.max(l);
                    hi = hi.max(h);
                }
                (lo + QUOTE_INDENT as f32, hi + QUOTE_INDENT as f32)
            }
            Block::Code(text) => {
                let widest = text.split('\n').map(|l| l.chars().count()).max().unwrap_or(0) as f32 * CODE_CHAR_W;
                (widest.min(1600.0), widest)
            }
            Block::Table(t) => {
                let grid = Grid::new(t);
                let (mins, maxs) = crate::table::column_bounds(&grid, 400.0, |id| {
                    let (mut lo, mut hi) = (0.0f32, 0.0f32);
                    for block in grid.content(t, id) {
                        let (l, h) = self.measure(block);
                        lo = lo.max(l);
                        hi = hi.max(h);
                    }
                    (lo + CELL_SLACK, hi + CELL_SLACK)
                });
                (mins.iter().sum(), maxs.iter().sum())
            }
            Block::Rule => (0.0, 0.0),
        }
    }

    fn tc_open(&mut self, width: i64, span: usize, merge: Option<&str>, shade: Option<crate::model::Rgb>) {
        let _ = write!(self.out, "<w:tc><w:tcPr><w:tcW w:w=\"{width}\" w:type=\"dxa\"/>");
        if span > 1 {
            let _ = write!(self.out, "<w:gridSpan w:val=\"{span}\"/>");
        }
        match merge {
            Some("continue") => self.out.push_str("<w:vMerge/>"),
            Some(m) => {
                let _ = write!(self.out, "<w:vMerge w:val=\"{m}\"/>");
            }
            None => {}
        }
        if let Some(fill) = shade {
            let _ = write!(self.out, "<w:shd w:val=\"clear\" w:color=\"auto\" w:fill=\"{}\"/>", fill.hex());
        }
        self.out.push_str("</w:tcPr>");
    }

    fn inlines(&mut self, content: &[Inline], ctx: Ctx) {
        let mut link: Option<Target<'_>> = None;
        let mut last_note: Option<&Rc<str>> = None;
        for inline in content {
            let target = match inline {
                Inline::Text(_, style) => target_of(style),
                Inline::Image(img) => img.link.as_deref().map(Target::Url),
                Inline::Break => link,
            };
            if let Inline::Text(_, style) = inline {
                self.bookmarks_at(&style.ids);
            }
            if target != link {
                if link.is_some() {
                    self.out.push_str("</w:hyperlink>");
                }
                match target {
                    Some(Target::Url(url)) => {
                        let id = self.link_rel(url);
                        let _ = write!(self.out, "<w:hyperlink r:id=\"{id}\" w:history=\"1\">");
                    }
                    Some(Target::Anchor(anchor)) => {
                        let name = self.bookmark(&Rc::from(anchor));
                        let _ = write!(self.out, "<w:hyperlink w:anchor=\"{name}\" w:history=\"1\">");
                    }
                    None => {}
                }
                link = target;
            }
            // A note reference: Word's footnote mark replaces the HTML's (one per reference,
            // which may be several runs).
            let note = match inline {
                Inline::Text(_, style) => style.note.as_ref().filter(|id| self.notes.contains_key(*id)),
                _ => None,
            };
            if let Some(id) = note {
                if last_note != Some(id) {
                    let n = self.notes[id];
                    let rev = self.rev_open(style_rev(inline));
                    let _ = write!(
                        self.out,
                        "<w:r><w:rPr><w:rStyle w:val=\"FootnoteReference\"/></w:rPr><w:footnoteReference w:id=\"{n}\"/></w:r>"
                    );
                    self.rev_close(rev);
                }
                last_note = Some(id);
                continue;
            }
            last_note = None;
            match inline {
                Inline::Text(text, style) => self.run(text, style, link.is_some()),
                Inline::Break => {
                    let rev = self.rev_open(None);
                    self.out.push_str("<w:r><w:br/></w:r>");
                    self.rev_close(rev);
                }
                Inline::Image(img) => self.image(img, ctx),
            }
        }
        if link.is_some() {
            self.out.push_str("</w:hyperlink>");
        }
    }

    /// Zero-length bookmarks for the ids that start here (each once).
    fn bookmarks_at(&mut self, ids: &[Rc<str>]) {
        for id in ids {
            let name = self.bookmark(id);
            if self.placed.insert(name.clone()) {
                let n = self.next_bookmark;
                self.next_bookmark += 1;
                let _ =
                    write!(self.out, "<w:bookmarkStart w:id=\"{n}\" w:name=\"{name}\"/><w:bookmarkEnd w:id=\"{n}\"/>");
            }
        }
    }

    fn link_rel(&mut self, url: &str) -> String {
        if let Some(id) = self.link_rels.get(url) {
            return id.clone();
        }
        let id = format!("rId{}", self.next_rel);
        self.next_rel += 1;
        let _ = write!(
            self.rels,
            "<Relationship Id=\"{id}\" Type=\"{}\" Target=\"{}\" TargetMode=\"External\"/>",
            parts::REL_HYPERLINK,
            escape_xml(url)
        );
        self.link_rels.insert(url.to_string(), id.clone());
        id
    }

    fn run(&mut self, text: &str, style: &Style, in_link: bool) {
        let rev = self.rev_open(style.rev);
        self.out.push_str("<w:r><w:rPr>");
        self.run_props(text, style, in_link);
        // A formatting revision records the former properties, last in `w:rPr`.
        if let Some(former) = &style.former {
            let attrs = self.rev_attrs(Rev { kind: RevKind::Inserted, change: former.change });
            let _ = write!(self.out, "<w:rPrChange {attrs}><w:rPr>");
            self.run_props(text, &former.style, in_link);
            self.out.push_str("</w:rPr></w:rPrChange>");
        }
        self.out.push_str("</w:rPr>");
        // Deleted text is `w:delText`; a line break inside a revision is a `\n` (see
        // `redline.rs`).
        let t = if rev == Some(RevKind::Deleted) { "w:delText" } else { "w:t" };
        for (k, piece) in text.split('\n').enumerate() {
            if k > 0 {
                self.out.push_str("<w:br/>");
            }
            if !piece.is_empty() || k == 0 {
                let _ = write!(self.out, "<{t} xml:space=\"preserve\">");
                push_xml(&mut self.out, piece);
                let _ = write!(self.out, "</{t}>");
            }
        }
        self.out.push_str("</w:r>");
        self.rev_close(rev);
    }

    /// The run properties of `style` (inside `w:rPr`), in the schema's order.
    fn run_props(&mut self, text: &str, style: &Style, in_link: bool) {
        if in_link {
            self.out.push_str("<w:rStyle w:val=\"Hyperlink\"/>");
        } else if style.code {
            self.out.push_str("<w:rStyle w:val=\"VerbatimChar\"/>");
        }
        if in_link && style.code {
            self.out.push_str("<w:rFonts w:ascii=\"Courier New\" w:hAnsi=\"Courier New\" w:cs=\"Courier New\"/>");
        }
        if style.bold {
            self.out.push_str("<w:b/><w:bCs/>");
        }
        if style.italic {
            self.out.push_str("<w:i/><w:iCs/>");
        }
        if style.strike {
            self.out.push_str("<w:strike/>");
        }
        if let Some(color) = style.color {
            let _ = write!(self.out, "<w:color w:val=\"{}\"/>", color.hex());
        }
        if let Some(pt) = style.size_pt {
            let half = (pt * 2.0).round().clamp(2.0, 3276.0) as u32;
            let _ = write!(self.out, "<w:sz w:val=\"{half}\"/><w:szCs w:val=\"{half}\"/>");
        }
        let (highlight, shade) = super::highlight::highlight(style);
        if let Some(name) = highlight {
            let _ = write!(self.out, "<w:highlight w:val=\"{name}\"/>");
        }
        if style.underline {
            self.out.push_str("<w:u w:val=\"single\"/>");
        }
        if let Some(bg) = shade {
            let _ = write!(self.out, "<w:shd w:val=\"clear\" w:color=\"auto\" w:fill=\"{}\"/>", bg.hex());
        }
        match style.script {
            Script::Normal => {}
            Script::Super => self.out.push_str("<w:vertAlign w:val=\"superscript\"/>"),
            Script::Sub => self.out.push_str("<w:vertAlign w:val=\"subscript\"/>"),
        }
        if model::has_rtl(text) {
            self.out.push_str("<w:rtl/>");
        }
    }

    /// The relationship id and pixel size of a picture, adding its media part once.
    fn picture(&mut self, src: &str) -> Option<(String, u32, u32)> {
        if let Some(known) = self.pictures.get(src) {
            return known.clone();
        }
        let budget = &mut self.webp_budget;
        let found =
            image::resolve(src, self.images).and_then(|pic| image::office_picture(pic, budget)).map(|pic: Picture| {
                let id = format!("rId{}", self.next_rel);
                self.next_rel += 1;
                let name = format!("image{}.{}", self.media.len() + 1, pic.kind.extension());
                let _ = write!(
                    self.rels,
                    "<Relationship Id=\"{id}\" Type=\"{}\" Target=\"media/{name}\"/>",
                    parts::REL_IMAGE
                );
                self.media.push(Media { name, bytes: pic.bytes });
                (id, pic.width, pic.height)
            });
        self.pictures.insert(src.to_string(), found.clone());
        found
    }

    fn image(&mut self, img: &ImageRef, ctx: Ctx) {
        let Some((rel, pw, ph)) = self.picture(&img.src) else {
            if !img.alt.is_empty() {
                let style = Style { italic: true, rev: img.rev, ..Style::default() };
                self.run(&format!("[{}]", img.alt), &style, img.link.is_some());
            }
            return;
        };
        let (w_px, h_px) = image::display_px_in(img, pw, ph, ctx.width as f32 / TWIPS_PER_PX);
        let max_w = (ctx.width * EMU_PER_TWIP) as f32;
        let max_h = (TEXT_H * EMU_PER_TWIP) as f32;
        let (cx, cy) = image::fit(w_px * EMU_PER_PX, h_px * EMU_PER_PX, max_w, max_h);
        let (cx, cy) = (cx.round() as i64, cy.round() as i64);
        let id = self.next_drawing;
        self.next_drawing += 1;
        let alt = escape_xml(&img.alt);
        let rev = self.rev_open(img.rev);
        let _ = write!(
            self.out,
            "<w:r><w:drawing><wp:inline distT=\"0\" distB=\"0\" distL=\"0\" distR=\"0\">\
             <wp:extent cx=\"{cx}\" cy=\"{cy}\"/><wp:effectExtent l=\"0\" t=\"0\" r=\"0\" b=\"0\"/>\
             <wp:docPr id=\"{id}\" name=\"Picture {id}\" descr=\"{alt}\"/>\
             <wp:cNvGraphicFramePr><a:graphicFrameLocks noChangeAspect=\"1\"/></wp:cNvGraphicFramePr>\
             <a:graphic><a:graphicData uri=\"http://schemas.openxmlformats.org/drawingml/2006/picture\">\
             <pic:pic><pic:nvPicPr><pic:cNvPr id=\"{id}\" name=\"Picture {id}\" descr=\"{alt}\"/><pic:cNvPicPr/></pic:nvPicPr>\
             <pic:blipFill><a:blip r:embed=\"{rel}\"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill>\
             <pic:spPr><a:xfrm><a:off x=\"0\" y=\"0\"/><a:ext cx=\"{cx}\" cy=\"{cy}\"/></a:xfrm>\
             <a:prstGeom prst=\"rect\"><a:avLst/></a:prstGeom></pic:spPr></pic:pic>\
             </a:graphicData></a:graphic></wp:inline></w:drawing></w:r>"
        );
        self.rev_close(rev);
    }
}

fn style_rev(inline: &Inline) -> Option<Rev> {
    match inline {
        Inline::Text(_, style) => style.rev,
        _ => None,
    }
}

fn rev_tag(kind: RevKind) -> &'static str {
    match kind {
        RevKind::Inserted => "ins",
        RevKind::Deleted => "del",
        RevKind::MovedFrom => "moveFrom",
        RevKind::MovedTo => "moveTo",
    }
}

fn target_of(style: &Style) -> Option<Target<'_>> {
    match (&style.link, &style.anchor) {
        (Some(url), _) => Some(Target::Url(url)),
        (None, Some(anchor)) => Some(Target::Anchor(anchor)),
        (None, None) => None,
    }
}

//! Writing HTML: inline runs with merged formatting, block sequences with nested lists,
//! and tables with spans.

use std::fmt::Write as _;

use super::styles::Rgb;

/// Escapes text for HTML (text and attribute values alike), dropping C0 controls that
/// have no place in HTML.
pub(super) fn escape_into(out: &mut String, s: &str) {
    let mut last = 0;
    for (i, b) in s.bytes().enumerate() {
        let rep = match b {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            b'\'' => "&#39;",
            0..=8 | 11 | 12 | 14..=31 | 127 => "",
            _ => continue,
        };
        out.push_str(&s[last..i]);
        out.push_str(rep);
        last = i + 1;
    }
    out.push_str(&s[last..]);
}

fn push_hex(out: &mut String, c: Rgb) {
    let _ = write!(out, "#{:02x}{:02x}{:02x}", c[0], c[1], c[2]);
}

/// The formatting of a piece of text, as HTML renders it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Format {
    pub(super) bold: bool,
    pub(super) italic: bool,
    pub(super) underline: bool,
    pub(super) strike: bool,
    /// 0 baseline, 1 superscript, 2 subscript.
    pub(super) valign: u8,
    pub(super) color: Option<Rgb>,
    pub(super) background: Option<Rgb>,
}

/// An inline formatting element. A piece of text's tags are always opened in this order
/// (the colour span outermost), so a change of formatting closes only the tags from the
/// first one that differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    Span { color: Option<Rgb>, background: Option<Rgb> },
    Strong,
    Em,
    U,
    S,
    Sup,
    Sub,
}

impl Tag {
    fn close(self) -> &'static str {
        match self {
            Tag::Span { .. } => "</span>",
            Tag::Strong => "</strong>",
            Tag::Em => "</em>",
            Tag::U => "</u>",
            Tag::S => "</s>",
            Tag::Sup => "</sup>",
            Tag::Sub => "</sub>",
        }
    }
}

/// The tags of a format, in opening order.
fn tags(f: &Format) -> ([Tag; 6], usize) {
    let mut out = [Tag::Strong; 6];
    let mut n = 0;
    let mut push = |t: Tag| {
        out[n] = t;
        n += 1;
    };
    if f.color.is_some() || f.background.is_some() {
        push(Tag::Span { color: f.color, background: f.background });
    }
    if f.bold {
        push(Tag::Strong);
    }
    if f.italic {
        push(Tag::Em);
    }
    if f.underline {
        push(Tag::U);
    }
    if f.strike {
        push(Tag::S);
    }
    match f.valign {
        1 => push(Tag::Sup),
        2 => push(Tag::Sub),
        _ => {}
    }
    (out, n)
}

/// The inline content of one paragraph. Adjacent pieces with the same link and formatting
/// share their tags.
#[derive(Debug, Default)]
pub(super) struct Inline {
    html: String,
    link: Option<String>,
    open: Vec<Tag>,
    /// Something visible was written (text other than white space, a picture, a note mark).
    content: bool,
}

impl Inline {
    fn open_tag(&mut self, tag: Tag) {
        let h = &mut self.html;
        match tag {
            Tag::Span { color, background } => {
                h.push_str("<span style=\"");
                if let Some(c) = color {
                    h.push_str("color: ");
                    push_hex(h, c);
                }
                if let Some(c) = background {
                    if color.is_some() {
                        h.push_str("; ");
                    }
                    h.push_str("background-color: ");
                    push_hex(h, c);
                }
                h.push_str("\">");
            }
            Tag::Strong => h.push_str("<strong>"),
            Tag::Em => h.push_str("<em>"),
            Tag::U => h.push_str("<u>"),
            Tag::S => h.push_str("<s>"),
            Tag::Sup => h.push_str("<sup>"),
            Tag::Sub => h.push_str("<sub>"),
        }
        self.open.push(tag);
    }

    /// Closes open tags until `keep` remain.
    fn close_to(&mut self, keep: usize) {
        while self.open.len() > keep {
            if let Some(tag) = self.open.pop() {
                self.html.push_str(tag.close());
            }
        }
    }

    fn close_link(&mut self) {
        if self.link.take().is_some() {
            self.html.push_str("</a>");
        }
    }

    /// Makes `link` and `format` the open ones.
    fn switch(&mut self, link: Option<&str>, format: &Format) {
        let mut format = *format;
        if link.is_some() {
            // A link is underlined anyway.
            format.underline = false;
        }
        if self.link.as_deref() != link {
            self.close_to(0);
            self.close_link();
            if let Some(href) = link {
                self.html.push_str("<a href=\"");
                escape_into(&mut self.html, href);
                self.html.push_str("\">");
                self.link = Some(href.to_owned());
            }
        }
        let (want, n) = tags(&format);
        let want = &want[..n];
        let common = self.open.iter().zip(want).take_while(|(a, b)| a == b).count();
        self.close_to(common);
        for &tag in &want[common..] {
            self.open_tag(tag);
        }
    }

    /// Text. Leading white space of a paragraph is dropped.
    pub(super) fn text(&mut self, text: &str, link: Option<&str>, format: &Format) {
        let text = if self.content { text } else { text.trim_start() };
        if text.is_empty() {
            return;
        }
        self.switch(link, format);
        escape_into(&mut self.html, text);
        self.content = true;
    }

    /// A line break (dropped at the start of a paragraph).
    pub(super) fn line_break(&mut self, link: Option<&str>, format: &Format) {
        if self.content {
            self.switch(link, format);
            self.html.push_str("<br>");
        }
    }

    /// A picture; `size`: the width and height it is shown at, in CSS pixels.
    pub(super) fn image(&mut self, placeholder: &str, alt: &str, link: Option<&str>, size: Option<(u32, u32)>) {
        self.switch(link, &Format::default());
        self.html.push_str("<img src=\"");
        escape_into(&mut self.html, placeholder);
        self.html.push_str("\" alt=\"");
        escape_into(&mut self.html, alt);
        self.html.push('"');
        if let Some((w, h)) = size {
            let _ = write!(self.html, " width=\"{w}\" height=\"{h}\"");
        }
        self.html.push('>');
        self.content = true;
    }

    /// A footnote or endnote reference, as DPUB-ARIA writes it (docs/conversion.md,
    /// "Footnotes"): `<a href="#fnN" role="doc-noteref"><sup>N</sup></a>`; the first
    /// reference to a note also carries the id `fnrefN`.
    pub(super) fn note_mark(&mut self, n: u32, first: bool) {
        self.switch(None, &Format::default());
        self.close_link();
        let id = if first { format!(" id=\"fnref{n}\"") } else { String::new() };
        let _ = write!(self.html, "<a href=\"#fn{n}\"{id} role=\"doc-noteref\"><sup>{n}</sup></a>");
        self.content = true;
    }

    pub(super) fn has_content(&self) -> bool {
        self.content
    }

    pub(super) fn finish(&mut self) -> String {
        self.close_to(0);
        self.close_link();
        std::mem::take(&mut self.html)
    }
}

/// What a paragraph becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Plain,
    Heading(u8),
    Item {
        ordered: bool,
        ol_type: Option<&'static str>,
        num_id: u32,
        ilvl: u8,
        /// The item's number (used as `start` when the item opens an `<ol>`).
        number: u32,
    },
}

#[derive(Debug, Clone, Copy)]
struct OpenList {
    ordered: bool,
    num_id: u32,
    ilvl: u8,
}

/// A sequence of blocks (the body, a table cell, a text box, a note), with the list nesting
/// kept open between consecutive list paragraphs.
#[derive(Debug)]
pub(super) struct Blocks {
    html: String,
    lists: Vec<OpenList>,
    count: usize,
    /// The only block so far is a plain paragraph (a cell then needs no `<p>`).
    single_plain: bool,
    /// New line after each top-level block.
    newlines: bool,
}

impl Blocks {
    pub(super) fn new(newlines: bool) -> Self {
        Blocks { html: String::new(), lists: Vec::new(), count: 0, single_plain: false, newlines }
    }

    fn end_block(&mut self) {
        if self.newlines {
            self.html.push('\n');
        }
    }

    fn close_list(&mut self) {
        if let Some(list) = self.lists.pop() {
            self.html.push_str(if list.ordered { "</li></ol>" } else { "</li></ul>" });
            if self.lists.is_empty() {
                self.end_block();
            }
        }
    }

    fn close_lists(&mut self) {
        while !self.lists.is_empty() {
            self.close_list();
        }
    }

    pub(super) fn paragraph(&mut self, kind: Kind, inner: &str) {
        self.count += 1;
        self.single_plain = self.count == 1 && kind == Kind::Plain;
        match kind {
            Kind::Plain => {
                self.close_lists();
                self.html.push_str("<p>");
                self.html.push_str(inner);
                self.html.push_str("</p>");
                self.end_block();
            }
            Kind::Heading(level) => {
                self.close_lists();
                let _ = write!(self.html, "<h{level}>{inner}</h{level}>");
                self.end_block();
            }
            Kind::Item { ordered, ol_type, num_id, ilvl, number } => {
                while self.lists.last().is_some_and(|l| l.ilvl > ilvl) {
                    self.close_list();
                }
                if let Some(top) = self.lists.last() {
                    if top.ilvl == ilvl {
                        if top.ordered == ordered && (top.num_id == num_id || ilvl > 0) {
                            self.html.push_str("</li><li>");
                            self.html.push_str(inner);
                            return;
                        }
                        self.close_list();
                    }
                }
                if ordered {
                    self.html.push_str("<ol");
                    if let Some(t) = ol_type {
                        let _ = write!(self.html, " type=\"{t}\"");
                    }
                    if number != 1 {
                        let _ = write!(self.html, " start=\"{number}\"");
                    }
                    self.html.push_str("><li>");
                } else {
                    self.html.push_str("<ul><li>");
                }
                self.html.push_str(inner);
                self.lists.push(OpenList { ordered, num_id, ilvl });
            }
        }
    }

    /// Ready-made block HTML (a table, a text box's blocks).
    pub(super) fn block(&mut self, html: &str) {
        if html.is_empty() {
            return;
        }
        self.close_lists();
        self.count += 2;
        self.single_plain = false;
        self.html.push_str(html);
        if self.newlines && !html.ends_with('\n') {
            self.html.push('\n');
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub(super) fn finish(mut self) -> String {
        self.close_lists();
        self.html
    }

    /// For a table cell: a lone plain paragraph is unwrapped.
    pub(super) fn finish_cell(mut self) -> String {
        self.close_lists();
        if self.single_plain && self.count == 1 {
            let inner = self.html.strip_prefix("<p>").and_then(|h| h.strip_suffix("</p>"));
            if let Some(inner) = inner {
                return inner.to_owned();
            }
        }
        self.html
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum VMerge {
    #[default]
    None,
    Restart,
    Continue,
}

#[derive(Debug, Clone)]
pub(super) struct Cell {
    pub(super) col: u32,
    pub(super) span: u32,
    pub(super) vmerge: VMerge,
    pub(super) background: Option<Rgb>,
    /// The cell's HTML, a range of `Table::content`.
    start: usize,
    end: usize,
}

#[derive(Debug, Default)]
pub(super) struct Row {
    pub(super) header: bool,
    pub(super) cells: Vec<Cell>,
}

/// A table being read: rendered only at its end, when vertical merges can be counted.
#[derive(Debug, Default)]
pub(super) struct Table {
    pub(super) rows: Vec<Row>,
    content: String,
}

impl Table {
    pub(super) fn push_cell(
        &mut self,
        row: &mut Row,
        col: u32,
        span: u32,
        vmerge: VMerge,
        background: Option<Rgb>,
        html: &str,
    ) {
        let start = self.content.len();
        self.content.push_str(html);
        row.cells.push(Cell { col, span, vmerge, background, start, end: self.content.len() });
    }

    /// A legacy horizontal merge (`w:hMerge="continue"`): the cell widens the previous one.
    pub(super) fn widen_last(&mut self, row: &mut Row, span: u32, html: &str) -> bool {
        let Some(last) = row.cells.last_mut() else { return false };
        last.span = last.span.saturating_add(span).min(1000);
        if !html.is_empty() && last.end == self.content.len() {
            if last.end > last.start {
                self.content.push(' ');
            }
            self.content.push_str(html);
            last.end = self.content.len();
        }
        true
    }

    /// No cell has content: the table is layout left over, not worth a block.
    pub(super) fn is_blank(&self) -> bool {
        self.content.is_empty()
    }

    pub(super) fn render(self) -> String {
        let Table { rows, content } = self;
        // rowspan of each cell (0 = covered by a merge above), and covered cells' content to
        // carry up into the cell that covers them.
        let mut spans: Vec<Vec<u32>> = rows.iter().map(|r| vec![1; r.cells.len()]).collect();
        let mut carried: Vec<Vec<(usize, usize)>> = Vec::new();
        let mut carried_of: Vec<Vec<Option<usize>>> = rows.iter().map(|r| vec![None; r.cells.len()]).collect();
        for r in 0..rows.len() {
            for c in 0..rows[r].cells.len() {
                let cell = &rows[r].cells[c];
                if cell.vmerge != VMerge::Restart || spans[r][c] == 0 {
                    continue;
                }
                let mut span = 1u32;
                let mut extra = Vec::new();
                for (below, below_spans) in rows.iter().zip(spans.iter_mut()).skip(r + 1) {
                    let Ok(i) = below.cells.binary_search_by_key(&cell.col, |b| b.col) else { break };
                    if below.cells[i].vmerge != VMerge::Continue {
                        break;
                    }
                    below_spans[i] = 0;
                    span = span.saturating_add(1);
                    if below.cells[i].end > below.cells[i].start {
                        extra.push((below.cells[i].start, below.cells[i].end));
                    }
                }
                spans[r][c] = span.min(65534);
                if !extra.is_empty() {
                    carried_of[r][c] = Some(carried.len());
                    carried.push(extra);
                }
            }
        }
        let mut html = String::with_capacity(content.len() + rows.len() * 16 + 16);
        html.push_str("<table>");
        let header_rows = rows.iter().take_while(|r| r.header).count();
        let sections = header_rows > 0 && header_rows < rows.len();
        for (r, row) in rows.iter().enumerate() {
            if sections && r == 0 {
                html.push_str("<thead>");
            }
            if sections && r == header_rows {
                html.push_str("<tbody>");
            }
            let tag = if row.header && r < header_rows { "th" } else { "td" };
            html.push_str("<tr>");
            for (c, cell) in row.cells.iter().enumerate() {
                let rowspan = spans[r][c];
                if rowspan == 0 {
                    continue;
                }
                html.push('<');
                html.push_str(tag);
                if cell.span > 1 {
                    let _ = write!(html, " colspan=\"{}\"", cell.span);
                }
                if rowspan > 1 {
                    let _ = write!(html, " rowspan=\"{rowspan}\"");
                }
                if let Some(bg) = cell.background {
                    html.push_str(" style=\"background-color: ");
                    push_hex(&mut html, bg);
                    html.push('"');
                }
                html.push('>');
                html.push_str(&content[cell.start..cell.end]);
                if let Some(k) = carried_of[r][c] {
                    for &(s, e) in &carried[k] {
                        html.push(' ');
                        html.push_str(&content[s..e]);
                    }
                }
                let _ = write!(html, "</{tag}>");
            }
            html.push_str("</tr>");
            if sections && r + 1 == header_rows {
                html.push_str("</thead>");
            }
        }
        if sections {
            html.push_str("</tbody>");
        }
        html.push_str("</table>");
        html
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_and_controls() {
        let mut s = String::new();
        escape_into(&mut s, "a<b>&\"c'\u{1}d é");
        assert_eq!(s, "a&lt;b&gt;&amp;&quot;c&#39;d é");
    }

    #[test]
    fn adjacent_runs_with_the_same_format_merge() {
        let bold = Format { bold: true, ..Format::default() };
        let red = Format { color: Some([255, 0, 0]), ..bold };
        let mut i = Inline::default();
        i.text("  ", None, &bold);
        i.text("Hello ", None, &bold);
        i.text("world", None, &bold);
        i.text("!", None, &red);
        i.text(" x", Some("https://e.com/?a=1&b=2"), &red);
        assert!(i.has_content());
        assert_eq!(
            i.finish(),
            "<strong>Hello world</strong><span style=\"color: #ff0000\"><strong>!</strong></span>\
             <a href=\"https://e.com/?a=1&amp;b=2\"><span style=\"color: #ff0000\"><strong> x</strong></span></a>"
        );
    }

    #[test]
    fn a_format_change_closes_only_what_changes() {
        let red = Format { color: Some([255, 0, 0]), ..Format::default() };
        let red_bold = Format { bold: true, ..red };
        let red_italic = Format { italic: true, ..red };
        let mut i = Inline::default();
        i.text("a", None, &red);
        i.text("b", None, &red_bold);
        i.text("c", None, &red_italic);
        i.text("d", None, &Format { strike: true, ..red_italic });
        i.text("e", None, &Format::default());
        assert_eq!(i.finish(), "<span style=\"color: #ff0000\">a<strong>b</strong><em>c<s>d</s></em></span>e");
    }

    #[test]
    fn lists_nest_and_switch_kind() {
        let item = |ordered, ilvl, number| Kind::Item { ordered, ol_type: None, num_id: 1, ilvl, number };
        let mut b = Blocks::new(true);
        b.paragraph(item(true, 0, 1), "a");
        b.paragraph(item(false, 1, 1), "b");
        b.paragraph(item(false, 1, 1), "c");
        b.paragraph(item(true, 0, 2), "d");
        b.paragraph(Kind::Plain, "p");
        b.paragraph(item(true, 0, 3), "e");
        assert_eq!(
            b.finish(),
            "<ol><li>a<ul><li>b</li><li>c</li></ul></li><li>d</li></ol>\n<p>p</p>\n<ol start=\"3\"><li>e</li></ol>\n"
        );
    }

    #[test]
    fn vertical_merges_become_rowspans() {
        let mut t = Table::default();
        let mut r1 = Row::default();
        t.push_cell(&mut r1, 0, 2, VMerge::None, None, "wide");
        t.push_cell(&mut r1, 2, 1, VMerge::Restart, Some([0xff, 0xff, 0]), "tall");
        let mut r2 = Row::default();
        t.push_cell(&mut r2, 0, 1, VMerge::None, None, "a");
        t.push_cell(&mut r2, 1, 1, VMerge::None, None, "b");
        t.push_cell(&mut r2, 2, 1, VMerge::Continue, None, "");
        t.rows.push(r1);
        t.rows.push(r2);
        assert_eq!(
            t.render(),
            "<table><tr><td colspan=\"2\">wide</td><td rowspan=\"2\" style=\"background-color: #ffff00\">tall</td></tr>\
             <tr><td>a</td><td>b</td></tr></table>"
        );
    }
}

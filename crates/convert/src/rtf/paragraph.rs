//! A paragraph as runs of text with their look, rendered to inline HTML with tags opened and
//! closed only where the look changes; a table as rows of rendered cells.

use crate::escape;

/// What the rendered HTML of a run looks like (colours resolved).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct Look {
    pub(super) link: Option<usize>,
    /// A picture, by its placeholder (the run has no text).
    pub(super) image: Option<String>,
    /// A footnote reference, by the note's number (the run has no text).
    pub(super) note: Option<usize>,
    pub(super) color: Option<[u8; 3]>,
    pub(super) background: Option<[u8; 3]>,
    pub(super) bold: bool,
    pub(super) italic: bool,
    pub(super) underline: bool,
    pub(super) strike: bool,
    pub(super) vertical: u8,
}

/// A paragraph in progress: runs of text with their look (`\n` is a line break).
#[derive(Debug, Default)]
pub(super) struct Paragraph {
    pub(super) runs: Vec<(Look, String)>,
    pub(super) has_text: bool,
    /// `\intbl`: a paragraph of a table cell.
    pub(super) in_table: bool,
    /// `\outlinelevelN`: a heading.
    pub(super) outline: Option<u8>,
    /// The heading level of the paragraph's style (`\sN`), if its style is a heading.
    pub(super) style: Option<u8>,
    /// `\lsN` (or an old-style `\pnlvl…`): a list item, at level `\ilvlN`.
    pub(super) list: bool,
    pub(super) level: u8,
}

impl Paragraph {
    pub(super) fn push(&mut self, look: &Look, text: &str) {
        if text.is_empty() {
            return;
        }
        if !self.has_text && text.chars().any(|c| !c.is_whitespace()) {
            self.has_text = true;
        }
        match self.runs.last_mut() {
            Some((last, run)) if last == look => run.push_str(text),
            _ => self.runs.push((look.clone(), text.to_owned())),
        }
    }

    /// A picture, by its placeholder.
    pub(super) fn push_image(&mut self, look: &Look, placeholder: &str) {
        self.has_text = true;
        self.runs.push((Look { image: Some(placeholder.to_owned()), ..look.clone() }, String::new()));
    }

    /// A reference to note `n` (docs/conversion.md, "Footnotes").
    pub(super) fn push_note(&mut self, n: usize) {
        self.has_text = true;
        self.runs.push((Look { note: Some(n), ..Look::default() }, String::new()));
    }

    /// The heading level (0: `<h1>`): the paragraph's own outline level, else its style's.
    pub(super) fn heading(&self) -> Option<u8> {
        self.outline.or(self.style)
    }

    /// The inline HTML of the runs, tags opened and closed only where the look changes.
    pub(super) fn render(&self, links: &[String], out: &mut String) {
        let mut open: Vec<String> = Vec::new();
        let mut open_closers: Vec<&'static str> = Vec::new();
        for (look, text) in &self.runs {
            let wanted = tags(look, links);
            let keep = open.iter().zip(&wanted).take_while(|(a, (b, _))| *a == b).count();
            while open.len() > keep {
                open.pop();
                out.push_str(open_closers.pop().unwrap_or_default());
            }
            for (tag, closer) in wanted.into_iter().skip(keep) {
                out.push_str(&tag);
                open.push(tag);
                open_closers.push(closer);
            }
            if let Some(n) = look.note {
                out.push_str(&format!("<a href=\"#fn{n}\" id=\"fnref{n}\" role=\"doc-noteref\"><sup>{n}</sup></a>"));
                continue;
            }
            if let Some(placeholder) = &look.image {
                out.push_str("<img src=\"");
                out.push_str(&escape(placeholder));
                out.push_str("\" alt=\"\">");
                continue;
            }
            for (i, line) in text.split('\n').enumerate() {
                if i > 0 {
                    out.push_str("<br>");
                }
                out.push_str(&escape(line));
            }
        }
        while let Some(closer) = open_closers.pop() {
            out.push_str(closer);
        }
    }
}

/// The opening tags of a look, outermost first, with their closing tags.
fn tags(look: &Look, links: &[String]) -> Vec<(String, &'static str)> {
    let mut tags = Vec::new();
    if let Some(url) = look.link.and_then(|i| links.get(i)) {
        tags.push((format!("<a href=\"{}\">", escape(url)), "</a>"));
    }
    if let Some([r, g, b]) = look.color {
        tags.push((format!("<span style=\"color: #{r:02x}{g:02x}{b:02x}\">"), "</span>"));
    }
    if let Some([r, g, b]) = look.background {
        tags.push((format!("<span style=\"background-color: #{r:02x}{g:02x}{b:02x}\">"), "</span>"));
    }
    for (on, open, close) in [
        (look.bold, "<strong>", "</strong>"),
        (look.italic, "<em>", "</em>"),
        (look.underline, "<u>", "</u>"),
        (look.strike, "<s>", "</s>"),
        (look.vertical == 1, "<sup>", "</sup>"),
        (look.vertical == 2, "<sub>", "</sub>"),
    ] {
        if on {
            tags.push((open.to_owned(), close));
        }
    }
    tags
}

#[derive(Debug, Default)]
pub(super) struct Table {
    pub(super) rows: Vec<String>,
    pub(super) cells: Vec<String>,
    /// The paragraphs of the cell in progress.
    pub(super) cell: String,
}

/// The row in progress (its last cell too), if it has cells.
pub(super) fn push_row(table: &mut Table) {
    if !table.cell.is_empty() {
        let cell = std::mem::take(&mut table.cell);
        table.cells.push(cell);
    }
    if table.cells.is_empty() {
        return;
    }
    let mut row = String::from("<tr>");
    for cell in table.cells.drain(..) {
        row.push_str("<td>");
        row.push_str(&cell);
        row.push_str("</td>");
    }
    row.push_str("</tr>\n");
    table.rows.push(row);
}

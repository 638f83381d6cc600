//! Ended paragraphs as HTML blocks: body paragraphs and headings, list items nested by
//! level, table cells and rows, and footnotes gathered for the endnotes section at the end.

use std::fmt::Write as _;

use super::{Dest, Parser};
use crate::rtf::paragraph::{push_row, Look, Table};

impl Parser<'_> {
    /// Ends a paragraph: into the cell in progress, the footnotes or the body.
    pub(super) fn end_paragraph(&mut self) {
        let mut paragraph = std::mem::take(&mut self.paragraph);
        self.paragraph.in_table = paragraph.in_table;
        self.paragraph.outline = paragraph.outline;
        self.paragraph.style = paragraph.style;
        self.paragraph.list = paragraph.list;
        self.paragraph.level = paragraph.level;
        let marker = std::mem::take(&mut self.list_marker);
        let is_item = paragraph.list && paragraph.heading().is_none() && !paragraph.in_table;
        if !is_item && !marker.trim().is_empty() && self.group.dest != Dest::Footnote {
            // A number without a list (or in a table or heading): kept as text, as written.
            paragraph.runs.insert(0, (Look::default(), marker.clone()));
        }
        if self.group.dest == Dest::Footnote {
            if let (true, Some(note)) = (paragraph.has_text, self.footnotes.last_mut()) {
                note.push_str("<p>");
                paragraph.render(&self.links, note);
                note.push_str("</p>\n");
            }
            return;
        }
        if paragraph.in_table {
            if self.table.is_none() {
                self.close_lists();
            }
            let table = self.table.get_or_insert_with(Table::default);
            if paragraph.has_text {
                if !table.cell.is_empty() {
                    table.cell.push_str("<br>");
                }
                paragraph.render(&self.links, &mut table.cell);
                self.has_text = true;
            }
            return;
        }
        if !paragraph.has_text {
            return;
        }
        self.close_table();
        self.has_text = true;
        if is_item {
            // Numbered when Word wrote a number (`2.`, `2.1.`) or a letter or roman numeral
            // with its punctuation (`a.`, `ii)`) before it; else bulleted (`·`, `o`, `§`).
            let ordered = marker.chars().any(|c| c.is_ascii_digit())
                || (marker.chars().any(char::is_alphabetic) && marker.contains(['.', ')']));
            self.open_item(usize::from(paragraph.level), if ordered { "ol" } else { "ul" });
            paragraph.render(&self.links, &mut self.html);
            return;
        }
        self.close_lists();
        let (open, close) = match paragraph.heading() {
            Some(level) => {
                let level = level.min(5) + 1;
                (format!("<h{level}>"), format!("</h{level}>\n"))
            }
            None => ("<p>".to_owned(), "</p>\n".to_owned()),
        };
        self.html.push_str(&open);
        paragraph.render(&self.links, &mut self.html);
        self.html.push_str(&close);
    }

    /// Opens a list item at `level` (0: outermost) in a list of `tag`, closing or opening
    /// lists on the way. Every open list keeps exactly one `<li>` open, so deeper lists nest
    /// inside an item.
    fn open_item(&mut self, level: usize, tag: &'static str) {
        let depth = level + 1;
        while self.lists.len() > depth {
            self.close_list();
        }
        if self.lists.len() == depth {
            if self.lists.last() == Some(&tag) {
                self.html.push_str("</li>\n");
            } else {
                self.close_list();
            }
        }
        while self.lists.len() < depth {
            self.html.push('<');
            self.html.push_str(tag);
            self.html.push_str(">\n");
            self.lists.push(tag);
            if self.lists.len() < depth {
                self.html.push_str("<li>");
            }
        }
        self.html.push_str("<li>");
    }

    fn close_list(&mut self) {
        if let Some(tag) = self.lists.pop() {
            self.html.push_str("</li>\n</");
            self.html.push_str(tag);
            self.html.push_str(">\n");
        }
    }

    fn close_lists(&mut self) {
        while !self.lists.is_empty() {
            self.close_list();
        }
    }

    pub(super) fn end_cell(&mut self) {
        self.paragraph.in_table = true;
        self.end_paragraph();
        let table = self.table.get_or_insert_with(Table::default);
        let cell = std::mem::take(&mut table.cell);
        table.cells.push(cell);
    }

    pub(super) fn end_row(&mut self) {
        if self.paragraph.has_text {
            self.end_cell();
        }
        push_row(self.table.get_or_insert_with(Table::default));
    }

    fn close_table(&mut self) {
        let Some(mut table) = self.table.take() else { return };
        push_row(&mut table);
        if table.rows.is_empty() {
            return;
        }
        self.html.push_str("<table>\n");
        for row in table.rows {
            self.html.push_str(&row);
        }
        self.html.push_str("</table>\n");
    }

    pub(in crate::rtf) fn finish(mut self) -> (String, Vec<String>, bool) {
        self.flush_bytes();
        // Groups left open at the end of the file are closed.
        if let Some(outer) = self.outer.pop() {
            self.group.dest = Dest::Footnote;
            self.end_paragraph();
            self.outer.clear();
            self.paragraph = outer;
        }
        self.stack.clear();
        self.group.dest = Dest::Body;
        let in_table = self.paragraph.in_table;
        self.end_paragraph();
        if in_table {
            self.end_row();
        }
        self.close_table();
        self.close_lists();
        if !self.footnotes.is_empty() {
            // The notes as DPUB-ARIA endnotes (docs/conversion.md, "Footnotes").
            self.has_text = true;
            self.html.push_str("<section role=\"doc-endnotes\"><ol>\n");
            for (i, note) in self.footnotes.iter().enumerate() {
                let _ = writeln!(self.html, "<li id=\"fn{}\">{}</li>", i + 1, note.trim_end());
            }
            self.html.push_str("</ol></section>\n");
        }
        (self.html, self.warnings, self.has_text)
    }
}

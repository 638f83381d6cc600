//! Plain text: headings and paragraphs separated by blank lines, `- ` (or `1. `) list
//! items indented by nesting, table rows with tab-separated cells, links as
//! `text (url)`, images as `[alt]`, note references as `[1]` and the notes at the end.

use crate::model::{item_number, Block, Doc, Inline, List, Table};
use crate::table::{Grid, Slot};

pub(crate) fn export(doc: &Doc) -> Vec<u8> {
    let parts: Vec<String> = doc.reading_order().iter().map(|b| render_blocks(b)).filter(|t| !t.is_empty()).collect();
    let mut out = parts.join("\n\n");
    // Notes at the end, each after its mark: `[1] …`.
    if !doc.notes.is_empty() {
        let notes: Vec<String> = doc
            .notes
            .iter()
            .enumerate()
            .map(|(i, note)| {
                let lines: Vec<String> = render_blocks(&note.blocks)
                    .split('\n')
                    .enumerate()
                    .map(|(j, l)| if j == 0 || l.is_empty() { l.to_string() } else { format!("    {l}") })
                    .collect();
                format!("[{}] {}", i + 1, lines.join("\n"))
            })
            .collect();
        if !out.is_empty() {
            out.push_str("\n\n---\n\n");
        }
        out.push_str(&notes.join("\n"));
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.into_bytes()
}

fn render_blocks(blocks: &[Block]) -> String {
    let parts: Vec<String> = blocks.iter().map(render_block).filter(|t| !t.is_empty()).collect();
    parts.join("\n\n")
}

fn render_block(block: &Block) -> String {
    match block {
        Block::Heading { content, .. } | Block::Paragraph { content, .. } => inline_text(content, "\n"),
        Block::List(list) => render_list(list),
        Block::Table(table) => render_table(table),
        Block::Quote(blocks) => render_blocks(blocks)
            .split('\n')
            .map(|l| if l.is_empty() { ">".to_string() } else { format!("> {l}") })
            .collect::<Vec<_>>()
            .join("\n"),
        Block::Code(text) => text.clone(),
        Block::Rule => "---".to_string(),
    }
}

fn render_list(list: &List) -> String {
    let mut lines: Vec<String> = Vec::new();
    for (i, item) in list.items.iter().enumerate() {
        let marker = if list.ordered() {
            format!("{}. ", item_number(list.numbering, list.start.saturating_add(i as i64)))
        } else {
            "- ".to_string()
        };
        let indent = " ".repeat(marker.chars().count());
        let mut body = String::new();
        for block in item {
            let text = render_block(block);
            if text.is_empty() {
                continue;
            }
            if !body.is_empty() {
                body.push('\n');
            }
            body.push_str(&text);
        }
        for (j, line) in body.split('\n').enumerate() {
            lines.push(if j == 0 {
                format!("{marker}{line}").trim_end().to_string()
            } else if line.is_empty() {
                String::new()
            } else {
                format!("{indent}{line}")
            });
        }
    }
    lines.join("\n")
}

fn render_table(table: &Table) -> String {
    let grid = Grid::new(table);
    let mut lines = Vec::new();
    if !table.caption.is_empty() {
        lines.push(inline_text(&table.caption, " "));
    }
    for r in 0..grid.nrows() {
        let cells: Vec<String> = (0..grid.ncols)
            .map(|c| match grid.slot(r, c) {
                Slot::Start { cell, .. } => {
                    let parts: Vec<String> =
                        grid.content(table, *cell).into_iter().map(render_block).filter(|t| !t.is_empty()).collect();
                    parts.join(" ").replace(['\n', '\t'], " ")
                }
                _ => String::new(),
            })
            .collect();
        lines.push(cells.join("\t"));
    }
    lines.join("\n")
}

/// Inline content as text; `br` is how a line break is written.
fn inline_text(content: &[Inline], br: &str) -> String {
    let mut out = String::new();
    let mut link: Option<(&str, usize)> = None;
    let end_link = |out: &mut String, link: &mut Option<(&str, usize)>| {
        if let Some((url, start)) = link.take() {
            let shown = out[start..].trim().to_string();
            let bare = url.strip_prefix("mailto:").unwrap_or(url);
            if shown != url && shown != bare {
                out.push_str(&format!(" ({bare})"));
            }
        }
    };
    for inline in content {
        let target = match inline {
            Inline::Text(_, style) => style.link.as_deref(),
            Inline::Image(img) => img.link.as_deref(),
            Inline::Break => None,
        };
        if link.map(|(u, _)| u) != target {
            end_link(&mut out, &mut link);
            if let Some(url) = target {
                link = Some((url, out.len()));
            }
        }
        match inline {
            Inline::Text(t, style) if style.note.is_some() => out.push_str(&format!("[{}]", t.trim())),
            Inline::Text(t, _) => out.push_str(t),
            Inline::Break => out.push_str(br),
            Inline::Image(img) => {
                if !img.alt.is_empty() {
                    out.push_str(&format!("[{}]", img.alt));
                }
            }
        }
    }
    end_link(&mut out, &mut link);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn txt(html: &str) -> String {
        String::from_utf8(export(&crate::build::doc(html))).unwrap_or_default()
    }

    #[test]
    fn blocks_lists_and_links() {
        assert_eq!(
            txt(
                "<h2>T</h2><p>See <a href=\"https://x.test\">this</a> or <a href=\"mailto:a@b.test\">a@b.test</a>.</p>"
            ),
            "T\n\nSee this (https://x.test) or a@b.test.\n"
        );
        assert_eq!(
            txt("<ol type=\"i\" start=\"2\"><li>two<ul><li>in</li></ul></li><li>three</li></ol>"),
            "ii. two\n    - in\niii. three\n"
        );
        assert_eq!(txt("<blockquote><p>q</p></blockquote><hr><pre>  x\n y</pre>"), "> q\n\n---\n\n  x\n y\n");
    }

    #[test]
    fn tables_are_tab_separated() {
        assert_eq!(
            txt("<table><caption>Cap</caption><tr><td colspan=\"2\">a</td></tr><tr><td>b</td><td><p>c</p><p>d</p></td></tr></table>"),
            "Cap\na\t\nb\tc d\n"
        );
    }
}

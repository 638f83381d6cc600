//! Markdown (CommonMark with GFM tables and strikethrough): `#` headings, `-` and `1.` list
//! items nested by indentation, `**bold**`, `*italic*`, `~~strike~~`, `` `code` ``, links,
//! `![alt](url)` images and fenced code. Text is escaped so that it reads back as text.
//! Notes are footnotes: `[^1]` where referenced, `[^1]: …` at the end. Colours, underline
//! and sizes have no Markdown form and are dropped.

use crate::model::{Block, Doc, Inline, List, Script, Style, Table};
use crate::table::{Grid, Slot};

pub(crate) fn export(doc: &Doc) -> Vec<u8> {
    let parts: Vec<String> = doc.reading_order().iter().map(|b| render_blocks(b)).filter(|t| !t.is_empty()).collect();
    let mut out = parts.join("\n\n");
    // Notes as footnote definitions (`[^1]: …`), their further lines indented.
    for (i, note) in doc.notes.iter().enumerate() {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        let body = render_blocks(&note.blocks);
        out.push_str(&format!("[^{}]: {}", i + 1, prefix_lines(&body, "    ", "").trim_start()));
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.into_bytes()
}

fn render_blocks(blocks: &[Block]) -> String {
    let mut out = String::new();
    let mut previous: Option<&Block> = None;
    for block in blocks {
        let text = render_block(block);
        if text.is_empty() {
            continue;
        }
        if let Some(prev) = previous {
            out.push_str("\n\n");
            // Two lists of the same kind in a row would merge into one.
            if let (Block::List(a), Block::List(b)) = (prev, block) {
                if a.ordered() == b.ordered() {
                    out.push_str("<!-- -->\n\n");
                }
            }
        }
        out.push_str(&text);
        previous = Some(block);
    }
    out
}

fn render_block(block: &Block) -> String {
    match block {
        Block::Heading { level, content, .. } => {
            let mut text = inlines(content, Mode::Heading);
            // A closing sequence of `#`s would be dropped by a reader.
            if text.ends_with('#') {
                let stem = text.trim_end_matches('#').to_string();
                let hashes = text.len() - stem.len();
                text = stem + &"\\#".repeat(hashes);
            }
            format!("{} {}", "#".repeat(usize::from((*level).clamp(1, 6))), text)
        }
        Block::Paragraph { content, .. } => inlines(content, Mode::Flow),
        Block::List(list) => render_list(list),
        Block::Table(table) => render_table(table),
        Block::Quote(blocks) => prefix_lines(&render_blocks(blocks), "> ", ">"),
        Block::Code(text) => {
            let fence = "`".repeat(longest_run(text, '`').max(2) + 1);
            format!("{fence}\n{text}\n{fence}")
        }
        Block::Rule => "---".to_string(),
    }
}

fn render_list(list: &List) -> String {
    let mut out = String::new();
    for (i, item) in list.items.iter().enumerate() {
        let marker = if list.ordered() { format!("{}.", number(list, i)) } else { "-".to_string() };
        let mut body = String::new();
        let mut previous: Option<&Block> = None;
        for block in item {
            let text = render_block(block);
            if text.is_empty() {
                continue;
            }
            if let Some(prev) = previous {
                // A nested list follows its paragraph directly (a tight list).
                let tight = matches!(prev, Block::Paragraph { .. }) && matches!(block, Block::List(_));
                body.push_str(if tight { "\n" } else { "\n\n" });
            }
            body.push_str(&text);
            previous = Some(block);
        }
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&marker);
        if !body.is_empty() {
            let indent = " ".repeat(marker.len() + 1);
            let prefixed = prefix_lines(&body, &indent, "");
            out.push(' ');
            out.push_str(prefixed.strip_prefix(indent.as_str()).unwrap_or(&prefixed));
        }
    }
    out
}

/// The number of item `i` (CommonMark allows 0 to 999999999).
fn number(list: &List, i: usize) -> i64 {
    list.start.saturating_add(i as i64).clamp(0, 999_999_999)
}

fn render_table(table: &Table) -> String {
    let grid = Grid::new(table);
    let mut out = String::new();
    if !table.caption.is_empty() {
        out.push_str(&inlines(&table.caption, Mode::Flow));
        out.push_str("\n\n");
    }
    if grid.ncols == 0 {
        return out.trim_end().to_string();
    }
    for r in 0..grid.nrows().max(1) {
        out.push('|');
        for c in 0..grid.ncols {
            let text = match grid.slot(r, c) {
                // The header row is bold already.
                Slot::Start { cell, .. } => cell_text(&grid.content(table, *cell), r == 0),
                _ => String::new(),
            };
            out.push(' ');
            out.push_str(&text);
            out.push_str(" |");
        }
        out.push('\n');
        if r == 0 {
            out.push('|');
            out.push_str(&" --- |".repeat(grid.ncols));
            out.push('\n');
        }
    }
    out.pop();
    out
}

/// A cell's blocks on one line, blocks and line breaks as `<br>`.
fn cell_text(blocks: &[&Block], header: bool) -> String {
    let mode = if header { Mode::HeaderCell } else { Mode::Cell };
    let mut lines = Vec::new();
    let mut stack: Vec<(&Block, String)> = blocks.iter().rev().map(|b| (*b, String::new())).collect();
    while let Some((block, lead)) = stack.pop() {
        match block {
            Block::Heading { content, .. } | Block::Paragraph { content, .. } => {
                lines.push(format!("{lead}{}", inlines(content, mode)));
            }
            Block::Code(text) => {
                for line in text.lines() {
                    lines.push(format!("{lead}{}", code_span(line).replace('|', "\\|")));
                }
            }
            Block::Rule => {}
            Block::Quote(inner) => stack.extend(inner.iter().rev().map(|b| (b, lead.clone()))),
            Block::List(list) => {
                for (i, item) in list.items.iter().enumerate().rev() {
                    let marker = if list.ordered() { format!("{}. ", number(list, i)) } else { "- ".to_string() };
                    for (j, b) in item.iter().enumerate().rev() {
                        let l = if j == 0 { format!("{lead}{marker}") } else { lead.clone() };
                        stack.push((b, l));
                    }
                }
            }
            Block::Table(t) => {
                for row in t.rows.iter().rev() {
                    for cell in row.cells.iter().rev() {
                        stack.extend(cell.blocks.iter().rev().map(|b| (b, lead.clone())));
                    }
                }
            }
        }
    }
    lines.join("<br>")
}

/// Prefixes every line (`empty` for empty lines).
fn prefix_lines(text: &str, prefix: &str, empty: &str) -> String {
    let mut out = String::with_capacity(text.len() + prefix.len() * 4);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if line.is_empty() {
            out.push_str(empty);
        } else {
            out.push_str(prefix);
            out.push_str(line);
        }
    }
    out
}

fn longest_run(text: &str, ch: char) -> usize {
    let mut best = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == ch { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

fn code_span(text: &str) -> String {
    let fence = "`".repeat(longest_run(text, '`') + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') { " " } else { "" };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// Where inline content goes: how line breaks are written, what is escaped.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Flow,
    Heading,
    Cell,
    /// A cell of a table's first row (shown bold without `**`).
    HeaderCell,
}

#[derive(Clone, PartialEq, Eq)]
enum Mark {
    Link(String),
    Bold,
    Italic,
    Strike,
}

impl Mark {
    fn open(&self) -> &str {
        match self {
            Mark::Link(_) => "[",
            Mark::Bold => "**",
            Mark::Italic => "*",
            Mark::Strike => "~~",
        }
    }

    fn close(&self) -> String {
        match self {
            Mark::Link(url) => format!("]({})", url_text(url)),
            other => other.open().to_string(),
        }
    }
}

fn marks(style: &Style, mode: Mode) -> Vec<Mark> {
    let mut m = Vec::with_capacity(4);
    if let Some(link) = &style.link {
        m.push(Mark::Link(link.to_string()));
    }
    if style.bold && mode != Mode::HeaderCell {
        m.push(Mark::Bold);
    }
    if style.italic {
        m.push(Mark::Italic);
    }
    if style.strike {
        m.push(Mark::Strike);
    }
    m
}

/// A URL as a link destination: characters that would end it percent-encoded.
fn url_text(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    for c in url.chars() {
        match c {
            ' ' => out.push_str("%20"),
            '(' => out.push_str("%28"),
            ')' => out.push_str("%29"),
            '<' => out.push_str("%3C"),
            '>' => out.push_str("%3E"),
            '|' => out.push_str("%7C"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

fn inlines(content: &[Inline], mode: Mode) -> String {
    let mut out = String::new();
    let mut open: Vec<Mark> = Vec::new();
    let mut pending = String::new();
    let close_all = |out: &mut String, open: &mut Vec<Mark>| {
        while let Some(m) = open.pop() {
            out.push_str(&m.close());
        }
    };
    for inline in content {
        match inline {
            Inline::Text(text, style) if style.note.is_some() => {
                close_all(&mut out, &mut open);
                out.push_str(&pending);
                pending.clear();
                out.push_str(&format!("[^{}]", text.trim()));
            }
            Inline::Text(text, style) => {
                let core = text.trim_matches(' ');
                if core.is_empty() {
                    pending.push_str(text);
                    continue;
                }
                let lead = &text[..text.len() - text.trim_start_matches(' ').len()];
                let trail = &text[text.trim_end_matches(' ').len()..];
                let want = marks(style, mode);
                let keep = open.iter().zip(&want).take_while(|(a, b)| a == b).count();
                while open.len() > keep {
                    if let Some(m) = open.pop() {
                        out.push_str(&m.close());
                    }
                }
                out.push_str(&pending);
                pending.clear();
                out.push_str(lead);
                for m in &want[keep..] {
                    out.push_str(m.open());
                }
                open = want;
                let (pre, post) = match style.script {
                    Script::Normal => ("", ""),
                    Script::Super => ("<sup>", "</sup>"),
                    Script::Sub => ("<sub>", "</sub>"),
                };
                out.push_str(pre);
                if style.code {
                    let span = code_span(core);
                    let in_cell = matches!(mode, Mode::Cell | Mode::HeaderCell);
                    out.push_str(&if in_cell { span.replace('|', "\\|") } else { span });
                } else {
                    escape_into(&mut out, core, mode);
                }
                out.push_str(post);
                pending.push_str(trail);
            }
            Inline::Break => {
                close_all(&mut out, &mut open);
                pending.clear();
                out.push_str(match mode {
                    Mode::Flow => "\\\n",
                    Mode::Heading => " ",
                    Mode::Cell | Mode::HeaderCell => "<br>",
                });
            }
            Inline::Image(img) => {
                close_all(&mut out, &mut open);
                out.push_str(&pending);
                pending.clear();
                let alt: String = img.alt.chars().flat_map(|c| escape_char(c, mode)).collect();
                let picture = format!("![{alt}]({})", url_text(&img.src));
                match &img.link {
                    Some(link) => out.push_str(&format!("[{picture}]({})", url_text(link))),
                    None => out.push_str(&picture),
                }
            }
        }
    }
    close_all(&mut out, &mut open);
    if out.ends_with("\\\n") {
        out.truncate(out.len() - 2);
    }
    out
}

fn escape_char(c: char, mode: Mode) -> impl Iterator<Item = char> {
    let escaped = matches!(c, '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '~')
        || (c == '|' && matches!(mode, Mode::Cell | Mode::HeaderCell));
    (if escaped { Some('\\') } else { None }).into_iter().chain(std::iter::once(c))
}

/// Escapes text: characters with a meaning anywhere, and at the start of a line those that
/// would begin a heading, a list item, a quote or a setext underline.
fn escape_into(out: &mut String, text: &str, mode: Mode) {
    let at_line_start = out.is_empty() || out.ends_with('\n');
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    if at_line_start {
        let first = chars.first().copied();
        match first {
            Some('#' | '=' | '+' | '-') => out.push('\\'),
            Some(c) if c.is_ascii_digit() => {
                let digits = chars.iter().take_while(|c| c.is_ascii_digit()).count();
                if matches!(chars.get(digits), Some('.' | ')')) && matches!(chars.get(digits + 1), None | Some(' ')) {
                    out.extend(&chars[..digits]);
                    out.push('\\');
                    i = digits;
                }
            }
            _ => {}
        }
    }
    while i < chars.len() {
        let c = chars[i];
        if c == '&' && chars.get(i + 1).is_some_and(|n| n.is_ascii_alphanumeric() || *n == '#') {
            out.push('\\');
        }
        out.extend(escape_char(c, mode));
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(html: &str) -> String {
        String::from_utf8(export(&crate::build::doc(html))).unwrap_or_default()
    }

    #[test]
    fn emphasis_nests_and_keeps_spaces_outside() {
        assert_eq!(md("<p>a<b> bold <i>both</i></b> plain</p>"), "a **bold *both*** plain\n");
        assert_eq!(md("<p><s>gone</s> <code>x*y</code> H<sub>2</sub>O</p>"), "~~gone~~ `x*y` H<sub>2</sub>O\n");
        assert_eq!(
            md("<p><a href=\"https://x.test/a (b)\"><b>go</b> there</a></p>"),
            "[**go** there](https://x.test/a%20%28b%29)\n"
        );
    }

    #[test]
    fn metacharacters_are_escaped() {
        assert_eq!(md("<p># not a heading</p>"), "\\# not a heading\n");
        assert_eq!(md("<p>- not an item</p>"), "\\- not an item\n");
        assert_eq!(md("<p>2024. A year</p>"), "2024\\. A year\n");
        assert_eq!(md("<p>a*b_c [d] &lt;e&gt; &amp;amp; 1. fine</p>"), "a\\*b\\_c \\[d\\] \\<e\\> \\&amp; 1. fine\n");
        assert_eq!(md("<p>line<br>- next</p>"), "line\\\n\\- next\n");
    }

    #[test]
    fn code_blocks_and_quotes() {
        assert_eq!(md("<pre>a ``` b\n  c</pre>"), "````\na ``` b\n  c\n````\n");
        assert_eq!(md("<blockquote><p>q1</p><p>q2</p></blockquote>"), "> q1\n>\n> q2\n");
        assert_eq!(md("<ul><li>a</li></ul><ul><li>b</li></ul>"), "- a\n\n<!-- -->\n\n- b\n");
    }
}

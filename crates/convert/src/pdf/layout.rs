//! From positioned characters to HTML: an `OutputDev` for `pdf-extract` that builds lines
//! with their font size, then headings (lines notably larger than the body text, ranked
//! by size) and paragraphs (body lines joined until a vertical gap, an indent or a change
//! of size).

use std::collections::HashMap;

use pdf_extract::{MediaBox, OutputDev, OutputError, Transform};

use crate::escape;

/// The most characters taken from one PDF (past it the PDF is refused as too complex): this
/// floor plus a multiple of the input's size, at most [`MAX_CHARS`]. (Real PDFs hold fewer
/// characters than bytes; a form drawn many times can make far more.)
const CHARS_FLOOR: usize = 500_000;
const CHARS_FACTOR: usize = 8;
pub(super) const MAX_CHARS: usize = 20_000_000;

/// The most characters taken from a PDF of `input_len` bytes.
pub(super) fn char_budget(input_len: usize) -> usize {
    CHARS_FLOOR.saturating_add(input_len.saturating_mul(CHARS_FACTOR)).min(MAX_CHARS)
}

/// One line of text as laid out on its page.
#[derive(Debug, Clone)]
pub(super) struct Line {
    pub text: String,
    /// The font size most of its characters have, in points.
    pub size: f32,
    /// Its left edge.
    pub x: f32,
    /// Its baseline, from the top of the page down.
    pub y: f32,
    /// Its right edge.
    pub end: f32,
    /// The middle of its page, across.
    pub page_mid: f32,
    pub page: u32,
}

#[derive(Debug)]
struct LineBuilder {
    text: String,
    x: f32,
    y: f32,
    /// Where the last character ended.
    end: f32,
    /// Characters per font size (size in tenths of a point).
    sizes: Vec<(i32, u32)>,
    /// Where the characters start, for spotting text drawn twice (fake bold).
    starts: Vec<(f32, char)>,
    pending_space: bool,
}

impl LineBuilder {
    fn size(&self) -> f32 {
        self.sizes.iter().max_by_key(|(size, count)| (*count, *size)).map_or(0.0, |(size, _)| *size as f32 / 10.0)
    }
}

/// Collects the lines of every page.
#[derive(Debug, Default)]
pub(super) struct Collector {
    pub lines: Vec<Line>,
    current: Option<LineBuilder>,
    page: u32,
    page_top: f64,
    page_mid: f32,
    /// Characters seen (including spaces).
    pub chars: usize,
    /// The most characters accepted (0: [`MAX_CHARS`]).
    pub max_chars: usize,
    /// Glyphs drawn that no font maps to a character (no /ToUnicode, no encoding).
    pub undecoded: usize,
    pub over_limit: bool,
}

fn ligature(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{FB00}' => "ff",
        '\u{FB01}' => "fi",
        '\u{FB02}' => "fl",
        '\u{FB03}' => "ffi",
        '\u{FB04}' => "ffl",
        '\u{FB05}' | '\u{FB06}' => "st",
        _ => return None,
    })
}

impl Collector {
    /// The page being read (0 before the first).
    pub(super) fn page(&self) -> u32 {
        self.page
    }

    /// Ends the line in progress.
    pub(super) fn flush(&mut self) {
        let Some(line) = self.current.take() else { return };
        let size = line.size();
        let mut text = line.text;
        // A soft hyphen only shows at the end of a line.
        if text.contains('\u{AD}') {
            let hyphen_at_end = text.trim_end().ends_with('\u{AD}');
            text = text.replace('\u{AD}', "");
            if hyphen_at_end {
                text.truncate(text.trim_end().len());
                text.push('\u{AD}');
            }
        }
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return;
        }
        let text = if trimmed.len() == text.len() { text } else { trimmed.to_owned() };
        self.lines.push(Line {
            text,
            size,
            x: line.x,
            y: line.y,
            end: line.end,
            page_mid: self.page_mid,
            page: self.page,
        });
    }

    fn push_text(&mut self, text: &str, x: f32, y: f32, end: f32, size: f32) {
        let size_key = (size * 10.0).round() as i32;
        let line = self.current.as_mut();
        let line = match line {
            Some(line) => line,
            None => {
                if text.chars().all(char::is_whitespace) {
                    return;
                }
                self.current.insert(LineBuilder {
                    text: String::new(),
                    x,
                    y,
                    end: x,
                    sizes: Vec::new(),
                    starts: Vec::new(),
                    pending_space: false,
                })
            }
        };
        if text.chars().all(char::is_whitespace) {
            line.pending_space = true;
            line.end = line.end.max(end);
            return;
        }
        if !line.text.is_empty() {
            let gap = x - line.end;
            if (line.pending_space || gap > size.max(1.0) * 0.15) && !line.text.ends_with(' ') {
                line.text.push(' ');
            }
        }
        line.pending_space = false;
        let first = text.chars().next().unwrap_or(' ');
        // The most recent starts only: the check for text drawn twice stays cheap.
        if line.starts.len() >= 512 {
            line.starts.drain(..256);
        }
        line.starts.push((x, first));
        for c in text.chars() {
            match c {
                '\t' | '\n' | '\r' | '\u{A0}' => line.text.push(' '),
                '\u{FEFF}' => {}
                c if c.is_control() => {}
                c => match ligature(c) {
                    Some(expanded) => line.text.push_str(expanded),
                    None => line.text.push(c),
                },
            }
        }
        line.end = end;
        match line.sizes.iter_mut().find(|(s, _)| *s == size_key) {
            Some((_, count)) => *count += text.chars().count() as u32,
            None => line.sizes.push((size_key, text.chars().count() as u32)),
        }
    }
}

impl OutputDev for Collector {
    fn begin_page(
        &mut self,
        page_num: u32,
        media_box: &MediaBox,
        _art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        self.flush();
        self.page = page_num;
        self.page_top = media_box.ury.max(media_box.lly);
        self.page_mid = ((media_box.llx + media_box.urx) / 2.0) as f32;
        Ok(())
    }

    fn end_page(&mut self) -> Result<(), OutputError> {
        self.flush();
        Ok(())
    }

    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        spacing: f64,
        font_size: f64,
        char: &str,
    ) -> Result<(), OutputError> {
        self.chars += 1;
        if self.chars > if self.max_chars == 0 { MAX_CHARS } else { self.max_chars } {
            self.over_limit = true;
            return Err(OutputError::FormatError(std::fmt::Error));
        }
        if char.is_empty() {
            self.undecoded += 1;
            return Ok(());
        }
        let scale = (trm.m11 * trm.m22 - trm.m12 * trm.m21).abs().sqrt();
        let size = if font_size.is_finite() && scale.is_finite() { (font_size * scale).abs() } else { 0.0 };
        let (x, y) = (trm.m31, self.page_top - trm.m32);
        if !x.is_finite() || !y.is_finite() {
            return Ok(());
        }
        let advance = (width * font_size + spacing) * trm.m11;
        let end = x + if advance.is_finite() { advance } else { 0.0 };
        let (x, y, end, size) = (x as f32, y as f32, end as f32, (size as f32).min(10_000.0));
        if let Some(line) = &self.current {
            let tolerance = size.max(line.size()).max(1.0);
            if (y - line.y).abs() > tolerance * 0.5 {
                self.flush();
            } else if x < line.end - tolerance * 0.1 {
                // Back over text already on this line: the same text drawn again (fake
                // bold, shadows) is dropped; moving well left starts a new line.
                let first = char.chars().next().unwrap_or(' ');
                let drawn_twice = line.starts.iter().any(|(sx, sc)| *sc == first && (sx - x).abs() < tolerance * 0.3);
                if drawn_twice {
                    return Ok(());
                }
                if x < line.end - tolerance * 0.5 {
                    self.flush();
                }
            }
        }
        self.push_text(char, x, y, end, size);
        Ok(())
    }

    fn begin_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn end_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn end_line(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Lines to blocks

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Block {
    Heading(u8, String),
    Paragraph(String),
}

fn letters(text: &str) -> usize {
    text.chars().filter(|c| c.is_alphabetic()).count()
}

/// The most common value of `values` (weighted), in steps of `step`.
fn mode(values: impl Iterator<Item = (f32, usize)>, step: f32) -> Option<f32> {
    let mut counts: HashMap<i64, usize> = HashMap::new();
    for (value, weight) in values {
        *counts.entry((value / step).round() as i64).or_default() += weight;
    }
    counts.into_iter().max_by_key(|(key, weight)| (*weight, -key)).map(|(key, _)| key as f32 * step)
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x2E80..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF | 0x20000..=0x2FFFF)
}

/// Appends the next line of a paragraph: a hyphen that broke a word is removed, CJK lines
/// join without a space.
pub(super) fn join_line(text: &mut String, next: &str) {
    if text.ends_with('\u{AD}') {
        text.pop();
        text.push_str(next);
        return;
    }
    let mut tail = text.chars().rev();
    let (last, before) = (tail.next(), tail.next());
    let first = next.chars().next();
    match (before, last, first) {
        (Some(b), Some('-'), Some(f)) if b.is_alphabetic() && f.is_lowercase() => {
            text.pop();
        }
        (_, Some(l), Some(f)) if is_cjk(l) && is_cjk(f) => {}
        _ => text.push(' '),
    }
    text.push_str(next);
}

/// Whether a line starts with a bullet or a list number (`1.`, `2)`, `a)`).
fn starts_list_item(text: &str) -> bool {
    let mut chars = text.chars();
    let Some(first) = chars.next() else { return false };
    if matches!(first, '•' | '·' | '◦' | '▪' | '■' | '●' | '○' | '–' | '‣' | '⁃') {
        return true;
    }
    let marker: String = text.chars().take_while(|c| c.is_ascii_alphanumeric()).take(4).collect();
    let after = text[marker.len()..].chars().collect::<Vec<_>>();
    let numbered = !marker.is_empty()
        && (marker.chars().all(|c| c.is_ascii_digit())
            || (marker.len() == 1 && marker.chars().all(char::is_lowercase)));
    numbered && matches!(after.as_slice(), [')' | '.', ' ' | '\t', ..])
}

fn ends_sentence(text: &str) -> bool {
    text.trim_end().ends_with(['.', '!', '?', ':', '。', '！', '？'])
}

/// Groups lines into headings and paragraphs.
#[cfg(test)]
pub(super) fn blocks(lines: &[Line]) -> Vec<Block> {
    placed_blocks(lines).into_iter().map(|p| p.block).collect()
}

/// A block with the place of its first line.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Placed {
    pub block: Block,
    pub page: u32,
    /// The first line's baseline, from the top of the page.
    pub y: f32,
}

/// Groups lines into headings and paragraphs, each with the place of its first line.
pub(super) fn placed_blocks(lines: &[Line]) -> Vec<Placed> {
    let Some(body) = mode(lines.iter().map(|l| (l.size, l.text.chars().count())), 0.5).filter(|b| *b > 0.0) else {
        return lines
            .iter()
            .map(|l| Placed { block: Block::Paragraph(l.text.clone()), page: l.page, y: l.y })
            .collect();
    };
    // The left edges of the body text (one per column).
    let body_sized = |s: f32| (s - body).abs() <= body * 0.1;
    let body_lines = lines.iter().filter(|l| body_sized(l.size)).count();
    let mut edges: HashMap<i64, usize> = HashMap::new();
    for line in lines.iter().filter(|l| body_sized(l.size)) {
        *edges.entry((line.x / 2.0).round() as i64).or_default() += 1;
    }
    let edges: Vec<f32> = edges
        .into_iter()
        .filter(|(_, count)| *count >= (body_lines / 20).max(3))
        .map(|(k, _)| k as f32 * 2.0)
        .collect();
    // A heading starts at a column's edge or is centred on the page (large labels inside
    // figures are neither).
    let placed_as_heading = |l: &Line| {
        edges.is_empty()
            || edges.iter().any(|e| (l.x - e).abs() <= body * 1.5)
            || ((l.x + l.end) / 2.0 - l.page_mid).abs() <= body * 2.0
    };
    // Heading sizes, largest first: h1, h2, then h3 for the rest.
    let is_heading_line = |l: &Line| {
        l.size >= body * 1.2 && letters(&l.text) >= 2 && l.text.chars().count() <= 200 && placed_as_heading(l)
    };
    let mut heading_sizes: Vec<i64> =
        lines.iter().filter(|l| is_heading_line(l)).map(|l| (l.size * 2.0).round() as i64).collect();
    heading_sizes.sort_unstable_by(|a, b| b.cmp(a));
    heading_sizes.dedup();
    heading_sizes.truncate(2);
    let level_of = |l: &Line| -> Option<u8> {
        if !is_heading_line(l) {
            return None;
        }
        let key = (l.size * 2.0).round() as i64;
        let rank = heading_sizes.iter().position(|s| *s == key).unwrap_or(2);
        Some((rank.min(2) + 1) as u8)
    };
    // The usual distance between the baselines of two body lines.
    let gaps = lines.windows(2).filter_map(|w| {
        let (a, b) = (&w[0], &w[1]);
        let dy = b.y - a.y;
        (a.page == b.page && body_sized(a.size) && body_sized(b.size) && dy > 0.0 && dy < body * 3.0).then_some((dy, 1))
    });
    let line_gap = mode(gaps, 0.25).filter(|g| *g > 0.0).unwrap_or(body * 1.2);

    let mut out = Vec::new();
    let mut current: Option<(Placed, usize)> = None; // the block in progress and its line count
    let mut prev: Option<&Line> = None;
    for line in lines {
        let level = level_of(line);
        let joins = match (&current, prev) {
            (Some((placed, count)), Some(prev)) => {
                continues(&placed.block, *count, prev, line, level, body, line_gap, lines_are_same_kind(prev, line))
            }
            _ => false,
        };
        if joins {
            if let Some((Placed { block: Block::Heading(_, text) | Block::Paragraph(text), .. }, count)) =
                current.as_mut()
            {
                join_line(text, &line.text);
                *count += 1;
            }
        } else {
            if let Some((block, _)) = current.take() {
                out.push(block);
            }
            let block = match level {
                Some(level) => Block::Heading(level, line.text.clone()),
                None => Block::Paragraph(line.text.clone()),
            };
            current = Some((Placed { block, page: line.page, y: line.y }, 1));
        }
        prev = Some(line);
    }
    if let Some((block, _)) = current {
        out.push(block);
    }
    out
}

fn lines_are_same_kind(a: &Line, b: &Line) -> bool {
    let (small, large) = if a.size <= b.size { (a.size, b.size) } else { (b.size, a.size) };
    large <= small * 1.15 + 0.1
}

/// Whether `line` continues the block that `prev` (its last line) is in.
#[allow(clippy::too_many_arguments)]
fn continues(
    block: &Block,
    count: usize,
    prev: &Line,
    line: &Line,
    level: Option<u8>,
    body: f32,
    line_gap: f32,
    same_size: bool,
) -> bool {
    match (block, level) {
        (Block::Heading(l, _), Some(level)) if *l == level => {
            // A heading set on several lines.
            let dy = line.y - prev.y;
            line.page == prev.page && dy > 0.0 && dy <= line.size.max(prev.size) * 1.6 && count < 4
        }
        (Block::Paragraph(_), None) => {
            if !same_size || starts_list_item(&line.text) || prev.text.ends_with(':') {
                return false;
            }
            if line.page != prev.page {
                // A paragraph that runs on to the next page.
                return line.page == prev.page + 1
                    && !ends_sentence(&prev.text)
                    && line.text.chars().next().is_some_and(char::is_lowercase);
            }
            let size = line.size.max(prev.size).max(1.0);
            let dy = line.y - prev.y;
            let expected = line_gap * size / body;
            if dy <= size * 0.3 || dy > expected * 1.3 + 0.5 {
                return false;
            }
            // A first line indented after a full one opens a paragraph; a hanging indent
            // (the second line of a list item) does not.
            let indent = line.x - prev.x;
            !(count > 1 && indent > size * 0.8 && indent < size * 10.0)
        }
        _ => false,
    }
}

/// The HTML of one block.
pub(super) fn block_html(block: &Block, html: &mut String) {
    {
        match block {
            Block::Heading(level, text) => {
                html.push_str(&format!("<h{level}>{}</h{level}>\n", escape(text.trim_end_matches('\u{AD}'))));
            }
            Block::Paragraph(text) => {
                html.push_str("<p>");
                html.push_str(&escape(text.trim_end_matches('\u{AD}')));
                html.push_str("</p>\n");
            }
        }
    }
}

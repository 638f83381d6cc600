//! From positioned characters to HTML: an `OutputDev` for `pdf-extract` that builds lines
//! with their font size, then headings (lines notably larger than the body text, ranked
//! by size), paragraphs (body lines joined until a vertical gap, an indent or a change
//! of size) and list items (lines opened by a bullet or a number, nested by indent), with
//! words raised or lowered in a smaller size as superscripts and subscripts.

use std::collections::HashMap;

use pdf_extract::{MediaBox, OutputDev, OutputError, Transform};

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

/// Marks in a line's text around a superscript or a subscript (Unicode noncharacters,
/// which no PDF's text may bring: [`Collector`] drops them), made tags by [`inline_html`].
pub(super) const SUP_START: char = '\u{FDD0}';
pub(super) const SUP_END: char = '\u{FDD1}';
pub(super) const SUB_START: char = '\u{FDD2}';
pub(super) const SUB_END: char = '\u{FDD3}';

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
    /// Its words (runs of text without a gap): where each starts in `text`, its left and right edges.
    pub runs: Vec<(u32, f32, f32)>,
}

impl Line {
    /// Its text in logical order (see [`super::bidi`]): as drawn unless it holds
    /// right-to-left letters.
    pub(super) fn logical(&self) -> std::borrow::Cow<'_, str> {
        super::bidi::logical(&self.text)
    }

    /// The text of run `i` (with the space after it trimmed).
    pub(super) fn run_text(&self, i: usize) -> &str {
        let start = self.runs.get(i).map_or(self.text.len(), |r| r.0 as usize);
        let end = self.runs.get(i + 1).map_or(self.text.len(), |r| r.0 as usize);
        self.text.get(start..end).unwrap_or("").trim()
    }

    /// A line of the runs `range` of this one.
    pub(super) fn part(&self, range: std::ops::Range<usize>) -> Option<Line> {
        let first = *self.runs.get(range.start)?;
        let last = *self.runs.get(range.end.checked_sub(1)?)?;
        let start = first.0 as usize;
        let end = self.runs.get(range.end).map_or(self.text.len(), |r| r.0 as usize);
        let text = self.text.get(start..end)?.trim_end().to_owned();
        if text.is_empty() {
            return None;
        }
        let runs = self.runs[range].iter().map(|r| (r.0 - first.0, r.1, r.2)).collect();
        Some(Line { text, x: first.1, end: last.2, runs, ..self.clone_meta() })
    }

    fn clone_meta(&self) -> Line {
        Line {
            text: String::new(),
            size: self.size,
            x: self.x,
            y: self.y,
            end: self.end,
            page_mid: self.page_mid,
            page: self.page,
            runs: Vec::new(),
        }
    }
}

/// A word's worth of characters of one size on one baseline.
#[derive(Debug, Clone, Copy)]
struct Run {
    start: u32,
    x: f32,
    end: f32,
    y: f32,
    size: f32,
}

#[derive(Debug)]
struct LineBuilder {
    text: String,
    x: f32,
    y: f32,
    /// Where the last character ended.
    end: f32,
    /// Where the last character that is not a space ended (a space after it can be drawn
    /// over by the next one: each character of a CJK line drawn with a space after it).
    ink_end: f32,
    /// Characters per font size (size in tenths of a point).
    sizes: Vec<(i32, u32)>,
    /// Where the characters start, for spotting text drawn twice (fake bold).
    starts: Vec<(f32, char)>,
    pending_space: bool,
    runs: Vec<Run>,
    /// Text went back left on this baseline in a line with right-to-left letters (a
    /// mixed-direction line drawn run by run): the runs are put in order of their left edge
    /// when the line ends.
    unordered: bool,
}

impl LineBuilder {
    /// The runs in order of their left edge, the text rebuilt to match (one space between
    /// runs that were drawn apart).
    fn sort_runs(&mut self) {
        let mut pieces: Vec<(Run, String)> = Vec::with_capacity(self.runs.len());
        for (i, run) in self.runs.iter().enumerate() {
            let to = self.runs.get(i + 1).map_or(self.text.len(), |r| r.start as usize);
            let piece = self.text.get(run.start as usize..to).unwrap_or("").trim_end();
            pieces.push((*run, piece.to_owned()));
        }
        pieces.sort_by(|a, b| a.0.x.total_cmp(&b.0.x));
        self.text.clear();
        self.runs.clear();
        for (mut run, piece) in pieces {
            if !self.text.is_empty() {
                self.text.push(' ');
            }
            run.start = self.text.len() as u32;
            self.text.push_str(&piece);
            self.runs.push(run);
        }
        self.x = self.runs.first().map_or(self.x, |r| r.x);
        self.end = self.runs.iter().map(|r| r.end).fold(self.end, f32::max);
    }
}

impl LineBuilder {
    fn size(&self) -> f32 {
        self.sizes.iter().max_by_key(|(size, count)| (*count, *size)).map_or(0.0, |(size, _)| *size as f32 / 10.0)
    }
}

/// Whether a run of `size` on baseline `y` is raised (`Some(true)`) or lowered
/// (`Some(false)`) against a line of `line_size` on `baseline`: smaller, and off the baseline.
fn shifted(size: f32, y: f32, line_size: f32, baseline: f32) -> Option<bool> {
    if size.is_nan() || size >= line_size * 0.9 {
        return None;
    }
    let shift = baseline - y; // up is positive
    if shift > line_size * 0.15 {
        Some(true)
    } else if shift < -line_size * 0.1 {
        Some(false)
    } else {
        None
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
        let Some(mut line) = self.current.take() else { return };
        if line.unordered {
            line.sort_runs();
        }
        let size = line.size();
        // The line's baseline is that of its first run in its main size.
        let baseline = line.runs.iter().find(|r| (r.size - size).abs() <= size * 0.05).map_or(line.y, |r| r.y);
        let last_run = line.runs.len().saturating_sub(1);
        let mut text = String::with_capacity(line.text.len() + 8);
        let mut runs = Vec::with_capacity(line.runs.len());
        for (i, run) in line.runs.iter().enumerate() {
            let from = run.start as usize;
            let to = line.runs.get(i + 1).map_or(line.text.len(), |r| r.start as usize);
            let mut piece = line.text.get(from..to).unwrap_or("");
            runs.push((text.len() as u32, run.x, run.end));
            // A soft hyphen only shows at the end of a line.
            let owned;
            if piece.contains('\u{AD}') {
                let hyphen_at_end = i == last_run && piece.trim_end().ends_with('\u{AD}');
                let mut cleaned = piece.replace('\u{AD}', "");
                if hyphen_at_end {
                    cleaned.truncate(cleaned.trim_end().len());
                    cleaned.push('\u{AD}');
                }
                owned = cleaned;
                piece = &owned;
            }
            match shifted(run.size, run.y, size, baseline) {
                Some(up) => {
                    // A note marker glued to the word before it stays glued.
                    let glued = i > 0 && run.x - line.runs[i - 1].end < size * 0.25;
                    if glued && text.ends_with(' ') {
                        text.pop();
                        if let Some(last) = runs.last_mut() {
                            last.0 = text.len() as u32;
                        }
                    }
                    // The space after a raised word stays outside its tag.
                    let word = piece.trim_end();
                    text.push(if up { SUP_START } else { SUB_START });
                    text.push_str(word);
                    text.push(if up { SUP_END } else { SUB_END });
                    text.push_str(&piece[word.len()..]);
                }
                None => text.push_str(piece),
            }
        }
        let trimmed_end = text.trim_end().len();
        text.truncate(trimmed_end);
        let lead = text.len() - text.trim_start().len();
        if lead > 0 {
            text.drain(..lead);
            for run in &mut runs {
                run.0 = run.0.saturating_sub(lead as u32);
            }
        }
        if text.chars().all(|c| c.is_whitespace() || (SUP_START..=SUB_END).contains(&c)) {
            return;
        }
        self.lines.push(Line {
            text,
            size,
            x: line.x,
            y: baseline,
            end: line.end,
            page_mid: self.page_mid,
            page: self.page,
            runs,
        });
    }

    fn push_text(&mut self, text: &str, x: f32, y: f32, end: f32, size: f32) {
        // A right-to-left glyph that stands for several letters (a lam-alef ligature, a word
        // drawn as one glyph) gives them in logical order: kept backwards in the visual line,
        // so that reading the line back in logical order (`bidi::logical`, which turns its
        // right-to-left runs around) turns them the right way. A glyph whose text mixes
        // directions is kept as it is.
        let reversed: String;
        let rtl_only = |t: &str| {
            t.chars().any(super::bidi::is_rtl) && !t.chars().any(|c| c.is_alphabetic() && !super::bidi::is_rtl(c))
        };
        let text = if text.chars().nth(1).is_some() && rtl_only(text) {
            reversed = text.chars().rev().collect();
            reversed.as_str()
        } else {
            text
        };
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
                    ink_end: x,
                    sizes: Vec::new(),
                    starts: Vec::new(),
                    pending_space: false,
                    runs: Vec::new(),
                    unordered: false,
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
            // CJK text has no spaces: between two of its characters only a gap of a whole em
            // is one (a letter-spaced line is not words), and a space the next character is
            // drawn over is none (each character drawn with a space after it).
            let cjk = line.text.chars().next_back().is_some_and(wide) && text.chars().next().is_some_and(wide);
            let word_gap = size.max(1.0) * if cjk { 1.0 } else { 0.15 };
            let spaced = line.pending_space && !(cjk && gap < -size.max(1.0) * 0.25);
            if (spaced || gap > word_gap) && !line.text.ends_with(' ') {
                line.text.push(' ');
            }
        }
        line.pending_space = false;
        // A new run after a space, or where the size or the baseline changes.
        let new_run = match line.runs.last() {
            None => true,
            Some(run) => {
                line.text.ends_with(' ')
                    || (run.size - size).abs() > run.size.max(size) * 0.05
                    || (run.y - y).abs() > run.size.max(size) * 0.1
            }
        };
        if new_run {
            line.runs.push(Run { start: line.text.len() as u32, x, end, y, size });
        }
        let first = text.chars().next().unwrap_or(' ');
        // The most recent starts only: the check for text drawn twice stays cheap.
        if line.starts.len() >= 512 {
            line.starts.drain(..256);
        }
        line.starts.push((x, first));
        for c in text.chars() {
            match c {
                '\t' | '\n' | '\r' | '\u{A0}' => line.text.push(' '),
                '\u{FEFF}' | '\u{FDD0}'..='\u{FDEF}' => {}
                c if c.is_control() => {}
                c => match ligature(c) {
                    Some(expanded) => line.text.push_str(expanded),
                    None => line.text.push(c),
                },
            }
        }
        line.end = end;
        line.ink_end = end;
        if let Some(run) = line.runs.last_mut() {
            run.end = end;
        }
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
            } else if x < line.ink_end - tolerance * 0.1 {
                // Back over text already on this line: the same text drawn again (fake
                // bold, shadows) is dropped; moving well left starts a new line.
                let first = char.chars().next().unwrap_or(' ');
                let drawn_twice = line.starts.iter().any(|(sx, sc)| *sc == first && (sx - x).abs() < tolerance * 0.3);
                if drawn_twice {
                    return Ok(());
                }
                if x < line.ink_end - tolerance * 0.5 {
                    let rtl = line.text.chars().any(super::bidi::is_rtl) || char.chars().any(super::bidi::is_rtl);
                    if rtl && (y - line.y).abs() <= tolerance * 0.1 {
                        // A mixed-direction line drawn run by run: one line, sorted at its end.
                        if let Some(line) = self.current.as_mut() {
                            line.unordered = true;
                            line.pending_space = true;
                        }
                    } else {
                        self.flush();
                    }
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
    Table(super::tables::Table),
    /// A list item: its marker, its left edge and font size (for nesting), its text.
    Item(Marker, Edges, f32, String),
}

/// A character of the CJK scripts, written without spaces between words: Hangul jamo and
/// syllables, kana, CJK ideographs and punctuation, full-width forms.
fn wide(c: char) -> bool {
    matches!(c as u32, 0x1100..=0x11FF | 0x2E80..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0xFE30..=0xFE4F | 0xFF00..=0xFFEF | 0x20000..=0x3FFFF)
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

/// Where a list item's marker and its text start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Edges {
    pub marker: f32,
    pub text: f32,
}

/// A list item's marker: a bullet, or a number or letter.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Marker {
    /// The marker as written (kept when the item stands alone).
    pub text: String,
    /// `None` for a bullet; else the list's `type` (`1`, `a`, `A`, `i`, `I`) and the number.
    pub ordered: Option<(char, u32)>,
}

/// The value of a lower-case Roman numeral of up to 8 letters.
fn roman(text: &str) -> Option<u32> {
    if text.is_empty() || text.len() > 8 {
        return None;
    }
    let mut total = 0u32;
    let mut previous = 0u32;
    for c in text.chars().rev() {
        let value = match c {
            'i' => 1,
            'v' => 5,
            'x' => 10,
            'l' => 50,
            'c' => 100,
            _ => return None,
        };
        if value < previous {
            total = total.checked_sub(value)?;
        } else {
            total += value;
            previous = value;
        }
    }
    Some(total)
}

/// The list marker a line starts with, and the byte length of the marker and the spaces
/// after it: a bullet (•, ◦, ▪, -, –, * …) or a number or letter (`1.`, `2)`, `a.`, `(iv)`).
pub(super) fn list_marker(text: &str) -> Option<(Marker, usize)> {
    let first = text.chars().next()?;
    let rest = &text[first.len_utf8()..];
    let spaces = rest.len() - rest.trim_start().len();
    if matches!(
        first,
        '•' | '·' | '◦' | '▪' | '■' | '●' | '○' | '‣' | '⁃' | '▫' | '□' | '➢' | '►' | '\u{F0B7}' | '\u{F0A7}'
    ) || (matches!(first, '-' | '–' | '*') && spaces > 0)
    {
        if rest.trim().is_empty() {
            return None;
        }
        return Some((Marker { text: first.to_string(), ordered: None }, first.len_utf8() + spaces));
    }
    // `(iv)`, `(a)`, `(1)`, or `1.`, `1)`, `a.`, `iv)`.
    let (open, body) = match text.strip_prefix('(') {
        Some(body) => (true, body),
        None => (false, text),
    };
    let label: &str = &body[..body.find(|c: char| !c.is_ascii_alphanumeric()).unwrap_or(body.len())];
    let after = &body[label.len()..];
    let close = after.chars().next()?;
    if !(if open { close == ')' } else { matches!(close, '.' | ')') }) {
        return None;
    }
    let tail = &after[1..];
    let spaces = tail.len() - tail.trim_start().len();
    if spaces == 0 || tail.trim().is_empty() {
        return None;
    }
    let ordered = if label.len() <= 3 && !label.is_empty() && label.chars().all(|c| c.is_ascii_digit()) {
        ('1', label.parse().ok()?)
    } else if let Some(n) = roman(label).filter(|_| label.len() >= 2 || label == "i") {
        ('i', n)
    } else if let Some(n) =
        roman(&label.to_ascii_lowercase()).filter(|_| label.len() >= 2 && label.chars().all(|c| c.is_ascii_uppercase()))
    {
        ('I', n)
    } else if label.len() == 1 && label.chars().all(|c| c.is_ascii_lowercase()) {
        ('a', u32::from(label.as_bytes()[0] - b'a') + 1)
    } else if label.len() == 1 && label.chars().all(|c| c.is_ascii_uppercase()) {
        ('A', u32::from(label.as_bytes()[0] - b'A') + 1)
    } else {
        return None;
    };
    let length = usize::from(open) + label.len() + 1 + spaces;
    Some((Marker { text: text[..length].trim_end().to_owned(), ordered: Some(ordered) }, length))
}

fn starts_list_item(text: &str) -> bool {
    list_marker(text).is_some()
}

fn ends_sentence(text: &str) -> bool {
    text.trim_end().ends_with(['.', '!', '?', ':', '。', '！', '？'])
}

/// Groups lines into headings and paragraphs.
#[cfg(test)]
pub(super) fn blocks(lines: &[Line]) -> Vec<Block> {
    placed_blocks(lines, Vec::new()).into_iter().map(|p| p.block).collect()
}

/// A block with the place of its first line.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Placed {
    pub block: Block,
    pub page: u32,
    /// The first line's baseline, from the top of the page.
    pub y: f32,
}

/// Groups lines into headings and paragraphs, each with the place of its first line, and
/// puts each table before the line of its index.
pub(super) fn placed_blocks(lines: &[Line], tables: Vec<(usize, super::tables::Table)>) -> Vec<Placed> {
    let mut tables = tables.into_iter().peekable();
    let Some(body) = mode(lines.iter().map(|l| (l.size, l.text.chars().count())), 0.5).filter(|b| *b > 0.0) else {
        let mut out: Vec<Placed> =
            tables.map(|(_, t)| Placed { page: t.page, y: t.top, block: Block::Table(t) }).collect();
        out.extend(lines.iter().map(|l| Placed {
            block: Block::Paragraph(l.logical().into_owned()),
            page: l.page,
            y: l.y,
        }));
        return out;
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
    for (index, line) in lines.iter().enumerate() {
        if tables.peek().is_some_and(|(at, _)| *at <= index) {
            if let Some((block, _)) = current.take() {
                out.push(block);
            }
            while let Some((_, table)) = tables.next_if(|(at, _)| *at <= index) {
                out.push(Placed { page: table.page, y: table.top, block: Block::Table(table) });
            }
            prev = None;
        }
        let level = level_of(line);
        let joins = match (&current, prev) {
            (Some((placed, count)), Some(prev)) => {
                continues(&placed.block, *count, prev, line, level, body, line_gap, lines_are_same_kind(prev, line))
            }
            _ => false,
        };
        if joins {
            if let Some((
                Placed { block: Block::Heading(_, text) | Block::Paragraph(text) | Block::Item(.., text), .. },
                count,
            )) = current.as_mut()
            {
                join_line(text, &line.logical());
                *count += 1;
            }
        } else {
            if let Some((block, _)) = current.take() {
                out.push(block);
            }
            let block = match (level, list_marker(&line.text)) {
                (Some(level), _) => Block::Heading(level, line.logical().into_owned()),
                (None, Some((marker, length))) => {
                    let text = line.runs.iter().find(|r| r.0 as usize >= length).map_or(line.x, |r| r.1);
                    let edges = Edges { marker: line.x, text };
                    Block::Item(marker, edges, line.size, super::bidi::logical(&line.text[length..]).into_owned())
                }
                (None, None) => Block::Paragraph(line.logical().into_owned()),
            };
            current = Some((Placed { block, page: line.page, y: line.y }, 1));
        }
        prev = Some(line);
    }
    if let Some((block, _)) = current {
        out.push(block);
    }
    out.extend(tables.map(|(_, t)| Placed { page: t.page, y: t.top, block: Block::Table(t) }));
    lone_items_are_paragraphs(&mut out);
    out
}

/// An item with no other item next to it is a paragraph that starts with a number or a
/// dash, not a list.
fn lone_items_are_paragraphs(blocks: &mut [Placed]) {
    let is_item = |b: Option<&Placed>| matches!(b, Some(Placed { block: Block::Item(..), .. }));
    for i in 0..blocks.len() {
        if !is_item(blocks.get(i))
            || is_item(i.checked_sub(1).and_then(|p| blocks.get(p)))
            || is_item(blocks.get(i + 1))
        {
            continue;
        }
        if let Block::Item(marker, _, _, text) = &blocks[i].block {
            let paragraph = format!("{} {text}", marker.text);
            blocks[i].block = Block::Paragraph(paragraph);
        }
    }
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
        (Block::Item(_, edges, _, _), None) => {
            // An item's next lines: the same size, close below, under its text (a hanging
            // indent) or under its marker.
            let size = line.size.max(prev.size).max(1.0);
            let dy = line.y - prev.y;
            let aligned = (line.x - edges.marker).abs() <= 1.5 || line.x >= edges.text - size * 0.3;
            same_size
                && aligned
                && line.page == prev.page
                && !starts_list_item(&line.text)
                && dy > size * 0.3
                && dy <= line_gap * size / body * 1.3 + 0.5
        }
        (Block::Paragraph(_), None) => {
            if !same_size || starts_list_item(&line.text) || prev.text.ends_with(':') {
                return false;
            }
            // A change of direction opens a paragraph.
            if super::bidi::reads_rtl(&prev.logical()) != super::bidi::reads_rtl(&line.logical()) {
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

/// Escaped text with its superscripts and subscripts as tags.
pub(super) fn inline_html(text: &str, html: &mut String) {
    let text = text.trim_end_matches('\u{AD}');
    let mut rest = text;
    while let Some(at) = rest.find([SUP_START, SUP_END, SUB_START, SUB_END]) {
        crate::escape_into(html, &rest[..at]);
        let mark = rest[at..].chars().next().unwrap_or(SUP_START);
        html.push_str(match mark {
            SUP_START => "<sup>",
            SUP_END => "</sup>",
            SUB_START => "<sub>",
            _ => "</sub>",
        });
        rest = &rest[at + mark.len_utf8()..];
    }
    crate::escape_into(html, rest);
}

/// The document's HTML, block by block: consecutive list items make lists, nested by
/// their indent.
#[derive(Default)]
pub(super) struct Html {
    pub html: String,
    /// The open lists: their items' left edge and their tag.
    lists: Vec<(f32, &'static str)>,
}

impl Html {
    pub(super) fn block(&mut self, block: &Block) {
        match block {
            Block::Item(marker, edges, size, text) => self.item(marker, edges.marker, *size, text),
            other => {
                self.close_lists();
                block_html(other, &mut self.html);
            }
        }
    }

    /// Closes the lists left open (before a picture or another block).
    pub(super) fn close_lists(&mut self) {
        while let Some((_, tag)) = self.lists.pop() {
            self.html.push_str(&format!("</li>\n</{tag}>\n"));
        }
    }

    fn item(&mut self, marker: &Marker, x: f32, size: f32, text: &str) {
        let tag = if marker.ordered.is_some() { "ol" } else { "ul" };
        let step = size.max(1.0) * 0.5;
        while self.lists.len() > 1 && self.lists.last().is_some_and(|(indent, _)| x < indent - step) {
            if let Some((_, open)) = self.lists.pop() {
                self.html.push_str(&format!("</li>\n</{open}>\n"));
            }
        }
        let open_new = match self.lists.last().copied() {
            Some((indent, _)) if x > indent + step => true,
            Some((_, open)) if open == tag => {
                self.html.push_str("</li>\n");
                false
            }
            Some((_, open)) => {
                self.lists.pop();
                self.html.push_str(&format!("</li>\n</{open}>\n"));
                true
            }
            None => true,
        };
        if open_new {
            self.html.push('<');
            self.html.push_str(tag);
            if let Some((kind, number)) = marker.ordered {
                if kind != '1' {
                    self.html.push_str(&format!(" type=\"{kind}\""));
                }
                if number != 1 {
                    self.html.push_str(&format!(" start=\"{number}\""));
                }
            }
            self.html.push_str(">\n");
            self.lists.push((x, tag));
        }
        self.html.push_str(&format!("<li{}>", dir(text)));
        inline_html(text, &mut self.html);
    }
}

/// ` dir="rtl"` for a block whose text reads right to left, else nothing.
fn dir(text: &str) -> &'static str {
    if super::bidi::reads_rtl(text) {
        " dir=\"rtl\""
    } else {
        ""
    }
}

/// The HTML of one block.
pub(super) fn block_html(block: &Block, html: &mut String) {
    match block {
        Block::Heading(level, text) => {
            html.push_str(&format!("<h{level}{}>", dir(text)));
            inline_html(text, html);
            html.push_str(&format!("</h{level}>\n"));
        }
        Block::Paragraph(text) => {
            html.push_str(&format!("<p{}>", dir(text)));
            inline_html(text, html);
            html.push_str("</p>\n");
        }
        Block::Table(table) => {
            // A table of right-to-left text is laid out right to left: its first column is
            // the one drawn rightmost.
            let rtl = table.reads_rtl();
            html.push_str(if rtl { "<table dir=\"rtl\">\n<tbody>\n" } else { "<table>\n<tbody>\n" });
            for row in &table.rows {
                html.push_str("<tr>");
                let cells: Box<dyn Iterator<Item = &super::tables::Cell>> =
                    if rtl { Box::new(row.iter().rev()) } else { Box::new(row.iter()) };
                for cell in cells {
                    html.push_str("<td");
                    if cell.colspan > 1 {
                        html.push_str(&format!(" colspan=\"{}\"", cell.colspan));
                    }
                    if cell.rowspan > 1 {
                        html.push_str(&format!(" rowspan=\"{}\"", cell.rowspan));
                    }
                    html.push('>');
                    inline_html(&cell.text, html);
                    html.push_str("</td>");
                }
                html.push_str("</tr>\n");
            }
            html.push_str("</tbody>\n</table>\n");
        }
        Block::Item(marker, _, _, text) => {
            html.push_str("<p>");
            crate::escape_into(html, &marker.text);
            html.push(' ');
            inline_html(text, html);
            html.push_str("</p>\n");
        }
    }
}

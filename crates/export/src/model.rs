//! The document as the file writers see it: blocks of styled inline content. Built once
//! from the HTML (`build.rs`); every writer but HTML renders this model.
//!
//! Block nesting (lists, tables, quotes inside one another) is at most
//! [`MAX_BLOCK_NESTING`] deep, so the writers may recurse on it.

use std::rc::Rc;

/// How deep lists, tables and quotes nest; deeper ones are flattened into paragraphs.
pub(crate) const MAX_BLOCK_NESTING: usize = 24;

/// An sRGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    pub(crate) fn hex(self) -> String {
        format!("{:02X}{:02X}{:02X}", self.0, self.1, self.2)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Script {
    #[default]
    Normal,
    Super,
    Sub,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Align {
    #[default]
    Start,
    Center,
    End,
    Justify,
}

/// A writing direction (HTML `dir`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dir {
    Ltr,
    Rtl,
}

/// The formatting of a run of text.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Style {
    pub bold: bool,
    pub italic: bool,
    pub underline: bool,
    pub strike: bool,
    pub code: bool,
    pub script: Script,
    pub color: Option<Rgb>,
    pub background: Option<Rgb>,
    /// `<mark>`: highlighted, in yellow unless a background colour says otherwise.
    pub mark: bool,
    /// Font size in points, when the HTML sets one.
    pub size_pt: Option<f32>,
    /// The target of the enclosing link (`http`, `https`, `mailto` or `tel`).
    pub link: Option<Rc<str>>,
    /// The direction set by the nearest `dir="ltr"`/`dir="rtl"` around the run (`None`:
    /// none, or `auto`: the text decides, see [`paragraph_dir`]).
    pub dir: Option<Dir>,
    /// The id (as in the HTML, `#` left off) an internal link `href="#…"` points at.
    pub anchor: Option<Rc<str>>,
    /// A footnote reference (`role="doc-noteref"`): the id of the note it points at. The
    /// run's text is the note's mark as the HTML writes it.
    pub note: Option<Rc<str>>,
    /// Ids of elements that start at this run (link targets: bookmarks in DOCX).
    pub ids: Vec<Rc<str>>,
    /// A tracked change that inserted or deleted this run (DOCX `w:ins`/`w:del`).
    pub rev: Option<Rev>,
    /// A tracked change that changed this run's formatting only (DOCX `w:rPrChange`).
    pub former: Option<Rc<Former>>,
}

/// A tracked formatting change: the run's formatting before it, and which change it was.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Former {
    pub style: Style,
    pub change: usize,
}

/// A revision: what a tracked change did to a run, a paragraph, a list item or a table row,
/// and which change it was (an index into the tracked document's changes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rev {
    pub kind: RevKind,
    pub change: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RevKind {
    Inserted,
    Deleted,
    /// Moved away from here (`w:moveFrom`): the place the text leaves.
    MovedFrom,
    /// Moved here (`w:moveTo`).
    MovedTo,
}

/// An image as the HTML references it; the writers resolve `src` (see `image.rs`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ImageRef {
    pub src: String,
    pub alt: String,
    /// Size in CSS pixels from the `width`/`height` attributes.
    pub width: Option<u32>,
    pub height: Option<u32>,
    /// Width as a percentage of the text width (`width="50%"`, `style="width: 50%"`).
    pub width_pct: Option<f32>,
    pub link: Option<Rc<str>>,
    /// A tracked change inserted or deleted the picture.
    pub rev: Option<Rev>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Inline {
    /// Text with white space already collapsed (never empty).
    Text(String, Style),
    Break,
    Image(ImageRef),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Numbering {
    Bullet,
    Decimal,
    LowerAlpha,
    UpperAlpha,
    LowerRoman,
    UpperRoman,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct List {
    pub numbering: Numbering,
    /// The number of the first item (ordered lists).
    pub start: i64,
    /// Each item is a flow of blocks (usually one paragraph, maybe a nested list).
    pub items: Vec<Vec<Block>>,
    /// Items a tracked change inserted or deleted whole, by index (empty in the documents
    /// that HTML makes).
    pub item_revs: Vec<(usize, Rev)>,
}

impl List {
    pub(crate) fn ordered(&self) -> bool {
        self.numbering != Numbering::Bullet
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Cell {
    pub header: bool,
    /// At least 1, at most `table::MAX_COLUMNS`.
    pub colspan: usize,
    /// At least 1 (0, "to the end", is resolved by the grid).
    pub rowspan: usize,
    pub background: Option<Rgb>,
    pub blocks: Vec<Block>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    pub header: bool,
    pub cells: Vec<Cell>,
    /// A tracked change inserted or deleted the row.
    pub rev: Option<Rev>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Table {
    pub caption: Vec<Inline>,
    pub rows: Vec<Row>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Block {
    Heading {
        level: u8,
        align: Align,
        content: Vec<Inline>,
    },
    Paragraph {
        align: Align,
        content: Vec<Inline>,
    },
    List(List),
    Table(Table),
    Quote(Vec<Block>),
    /// Preformatted text, white space kept.
    Code(String),
    Rule,
}

/// A footnote or endnote: the `li` of a `role="doc-endnotes"` list.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Note {
    /// The `id` of the note's `li` (the target of its references).
    pub id: Rc<str>,
    pub blocks: Vec<Block>,
}

/// The document: its blocks, and its notes when the HTML holds a `role="doc-endnotes"` part.
/// A note no reference points at stays in `blocks` (as a list at the end), so nothing is lost.
/// The page header and footer (`role="doc-pageheader"`, `doc-pagefooter`) are apart: DOCX and
/// PDF set them on every page, the text formats before and after the blocks.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Doc {
    pub blocks: Vec<Block>,
    /// Referenced notes, in the order of their first reference.
    pub notes: Vec<Note>,
    pub header: Vec<Block>,
    pub footer: Vec<Block>,
}

impl Doc {
    /// The blocks as read from top to bottom: the page header, the body, the page footer.
    pub(crate) fn reading_order(&self) -> [&[Block]; 3] {
        [&self.header, &self.blocks, &self.footer]
    }
}

/// Whether a character is of a right-to-left script (Hebrew, Arabic, Syriac, Thaana, NKo,
/// Samaritan, Mandaic and their presentation forms; the RTL planes of the SMP).
pub(crate) fn is_rtl_char(c: char) -> bool {
    matches!(c as u32, 0x0590..=0x08FF | 0xFB1D..=0xFDFF | 0xFE70..=0xFEFF | 0x10800..=0x10FFF | 0x1E800..=0x1EFFF)
}

/// A character of a left-to-right script (a letter not of an RTL script).
fn is_ltr_char(c: char) -> bool {
    c.is_alphabetic() && !is_rtl_char(c)
}

/// Whether inline content contains right-to-left letters.
pub(crate) fn has_rtl(text: &str) -> bool {
    text.chars().any(is_rtl_char)
}

/// A paragraph's direction: the `dir` of its first text when one is set around it;
/// otherwise (no `dir`, or `dir="auto"`) the direction of its first strong character, as
/// HTML's `dir="auto"` decides (left to right when it has none).
pub(crate) fn paragraph_dir(content: &[Inline]) -> Dir {
    let texts = content.iter().filter_map(|i| match i {
        Inline::Text(t, s) => Some((t, s)),
        _ => None,
    });
    for (i, (text, style)) in texts.enumerate() {
        if i == 0 {
            if let Some(dir) = style.dir {
                return dir;
            }
        }
        for c in text.chars() {
            if is_rtl_char(c) {
                return Dir::Rtl;
            }
            if is_ltr_char(c) {
                return Dir::Ltr;
            }
        }
    }
    Dir::Ltr
}

/// The number of an ordered list item as its list writes it (`3`, `c`, `iii`).
pub(crate) fn item_number(numbering: Numbering, n: i64) -> String {
    match numbering {
        Numbering::Bullet | Numbering::Decimal => n.to_string(),
        Numbering::LowerAlpha => alpha(n),
        Numbering::UpperAlpha => alpha(n).to_ascii_uppercase(),
        Numbering::LowerRoman => roman(n),
        Numbering::UpperRoman => roman(n).to_ascii_uppercase(),
    }
}

fn alpha(n: i64) -> String {
    if n < 1 {
        return n.to_string();
    }
    let mut n = n;
    let mut out = Vec::new();
    while n > 0 {
        n -= 1;
        out.push(b'a' + (n % 26) as u8);
        n /= 26;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

fn roman(n: i64) -> String {
    if !(1..4000).contains(&n) {
        return n.to_string();
    }
    const TABLE: [(i64, &str); 13] = [
        (1000, "m"),
        (900, "cm"),
        (500, "d"),
        (400, "cd"),
        (100, "c"),
        (90, "xc"),
        (50, "l"),
        (40, "xl"),
        (10, "x"),
        (9, "ix"),
        (5, "v"),
        (4, "iv"),
        (1, "i"),
    ];
    let mut n = n;
    let mut out = String::new();
    for (value, digits) in TABLE {
        while n >= value {
            out.push_str(digits);
            n -= value;
        }
    }
    out
}

/// The plain text of inline content (images by their alt text).
#[cfg(test)]
pub(crate) fn plain_text(content: &[Inline]) -> String {
    let mut out = String::new();
    for inline in content {
        match inline {
            Inline::Text(t, _) => out.push_str(t),
            Inline::Break => out.push('\n'),
            Inline::Image(img) => out.push_str(&img.alt),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions() {
        let t = |s: &str, dir| Inline::Text(s.into(), Style { dir, ..Style::default() });
        assert_eq!(paragraph_dir(&[t("123 שלום abc", None)]), Dir::Rtl);
        assert_eq!(paragraph_dir(&[t("123 abc שלום", None)]), Dir::Ltr);
        assert_eq!(paragraph_dir(&[t("abc", Some(Dir::Rtl))]), Dir::Rtl);
        assert_eq!(paragraph_dir(&[t("مرحبا", Some(Dir::Ltr))]), Dir::Ltr);
        assert_eq!(paragraph_dir(&[Inline::Break, t("42", None), t("مرحبا", None)]), Dir::Rtl);
        assert_eq!(paragraph_dir(&[]), Dir::Ltr);
    }

    #[test]
    fn numbers() {
        assert_eq!(item_number(Numbering::Decimal, 3), "3");
        assert_eq!(item_number(Numbering::LowerAlpha, 1), "a");
        assert_eq!(item_number(Numbering::LowerAlpha, 27), "aa");
        assert_eq!(item_number(Numbering::UpperAlpha, 28), "AB");
        assert_eq!(item_number(Numbering::LowerRoman, 1994), "mcmxciv");
        assert_eq!(item_number(Numbering::UpperRoman, 4), "IV");
        assert_eq!(item_number(Numbering::LowerRoman, 0), "0");
        assert_eq!(item_number(Numbering::LowerAlpha, -2), "-2");
    }
}

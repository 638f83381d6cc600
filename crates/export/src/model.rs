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
    /// The target of the enclosing link (`http`, `https` or `mailto`).
    pub link: Option<Rc<str>>,
}

/// An image as the HTML references it; the writers resolve `src` (see `image.rs`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ImageRef {
    pub src: String,
    pub alt: String,
    /// Size in CSS pixels from the `width`/`height` attributes.
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub link: Option<Rc<str>>,
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

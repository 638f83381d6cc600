//! The interpreter: a stack of groups, each with its destination (where its text goes), its
//! character formatting and font; text bytes decoded in the current code page; field
//! instructions read for their hyperlinks. What each control word does is in `words.rs`; how
//! paragraphs become HTML blocks (lists, tables, headings, footnotes) in `blocks.rs`.

mod blocks;
mod words;

use std::collections::HashMap;

use encoding_rs::Encoding;
use redline_ports::documents::ConvertError;

use super::lexer::{Lexer, Token};
use super::paragraph::{Look, Paragraph, Table};
use super::{MAX_DEPTH, MAX_URL};
use crate::images::{Pictures, MAX_PICTURE_BYTES};

/// Where the text of a group goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dest {
    Body,
    Skip,
    FontTable,
    ColorTable,
    /// A field instruction (read for `HYPERLINK`).
    FieldInstruction,
    Footnote,
    /// `\listtext` / `\pntext`: the number or bullet Word wrote before a list item.
    ListText,
    /// The style sheet: its entries' numbers, names and outline levels.
    StyleSheet,
    /// A `\pict`: the picture's data (hex or `\bin`).
    Picture,
}

/// Character formatting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Format {
    bold: bool,
    italic: bool,
    underline: bool,
    strike: bool,
    /// 1 superscript, 2 subscript.
    vertical: u8,
    /// Indexes into the colour table (0: automatic).
    color: usize,
    background: usize,
    /// Indexes into the links (+1; 0: none).
    link: usize,
}

#[derive(Debug, Clone)]
struct Group {
    dest: Dest,
    format: Format,
    hidden: bool,
    font: Option<i32>,
    /// `\ucN`: bytes of fallback after a `\uN`.
    uc: usize,
    /// The group opened with `\*`: an unknown destination in it is skipped.
    star: bool,
    /// Nothing but control words met in the group yet (a destination word must come first).
    first: bool,
}

pub(super) struct Parser<'a> {
    lexer: Lexer<'a>,
    stack: Vec<Group>,
    group: Group,
    /// The root group was closed: the rest of the file is ignored.
    done: bool,

    colors: Vec<Option<[u8; 3]>>,
    color: [Option<u8>; 3],
    fonts: HashMap<i32, &'static Encoding>,
    table_font: Option<i32>,
    default_encoding: &'static Encoding,
    default_font: Option<i32>,

    /// Bytes waiting to be decoded, with their encoding.
    pending: Vec<u8>,
    pending_encoding: &'static Encoding,
    /// Fallback bytes still to skip after a `\uN`.
    skip: usize,
    high_surrogate: Option<u16>,

    paragraph: Paragraph,
    /// The body paragraph set aside while a footnote is read.
    outer: Vec<Paragraph>,
    table: Option<Table>,
    html: String,
    /// The HTML of each footnote met so far (its paragraphs), in order.
    footnotes: Vec<String>,
    /// The number of the last note whose reference is in the body (a `\chftn` there, or the
    /// place of the `\footnote` group when no `\chftn` came before it).
    referenced: usize,
    instruction: String,
    links: Vec<String>,
    has_text: bool,
    /// The text of the last `\listtext` (kept short).
    list_marker: String,
    /// The lists open in the body, outermost first; each has one `<li>` open.
    lists: Vec<&'static str>,

    /// Paragraph style number → heading level (0: `<h1>`), from the style sheet.
    styles: HashMap<i32, u8>,
    /// The style sheet entry being read.
    style: StyleEntry,
    /// The `\pict` being read.
    picture: Picture,
    pub(super) pictures: Pictures,
    pub(super) warnings: Vec<String>,
}

/// A style sheet entry: `{\s1 \outlinelevel0 … heading 1;}`.
#[derive(Debug, Default)]
struct StyleEntry {
    number: Option<i32>,
    outline: Option<u8>,
    name: String,
}

/// The formats a `\pict` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PictureKind {
    Png,
    Jpeg,
    /// WMF, EMF, a Mac PICT, an OS/2 metafile or a device-dependent bitmap.
    Other(&'static str),
}

/// A picture being read: its kind and its bytes (hex digits decoded, or `\bin` data).
#[derive(Debug, Default)]
struct Picture {
    kind: Option<PictureKind>,
    data: Vec<u8>,
    /// A hex digit waiting for its pair.
    half: Option<u8>,
    /// More than [`MAX_PICTURE_BYTES`]: the rest is not kept.
    too_big: bool,
}

impl Picture {
    fn push(&mut self, bytes: &[u8]) {
        if self.data.len() + bytes.len() > MAX_PICTURE_BYTES {
            self.too_big = true;
            return;
        }
        self.data.extend_from_slice(bytes);
    }

    fn hex(&mut self, text: &[u8]) {
        for digit in text.iter().filter_map(|b| (*b as char).to_digit(16)) {
            match self.half.take() {
                None => self.half = Some(digit as u8),
                Some(high) => {
                    if self.data.len() >= MAX_PICTURE_BYTES {
                        self.too_big = true;
                        return;
                    }
                    self.data.push(high << 4 | digit as u8);
                }
            }
        }
    }
}

/// The heading level (0: `<h1>`) a paragraph style's name gives: "heading 1" and its
/// translations (the names Word and LibreOffice write), any case; aliases after a comma and
/// the closing `;` are ignored.
fn heading_level(name: &str) -> Option<u8> {
    const NAMES: [&str; 19] = [
        "heading",
        "überschrift",
        "titre",
        "titolo",
        "título",
        "titulo",
        "encabezado",
        "kop",
        "nagłówek",
        "заголовок",
        "rubrik",
        "otsikko",
        "overskrift",
        "nadpis",
        "címsor",
        "başlık",
        "intestazione",
        "cabeçalho",
        "heading level",
    ];
    let name = name.split([';', ',']).next()?.trim().to_lowercase();
    let (word, number) = name.rsplit_once(' ')?;
    let level: u8 = number.parse().ok().filter(|n| (1..=9).contains(n))?;
    NAMES.contains(&word.trim()).then_some(level - 1)
}

impl<'a> Parser<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        let group = Group {
            dest: Dest::Body,
            format: Format::default(),
            hidden: false,
            font: None,
            uc: 1,
            star: false,
            first: true,
        };
        Parser {
            lexer: Lexer::new(bytes),
            stack: Vec::new(),
            group,
            done: false,
            colors: Vec::new(),
            color: [None; 3],
            fonts: HashMap::new(),
            table_font: None,
            default_encoding: encoding_rs::WINDOWS_1252,
            default_font: None,
            pending: Vec::new(),
            pending_encoding: encoding_rs::WINDOWS_1252,
            skip: 0,
            high_surrogate: None,
            paragraph: Paragraph::default(),
            outer: Vec::new(),
            table: None,
            html: String::new(),
            footnotes: Vec::new(),
            referenced: 0,
            instruction: String::new(),
            links: Vec::new(),
            has_text: false,
            list_marker: String::new(),
            lists: Vec::new(),
            styles: HashMap::new(),
            style: StyleEntry::default(),
            picture: Picture::default(),
            pictures: Pictures::default(),
            warnings: Vec::new(),
        }
    }

    pub(super) fn run(&mut self) -> Result<(), ConvertError> {
        // The first token is the root group's `{`.
        let _ = self.lexer.next_token();
        while !self.done {
            let Some(token) = self.lexer.next_token() else { break };
            if !matches!(token, Token::Hex(_) | Token::Text(_)) {
                self.flush_bytes();
            }
            match token {
                Token::GroupStart => {
                    self.skip = 0;
                    if self.stack.len() >= MAX_DEPTH {
                        return Err(ConvertError::TooComplex(format!("groups are nested more than {MAX_DEPTH} deep")));
                    }
                    let mut inner = self.group.clone();
                    inner.star = false;
                    inner.first = true;
                    self.stack.push(std::mem::replace(&mut self.group, inner));
                }
                Token::GroupEnd => {
                    self.skip = 0;
                    self.end_group();
                }
                Token::Word(name, param) => self.word(name, param),
                Token::Symbol(symbol) => self.symbol(symbol),
                Token::Hex(byte) => self.bytes(std::slice::from_ref(&byte)),
                Token::Text(text) => self.bytes(text),
            }
        }
        self.flush_bytes();
        Ok(())
    }

    fn end_group(&mut self) {
        let Some(outer) = self.stack.pop() else {
            self.done = true;
            return;
        };
        if self.group.dest == Dest::Footnote && outer.dest != Dest::Footnote {
            // The end of a footnote: its last paragraph, then back to the body's.
            self.end_paragraph();
            self.paragraph = self.outer.pop().unwrap_or_default();
        }
        let inner = std::mem::replace(&mut self.group, outer);
        match inner.dest {
            Dest::FontTable => self.table_font = None,
            Dest::StyleSheet if self.group.dest == Dest::StyleSheet => {
                let entry = std::mem::take(&mut self.style);
                let level = entry.outline.or_else(|| heading_level(&entry.name));
                if let (Some(level), true) = (level, self.styles.len() < 10_000) {
                    self.styles.insert(entry.number.unwrap_or(0), level);
                }
            }
            Dest::Picture if self.group.dest != Dest::Picture => self.end_picture(),
            Dest::FieldInstruction if self.group.dest != Dest::FieldInstruction => {
                let instruction = std::mem::take(&mut self.instruction);
                if let Some(url) = hyperlink(&instruction) {
                    self.links.push(url);
                    self.group.format.link = self.links.len();
                }
            }
            _ => {}
        }
    }

    fn encoding(&self) -> &'static Encoding {
        self.group.font.or(self.default_font).and_then(|f| self.fonts.get(&f).copied()).unwrap_or(self.default_encoding)
    }

    /// Text bytes in the current code page (after any `\uN` fallback to skip).
    fn bytes(&mut self, mut bytes: &[u8]) {
        if self.skip > 0 {
            let n = self.skip.min(bytes.len());
            self.skip -= n;
            bytes = &bytes[n..];
        }
        match self.group.dest {
            Dest::Body | Dest::Footnote | Dest::FieldInstruction | Dest::ListText | Dest::StyleSheet
                if !bytes.is_empty() => {}
            Dest::Picture => {
                self.picture.hex(bytes);
                return;
            }
            Dest::ColorTable => {
                // Entries end with `;`; one without components is the automatic colour.
                for _ in bytes.iter().filter(|b| **b == b';') {
                    let color = match self.color {
                        [None, None, None] => None,
                        [r, g, b] => Some([r.unwrap_or(0), g.unwrap_or(0), b.unwrap_or(0)]),
                    };
                    if self.colors.len() < 100_000 {
                        self.colors.push(color);
                    }
                    self.color = [None; 3];
                }
                return;
            }
            _ => return,
        }
        let encoding = self.encoding();
        if encoding != self.pending_encoding {
            self.flush_bytes();
            self.pending_encoding = encoding;
        }
        self.pending.extend_from_slice(bytes);
    }

    fn flush_bytes(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let mut bytes = std::mem::take(&mut self.pending);
        let (text, _) = self.pending_encoding.decode_without_bom_handling(&bytes);
        self.text(&text);
        // Keep the allocation.
        bytes.clear();
        self.pending = bytes;
    }

    /// Decoded text for the current destination.
    fn text(&mut self, text: &str) {
        if self.high_surrogate.take().is_some() {
            self.text("\u{FFFD}");
        }
        match self.group.dest {
            Dest::Body | Dest::Footnote => {
                if self.group.hidden {
                    return;
                }
                let look = self.look();
                self.paragraph.push(&look, text);
            }
            Dest::FieldInstruction => {
                if self.instruction.len() < MAX_URL * 2 {
                    self.instruction.push_str(text);
                }
            }
            Dest::ListText => {
                if self.list_marker.len() < 32 {
                    self.list_marker.push_str(text);
                }
            }
            Dest::StyleSheet => {
                if self.style.name.len() < 256 {
                    self.style.name.push_str(text);
                }
            }
            Dest::FontTable | Dest::ColorTable | Dest::Skip | Dest::Picture => {}
        }
    }

    /// The end of a `\pict`: a PNG or JPEG joins the paragraph as a picture; any other kind
    /// keeps its place as a visible note, with a warning.
    fn end_picture(&mut self) {
        let picture = std::mem::take(&mut self.picture);
        let kept = match picture.kind {
            _ if picture.too_big => Err(crate::images::Refused::TooBig.warning("RTF")),
            Some(PictureKind::Png | PictureKind::Jpeg) => {
                self.pictures.add(picture.data).map_err(|refused| refused.warning("RTF"))
            }
            Some(PictureKind::Other(kind)) => {
                Err(format!("a picture in a format browsers do not show ({kind}) was kept as a note in its place"))
            }
            None => Err("a picture of an unknown format was kept as a note in its place".to_owned()),
        };
        let look = self.look();
        match kept {
            Ok(placeholder) => self.paragraph.push_image(&look, &placeholder),
            Err(warning) => {
                self.paragraph.push(&look, crate::images::NOT_SHOWN);
                if self.warnings.len() < 32 && !self.warnings.contains(&warning) {
                    self.warnings.push(warning);
                }
            }
        }
    }

    fn look(&self) -> Look {
        let format = &self.group.format;
        let color = |i: usize| self.colors.get(i).copied().flatten();
        Look {
            link: format.link.checked_sub(1),
            // Black text and white highlights are the defaults: no span for them.
            image: None,
            note: None,
            color: color(format.color).filter(|c| *c != [0, 0, 0]),
            background: color(format.background).filter(|c| *c != [255, 255, 255]),
            bold: format.bold,
            italic: format.italic,
            underline: format.underline,
            strike: format.strike,
            vertical: format.vertical,
        }
    }

    fn symbol(&mut self, symbol: u8) {
        if self.skip > 0 {
            self.skip -= 1;
            return;
        }
        match symbol {
            b'*' => self.group.star = true,
            b'\\' | b'{' | b'}' => {
                let byte = [symbol];
                self.bytes(&byte);
                self.flush_bytes();
            }
            b'~' => self.text("\u{A0}"),
            b'_' => self.text("\u{2011}"),
            b'\t' => self.text("\t"),
            // `\-` (optional hyphen), `\:` (index subentry), `\|` (formula) show nothing.
            _ => {}
        }
    }

    /// Starts a destination group: `dest` unless the group is already skipped.
    fn destination(&mut self, dest: Dest) {
        if self.group.dest != Dest::Skip {
            self.group.dest = dest;
        }
    }

    fn unicode(&mut self, unit: u32) {
        if (0xD800..0xDC00).contains(&unit) {
            if self.high_surrogate.is_some() {
                self.text("\u{FFFD}");
            }
            self.high_surrogate = Some(unit as u16);
            return;
        }
        let c = match (self.high_surrogate.take(), unit) {
            (Some(high), 0xDC00..=0xDFFF) => {
                char::from_u32(0x10000 + ((u32::from(high) - 0xD800) << 10) + (unit - 0xDC00)).unwrap_or('\u{FFFD}')
            }
            (Some(_), _) => {
                self.text("\u{FFFD}");
                char::from_u32(unit).unwrap_or('\u{FFFD}')
            }
            (None, _) => char::from_u32(unit).unwrap_or('\u{FFFD}'),
        };
        if c == '\u{FFFD}' || !c.is_control() || c == '\t' {
            let mut buf = [0u8; 4];
            self.text(c.encode_utf8(&mut buf));
        }
    }
}

/// The target of a `HYPERLINK "url"` field instruction (not of `\l` links to bookmarks).
fn hyperlink(instruction: &str) -> Option<String> {
    let rest = instruction.trim_start();
    let rest = rest.get(..9).filter(|w| w.eq_ignore_ascii_case("HYPERLINK")).map(|_| &rest[9..])?;
    let rest = rest.trim_start();
    if rest.starts_with("\\l") {
        return None;
    }
    let url = match rest.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next()?,
        None => rest.split_whitespace().next()?,
    };
    let url = url.trim();
    (!url.is_empty() && url.len() <= MAX_URL).then(|| url.to_owned())
}

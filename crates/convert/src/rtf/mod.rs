//! RTF: a hand-rolled tokenizer and a group-stack interpreter producing paragraphs with
//! bold, italic, underline, strike, super/subscript, colours, highlights and links, plus
//! line breaks, tabs, tables (flattened when nested), headings from `\outlinelevel`, and
//! footnotes gathered at the end.
//!
//! Text is decoded with the code page of its font (`\fcharset`) or of the document
//! (`\ansicpg`, Windows-1252 by default); `\uN` escapes with their `\ucN` fallbacks and
//! UTF-16 surrogate pairs are understood. Destinations that hold no body text (font and
//! style tables, document info, pictures, headers and footers, field instructions,
//! annotations…) are skipped. Group nesting is capped; the output is bounded by a small
//! multiple of the input (formatting tags are opened and closed only where they change).

use std::collections::HashMap;

use encoding_rs::Encoding;
use redline_ports::documents::{ConvertError, Converted};

use crate::escape;

/// The deepest group nesting accepted. (Real files go deep: one in the corpus, converted
/// from HTML, nests 2,714 groups. The stack is explicit, a group costs some 64 bytes.)
pub(crate) const MAX_DEPTH: usize = 5000;
/// The longest link target kept.
const MAX_URL: usize = 2048;

pub(crate) fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let start = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let start = &start[start.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(start.len())..];
    if !start.starts_with(b"{\\rtf") {
        return Err(ConvertError::Corrupt { format: "RTF".into(), reason: "it does not start with {\\rtf".into() });
    }
    let mut parser = Parser::new(start);
    parser.run()?;
    let pictures = parser.skipped_pictures;
    let (html, warnings, has_text) = parser.finish();
    if !has_text {
        return Err(ConvertError::NoText(if pictures {
            "the RTF document holds only pictures (they are not imported)".into()
        } else {
            "the RTF document has no text".into()
        }));
    }
    Ok(Converted { html, images: Vec::new(), warnings })
}

// ---------------------------------------------------------------------------------------
// Tokens

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token<'a> {
    GroupStart,
    GroupEnd,
    /// A control word and its parameter.
    Word(&'a [u8], Option<i32>),
    /// A control symbol: `\` and one character that is not a letter.
    Symbol(u8),
    /// `\'hh`.
    Hex(u8),
    /// Plain bytes (no `\`, braces or line ends).
    Text(&'a [u8]),
}

struct Lexer<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Lexer<'a> {
    /// Skips `n` bytes of binary data (`\binN`).
    fn skip(&mut self, n: usize) {
        self.at = self.at.saturating_add(n).min(self.bytes.len());
    }

    fn next_token(&mut self) -> Option<Token<'a>> {
        let bytes = self.bytes;
        loop {
            let c = *bytes.get(self.at)?;
            match c {
                b'{' => {
                    self.at += 1;
                    return Some(Token::GroupStart);
                }
                b'}' => {
                    self.at += 1;
                    return Some(Token::GroupEnd);
                }
                b'\r' | b'\n' => self.at += 1,
                b'\\' => {
                    let Some(&next) = bytes.get(self.at + 1) else {
                        self.at += 1;
                        return None;
                    };
                    if next.is_ascii_alphabetic() {
                        let start = self.at + 1;
                        let mut end = start;
                        while end < bytes.len() && bytes[end].is_ascii_alphabetic() && end - start < 32 {
                            end += 1;
                        }
                        let name = &bytes[start..end];
                        let mut param = None;
                        let negative =
                            bytes.get(end) == Some(&b'-') && bytes.get(end + 1).is_some_and(u8::is_ascii_digit);
                        let digits_start = if negative { end + 1 } else { end };
                        let mut digits_end = digits_start;
                        while digits_end < bytes.len()
                            && bytes[digits_end].is_ascii_digit()
                            && digits_end - digits_start < 10
                        {
                            digits_end += 1;
                        }
                        if digits_end > digits_start {
                            let value = bytes[digits_start..digits_end]
                                .iter()
                                .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0'));
                            let value = if negative { -value } else { value };
                            param = Some(value.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32);
                            end = digits_end;
                        }
                        if bytes.get(end) == Some(&b' ') {
                            end += 1;
                        }
                        self.at = end;
                        return Some(Token::Word(name, param));
                    }
                    if next == b'\'' {
                        let hex = |i: usize| bytes.get(i).and_then(|b| (*b as char).to_digit(16));
                        if let (Some(hi), Some(lo)) = (hex(self.at + 2), hex(self.at + 3)) {
                            self.at += 4;
                            return Some(Token::Hex((hi * 16 + lo) as u8));
                        }
                        self.at += 2;
                        continue;
                    }
                    self.at += 2;
                    if next == b'\r' || next == b'\n' {
                        return Some(Token::Word(b"par", None));
                    }
                    return Some(Token::Symbol(next));
                }
                _ => {
                    let start = self.at;
                    while self.at < bytes.len() && !matches!(bytes[self.at], b'\\' | b'{' | b'}' | b'\r' | b'\n') {
                        self.at += 1;
                    }
                    return Some(Token::Text(&bytes[start..self.at]));
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Code pages

fn encoding_for_codepage(codepage: i32) -> Option<&'static Encoding> {
    use encoding_rs::*;
    Some(match codepage {
        // No DOS code pages in encoding_rs: Windows-1252 is the closest.
        437 | 850 | 1252 => WINDOWS_1252,
        1250 => WINDOWS_1250,
        1251 => WINDOWS_1251,
        1253 => WINDOWS_1253,
        1254 => WINDOWS_1254,
        1255 => WINDOWS_1255,
        1256 => WINDOWS_1256,
        1257 => WINDOWS_1257,
        1258 => WINDOWS_1258,
        874 => WINDOWS_874,
        932 => SHIFT_JIS,
        936 => GBK,
        949 | 1361 => EUC_KR,
        950 => BIG5,
        866 => IBM866,
        10000 => MACINTOSH,
        20866 => KOI8_R,
        21866 => KOI8_U,
        28592 => ISO_8859_2,
        28595 => ISO_8859_5,
        28597 => ISO_8859_7,
        65001 => UTF_8,
        _ => return None,
    })
}

/// The code page of a font's `\fcharset` (none: the document's).
fn codepage_for_charset(charset: i32) -> Option<i32> {
    Some(match charset {
        2 => 1252,
        77 => 10000,
        128 => 932,
        129 => 949,
        130 => 1361,
        134 => 936,
        136 => 950,
        161 => 1253,
        162 => 1254,
        163 => 1258,
        177 => 1255,
        178 => 1256,
        186 => 1257,
        204 => 1251,
        222 => 874,
        238 => 1250,
        254 => 437,
        255 => 850,
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------
// State

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

/// What the rendered HTML of a run looks like (colours resolved).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Look {
    link: Option<usize>,
    color: Option<[u8; 3]>,
    background: Option<[u8; 3]>,
    bold: bool,
    italic: bool,
    underline: bool,
    strike: bool,
    vertical: u8,
}

/// A paragraph in progress: runs of text with their look (`\n` is a line break).
#[derive(Debug, Default)]
struct Paragraph {
    runs: Vec<(Look, String)>,
    has_text: bool,
    /// `\intbl`: a paragraph of a table cell.
    in_table: bool,
    /// `\outlinelevelN`: a heading.
    outline: Option<u8>,
    /// `\lsN` (or an old-style `\pnlvl…`): a list item, at level `\ilvlN`.
    list: bool,
    level: u8,
}

impl Paragraph {
    fn push(&mut self, look: &Look, text: &str) {
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

    /// The inline HTML of the runs, tags opened and closed only where the look changes.
    fn render(&self, links: &[String], out: &mut String) {
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
struct Table {
    rows: Vec<String>,
    cells: Vec<String>,
    /// The paragraphs of the cell in progress.
    cell: String,
}

struct Parser<'a> {
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
    footnotes: Vec<String>,
    /// Footnotes met so far.
    notes: usize,
    instruction: String,
    links: Vec<String>,
    has_text: bool,
    skipped_pictures: bool,
    /// The text of the last `\listtext` (kept short).
    list_marker: String,
    /// The lists open in the body, outermost first; each has one `<li>` open.
    lists: Vec<&'static str>,
}

impl<'a> Parser<'a> {
    fn new(bytes: &'a [u8]) -> Self {
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
            lexer: Lexer { bytes, at: 0 },
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
            notes: 0,
            instruction: String::new(),
            links: Vec::new(),
            has_text: false,
            skipped_pictures: false,
            list_marker: String::new(),
            lists: Vec::new(),
        }
    }

    fn run(&mut self) -> Result<(), ConvertError> {
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
            Dest::Body | Dest::Footnote | Dest::FieldInstruction | Dest::ListText if !bytes.is_empty() => {}
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
            Dest::FontTable | Dest::ColorTable | Dest::Skip => {}
        }
    }

    fn look(&self) -> Look {
        let format = &self.group.format;
        let color = |i: usize| self.colors.get(i).copied().flatten();
        Look {
            link: format.link.checked_sub(1),
            // Black text and white highlights are the defaults: no span for them.
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

    fn word(&mut self, name: &[u8], param: Option<i32>) {
        let first = std::mem::replace(&mut self.group.first, false);
        if name == b"bin" {
            // Binary data: never text, whatever the destination.
            self.lexer.skip(usize::try_from(param.unwrap_or(0)).unwrap_or(0));
            return;
        }
        if self.skip > 0 && name != b"u" {
            self.skip -= 1;
            return;
        }
        let on = param != Some(0);
        let number = param.unwrap_or(0);
        let index = usize::try_from(number).unwrap_or(0);
        match name {
            // Destinations read for what they hold.
            b"fonttbl" => self.destination(Dest::FontTable),
            b"colortbl" => {
                self.destination(Dest::ColorTable);
                self.color = [None; 3];
            }
            b"fldinst" => {
                self.destination(Dest::FieldInstruction);
                self.instruction.clear();
            }
            b"fldrslt" | b"field" | b"shprslt" | b"result" => {}
            b"listtext" | b"pntext" => {
                if self.group.dest == Dest::Body {
                    self.group.dest = Dest::ListText;
                    self.list_marker.clear();
                } else {
                    self.group.dest = Dest::Skip;
                }
            }
            b"footnote" => {
                if matches!(self.group.dest, Dest::Body) {
                    self.group.dest = Dest::Footnote;
                    self.notes += 1;
                    self.outer.push(std::mem::take(&mut self.paragraph));
                } else {
                    self.group.dest = Dest::Skip;
                }
            }
            b"pict" => {
                self.skipped_pictures = true;
                self.group.dest = Dest::Skip;
            }
            b"stylesheet"
            | b"info"
            | b"header"
            | b"headerl"
            | b"headerr"
            | b"headerf"
            | b"footer"
            | b"footerl"
            | b"footerr"
            | b"footerf"
            | b"listtable"
            | b"listoverridetable"
            | b"revtbl"
            | b"rsidtbl"
            | b"generator"
            | b"xmlnstbl"
            | b"themedata"
            | b"colorschememapping"
            | b"datastore"
            | b"latentstyles"
            | b"objdata"
            | b"objclass"
            | b"objname"
            | b"xe"
            | b"tc"
            | b"txe"
            | b"bkmkstart"
            | b"bkmkend"
            | b"annotation"
            | b"atnid"
            | b"atnauthor"
            | b"atndate"
            | b"atnref"
            | b"comment"
            | b"ftnsep"
            | b"ftnsepc"
            | b"aftnsep"
            | b"aftnsepc"
            | b"pgdsctbl"
            | b"nonshppict"
            | b"template"
            | b"userprops"
            | b"docvar"
            | b"nonesttables"
            | b"pn"
            | b"fname"
            | b"falt"
            | b"panose"
            | b"mmathPr"
            | b"shpinst"
            | b"sp"
            | b"filetbl"
            | b"keywords"
            | b"title"
            | b"subject"
            | b"author"
            | b"operator"
            | b"doccomm"
            | b"company"
            | b"manager" => {
                self.group.dest = Dest::Skip;
            }
            _ if self.group.star && first => {
                // An unknown `\*\destination`.
                self.group.dest = Dest::Skip;
            }
            // Document.
            b"ansicpg" => {
                if let Some(encoding) = encoding_for_codepage(number) {
                    self.default_encoding = encoding;
                }
            }
            b"mac" => self.default_encoding = encoding_rs::MACINTOSH,
            b"pc" | b"pca" => self.default_encoding = encoding_rs::WINDOWS_1252,
            b"deff" => self.default_font = param,
            // Font and colour tables.
            b"f" if self.group.dest == Dest::FontTable => self.table_font = param,
            b"fcharset" if self.group.dest == Dest::FontTable => {
                if let (Some(font), Some(encoding)) =
                    (self.table_font, codepage_for_charset(number).and_then(encoding_for_codepage))
                {
                    if self.fonts.len() < 10_000 {
                        self.fonts.insert(font, encoding);
                    }
                }
            }
            b"cpg" if self.group.dest == Dest::FontTable => {
                if let (Some(font), Some(encoding)) = (self.table_font, encoding_for_codepage(number)) {
                    if self.fonts.len() < 10_000 {
                        self.fonts.insert(font, encoding);
                    }
                }
            }
            b"red" | b"green" | b"blue" if self.group.dest == Dest::ColorTable => {
                let slot = match name {
                    b"red" => 0,
                    b"green" => 1,
                    _ => 2,
                };
                self.color[slot] = Some(number.clamp(0, 255) as u8);
            }
            b"f" => self.group.font = param,
            b"uc" => self.group.uc = index.min(16),
            b"u" => {
                let unit = if number < 0 { number + 65_536 } else { number };
                self.unicode(u32::try_from(unit).unwrap_or(0xFFFD));
                self.skip = self.group.uc;
            }
            // Character formatting.
            b"plain" => {
                self.group.format = Format { link: self.group.format.link, ..Format::default() };
                self.group.hidden = false;
                self.group.font = self.default_font;
            }
            b"b" => self.group.format.bold = on,
            b"i" => self.group.format.italic = on,
            b"ul" | b"uld" | b"uldash" | b"uldashd" | b"uldashdd" | b"uldb" | b"ulhwave" | b"ulldash" | b"ulth"
            | b"ulthd" | b"ulthdash" | b"ulthdashd" | b"ulthdashdd" | b"ulthldash" | b"ululdbwave" | b"ulw"
            | b"ulwave" => self.group.format.underline = on,
            b"ulnone" => self.group.format.underline = false,
            b"strike" | b"striked" => self.group.format.strike = on,
            b"super" | b"up" => self.group.format.vertical = if on { 1 } else { 0 },
            b"sub" | b"dn" => self.group.format.vertical = if on { 2 } else { 0 },
            b"nosupersub" => self.group.format.vertical = 0,
            b"v" => self.group.hidden = on,
            b"cf" => self.group.format.color = index,
            b"cb" | b"highlight" | b"chcbpat" => self.group.format.background = index,
            // Special characters.
            b"tab" => self.text("\t"),
            b"line" => self.text("\n"),
            b"emdash" => self.text("\u{2014}"),
            b"endash" => self.text("\u{2013}"),
            b"bullet" => self.text("\u{2022}"),
            b"lquote" => self.text("\u{2018}"),
            b"rquote" => self.text("\u{2019}"),
            b"ldblquote" => self.text("\u{201C}"),
            b"rdblquote" => self.text("\u{201D}"),
            b"emspace" | b"enspace" | b"qmspace" => self.text(" "),
            b"chftn" => {
                let n = self.notes + usize::from(self.group.dest == Dest::Body);
                self.text(&n.max(1).to_string());
            }
            // Paragraphs and tables.
            b"par" | b"sect" | b"page" => {
                if matches!(self.group.dest, Dest::Body | Dest::Footnote) {
                    self.end_paragraph();
                }
            }
            // A `\listtext` group resets its own formatting, not the paragraph's.
            b"pard" if self.group.dest != Dest::ListText => {
                self.paragraph.in_table = false;
                self.paragraph.outline = None;
                self.paragraph.list = false;
                self.paragraph.level = 0;
            }
            b"ls" if self.group.dest == Dest::Body => self.paragraph.list = number > 0,
            b"ilvl" if self.group.dest == Dest::Body => self.paragraph.level = number.clamp(0, 8) as u8,
            // Old-style numbering (`{\*\pn …}`, read although the group is skipped).
            b"pnlvlblt" | b"pnlvlbody" | b"pnlvlcont" => {
                self.paragraph.list = true;
                self.paragraph.level = 0;
            }
            b"pnlvl" => {
                self.paragraph.list = true;
                self.paragraph.level = (number.clamp(1, 9) - 1) as u8;
            }
            b"intbl" => self.paragraph.in_table = true,
            b"itap" => self.paragraph.in_table = number > 0,
            b"outlinelevel" => self.paragraph.outline = u8::try_from(number).ok().filter(|l| *l < 9),
            b"cell" if self.group.dest == Dest::Body => self.end_cell(),
            b"nestcell" if self.group.dest == Dest::Body => {
                self.paragraph.in_table = true;
                self.end_paragraph();
            }
            b"row" if self.group.dest == Dest::Body => self.end_row(),
            _ => {}
        }
        if self.group.dest == Dest::ColorTable && name == b"colortbl" {
            self.colors.clear();
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

    /// Ends a paragraph: into the cell in progress, the footnotes or the body.
    fn end_paragraph(&mut self) {
        let mut paragraph = std::mem::take(&mut self.paragraph);
        self.paragraph.in_table = paragraph.in_table;
        self.paragraph.outline = paragraph.outline;
        self.paragraph.list = paragraph.list;
        self.paragraph.level = paragraph.level;
        let marker = std::mem::take(&mut self.list_marker);
        let is_item = paragraph.list && paragraph.outline.is_none() && !paragraph.in_table;
        if !is_item && !marker.trim().is_empty() && self.group.dest != Dest::Footnote {
            // A number without a list (or in a table or heading): kept as text, as written.
            paragraph.runs.insert(0, (Look::default(), marker.clone()));
        }
        if self.group.dest == Dest::Footnote {
            if paragraph.has_text {
                let mut html = String::from("<p>");
                paragraph.render(&self.links, &mut html);
                html.push_str("</p>\n");
                self.footnotes.push(html);
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
        let (open, close) = match paragraph.outline {
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

    fn end_cell(&mut self) {
        self.paragraph.in_table = true;
        self.end_paragraph();
        let table = self.table.get_or_insert_with(Table::default);
        let cell = std::mem::take(&mut table.cell);
        table.cells.push(cell);
    }

    fn end_row(&mut self) {
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

    fn finish(mut self) -> (String, Vec<String>, bool) {
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
            self.has_text = true;
            self.html.push_str("<hr>\n");
            for note in &self.footnotes {
                self.html.push_str(note);
            }
        }
        let mut warnings = Vec::new();
        if self.skipped_pictures {
            warnings.push("the RTF's pictures were not imported".to_owned());
        }
        (self.html, warnings, self.has_text)
    }
}

/// The row in progress (its last cell too), if it has cells.
fn push_row(table: &mut Table) {
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

#[cfg(test)]
mod tests;

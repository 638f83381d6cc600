//! A small pull parser over one XML part, on top of quick-xml, that the rest of the DOCX
//! converter reads through. It
//!
//! - counts nesting depth and refuses documents nested deeper than the limit;
//! - refuses `<!DOCTYPE>` (DOCX parts never have one: entity declarations are an attack,
//!   and quick-xml would not expand them anyway — unknown entity references are dropped);
//! - resolves markup compatibility (`mc:AlternateContent`): the first `mc:Choice` whose
//!   `Requires` namespaces we understand is read, else the `mc:Fallback`; the wrappers
//!   themselves are invisible to callers;
//! - drops whole subtrees that never hold visible content (tracked deletions, property
//!   change history, section properties, content-control properties, ruby guides).
//!
//! Elements are matched by local name only, so the transitional and the strict (ISO 29500)
//! namespaces are read alike.

use std::borrow::Cow;

use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};
use redline_ports::documents::{Attributed, ConvertError, Reviser};

/// What callers see.
pub(super) enum Ev<'a> {
    Start(BytesStart<'a>),
    Empty(BytesStart<'a>),
    /// The end of the element most recently started; `Xml::depth` is already decremented.
    End,
    /// Character data, with entity and character references resolved.
    Text(Cow<'a, str>),
    Eof,
}

/// Which text of the tracked changes (revisions) a reader sees.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) enum View {
    /// Every revision accepted: insertions kept, deletions left out.
    #[default]
    Accepted,
    /// Every revision rejected: the document as it was before them.
    Original,
}

/// The tracked changes met while reading (docs/conversion.md, "Tracked changes").
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Revisions {
    /// Inserted runs (`w:ins`), paragraph marks and table rows.
    pub(crate) insertions: usize,
    /// Deleted runs (`w:del`), paragraph marks and table rows.
    pub(crate) deletions: usize,
    /// Moved text (`w:moveTo`, each with its `w:moveFrom`).
    pub(crate) moves: usize,
    /// Formatting changes (`w:rPrChange`, `w:pPrChange`): the view with the changes
    /// rejected has the former formatting.
    pub(crate) formatting: usize,
    /// Their authors, as written.
    pub(crate) authors: std::collections::BTreeSet<String>,
    /// Each revision's author and date, in the order met (at most [`MAX_LOGGED`]).
    pub(crate) log: Vec<Reviser>,
    /// The paragraphs with revisions, and whose they are.
    pub(crate) by_paragraph: Vec<Attributed>,
}

/// Revisions whose author and date are kept for attribution; later ones are counted only.
const MAX_LOGGED: usize = 100_000;
/// Revisers named for one paragraph.
const MAX_REVISERS: usize = 8;

impl Revisions {
    pub(crate) fn any(&self) -> bool {
        self.insertions + self.deletions + self.moves + self.formatting > 0
    }

    pub(crate) fn add(&mut self, other: &Revisions) {
        self.insertions += other.insertions;
        self.deletions += other.deletions;
        self.moves += other.moves;
        self.formatting += other.formatting;
        for a in &other.authors {
            if self.authors.len() < 16 {
                self.authors.insert(a.clone());
            }
        }
        self.by_paragraph.extend(other.by_paragraph.iter().cloned());
    }

    /// Attributes the paragraph `html` to the revisions logged since `from` (when any).
    pub(crate) fn attribute(&mut self, from: usize, html: &str) {
        let Some(logged) = self.log.get(from..).filter(|l| !l.is_empty()) else { return };
        let mut by: Vec<Reviser> = Vec::new();
        for r in logged {
            if by.len() < MAX_REVISERS && !by.contains(r) {
                by.push(r.clone());
            }
        }
        let text = text_of(html);
        if !text.is_empty() {
            self.by_paragraph.push(Attributed { text, by });
        }
    }

    /// In words: "3 insertions, 1 deletion and 2 formatting changes by Ann Lee and Bob".
    pub(crate) fn describe(&self) -> String {
        let mut parts = Vec::new();
        for (n, one, many) in [
            (self.insertions, "insertion", "insertions"),
            (self.deletions, "deletion", "deletions"),
            (self.moves, "move", "moves"),
            (self.formatting, "formatting change", "formatting changes"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {}", if n == 1 { one } else { many }));
            }
        }
        let mut out = and_list(&parts);
        if !self.authors.is_empty() {
            let authors: Vec<String> = self.authors.iter().cloned().collect();
            out.push_str(&format!(" by {}", and_list(&authors)));
        }
        out
    }

    fn count(&mut self, local: &str, e: &BytesStart<'_>) {
        match local {
            "ins" => self.insertions += 1,
            "del" => self.deletions += 1,
            "moveTo" => self.moves += 1,
            "moveFrom" => {}
            _ => self.formatting += 1,
        }
        self.log(e);
    }

    /// Notes a revision's author (and its date, for the paragraph it is in) without counting it.
    fn log(&mut self, e: &BytesStart<'_>) {
        let author = attr(e, "author").filter(|a| !a.trim().is_empty()).map(Cow::into_owned);
        if let Some(author) = &author {
            if self.authors.len() < 16 {
                self.authors.insert(author.clone());
            }
        }
        if self.log.len() < MAX_LOGGED {
            let date = attr(e, "date").filter(|d| !d.trim().is_empty()).map(Cow::into_owned);
            self.log.push(Reviser { author, date });
        }
    }
}

/// The text of converted HTML, whitespace collapsed: tags dropped, the entities the
/// converter writes read back.
fn text_of(html: &str) -> String {
    let mut raw = String::with_capacity(html.len());
    let mut inside = false;
    for c in html.chars() {
        match c {
            '<' => inside = true,
            '>' if inside => inside = false,
            c if !inside => raw.push(c),
            _ => {}
        }
    }
    let raw = raw.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#39;", "'");
    let raw = raw.replace("&nbsp;", "\u{a0}").replace("&amp;", "&");
    raw.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// "a", "a and b", "a, b and c".
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

pub(super) struct Xml<'a> {
    reader: Reader<&'a [u8]>,
    part: &'a str,
    depth: usize,
    max_depth: usize,
    /// Depths of the invisible wrappers (`AlternateContent`, the chosen `Choice`/`Fallback`).
    hidden: Vec<usize>,
    /// Open `AlternateContent` elements: their depth and whether a branch was taken.
    alternates: Vec<(usize, bool)>,
    view: View,
    /// The revisions met so far.
    pub(super) revisions: Revisions,
}

enum Class {
    Normal,
    Drop,
    /// A revision's content (`w:ins`, `w:del`, `w:moveTo`, `w:moveFrom`): read or left out
    /// as the view says.
    Revision {
        shown: bool,
    },
    /// A formatting change's record of the former formatting (counted): left out where
    /// the view shows the changes, read by the properties' reader where it shows the
    /// document before them.
    FormerFormat,
    Alternate,
    Choice,
    Fallback,
}

fn classify(local: &str, view: View) -> Class {
    match local {
        "AlternateContent" => Class::Alternate,
        "Choice" => Class::Choice,
        "Fallback" => Class::Fallback,
        "ins" | "moveTo" => Class::Revision { shown: view == View::Accepted },
        "del" | "moveFrom" => Class::Revision { shown: view == View::Original },
        "rPrChange" | "pPrChange" => Class::FormerFormat,
        "sectPrChange" | "tblPrChange" | "tcPrChange" | "trPrChange" | "tblGridChange" | "numberingChange"
        | "sectPr" | "sdtPr" | "sdtEndPr" | "fldData" | "ffData" | "rt" | "rubyPr" => Class::Drop,
        _ => Class::Normal,
    }
}

/// Namespace prefixes of `mc:Choice Requires="…"` whose content we can read.
fn understood(prefix: &str) -> bool {
    matches!(
        prefix,
        "w" | "w10"
            | "w14"
            | "w15"
            | "wp"
            | "wp14"
            | "wps"
            | "wpg"
            | "wpc"
            | "a"
            | "a14"
            | "pic"
            | "r"
            | "v"
            | "o"
            | "m"
            | "mc"
    ) || prefix.starts_with("w16")
}

/// The local part of an element's name.
pub(super) fn local<'x>(e: &'x BytesStart<'_>) -> &'x str {
    strip_prefix(e.name().into_inner())
}

/// `w:p` → `p` (prefixes are short: a forward scan is the quick way).
fn strip_prefix(name: &str) -> &str {
    match name.bytes().position(|b| b == b':') {
        Some(i) => &name[i + 1..],
        None => name,
    }
}

/// The value of the attribute with this local name (any prefix), unescaped.
pub(super) fn attr<'x>(e: &'x BytesStart<'_>, name: &str) -> Option<Cow<'x, str>> {
    for a in e.attributes().with_checks(false).flatten() {
        if strip_prefix(a.key.into_inner()) == name {
            return a.normalized_value(XmlVersion::Implicit1_0).ok();
        }
    }
    None
}

/// `w:val`.
pub(super) fn val<'x>(e: &'x BytesStart<'_>) -> Option<Cow<'x, str>> {
    attr(e, "val")
}

/// An on/off property (`<w:b/>`, `<w:b w:val="0"/>`).
pub(super) fn on_off(e: &BytesStart<'_>) -> bool {
    !matches!(val(e).as_deref(), Some("0" | "false" | "off" | "none"))
}

/// A small non-negative integer attribute.
pub(super) fn num_attr(e: &BytesStart<'_>, name: &str) -> Option<u32> {
    attr(e, name).and_then(|v| v.trim().parse::<u32>().ok())
}

impl<'a> Xml<'a> {
    pub(super) fn new(text: &'a str, part: &'a str, max_depth: usize) -> Self {
        let mut reader = Reader::from_str(text);
        let config = reader.config_mut();
        config.check_end_names = true;
        config.expand_empty_elements = false;
        Xml {
            reader,
            part,
            depth: 0,
            max_depth,
            hidden: Vec::new(),
            alternates: Vec::new(),
            view: View::Accepted,
            revisions: Revisions::default(),
        }
    }

    /// Reads the tracked changes as `view` says (the default: accepted).
    pub(super) fn viewing(mut self, view: View) -> Self {
        self.view = view;
        self
    }

    /// Depth of the element whose content is being read (the root element is 1).
    pub(super) fn depth(&self) -> usize {
        self.depth
    }

    fn corrupt(&self, reason: impl std::fmt::Display) -> ConvertError {
        ConvertError::Corrupt {
            format: "DOCX".into(),
            reason: format!("{} is not well-formed XML: {reason}", self.part),
        }
    }

    fn too_deep(&self) -> ConvertError {
        ConvertError::TooComplex(format!("{} is nested more than {} levels deep", self.part, self.max_depth))
    }

    fn doctype(&self) -> ConvertError {
        ConvertError::Corrupt {
            format: "DOCX".into(),
            reason: format!(
                "{} declares a DOCTYPE, which DOCX parts never do (entity declarations are refused)",
                self.part
            ),
        }
    }

    pub(super) fn next(&mut self) -> Result<Ev<'a>, ConvertError> {
        loop {
            let event = self.reader.read_event().map_err(|e| self.corrupt(e))?;
            match event {
                Event::Start(e) => {
                    self.depth += 1;
                    if self.depth > self.max_depth {
                        return Err(self.too_deep());
                    }
                    let name = local(&e);
                    match classify(name, self.view) {
                        Class::Normal => return Ok(Ev::Start(e)),
                        Class::Drop => self.skip()?,
                        Class::Revision { shown } => {
                            self.revisions.count(name, &e);
                            if shown {
                                // The wrapper is invisible; its runs are read in place.
                                self.hidden.push(self.depth);
                            } else {
                                self.skip()?;
                            }
                        }
                        Class::FormerFormat => {
                            self.revisions.count(name, &e);
                            if self.view == View::Original {
                                return Ok(Ev::Start(e));
                            }
                            self.skip()?;
                        }
                        Class::Alternate => {
                            self.alternates.push((self.depth, false));
                            self.hidden.push(self.depth);
                        }
                        Class::Choice => {
                            let depth = self.depth;
                            let take = match self.alternates.last() {
                                Some(&(d, taken)) if d + 1 == depth && !taken => {
                                    attr(&e, "Requires").is_some_and(|r| r.split_ascii_whitespace().all(understood))
                                }
                                _ => false,
                            };
                            if take {
                                if let Some(last) = self.alternates.last_mut() {
                                    last.1 = true;
                                }
                                self.hidden.push(depth);
                            } else {
                                self.skip()?;
                            }
                        }
                        Class::Fallback => {
                            let depth = self.depth;
                            let take = matches!(self.alternates.last(), Some(&(d, false)) if d + 1 == depth);
                            if take {
                                if let Some(last) = self.alternates.last_mut() {
                                    last.1 = true;
                                }
                                self.hidden.push(depth);
                            } else {
                                self.skip()?;
                            }
                        }
                    }
                }
                Event::Empty(e) => match classify(local(&e), self.view) {
                    Class::Normal => return Ok(Ev::Empty(e)),
                    // A paragraph mark's or a table row's revision (`w:rPr/w:ins`,
                    // `w:trPr/w:del`): a marker its reader acts on.
                    Class::Revision { .. } => {
                        let name = local(&e);
                        // A moved paragraph's mark is part of its move, not a second one.
                        if matches!(name, "moveTo" | "moveFrom") {
                            self.revisions.log(&e);
                        } else {
                            self.revisions.count(name, &e);
                        }
                        return Ok(Ev::Empty(e));
                    }
                    Class::FormerFormat => {
                        self.revisions.count(local(&e), &e);
                        if self.view == View::Original {
                            return Ok(Ev::Empty(e));
                        }
                        continue;
                    }
                    _ => continue,
                },
                Event::End(_) => {
                    let depth = self.depth;
                    self.depth = depth.saturating_sub(1);
                    if self.hidden.last() == Some(&depth) {
                        self.hidden.pop();
                        if self.alternates.last().is_some_and(|&(d, _)| d == depth) {
                            self.alternates.pop();
                        }
                        continue;
                    }
                    return Ok(Ev::End);
                }
                Event::Text(t) => {
                    if t.is_empty() {
                        continue;
                    }
                    return Ok(Ev::Text(t.xml10_content()));
                }
                Event::CData(t) => return Ok(Ev::Text(t.xml10_content())),
                Event::GeneralRef(r) => {
                    if r.is_char_ref() {
                        if let Ok(Some(c)) = r.resolve_char_ref() {
                            return Ok(Ev::Text(Cow::Owned(c.to_string())));
                        }
                    } else if let Some(s) = quick_xml::escape::resolve_predefined_entity(&r) {
                        return Ok(Ev::Text(Cow::Borrowed(s)));
                    }
                    // An undeclared entity: dropped, never expanded.
                }
                Event::DocType(_) => return Err(self.doctype()),
                Event::Eof => return Ok(Ev::Eof),
                Event::Decl(_) | Event::PI(_) | Event::Comment(_) => {}
            }
        }
    }

    /// Skips the rest of the element whose start was just read.
    pub(super) fn skip(&mut self) -> Result<(), ConvertError> {
        self.skip_to(self.depth)
    }

    /// Reads on until the element at depth `base` is closed.
    pub(super) fn skip_to(&mut self, base: usize) -> Result<(), ConvertError> {
        while self.depth >= base && base > 0 {
            match self.reader.read_event().map_err(|e| self.corrupt(e))? {
                Event::Start(_) => {
                    self.depth += 1;
                    if self.depth > self.max_depth {
                        return Err(self.too_deep());
                    }
                }
                Event::End(_) => self.depth -= 1,
                Event::DocType(_) => return Err(self.doctype()),
                Event::Eof => break,
                _ => {}
            }
        }
        let depth = self.depth;
        while self.hidden.last().is_some_and(|&d| d > depth) {
            self.hidden.pop();
        }
        while self.alternates.last().is_some_and(|&(d, _)| d > depth) {
            self.alternates.pop();
        }
        Ok(())
    }

    /// The text content of the element whose start was just read (nested elements' text
    /// included), handed to `f` piece by piece.
    pub(super) fn text(&mut self, mut f: impl FnMut(&str)) -> Result<(), ConvertError> {
        let base = self.depth;
        loop {
            match self.next()? {
                Ev::Text(t) => f(&t),
                Ev::End if self.depth < base => return Ok(()),
                Ev::Eof => return Ok(()),
                _ => {}
            }
        }
    }
}

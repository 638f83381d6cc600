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
use redline_ports::documents::ConvertError;

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

/// Subtrees dropped while reading, remembered for warnings.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Dropped {
    pub(super) tracked_deletions: bool,
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
    pub(super) dropped: Dropped,
}

enum Class {
    Normal,
    Drop,
    TrackedDeletion,
    Alternate,
    Choice,
    Fallback,
}

fn classify(local: &str) -> Class {
    match local {
        "AlternateContent" => Class::Alternate,
        "Choice" => Class::Choice,
        "Fallback" => Class::Fallback,
        "del" | "moveFrom" => Class::TrackedDeletion,
        "rPrChange" | "pPrChange" | "sectPrChange" | "tblPrChange" | "tcPrChange" | "trPrChange" | "tblGridChange"
        | "numberingChange" | "sectPr" | "sdtPr" | "sdtEndPr" | "fldData" | "ffData" | "rt" | "rubyPr" => Class::Drop,
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
            dropped: Dropped::default(),
        }
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
                    match classify(local(&e)) {
                        Class::Normal => return Ok(Ev::Start(e)),
                        Class::Drop => self.skip()?,
                        Class::TrackedDeletion => {
                            self.dropped.tracked_deletions = true;
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
                Event::Empty(e) => match classify(local(&e)) {
                    Class::Normal => return Ok(Ev::Empty(e)),
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

//! `word/numbering.xml`: which numbered paragraphs are bullets and which are ordered, and the
//! counters that keep ordered lists numbered across interruptions.

use std::collections::HashMap;

use redline_ports::documents::ConvertError;

use super::styles::Styles;
use super::xml::{local, num_attr, val, Ev, Xml};

#[derive(Debug, Clone, Default)]
struct Level {
    format: Option<String>,
    start: Option<u32>,
}

#[derive(Debug, Clone, Default)]
struct Abstract {
    levels: [Level; 9],
    /// `w:numStyleLink`: the levels live in the abstract numbering of this numbering style.
    style_link: Option<String>,
}

#[derive(Debug, Clone, Default)]
struct Num {
    abstract_id: u32,
    /// `w:lvlOverride`: a start override or a whole level.
    overrides: Vec<(u8, Level)>,
}

/// What a list level looks like in HTML.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ListLevel {
    pub(super) ordered: bool,
    /// `type` of an `<ol>` (`a`, `A`, `i`, `I`), `None` for decimal.
    pub(super) ol_type: Option<&'static str>,
    pub(super) start: u32,
    /// Counters are kept per key (the abstract numbering, or the num when it restarts).
    pub(super) counter_key: u64,
}

#[derive(Debug, Default)]
pub(super) struct Numbering {
    abstracts: HashMap<u32, Abstract>,
    nums: HashMap<u32, Num>,
    counters: HashMap<u64, [u32; 9]>,
}

fn parse_level(x: &mut Xml<'_>, level: &mut Level) -> Result<(), ConvertError> {
    let base = x.depth();
    loop {
        match x.next()? {
            Ev::Start(e) | Ev::Empty(e) => match local(&e) {
                "numFmt" => level.format = val(&e).map(|v| v.into_owned()),
                "start" => level.start = num_attr(&e, "val"),
                _ => {}
            },
            Ev::End if x.depth() < base => return Ok(()),
            Ev::Eof => return Ok(()),
            _ => {}
        }
    }
}

impl Numbering {
    pub(super) fn parse(text: &str, part: &str, max_depth: usize) -> Result<Self, ConvertError> {
        let mut x = Xml::new(text, part, max_depth);
        let mut out = Numbering::default();
        loop {
            match x.next()? {
                Ev::Start(e) => match local(&e) {
                    "abstractNum" => {
                        let id = num_attr(&e, "abstractNumId").unwrap_or(u32::MAX);
                        let mut abs = Abstract::default();
                        let base = x.depth();
                        loop {
                            match x.next()? {
                                Ev::Start(c) if local(&c) == "lvl" => {
                                    let ilvl = num_attr(&c, "ilvl").unwrap_or(0);
                                    if let Some(level) = abs.levels.get_mut(ilvl as usize) {
                                        parse_level(&mut x, level)?;
                                    } else {
                                        x.skip()?;
                                    }
                                }
                                Ev::Start(c) | Ev::Empty(c) if local(&c) == "numStyleLink" => {
                                    abs.style_link = val(&c).map(|v| v.into_owned());
                                }
                                Ev::End if x.depth() < base => break,
                                Ev::Eof => break,
                                _ => {}
                            }
                        }
                        out.abstracts.entry(id).or_insert(abs);
                    }
                    "num" => {
                        let id = num_attr(&e, "numId").unwrap_or(u32::MAX);
                        let mut num = Num::default();
                        let base = x.depth();
                        let mut current: Option<(u8, Level)> = None;
                        loop {
                            match x.next()? {
                                Ev::Start(c) | Ev::Empty(c) => match local(&c) {
                                    "abstractNumId" => num.abstract_id = num_attr(&c, "val").unwrap_or(u32::MAX),
                                    "lvlOverride" => {
                                        if let Some(done) = current.take() {
                                            num.overrides.push(done);
                                        }
                                        let ilvl = num_attr(&c, "ilvl").unwrap_or(0).min(8) as u8;
                                        current = Some((ilvl, Level::default()));
                                    }
                                    "startOverride" => {
                                        if let Some((_, level)) = current.as_mut() {
                                            level.start = num_attr(&c, "val");
                                        }
                                    }
                                    "numFmt" => {
                                        if let Some((_, level)) = current.as_mut() {
                                            level.format = val(&c).map(|v| v.into_owned());
                                        }
                                    }
                                    "start" => {
                                        if let Some((_, level)) = current.as_mut() {
                                            level.start = level.start.or(num_attr(&c, "val"));
                                        }
                                    }
                                    _ => {}
                                },
                                Ev::End if x.depth() < base => break,
                                Ev::Eof => break,
                                _ => {}
                            }
                        }
                        if let Some(done) = current.take() {
                            num.overrides.push(done);
                        }
                        out.nums.entry(id).or_insert(num);
                    }
                    _ => {}
                },
                Ev::Eof => break,
                _ => {}
            }
        }
        Ok(out)
    }

    /// The abstract numbering of a num, following `w:numStyleLink` through the styles.
    fn abstract_of(&self, num_id: u32, styles: &Styles) -> Option<(u32, &Abstract)> {
        let mut abstract_id = self.nums.get(&num_id)?.abstract_id;
        for _ in 0..4 {
            let abs = self.abstracts.get(&abstract_id)?;
            let Some(link) = &abs.style_link else { return Some((abstract_id, abs)) };
            let linked_num = styles.paragraph(Some(link)).and_then(|s| s.num_id)?;
            abstract_id = self.nums.get(&linked_num)?.abstract_id;
        }
        None
    }

    /// What the paragraphs numbered `num_id` at level `ilvl` are; `None` when they are not a
    /// list (numId 0, unknown, or a level without a marker).
    pub(super) fn level(&self, num_id: u32, ilvl: u8, styles: &Styles) -> Option<ListLevel> {
        if num_id == 0 {
            return None;
        }
        let num = self.nums.get(&num_id)?;
        let ilvl = ilvl.min(8);
        let over = num.overrides.iter().find(|(l, _)| *l == ilvl).map(|(_, level)| level);
        let (abstract_id, abs) = match self.abstract_of(num_id, styles) {
            Some(found) => found,
            None => (num.abstract_id, &EMPTY),
        };
        let base = &abs.levels[ilvl as usize];
        let format = over.and_then(|o| o.format.as_deref()).or(base.format.as_deref()).unwrap_or("decimal");
        let start = over.and_then(|o| o.start).or(base.start).unwrap_or(1);
        let restarts = over.is_some_and(|o| o.start.is_some());
        let (ordered, ol_type) = match format {
            "none" => return None,
            "bullet" => (false, None),
            "lowerLetter" => (true, Some("a")),
            "upperLetter" => (true, Some("A")),
            "lowerRoman" => (true, Some("i")),
            "upperRoman" => (true, Some("I")),
            _ => (true, None),
        };
        let counter_key = if restarts { (1u64 << 40) | u64::from(num_id) } else { u64::from(abstract_id) };
        Some(ListLevel { ordered, ol_type, start, counter_key })
    }

    /// Counts one item at `ilvl` and answers its number (deeper levels restart).
    pub(super) fn count(&mut self, level: &ListLevel, ilvl: u8) -> u32 {
        let counters = self.counters.entry(level.counter_key).or_insert([0; 9]);
        let i = ilvl.min(8) as usize;
        let n = counters[i];
        counters[i] = n.saturating_add(1);
        for deeper in counters.iter_mut().skip(i + 1) {
            *deeper = 0;
        }
        level.start.saturating_add(n)
    }
}

static EMPTY: Abstract = Abstract { levels: [const { Level { format: None, start: None } }; 9], style_link: None };

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_overrides_and_counters() {
        let xml = r#"<w:numbering xmlns:w="w">
          <w:abstractNum w:abstractNumId="0">
            <w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/></w:lvl>
            <w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="bullet"/></w:lvl>
            <w:lvl w:ilvl="2"><w:numFmt w:val="lowerRoman"/></w:lvl>
          </w:abstractNum>
          <w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>
          <w:num w:numId="2"><w:abstractNumId w:val="0"/>
            <w:lvlOverride w:ilvl="0"><w:startOverride w:val="5"/></w:lvlOverride></w:num>
        </w:numbering>"#;
        let styles = Styles::default();
        let mut n = Numbering::parse(xml, "numbering", 64).unwrap();
        let l0 = n.level(1, 0, &styles).unwrap();
        assert!(l0.ordered && l0.ol_type.is_none());
        assert!(!n.level(1, 1, &styles).unwrap().ordered);
        assert_eq!(n.level(1, 2, &styles).unwrap().ol_type, Some("i"));
        assert_eq!(n.level(0, 0, &styles), None);
        assert_eq!(n.level(9, 0, &styles), None);
        assert_eq!(n.count(&l0, 0), 1);
        assert_eq!(n.count(&l0, 0), 2);
        let restarted = n.level(2, 0, &styles).unwrap();
        assert_eq!(n.count(&restarted, 0), 5);
    }
}

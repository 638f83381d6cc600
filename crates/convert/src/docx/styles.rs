//! `word/styles.xml`, and the run and paragraph properties (`w:rPr`, `w:pPr`) that styles
//! and paragraphs share.

use std::collections::HashMap;

use redline_ports::documents::ConvertError;

use super::xml::{attr, local, num_attr, on_off, val, Ev, Xml};

/// An sRGB colour.
pub(super) type Rgb = [u8; 3];

/// Run properties as written: `None` means "not said here, inherit".
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct RunProps {
    pub(super) style: Option<String>,
    pub(super) bold: Option<bool>,
    pub(super) italic: Option<bool>,
    pub(super) underline: Option<bool>,
    pub(super) strike: Option<bool>,
    /// `Some(None)`: explicitly automatic (no colour).
    pub(super) color: Option<Option<Rgb>>,
    pub(super) highlight: Option<Option<Rgb>>,
    pub(super) shading: Option<Option<Rgb>>,
    /// 0 baseline, 1 superscript, 2 subscript.
    pub(super) valign: Option<u8>,
    pub(super) hidden: Option<bool>,
}

impl RunProps {
    /// `over` wins where it says something.
    pub(super) fn apply(&mut self, over: &RunProps) {
        fn set<T: Clone>(slot: &mut Option<T>, v: &Option<T>) {
            if v.is_some() {
                slot.clone_from(v);
            }
        }
        set(&mut self.bold, &over.bold);
        set(&mut self.italic, &over.italic);
        set(&mut self.underline, &over.underline);
        set(&mut self.strike, &over.strike);
        set(&mut self.color, &over.color);
        set(&mut self.highlight, &over.highlight);
        set(&mut self.shading, &over.shading);
        set(&mut self.valign, &over.valign);
        set(&mut self.hidden, &over.hidden);
    }
}

/// Paragraph properties as written.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct ParaProps {
    pub(super) style: Option<String>,
    /// `w:numPr/w:numId` (0 = explicitly not numbered).
    pub(super) num_id: Option<u32>,
    pub(super) ilvl: Option<u8>,
    pub(super) outline: Option<u8>,
}

/// Parses a hex colour (`FF0000`); `auto` and anything else unreadable is `None`.
pub(super) fn hex_color(s: &str) -> Option<Rgb> {
    let s = s.trim();
    if s.len() != 6 || !s.is_ascii() {
        return None;
    }
    let mut out = [0u8; 3];
    for (i, slot) in out.iter_mut().enumerate() {
        *slot = u8::from_str_radix(&s[i * 2..i * 2 + 2], 16).ok()?;
    }
    Some(out)
}

/// `w:highlight` colour names.
fn highlight_color(name: &str) -> Option<Rgb> {
    Some(match name {
        "yellow" => [0xff, 0xff, 0x00],
        "green" => [0x00, 0xff, 0x00],
        "cyan" => [0x00, 0xff, 0xff],
        "magenta" => [0xff, 0x00, 0xff],
        "blue" => [0x00, 0x00, 0xff],
        "red" => [0xff, 0x00, 0x00],
        "darkBlue" => [0x00, 0x00, 0x80],
        "darkCyan" => [0x00, 0x80, 0x80],
        "darkGreen" => [0x00, 0x80, 0x00],
        "darkMagenta" => [0x80, 0x00, 0x80],
        "darkRed" => [0x80, 0x00, 0x00],
        "darkYellow" => [0x80, 0x80, 0x00],
        "darkGray" => [0x80, 0x80, 0x80],
        "lightGray" => [0xc0, 0xc0, 0xc0],
        "black" => [0x00, 0x00, 0x00],
        "white" => [0xff, 0xff, 0xff],
        _ => return None,
    })
}

/// The fill of a `w:shd` (run or cell shading); `None` for none/automatic.
pub(super) fn shading_fill(e: &quick_xml::events::BytesStart<'_>) -> Option<Rgb> {
    let pattern = val(e);
    if pattern.as_deref() == Some("nil") {
        return None;
    }
    if pattern.as_deref() == Some("solid") {
        if let Some(c) = attr(e, "color").and_then(|c| hex_color(&c)) {
            return Some(c);
        }
    }
    attr(e, "fill").and_then(|f| hex_color(&f))
}

/// Reads a `w:rPr` whose start was just read.
pub(super) fn parse_rpr(x: &mut Xml<'_>) -> Result<RunProps, ConvertError> {
    let base = x.depth();
    let mut p = RunProps::default();
    // The formatting before a tracked change (`w:rPrChange`, met only where the reader shows
    // the document before its changes): the whole of the run's direct formatting.
    let mut former = None;
    loop {
        match x.next()? {
            Ev::Start(e) if local(&e) == "rPrChange" => former = Some(former_props(x, parse_rpr)?),
            Ev::Empty(e) if local(&e) == "rPrChange" => former = Some(RunProps::default()),
            Ev::Start(e) | Ev::Empty(e) => match local(&e) {
                "rStyle" => p.style = val(&e).map(|v| v.into_owned()),
                "b" => p.bold = Some(on_off(&e)),
                "i" => p.italic = Some(on_off(&e)),
                "u" => p.underline = Some(!matches!(val(&e).as_deref(), Some("none") | Some("0") | Some("false"))),
                "strike" | "dstrike" => {
                    let on = on_off(&e);
                    // `strike` off must not cancel a `dstrike` on (and vice versa).
                    if on || p.strike.is_none() {
                        p.strike = Some(on);
                    }
                }
                "color" => p.color = Some(val(&e).and_then(|v| hex_color(&v))),
                "highlight" => p.highlight = Some(val(&e).and_then(|v| highlight_color(&v))),
                "shd" => p.shading = Some(shading_fill(&e)),
                "vertAlign" => {
                    p.valign = Some(match val(&e).as_deref() {
                        Some("superscript") => 1,
                        Some("subscript") => 2,
                        _ => 0,
                    })
                }
                "vanish" | "specVanish" => p.hidden = Some(on_off(&e)),
                _ => {}
            },
            Ev::End if x.depth() < base => return Ok(former.unwrap_or(p)),
            Ev::Eof => return Ok(former.unwrap_or(p)),
            _ => {}
        }
    }
}

/// The former properties inside a `w:rPrChange` or `w:pPrChange` whose start was just read
/// (its `w:rPr` or `w:pPr`, read by `parse`); none when it has none.
fn former_props<T: Default>(
    x: &mut Xml<'_>,
    parse: fn(&mut Xml<'_>) -> Result<T, ConvertError>,
) -> Result<T, ConvertError> {
    let base = x.depth();
    let mut props = T::default();
    loop {
        match x.next()? {
            Ev::Start(e) if matches!(local(&e), "rPr" | "pPr") => props = parse(x)?,
            Ev::End if x.depth() < base => return Ok(props),
            Ev::Eof => return Ok(props),
            _ => {}
        }
    }
}

/// Reads a `w:pPr` whose start was just read. The paragraph mark's run properties
/// (`w:pPr/w:rPr`) are not the paragraph's and are skipped.
pub(super) fn parse_ppr(x: &mut Xml<'_>) -> Result<ParaProps, ConvertError> {
    let base = x.depth();
    let mut p = ParaProps::default();
    // As in `parse_rpr`: the paragraph's formatting before a tracked change.
    let mut former = None;
    loop {
        match x.next()? {
            Ev::Start(e) if local(&e) == "pPrChange" => former = Some(former_props(x, parse_ppr)?),
            Ev::Empty(e) if local(&e) == "pPrChange" => former = Some(ParaProps::default()),
            Ev::Start(e) | Ev::Empty(e) => match local(&e) {
                "pStyle" => p.style = val(&e).map(|v| v.into_owned()),
                "numId" => p.num_id = num_attr(&e, "val"),
                "ilvl" => p.ilvl = num_attr(&e, "val").map(|v| v.min(8) as u8),
                "outlineLvl" => p.outline = num_attr(&e, "val").map(|v| v.min(9) as u8),
                _ => {}
            },
            Ev::End if x.depth() < base => return Ok(former.unwrap_or(p)),
            Ev::Eof => return Ok(former.unwrap_or(p)),
            _ => {}
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StyleKind {
    Paragraph,
    Character,
    Other,
}

#[derive(Debug, Clone)]
struct Style {
    kind: StyleKind,
    name: String,
    based_on: Option<String>,
    /// A table style that formats the first row apart (`w:tblStylePr w:type="firstRow"`).
    first_row: bool,
    /// The shading of a table style's odd banded rows (`w:tblStylePr w:type="band1Horz"`).
    band: Option<Rgb>,
    ppr: ParaProps,
    rpr: RunProps,
}

/// A style with its `basedOn` chain folded in.
#[derive(Debug, Clone, Default)]
pub(super) struct Resolved {
    /// 1–6 for headings (`heading N`, `Title`, or an outline level).
    pub(super) heading: Option<u8>,
    pub(super) rpr: RunProps,
    pub(super) num_id: Option<u32>,
    pub(super) ilvl: Option<u8>,
}

#[derive(Debug, Default)]
pub(super) struct Styles {
    resolved: HashMap<String, Resolved>,
    default_paragraph: Option<String>,
    /// `w:docDefaults/w:rPrDefault`.
    pub(super) defaults: RunProps,
    /// Table styles that format the first row apart (theirs or a style they are based on).
    header_tables: std::collections::HashSet<String>,
    /// Table styles that shade their odd banded rows, with the fill (theirs or inherited).
    banded_tables: HashMap<String, Rgb>,
}

/// The first `get` of style `id` and the styles it is based on, nearest first (at most 16
/// styles: a cycle stops there).
fn inherited<T>(styles: &HashMap<String, Style>, id: &str, get: impl Fn(&Style) -> Option<T>) -> Option<T> {
    let mut at = styles.get(id);
    for _ in 0..16 {
        let style = at?;
        if let Some(v) = get(style) {
            return Some(v);
        }
        at = style.based_on.as_deref().and_then(|b| styles.get(b));
    }
    None
}

/// The heading level a style name stands for (`heading 2`, `Title`), case-insensitively;
/// also used on style ids when there is no styles part (`Heading2`).
fn heading_from_name(name: &str) -> Option<u8> {
    let lower = name.trim().to_ascii_lowercase();
    if lower == "title" {
        return Some(1);
    }
    let rest = lower.strip_prefix("heading")?.trim_start();
    let n: u8 = rest.parse().ok()?;
    (1..=9).contains(&n).then_some(n.min(6))
}

impl Styles {
    pub(super) fn parse(text: &str, part: &str, max_depth: usize) -> Result<Self, ConvertError> {
        let mut x = Xml::new(text, part, max_depth);
        let mut styles: HashMap<String, Style> = HashMap::new();
        let mut default_paragraph = None;
        let mut defaults = RunProps::default();
        loop {
            match x.next()? {
                Ev::Start(e) => match local(&e) {
                    "rPrDefault" => {
                        let base = x.depth();
                        loop {
                            match x.next()? {
                                Ev::Start(r) if local(&r) == "rPr" => defaults = parse_rpr(&mut x)?,
                                Ev::End if x.depth() < base => break,
                                Ev::Eof => break,
                                _ => {}
                            }
                        }
                    }
                    "style" => {
                        let kind = match attr(&e, "type").as_deref() {
                            Some("paragraph") | None => StyleKind::Paragraph,
                            Some("character") => StyleKind::Character,
                            _ => StyleKind::Other,
                        };
                        let id = attr(&e, "styleId").map(|v| v.into_owned()).unwrap_or_default();
                        let is_default = attr(&e, "default").is_some_and(|v| matches!(&*v, "1" | "true" | "on"));
                        let mut style = Style {
                            kind,
                            name: String::new(),
                            based_on: None,
                            first_row: false,
                            band: None,
                            ppr: Default::default(),
                            rpr: Default::default(),
                        };
                        let base = x.depth();
                        // Inside a `band1Horz` conditional format (its depth).
                        let mut band: Option<usize> = None;
                        loop {
                            let ev = x.next()?;
                            if band.is_some_and(|d| x.depth() < d) {
                                band = None;
                            }
                            match ev {
                                Ev::Start(c) | Ev::Empty(c) if band.is_some() && local(&c) == "shd" => {
                                    style.band = shading_fill(&c).or(style.band);
                                }
                                Ev::Start(c)
                                    if local(&c) == "tblStylePr"
                                        && attr(&c, "type").as_deref() == Some("band1Horz") =>
                                {
                                    band = Some(x.depth());
                                }
                                Ev::Start(c) | Ev::Empty(c) if x.depth() <= base + 1 => match local(&c) {
                                    "name" => style.name = val(&c).map(|v| v.into_owned()).unwrap_or_default(),
                                    "basedOn" => style.based_on = val(&c).map(|v| v.into_owned()),
                                    "pPr" if x.depth() == base + 1 => style.ppr = parse_ppr(&mut x)?,
                                    "rPr" if x.depth() == base + 1 => style.rpr = parse_rpr(&mut x)?,
                                    "tblStylePr" => style.first_row |= attr(&c, "type").as_deref() == Some("firstRow"),
                                    _ => {}
                                },
                                Ev::End if x.depth() < base => break,
                                Ev::Eof => break,
                                _ => {}
                            }
                        }
                        if is_default && kind == StyleKind::Paragraph && default_paragraph.is_none() {
                            default_paragraph = Some(id.clone());
                        }
                        styles.entry(id).or_insert(style);
                    }
                    _ => {}
                },
                Ev::Eof => break,
                _ => {}
            }
        }
        let mut resolved = HashMap::with_capacity(styles.len());
        for id in styles.keys() {
            resolved.insert(id.clone(), resolve(&styles, id));
        }
        let header_tables = styles
            .keys()
            .filter(|id| inherited(&styles, id, |s| s.first_row.then_some(())).is_some())
            .cloned()
            .collect();
        let banded_tables =
            styles.keys().filter_map(|id| Some((id.clone(), inherited(&styles, id, |s| s.band)?))).collect();
        Ok(Styles { resolved, default_paragraph, defaults, header_tables, banded_tables })
    }

    /// The shading a table of style `id` gives its odd banded rows, when its style has one.
    pub(super) fn band_fill(&self, id: &str) -> Option<Rgb> {
        self.banded_tables.get(id).copied()
    }

    /// Whether a table of style `id` whose `w:tblLook` asks for first-row formatting shows its
    /// first row as a header.
    pub(super) fn formats_first_row(&self, id: &str) -> bool {
        self.header_tables.contains(id)
    }

    /// A paragraph style (the default paragraph style when `id` is `None`).
    pub(super) fn paragraph(&self, id: Option<&str>) -> Option<&Resolved> {
        let id = id.or(self.default_paragraph.as_deref())?;
        self.resolved.get(id)
    }

    /// The heading level of a paragraph style id not found in the styles part.
    pub(super) fn heading_from_id(id: &str) -> Option<u8> {
        heading_from_name(id)
    }

    pub(super) fn character(&self, id: &str) -> Option<&Resolved> {
        self.resolved.get(id)
    }
}

/// Folds a style's `basedOn` chain (at most 32 deep; cycles stop the chain).
fn resolve(styles: &HashMap<String, Style>, id: &str) -> Resolved {
    let mut chain: Vec<&Style> = Vec::new();
    let mut next = Some(id);
    while let Some(cur) = next {
        if chain.len() >= 32 {
            break;
        }
        let Some(style) = styles.get(cur) else { break };
        if chain.iter().any(|s| std::ptr::eq(*s, style)) {
            break;
        }
        chain.push(style);
        next = style.based_on.as_deref();
    }
    let mut out = Resolved::default();
    // Base first, so that derived styles override.
    let mut heading: Option<Option<u8>> = None;
    for style in chain.iter().rev() {
        out.rpr.apply(&style.rpr);
        if let Some(n) = style.ppr.num_id {
            out.num_id = Some(n);
            out.ilvl = style.ppr.ilvl;
        } else if style.ppr.ilvl.is_some() {
            out.ilvl = style.ppr.ilvl;
        }
        if style.kind == StyleKind::Paragraph {
            if let Some(level) = heading_from_name(&style.name) {
                heading = Some(Some(level));
            } else if let Some(outline) = style.ppr.outline {
                heading = Some((outline < 9).then(|| (outline + 1).min(6)));
            }
        }
    }
    out.heading = heading.flatten();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heading_names_and_colours() {
        assert_eq!(heading_from_name("heading 1"), Some(1));
        assert_eq!(heading_from_name("Heading 3"), Some(3));
        assert_eq!(heading_from_name("Heading9"), Some(6));
        assert_eq!(heading_from_name("Title"), Some(1));
        assert_eq!(heading_from_name("heading"), None);
        assert_eq!(heading_from_name("Normal"), None);
        assert_eq!(hex_color("FF0000"), Some([255, 0, 0]));
        assert_eq!(hex_color("auto"), None);
        assert_eq!(hex_color("ééé"), None);
    }

    #[test]
    fn based_on_chains_fold_and_cycles_stop() {
        let xml = r#"<w:styles xmlns:w="w">
            <w:docDefaults><w:rPrDefault><w:rPr><w:color w:val="111111"/></w:rPr></w:rPrDefault></w:docDefaults>
            <w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style>
            <w:style w:type="paragraph" w:styleId="berschrift1"><w:name w:val="heading 1"/><w:basedOn w:val="Normal"/>
              <w:rPr><w:b/></w:rPr></w:style>
            <w:style w:type="paragraph" w:styleId="Mine"><w:name w:val="Mine"/><w:basedOn w:val="berschrift1"/>
              <w:rPr><w:i/></w:rPr></w:style>
            <w:style w:type="paragraph" w:styleId="Chapter"><w:name w:val="Chapter"/><w:pPr><w:outlineLvl w:val="1"/></w:pPr></w:style>
            <w:style w:type="paragraph" w:styleId="A"><w:name w:val="A"/><w:basedOn w:val="B"/></w:style>
            <w:style w:type="paragraph" w:styleId="B"><w:name w:val="B"/><w:basedOn w:val="A"/></w:style>
            <w:style w:type="paragraph" w:styleId="ListBullet"><w:name w:val="List Bullet"/>
              <w:pPr><w:numPr><w:numId w:val="7"/></w:numPr></w:pPr></w:style>
        </w:styles>"#;
        let styles = Styles::parse(xml, "styles", 64).unwrap();
        assert_eq!(styles.defaults.color, Some(Some([0x11, 0x11, 0x11])));
        let h = styles.paragraph(Some("berschrift1")).unwrap();
        assert_eq!(h.heading, Some(1));
        assert_eq!(h.rpr.bold, Some(true));
        let mine = styles.paragraph(Some("Mine")).unwrap();
        assert_eq!((mine.heading, mine.rpr.bold, mine.rpr.italic), (Some(1), Some(true), Some(true)));
        assert_eq!(styles.paragraph(Some("Chapter")).unwrap().heading, Some(2));
        assert_eq!(styles.paragraph(Some("A")).unwrap().heading, None);
        assert_eq!(styles.paragraph(None).unwrap().heading, None);
        assert_eq!(styles.paragraph(Some("ListBullet")).unwrap().num_id, Some(7));
    }
}

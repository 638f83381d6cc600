//! Walking a story (the document body, a footnote, an endnote) and writing its HTML.

use std::collections::HashMap;

use redline_ports::documents::{ConvertError, ExtractedImage};

use super::html::{Blocks, Format, Inline, Kind, Row, Table, VMerge};
use super::numbering::Numbering;
use super::package::{Package, Part, Rels};
use super::styles::{parse_ppr, parse_rpr, shading_fill, ParaProps, RunProps, Styles};
use super::xml::{attr, local, num_attr, on_off, val, Ev, Revisions, View, Xml};
use super::{Warnings, PLACEHOLDER_PREFIX};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum NoteKind {
    Foot,
    End,
}

/// A complex field (`w:fldChar` begin … separate … end) being read.
#[derive(Debug, Default)]
struct Field {
    instr: String,
    /// Past `separate`: the field's result is showing.
    result: bool,
    link: Option<String>,
}

/// Everything a conversion shares across the parts it reads.
pub(super) struct Ctx<'b> {
    pub(super) pkg: Package<'b>,
    pub(super) styles: Styles,
    pub(super) numbering: Numbering,
    /// The relationships of the part being read.
    pub(super) rels: Rels,
    /// Reading a note: note references are not followed.
    pub(super) in_note: bool,
    /// Reading a page header or footer.
    pub(super) in_page_part: bool,
    pub(super) warnings: Warnings,
    pub(super) images: Vec<ExtractedImage>,
    /// Image part → its placeholder (`None`: unusable, skipped).
    image_parts: HashMap<String, Option<String>>,
    /// Notes in the order of their first reference; their number is the position + 1.
    pub(super) notes: Vec<(NoteKind, String)>,
    note_numbers: HashMap<(NoteKind, String), u32>,
    fields: Vec<Field>,
    cells: usize,
    /// Constructs being read by recursion (see `enter`).
    nesting: usize,
    /// Which text of the tracked changes is read.
    pub(super) view: View,
    /// The tracked changes of the parts read so far (the notes'; the main part's are its
    /// reader's).
    pub(super) revisions: Revisions,
}

/// A paragraph being read.
struct Para {
    inline: Inline,
    /// The `w:hyperlink` around the runs being read.
    link: Option<String>,
    /// Blocks that follow the paragraph (text boxes anchored in it).
    after: String,
    props: ParaProps,
    heading: Option<u8>,
    /// Run properties every run starts from (document defaults + paragraph style).
    base: RunProps,
}

/// `w:sym` characters of the Symbol font that have a Unicode equivalent.
fn symbol_char(font: &str, code: u32) -> Option<char> {
    if !font.eq_ignore_ascii_case("Symbol") {
        // Other symbol fonts (Wingdings, …) have no Unicode mapping here; real Unicode passes.
        return (code >= 0x20 && !(0xE000..=0xF8FF).contains(&code)).then(|| char::from_u32(code)).flatten();
    }
    let code = if (0xF000..=0xF0FF).contains(&code) { code - 0xF000 } else { code };
    const GREEK_UPPER: &str = "ΑΒΧΔΕΦΓΗΙϑΚΛΜΝΟΠΘΡΣΤΥςΩΞΨΖ";
    const GREEK_LOWER: &str = "αβχδεφγηιϕκλμνοπθρστυϖωξψζ";
    Some(match code {
        0x41..=0x5A => GREEK_UPPER.chars().nth((code - 0x41) as usize)?,
        0x61..=0x7A => GREEK_LOWER.chars().nth((code - 0x61) as usize)?,
        0xB7 => '•',
        0xD7 => '×',
        0xB1 => '±',
        0xA3 => '≤',
        0xB3 => '≥',
        0xB9 => '≠',
        0xBB => '≈',
        0xB0 => '°',
        0xAE => '→',
        0xAC => '←',
        0xAD => '↑',
        0xAF => '↓',
        0xDE => '⇒',
        0xA5 => '∞',
        0xD6 => '√',
        0xE5 => '∑',
        0xF2 => '∫',
        0xB6 => '∂',
        0xD2 | 0xE2 => '®',
        0xD3 | 0xE3 => '©',
        0xD4 | 0xE4 => '™',
        0x20..=0x40 => char::from_u32(code)?,
        _ => return None,
    })
}

/// The URL of a `HYPERLINK "…"` field (internal `\l` links are not links here).
fn field_hyperlink(instr: &str) -> Option<String> {
    let rest = instr.trim_start();
    let rest = rest.strip_prefix("HYPERLINK").or_else(|| rest.strip_prefix("hyperlink"))?;
    let rest = rest.trim_start();
    if rest.starts_with('\\') {
        return None;
    }
    let url = match rest.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next()?,
        None => rest.split_whitespace().next()?,
    };
    safe_href(url)
}

/// Only link targets a reader can follow safely are kept.
pub(super) fn safe_href(url: &str) -> Option<String> {
    let url = url.trim();
    let lower = url.to_ascii_lowercase();
    ["http://", "https://", "mailto:", "ftp://", "tel:"]
        .iter()
        .any(|scheme| lower.starts_with(scheme) && lower.len() > scheme.len())
        .then(|| url.to_owned())
}

/// Whether a part is a Windows metafile (EMF, WMF, or their compressed forms), by its name.
fn is_metafile(part: &str) -> bool {
    let ext = part.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    matches!(ext.as_str(), "emf" | "wmf" | "emz" | "wmz")
}

impl<'b> Ctx<'b> {
    pub(super) fn new(pkg: Package<'b>, styles: Styles, numbering: Numbering, rels: Rels) -> Self {
        Ctx {
            pkg,
            styles,
            numbering,
            rels,
            in_note: false,
            in_page_part: false,
            warnings: Warnings::default(),
            images: Vec::new(),
            image_parts: HashMap::new(),
            notes: Vec::new(),
            note_numbers: HashMap::new(),
            fields: Vec::new(),
            cells: 0,
            nesting: 0,
            view: View::Accepted,
            revisions: Revisions::default(),
        }
    }

    /// Counts one more construct read by recursion (a table, a run, a link, a picture or
    /// text box): nesting them deeper than the limit is refused, so that the stack a
    /// conversion needs stays small whatever the XML depth limit.
    fn enter(&mut self) -> Result<(), ConvertError> {
        self.nesting += 1;
        let max = self.pkg.limits.max_nesting;
        if self.nesting > max {
            return Err(ConvertError::TooComplex(format!(
                "tables, links, runs or text boxes are nested more than {max} deep"
            )));
        }
        Ok(())
    }

    fn inline(&mut self, x: &mut Xml<'_>, p: &mut Para) -> Result<(), ConvertError> {
        self.enter()?;
        let result = self.inline_inner(x, p);
        self.nesting -= 1;
        result
    }

    fn run(&mut self, x: &mut Xml<'_>, p: &mut Para) -> Result<(), ConvertError> {
        self.enter()?;
        let result = self.run_inner(x, p);
        self.nesting -= 1;
        result
    }

    fn graphic(&mut self, x: &mut Xml<'_>, p: &mut Para) -> Result<(), ConvertError> {
        self.enter()?;
        let result = self.graphic_inner(x, p);
        self.nesting -= 1;
        result
    }

    fn table(&mut self, x: &mut Xml<'_>) -> Result<String, ConvertError> {
        self.enter()?;
        let result = self.table_inner(x);
        self.nesting -= 1;
        result
    }

    /// Reads block content until the element being read ends.
    pub(super) fn blocks(&mut self, x: &mut Xml<'_>, out: &mut Blocks) -> Result<(), ConvertError> {
        let base = x.depth();
        loop {
            match x.next()? {
                Ev::Start(e) => match local(&e) {
                    "p" => self.paragraph(x, out)?,
                    "tbl" => {
                        let html = self.table(x)?;
                        out.block(&html);
                    }
                    "altChunk" => {
                        self.warnings.add("an embedded document part (altChunk) was skipped");
                        x.skip()?;
                    }
                    "background" => x.skip()?,
                    // sdt, sdtContent, customXml, ins, moveTo, body, …: their content counts.
                    _ => {}
                },
                Ev::Empty(e) if local(&e) == "altChunk" => {
                    self.warnings.add("an embedded document part (altChunk) was skipped");
                }
                Ev::End if x.depth() < base => return Ok(()),
                Ev::Eof => return Ok(()),
                _ => {}
            }
        }
    }

    fn new_para(&self) -> Para {
        let mut p = Para {
            inline: Inline::default(),
            link: None,
            after: String::new(),
            props: ParaProps::default(),
            heading: None,
            base: RunProps::default(),
        };
        self.set_props(&mut p, ParaProps::default());
        p
    }

    fn set_props(&self, p: &mut Para, props: ParaProps) {
        let style = self.styles.paragraph(props.style.as_deref());
        p.heading = match props.outline {
            Some(o) => (o < 9).then(|| (o + 1).min(6)),
            None => match style {
                Some(s) => s.heading,
                None => props.style.as_deref().and_then(Styles::heading_from_id),
            },
        };
        p.base = self.styles.defaults.clone();
        p.base.style = None;
        match style {
            Some(s) if p.heading.is_none() => p.base.apply(&s.rpr),
            // A heading's weight and size are the heading's own; its style's colour (Word's
            // blue headings) is kept, black is no colour.
            Some(s) if s.rpr.color.is_some_and(|c| c.is_some_and(|rgb| rgb != [0, 0, 0])) => {
                p.base.color = s.rpr.color;
            }
            _ => {}
        }
        p.props = props;
    }

    fn paragraph(&mut self, x: &mut Xml<'_>, out: &mut Blocks) -> Result<(), ConvertError> {
        let mut p = self.new_para();
        let logged = x.revisions.log.len();
        self.inline(x, &mut p)?;
        // A field's instructions never run past its paragraph: show what follows.
        for f in &mut self.fields {
            f.result = true;
        }
        if p.inline.has_content() {
            let kind = self.kind(&p);
            let inner = p.inline.finish();
            x.revisions.attribute(logged, &inner);
            out.paragraph(kind, &inner);
        }
        if !p.after.is_empty() {
            out.block(&p.after);
        }
        Ok(())
    }

    fn kind(&mut self, p: &Para) -> Kind {
        if let Some(level) = p.heading {
            return Kind::Heading(level.clamp(1, 6));
        }
        let style = self.styles.paragraph(p.props.style.as_deref());
        let num_id = p.props.num_id.or(style.and_then(|s| s.num_id));
        let ilvl = p.props.ilvl.or(style.and_then(|s| s.ilvl)).unwrap_or(0);
        let Some(num_id) = num_id else { return Kind::Plain };
        let Some(level) = self.numbering.level(num_id, ilvl, &self.styles) else { return Kind::Plain };
        let number = self.numbering.count(&level, ilvl);
        Kind::Item { ordered: level.ordered, ol_type: level.ol_type, num_id, ilvl, number }
    }

    fn hyperlink_target(&self, e: &quick_xml::events::BytesStart<'_>) -> Option<String> {
        let id = attr(e, "id")?;
        let rel = self.rels.get(&id)?;
        if !rel.external {
            return None;
        }
        let mut target = rel.target.clone();
        if let Some(anchor) = attr(e, "anchor") {
            if !target.contains('#') {
                target.push('#');
                target.push_str(&anchor);
            }
        }
        safe_href(&target)
    }

    /// Reads inline content (runs, links, fields) until the element being read ends.
    fn inline_inner(&mut self, x: &mut Xml<'_>, p: &mut Para) -> Result<(), ConvertError> {
        let base = x.depth();
        loop {
            match x.next()? {
                Ev::Start(e) => match local(&e) {
                    "pPr" => {
                        let props = parse_ppr(x)?;
                        self.set_props(p, props);
                    }
                    "r" => self.run(x, p)?,
                    "hyperlink" => {
                        let link = self.hyperlink_target(&e).or_else(|| p.link.clone());
                        let saved = std::mem::replace(&mut p.link, link);
                        self.inline(x, p)?;
                        p.link = saved;
                    }
                    "fldSimple" => {
                        if self.in_page_part && attr(&e, "instr").is_some_and(|i| is_page_number(&i)) {
                            self.warnings.add(PAGE_NUMBER_WARNING);
                        }
                        let link = attr(&e, "instr").and_then(|i| field_hyperlink(&i)).or_else(|| p.link.clone());
                        let saved = std::mem::replace(&mut p.link, link);
                        self.inline(x, p)?;
                        p.link = saved;
                    }
                    "oMath" | "oMathPara" => self.warnings.add("equations were converted to plain text"),
                    // A fraction's denominator (`m:f/m:den`): "3/4" rather than "34".
                    "den" => {
                        let link = p.link.clone();
                        p.inline.text("/", link.as_deref(), &Format::default());
                    }
                    "drawing" | "pict" | "object" => self.graphic(x, p)?,
                    _ => {}
                },
                Ev::Empty(e) if local(&e) == "commentRangeStart" => {
                    self.warnings.add("comments were not imported");
                }
                Ev::End if x.depth() < base => return Ok(()),
                Ev::Eof => return Ok(()),
                _ => {}
            }
        }
    }

    fn format(&self, p: &Para, direct: &RunProps) -> (Format, bool) {
        let mut rp = p.base.clone();
        if let Some(style) = direct.style.as_deref().and_then(|id| self.styles.character(id)) {
            rp.apply(&style.rpr);
        }
        rp.apply(direct);
        let format = Format {
            bold: rp.bold == Some(true),
            italic: rp.italic == Some(true),
            underline: rp.underline == Some(true),
            strike: rp.strike == Some(true),
            valign: rp.valign.unwrap_or(0),
            // Black and near-black (LibreOffice's default #00000A) are the default colour.
            color: rp.color.flatten().filter(|c| c.iter().any(|&v| v > 0x10)),
            background: rp.highlight.flatten().or(rp.shading.flatten()),
        };
        (format, rp.hidden == Some(true))
    }

    /// Text is not shown while a field's instructions are being read.
    fn suppressed(&self) -> bool {
        self.fields.iter().any(|f| !f.result)
    }

    fn field_link(&self) -> Option<&str> {
        self.fields.iter().rev().find_map(|f| f.link.as_deref())
    }

    fn field_char(&mut self, e: &quick_xml::events::BytesStart<'_>) {
        match attr(e, "fldCharType").as_deref() {
            Some("begin") if self.fields.len() < 64 => self.fields.push(Field::default()),
            Some("separate") => {
                if let Some(f) = self.fields.last_mut() {
                    f.result = true;
                    f.link = field_hyperlink(&f.instr);
                    if self.in_page_part && is_page_number(&f.instr) {
                        self.warnings.add(PAGE_NUMBER_WARNING);
                    }
                }
            }
            Some("end") => {
                self.fields.pop();
            }
            _ => {}
        }
    }

    fn note_reference(&mut self, kind: NoteKind, e: &quick_xml::events::BytesStart<'_>, p: &mut Para) {
        if self.in_note {
            return;
        }
        let Some(id) = attr(e, "id") else { return };
        let key = (kind, id.into_owned());
        let (n, first) = match self.note_numbers.get(&key) {
            Some(&n) => (n, false),
            None => {
                self.notes.push(key.clone());
                let n = self.notes.len() as u32;
                self.note_numbers.insert(key, n);
                (n, true)
            }
        };
        p.inline.note_mark(n, first);
    }

    fn run_inner(&mut self, x: &mut Xml<'_>, p: &mut Para) -> Result<(), ConvertError> {
        let base = x.depth();
        let mut direct = RunProps::default();
        let (mut format, mut hidden) = self.format(p, &direct);
        loop {
            match x.next()? {
                Ev::Start(e) => match local(&e) {
                    "rPr" => {
                        direct.apply_with_style(parse_rpr(x)?);
                        (format, hidden) = self.format(p, &direct);
                    }
                    // Deleted text is read only where the view shows deletions.
                    "t" | "delText" => {
                        if hidden || self.suppressed() {
                            x.skip()?;
                        } else {
                            let link = p.link.as_deref().or_else(|| self.field_link());
                            let inline = &mut p.inline;
                            x.text(|s| inline.text(s, link, &format))?;
                        }
                    }
                    "instrText" | "delInstrText" => {
                        let field = self.fields.last_mut().filter(|f| !f.result);
                        match field {
                            Some(f) => x.text(|s| {
                                if f.instr.len() < 2048 {
                                    f.instr.push_str(s);
                                }
                            })?,
                            None => x.skip()?,
                        }
                    }
                    "drawing" | "pict" | "object" => {
                        if hidden || self.suppressed() {
                            x.skip()?;
                        } else {
                            self.graphic(x, p)?;
                        }
                    }
                    "r" => self.run(x, p)?,
                    "fldChar" => self.field_char(&e),
                    _ => {}
                },
                Ev::Empty(e) => {
                    let name = local(&e);
                    match name {
                        "fldChar" => {
                            self.field_char(&e);
                            continue;
                        }
                        "commentReference" => {
                            self.warnings.add("comments were not imported");
                            continue;
                        }
                        _ => {}
                    }
                    if hidden || self.suppressed() {
                        continue;
                    }
                    let link = p.link.as_deref().or_else(|| self.field_link());
                    match name {
                        "tab" | "ptab" => p.inline.text("\t", link, &format),
                        "br" if !matches!(attr(&e, "type").as_deref(), Some("page" | "column")) => {
                            p.inline.line_break(link, &format);
                        }
                        "cr" => p.inline.line_break(link, &format),
                        "noBreakHyphen" => p.inline.text("\u{2011}", link, &format),
                        "softHyphen" => p.inline.text("\u{ad}", link, &format),
                        "sym" => {
                            let font = attr(&e, "font").unwrap_or_default();
                            let code = attr(&e, "char").and_then(|c| u32::from_str_radix(c.trim(), 16).ok());
                            if let Some(c) = code.and_then(|code| symbol_char(&font, code)) {
                                let mut buf = [0u8; 4];
                                p.inline.text(c.encode_utf8(&mut buf), link, &format);
                            }
                        }
                        "footnoteReference" => self.note_reference(NoteKind::Foot, &e, p),
                        "endnoteReference" => self.note_reference(NoteKind::End, &e, p),
                        _ => {}
                    }
                }
                Ev::End if x.depth() < base => return Ok(()),
                Ev::Eof => return Ok(()),
                _ => {}
            }
        }
    }

    /// A `w:drawing`, `w:pict` or `w:object`: pictures, and text boxes (whose blocks follow
    /// the paragraph).
    fn graphic_inner(&mut self, x: &mut Xml<'_>, p: &mut Para) -> Result<(), ConvertError> {
        let base = x.depth();
        let mut alt = String::new();
        // The size the picture is shown at, in CSS pixels (`wp:extent`, a VML shape's style).
        let mut size: Option<(u32, u32)> = None;
        // A drawn shape (DrawingML `wps:wsp`, VML `v:rect`, …) that holds no picture, text
        // box, chart or diagram is lost: said in a warning.
        let mut shape = false;
        let mut kept = false;
        loop {
            let (e, is_start) = match x.next()? {
                Ev::Start(e) => (e, true),
                Ev::Empty(e) => (e, false),
                Ev::End if x.depth() < base => {
                    if shape && !kept {
                        self.warnings.add("a drawn shape was skipped");
                    }
                    return Ok(());
                }
                Ev::Eof => return Ok(()),
                _ => continue,
            };
            let name = local(&e);
            match name {
                "wsp" | "rect" | "roundrect" | "oval" | "line" | "polyline" | "arc" | "curve" | "shape" | "cxnSp" => {
                    shape = true
                }
                "blip" | "imagedata" | "txbxContent" | "chart" | "relIds" => kept = true,
                _ => {}
            }
            match name {
                "docPr" | "cNvPr" => {
                    if let Some(a) = attr(&e, "descr").or_else(|| attr(&e, "title")).filter(|a| !a.trim().is_empty()) {
                        alt = a.into_owned();
                    }
                }
                "extent" => {
                    let emu = |name: &str| attr(&e, name).and_then(|v| v.trim().parse::<u64>().ok());
                    if let (Some(cx), Some(cy)) = (emu("cx"), emu("cy")) {
                        size = px_size(cx as f64 / EMU_PER_PX, cy as f64 / EMU_PER_PX);
                    }
                }
                "shape" => {
                    if let Some(a) = attr(&e, "alt").filter(|a| !a.trim().is_empty()) {
                        alt = a.into_owned();
                    }
                    if let Some(style) = attr(&e, "style") {
                        size = vml_size(&style).or(size);
                    }
                }
                "blip" => {
                    if let Some(id) = attr(&e, "embed") {
                        self.image(p, &id, &alt, size)?;
                    } else if attr(&e, "link").is_some() {
                        self.linked_picture(p, &alt);
                    }
                }
                "imagedata" => {
                    if let Some(id) = attr(&e, "id").or_else(|| attr(&e, "relid")) {
                        if alt.is_empty() {
                            if let Some(t) = attr(&e, "title").filter(|t| !t.trim().is_empty()) {
                                alt = t.into_owned();
                            }
                        }
                        self.image(p, &id, &alt, size)?;
                    }
                }
                "txbxContent" if is_start => {
                    self.warnings
                        .add("text boxes were turned into ordinary paragraphs, after the paragraph they sit in");
                    let mut blocks = Blocks::new(true);
                    self.blocks(x, &mut blocks)?;
                    p.after.push_str(&blocks.finish());
                }
                "chart" => self.warnings.add("a chart was skipped"),
                "relIds" => self.warnings.add("a SmartArt diagram was skipped"),
                _ => {}
            }
        }
    }

    fn image(&mut self, p: &mut Para, rel_id: &str, alt: &str, size: Option<(u32, u32)>) -> Result<(), ConvertError> {
        let Some(rel) = self.rels.get(rel_id) else { return Ok(()) };
        if rel.external {
            self.linked_picture(p, alt);
            return Ok(());
        }
        let target = rel.target.clone();
        let placeholder = match self.image_parts.get(&target) {
            Some(known) => known.clone(),
            None => {
                let loaded = self.load_image(&target)?;
                self.image_parts.insert(target.clone(), loaded.clone());
                loaded
            }
        };
        if let Some(placeholder) = placeholder {
            let link = p.link.clone().or_else(|| self.field_link().map(str::to_owned));
            p.inline.image(&placeholder, alt, link.as_deref(), size);
        } else if is_metafile(&target) {
            p.inline.text(&crate::images::not_shown(alt), None, &Format::default());
        }
        Ok(())
    }

    /// A picture linked to a file outside the document: never fetched, its place kept.
    fn linked_picture(&mut self, p: &mut Para, alt: &str) {
        self.warnings.add("a linked picture (not embedded in the file) was kept as a note in its place, not fetched");
        p.inline.text(&crate::images::not_shown(alt), None, &Format::default());
    }

    fn load_image(&mut self, part: &str) -> Result<Option<String>, ConvertError> {
        let ext = part.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
        match ext.as_str() {
            "svg" => {
                self.warnings.add("an SVG picture was skipped (SVG can carry scripts)");
                return Ok(None);
            }
            _ if is_metafile(part) => {
                self.warnings.add("a picture in a Windows metafile format (EMF/WMF) was kept as a note in its place");
                return Ok(None);
            }
            _ => {}
        }
        let cap = self.pkg.limits.max_image_bytes;
        let bytes = match self.pkg.read_part(part, cap)? {
            Part::Bytes(bytes) => bytes,
            Part::Missing => {
                self.warnings.add("a picture whose part is missing from the file was skipped");
                return Ok(None);
            }
            Part::TooBig => {
                self.warnings.add(&format!("a picture larger than {} MiB was skipped", cap >> 20));
                return Ok(None);
            }
        };
        let Some(content_type) = crate::images::sniff(&bytes) else {
            self.warnings.add(&format!("a picture in an unsupported format ({ext}) was skipped"));
            return Ok(None);
        };
        let placeholder = format!("{PLACEHOLDER_PREFIX}{}", self.images.len());
        self.images.push(ExtractedImage { placeholder: placeholder.clone(), content_type: content_type.into(), bytes });
        Ok(Some(placeholder))
    }

    fn table_inner(&mut self, x: &mut Xml<'_>) -> Result<String, ConvertError> {
        let base = x.depth();
        let mut table = Table::default();
        // A first row formatted apart by the table's style (`w:tblLook` asks for it, the
        // style has first-row formatting): a header row, as Word shows it.
        let (mut style, mut look_first_row, mut look_bands) = (None, false, true);
        loop {
            match x.next()? {
                Ev::Start(e) => match local(&e) {
                    "tr" => self.row(x, &mut table)?,
                    "tblPr" => {
                        let tblpr = x.depth();
                        loop {
                            match x.next()? {
                                Ev::Start(c) | Ev::Empty(c) => match local(&c) {
                                    "tblStyle" => style = val(&c).map(|v| v.into_owned()),
                                    "tblLook" => {
                                        look_first_row = first_row_look(&c);
                                        look_bands = !no_row_bands(&c);
                                    }
                                    _ => {}
                                },
                                Ev::End if x.depth() < tblpr => break,
                                Ev::Eof => break,
                                _ => {}
                            }
                        }
                    }
                    "tblGrid" => x.skip()?,
                    _ => {}
                },
                Ev::End if x.depth() < base => break,
                Ev::Eof => break,
                _ => {}
            }
        }
        if table.is_blank() {
            return Ok(String::new());
        }
        if look_first_row && style.as_deref().is_some_and(|s| self.styles.formats_first_row(s)) {
            if let Some(first) = table.rows.first_mut() {
                first.header = true;
            }
        }
        // Banded rows: the style's shading on the first, third, … row after the header rows,
        // in the cells without a shading of their own.
        if let Some(fill) = style.as_deref().and_then(|s| self.styles.band_fill(s)).filter(|_| look_bands) {
            for row in table.rows.iter_mut().filter(|r| !r.header).step_by(2) {
                for cell in row.cells.iter_mut().filter(|c| c.background.is_none()) {
                    cell.background = Some(fill);
                }
            }
        }
        Ok(table.render())
    }

    fn row(&mut self, x: &mut Xml<'_>, table: &mut Table) -> Result<(), ConvertError> {
        let base = x.depth();
        let mut row = Row::default();
        let mut col = 0u32;
        // A row inserted (`Some(true)`) or deleted (`Some(false)`) as a tracked change.
        let mut revised: Option<bool> = None;
        loop {
            match x.next()? {
                Ev::Start(e) => match local(&e) {
                    "trPr" => {
                        let trpr = x.depth();
                        loop {
                            match x.next()? {
                                Ev::Start(c) | Ev::Empty(c) => match local(&c) {
                                    "tblHeader" => row.header = on_off(&c),
                                    // The row takes the style's first-row formatting.
                                    "cnfStyle" if attr(&c, "firstRow").as_deref() == Some("1") => row.header = true,
                                    "ins" => revised = Some(true),
                                    "del" => revised = Some(false),
                                    "gridBefore" => {
                                        col = col.saturating_add(num_attr(&c, "val").unwrap_or(0).min(1000))
                                    }
                                    _ => {}
                                },
                                Ev::End if x.depth() < trpr => break,
                                Ev::Eof => break,
                                _ => {}
                            }
                        }
                    }
                    "tblPrEx" => x.skip()?,
                    "tc" => self.cell(x, table, &mut row, &mut col)?,
                    _ => {}
                },
                Ev::Empty(e) if local(&e) == "tc" => {
                    self.count_cell()?;
                    table.push_cell(&mut row, col, 1, VMerge::None, None, "");
                    col = col.saturating_add(1);
                }
                Ev::End if x.depth() < base => break,
                Ev::Eof => break,
                _ => {}
            }
        }
        let hidden = matches!((revised, self.view), (Some(true), View::Original) | (Some(false), View::Accepted));
        if !hidden {
            table.rows.push(row);
        }
        Ok(())
    }

    fn count_cell(&mut self) -> Result<(), ConvertError> {
        self.cells += 1;
        if self.cells > self.pkg.limits.max_cells {
            return Err(ConvertError::TooComplex(format!(
                "the document has more than {} table cells",
                self.pkg.limits.max_cells
            )));
        }
        Ok(())
    }

    fn cell(&mut self, x: &mut Xml<'_>, table: &mut Table, row: &mut Row, col: &mut u32) -> Result<(), ConvertError> {
        self.count_cell()?;
        let base = x.depth();
        let mut span = 1u32;
        let mut vmerge = VMerge::None;
        let mut hmerge_continue = false;
        let mut background = None;
        let mut blocks = Blocks::new(false);
        loop {
            match x.next()? {
                Ev::Start(e) => match local(&e) {
                    "tcPr" => {
                        let tcpr = x.depth();
                        loop {
                            match x.next()? {
                                Ev::Start(c) | Ev::Empty(c) if x.depth() <= tcpr + 1 => match local(&c) {
                                    "gridSpan" => span = num_attr(&c, "val").unwrap_or(1).clamp(1, 1000),
                                    "vMerge" => {
                                        vmerge = if val(&c).as_deref() == Some("restart") {
                                            VMerge::Restart
                                        } else {
                                            VMerge::Continue
                                        }
                                    }
                                    "hMerge" => hmerge_continue = val(&c).as_deref() != Some("restart"),
                                    "shd" => background = shading_fill(&c),
                                    _ => {}
                                },
                                Ev::End if x.depth() < tcpr => break,
                                Ev::Eof => break,
                                _ => {}
                            }
                        }
                    }
                    "p" => self.paragraph(x, &mut blocks)?,
                    "tbl" => {
                        let html = self.table(x)?;
                        blocks.block(&html);
                    }
                    _ => {}
                },
                Ev::End if x.depth() < base => break,
                Ev::Eof => break,
                _ => {}
            }
        }
        let html = if blocks.is_empty() { String::new() } else { blocks.finish_cell() };
        if !(hmerge_continue && table.widen_last(row, span, &html)) {
            table.push_cell(row, *col, span, vmerge, background, &html);
        }
        *col = col.saturating_add(span);
        Ok(())
    }

    /// Renders the referenced notes of one kind from their part; answers note key → HTML.
    pub(super) fn render_notes(
        &mut self,
        kind: NoteKind,
        text: &str,
        part: &str,
        out: &mut HashMap<(NoteKind, String), String>,
    ) -> Result<(), ConvertError> {
        let element = match kind {
            NoteKind::Foot => "footnote",
            NoteKind::End => "endnote",
        };
        let mut x = Xml::new(text, part, self.pkg.limits.max_depth).viewing(self.view);
        loop {
            match x.next()? {
                Ev::Start(e) if local(&e) == element => {
                    let id = attr(&e, "id").map(|v| v.into_owned()).unwrap_or_default();
                    let key = (kind, id);
                    if self.note_numbers.contains_key(&key) && !out.contains_key(&key) {
                        let mut blocks = Blocks::new(true);
                        self.blocks(&mut x, &mut blocks)?;
                        out.insert(key, blocks.finish());
                    } else {
                        x.skip()?;
                    }
                }
                Ev::Eof => break,
                _ => {}
            }
        }
        self.fields.clear();
        self.revisions.add(&x.revisions);
        Ok(())
    }

    /// Forgets the fields left open at the end of a part.
    pub(super) fn end_part(&mut self) {
        self.fields.clear();
    }
}

const PAGE_NUMBER_WARNING: &str =
    "page numbers in the page header or footer became the text they showed when the file was saved";

/// Whether a field's instructions insert a page number or count (`PAGE`, `NUMPAGES`, …).
fn is_page_number(instr: &str) -> bool {
    let word = instr.split_whitespace().next().unwrap_or("");
    ["PAGE", "NUMPAGES", "SECTIONPAGES"].iter().any(|w| word.eq_ignore_ascii_case(w))
}

impl RunProps {
    /// Direct run properties, read possibly in pieces (`w:rPr` and `m:rPr` in math runs).
    fn apply_with_style(&mut self, other: RunProps) {
        if other.style.is_some() {
            self.style = other.style.clone();
        }
        self.apply(&other);
    }
}

/// Whether a `w:tblLook` asks for the first row's formatting: `w:firstRow`, or bit 0x0020 of
/// the older hexadecimal `w:val`.
fn first_row_look(e: &quick_xml::events::BytesStart<'_>) -> bool {
    match attr(e, "firstRow") {
        Some(v) => matches!(&*v, "1" | "true" | "on"),
        None => val(e).and_then(|v| u32::from_str_radix(v.trim(), 16).ok()).is_some_and(|v| v & 0x0020 != 0),
    }
}

/// Whether a `w:tblLook` turns row banding off: `w:noHBand`, or bit 0x0200 of the older
/// hexadecimal `w:val`.
fn no_row_bands(e: &quick_xml::events::BytesStart<'_>) -> bool {
    match attr(e, "noHBand") {
        Some(v) => matches!(&*v, "1" | "true" | "on"),
        None => val(e).and_then(|v| u32::from_str_radix(v.trim(), 16).ok()).is_some_and(|v| v & 0x0200 != 0),
    }
}

/// English Metric Units in a CSS pixel (914,400 to the inch, 96 pixels to the inch).
const EMU_PER_PX: f64 = 9525.0;

/// A picture's size in whole CSS pixels; none when either is not a positive size.
fn px_size(w: f64, h: f64) -> Option<(u32, u32)> {
    let px = |v: f64| (v.is_finite() && v >= 0.5).then(|| v.round().min(f64::from(u32::MAX)) as u32);
    Some((px(w)?, px(h)?))
}

/// The size in a VML shape's style (`width:120pt;height:90pt`), in CSS pixels.
fn vml_size(style: &str) -> Option<(u32, u32)> {
    let get = |name: &str| {
        style.split(';').find_map(|decl| {
            let (k, v) = decl.split_once(':')?;
            (k.trim().eq_ignore_ascii_case(name)).then(|| length_px(v.trim())).flatten()
        })
    };
    let (w, h) = (get("width")?, get("height")?);
    px_size(w, h)
}

/// A CSS length in pixels (`pt`, `in`, `cm`, `mm`, `px`; a bare number is pixels).
fn length_px(v: &str) -> Option<f64> {
    let split = v.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(v.len());
    let (n, unit) = v.split_at(split);
    let n: f64 = n.trim().parse().ok()?;
    let per = match unit.trim().to_ascii_lowercase().as_str() {
        "pt" => 96.0 / 72.0,
        "in" => 96.0,
        "cm" => 96.0 / 2.54,
        "mm" => 96.0 / 25.4,
        "px" | "" => 1.0,
        _ => return None,
    };
    Some(n * per)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_links_and_safe_hrefs() {
        assert_eq!(
            field_hyperlink(" HYPERLINK \"https://example.com/a\" \\o \"tip\""),
            Some("https://example.com/a".into())
        );
        assert_eq!(field_hyperlink("HYPERLINK \\l \"_Toc1\""), None);
        assert_eq!(field_hyperlink("PAGE"), None);
        assert_eq!(safe_href("javascript:alert(1)"), None);
        assert_eq!(safe_href("JAVASCRIPT:alert(1)"), None);
        assert_eq!(safe_href("https://"), None);
        assert_eq!(safe_href("mailto:a@b.c"), Some("mailto:a@b.c".into()));
    }

    #[test]
    fn symbols() {
        assert_eq!(symbol_char("Symbol", 0xF0B7), Some('•'));
        assert_eq!(symbol_char("Symbol", 0xF061), Some('α'));
        assert_eq!(symbol_char("Wingdings", 0xF0FC), None);
        assert_eq!(symbol_char("Arial", 0x263A), Some('☺'));
    }
}

//! DOCX (Office Open XML word processing) → HTML.
//!
//! A DOCX is a zip of XML parts. The converter reads only the parts it needs — the main
//! document, its relationships, styles, numbering, the notes that are referenced and the
//! pictures that are shown — each through a hard cap on its decompressed size, and parses
//! them with a streaming XML reader that bounds nesting depth and refuses DTDs.
//!
//! What it renders: headings (from paragraph styles, including localised style ids, and
//! outline levels), nested bulleted and numbered lists, tables with column and row spans and
//! cell shading, bold/italic/underline/strike/super-/subscript, text colour, highlight and
//! shading, hyperlinks, footnotes and endnotes (DPUB-ARIA note references in the text, the
//! notes in a `role="doc-endnotes"` section at the end), embedded PNG/JPEG/GIF/BMP/WebP pictures (as `<img src="redline-image:N">` plus an
//! [`ExtractedImage`]), line breaks, tabs, soft hyphens, content controls, text boxes (their
//! blocks follow the paragraph they are anchored in).
//!
//! What it leaves out (with a warning): SVG, EMF/WMF and linked pictures, charts, SmartArt,
//! comments, the page headers and footers of the first page, even pages or later page
//! sections when they differ (the one most pages show is kept: see [`page_part`]), drawn shapes; equations become plain text; text
//! boxes are flattened into paragraphs (also with a warning).
//!
//! Tracked changes (revisions) are read twice when there are any: accepted (the document) and
//! rejected (`Converted::tracked`), so that the upload can load either; moves and table rows
//! follow their insertion or deletion, formatting changes show as made in both readings.

mod body;
mod html;
mod numbering;
mod package;
mod styles;
mod xml;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_look;

use std::collections::HashMap;

use redline_domain::document::{PAGE_FOOTER_ROLE, PAGE_HEADER_ROLE};
use redline_ports::documents::{Authorship, ConvertError, Converted, ExtractedImage, TrackedChanges};

use body::{Ctx, NoteKind};
use html::Blocks;
use numbering::Numbering;
use package::Package;
use styles::Styles;
use xml::{local, Ev, Revisions, View, Xml};

/// `src` of extracted pictures: `redline-image:0`, `redline-image:1`, …
pub(crate) const PLACEHOLDER_PREFIX: &str = "redline-image:";

const MIB: u64 = 1024 * 1024;

/// What a conversion may cost. The defaults are for production; tests lower them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Zip entries (a DOCX has a few dozen).
    pub(crate) max_entries: usize,
    /// Decompressed size of one XML part.
    pub(crate) max_part_bytes: u64,
    /// Decompressed size of one picture.
    pub(crate) max_image_bytes: u64,
    /// Total decompressed bytes: `total_ratio` × the input size, at least `total_floor`,
    /// at most `max_total_bytes`.
    pub(crate) total_ratio: u64,
    pub(crate) total_floor: u64,
    pub(crate) max_total_bytes: u64,
    /// XML nesting depth.
    pub(crate) max_depth: usize,
    /// Tables, runs, links, pictures and text boxes inside one another (each is read by
    /// recursion: this bounds the stack).
    pub(crate) max_nesting: usize,
    /// Table cells in the whole document.
    pub(crate) max_cells: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_entries: 10_000,
            max_part_bytes: 64 * MIB,
            max_image_bytes: 32 * MIB,
            total_ratio: 20,
            total_floor: 32 * MIB,
            max_total_bytes: 256 * MIB,
            max_depth: 512,
            max_nesting: 64,
            max_cells: 1_000_000,
        }
    }
}

impl Limits {
    fn total_budget(&self, input_len: usize) -> u64 {
        (input_len as u64).saturating_mul(self.total_ratio).max(self.total_floor).min(self.max_total_bytes)
    }
}

/// Warnings for the user, each said once.
#[derive(Debug, Default)]
pub(crate) struct Warnings(Vec<String>);

impl Warnings {
    pub(crate) fn add(&mut self, warning: &str) {
        if self.0.len() < 32 && !self.0.iter().any(|w| w == warning) {
            self.0.push(warning.to_owned());
        }
    }
}

/// Whether a header or footer part shows something: text or a picture.
fn has_content(xml: &str) -> bool {
    let text = xml.split("<w:t").skip(1).any(|rest| {
        let rest =
            rest.strip_prefix('>').or_else(|| rest.strip_prefix(' ').and_then(|r| r.split_once('>').map(|x| x.1)));
        rest.is_some_and(|r| !r.split('<').next().unwrap_or("").trim().is_empty())
    });
    text || xml.contains("<w:drawing") || xml.contains("<w:pict")
}

pub(crate) fn corrupt(reason: impl Into<String>) -> ConvertError {
    ConvertError::Corrupt { format: "DOCX".into(), reason: reason.into() }
}

pub(crate) fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    convert_with(bytes, Limits::default())
}

const OLE_MAGIC: &[u8] = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1";

fn contains_utf16(haystack: &[u8], needle: &str) -> bool {
    let needle: Vec<u8> = needle.encode_utf16().flat_map(u16::to_le_bytes).collect();
    haystack.windows(needle.len()).any(|w| w == needle.as_slice())
}

/// An OLE compound file: an encrypted OOXML package, or a legacy binary document.
fn ole_error(bytes: &[u8]) -> ConvertError {
    if contains_utf16(bytes, "EncryptionInfo") || contains_utf16(bytes, "EncryptedPackage") {
        ConvertError::Encrypted
    } else if contains_utf16(bytes, "WordDocument") {
        corrupt("this looks like a legacy Word 97–2003 .doc file, not a .docx; save it as .docx and upload it again")
    } else {
        corrupt("an OLE compound file (an old Office format), not a .docx zip package")
    }
}

/// A part that helps (styles, numbering, notes): damage costs its formatting, not the
/// document; a limit exceeded still refuses the document.
fn optional<T: Default>(
    result: Result<T, ConvertError>,
    warnings: &mut Warnings,
    what: &str,
) -> Result<T, ConvertError> {
    match result {
        Ok(v) => Ok(v),
        Err(ConvertError::Corrupt { .. }) => {
            warnings.add(&format!("the {what} could not be read and were ignored"));
            Ok(T::default())
        }
        Err(e) => Err(e),
    }
}

/// The document with its tracked changes accepted and, when it has any, rejected too
/// (`Converted::tracked`): the caller chooses (docs/conversion.md, "Tracked changes").
pub(crate) fn convert_with(bytes: &[u8], limits: Limits) -> Result<Converted, ConvertError> {
    let (mut accepted, revisions) = convert_view(bytes, limits, View::Accepted)?;
    if revisions.any() {
        // The original may be empty (a document that is all insertions): an empty reading.
        let (original, original_by) = match convert_view(bytes, limits, View::Original) {
            Ok((original, r)) => (original, r.by_paragraph),
            Err(ConvertError::Empty) => (Converted::default(), Vec::new()),
            Err(e) => return Err(e),
        };
        let summary = revisions.describe();
        let who = Authorship { accepted: revisions.by_paragraph, original: original_by };
        accepted.tracked = Some(TrackedChanges { original: Box::new(original), summary, who });
    }
    Ok(accepted)
}

fn convert_view(bytes: &[u8], limits: Limits, view: View) -> Result<(Converted, Revisions), ConvertError> {
    if bytes.is_empty() {
        return Err(ConvertError::Empty);
    }
    if bytes.starts_with(OLE_MAGIC) {
        return Err(ole_error(bytes));
    }
    if !bytes.starts_with(b"PK") {
        return Err(corrupt("not a zip archive (a .docx file is a zip of XML parts)"));
    }
    let mut pkg = Package::open(bytes, limits)?;
    let mut early = Warnings::default();

    let root = optional(pkg.rels_of(""), &mut early, "package relationships")?;
    let main = root
        .first_of("officeDocument")
        .filter(|p| pkg.has(p))
        .map(str::to_owned)
        .unwrap_or_else(|| "word/document.xml".to_owned());
    let Some(text) = pkg.read_xml(&main)? else {
        return Err(corrupt("the archive has no word/document.xml: it is not a Word document"));
    };
    let rels = optional(pkg.rels_of(&main), &mut early, "document relationships (links, pictures)")?;
    let title = match root.first_of("core-properties").map(str::to_owned) {
        Some(part) => match pkg.read_xml(&part) {
            Ok(Some(core)) => core_title(&core, &part, limits.max_depth),
            _ => None,
        },
        None => None,
    };
    let origin_job = match root.first_of("custom-properties").map(str::to_owned) {
        Some(part) => match pkg.read_xml(&part) {
            Ok(Some(custom)) => custom_property(&custom, &part, JOB_PROPERTY, limits.max_depth),
            _ => None,
        },
        None => None,
    };

    let styles_part = rels.first_of("styles").unwrap_or("word/styles.xml").to_owned();
    let styles = match pkg.read_xml(&styles_part)? {
        Some(t) => optional(Styles::parse(&t, &styles_part, limits.max_depth), &mut early, "styles")?,
        None => Styles::default(),
    };
    let numbering_part = rels.first_of("numbering").unwrap_or("word/numbering.xml").to_owned();
    let numbering = match pkg.read_xml(&numbering_part)? {
        Some(t) => optional(Numbering::parse(&t, &numbering_part, limits.max_depth), &mut early, "list definitions")?,
        None => Numbering::default(),
    };
    let note_parts = [
        (NoteKind::Foot, rels.first_of("footnotes").unwrap_or("word/footnotes.xml").to_owned()),
        (NoteKind::End, rels.first_of("endnotes").unwrap_or("word/endnotes.xml").to_owned()),
    ];

    // Which header and footer parts the page sections show (docs/conversion.md, "Page headers
    // and footers"): read from the section properties before the body is read.
    let page_refs = PageRefs::parse(&text);

    let mut ctx = Ctx::new(pkg, styles, numbering, rels);
    ctx.warnings = early;
    ctx.view = view;
    let mut out = Blocks::new(true);
    let mut x = Xml::new(&text, &main, limits.max_depth).viewing(view);
    ctx.blocks(&mut x, &mut out)?;
    let mut revisions = std::mem::take(&mut x.revisions);
    drop(x);
    drop(text);
    let header = page_part(&mut ctx, &page_refs, PagePart::Header, &mut revisions)?;
    let footer = page_part(&mut ctx, &page_refs, PagePart::Footer, &mut revisions)?;

    if !ctx.notes.is_empty() {
        let mut rendered: HashMap<(NoteKind, String), String> = HashMap::new();
        ctx.in_note = true;
        for (kind, part) in &note_parts {
            if !ctx.notes.iter().any(|(k, _)| k == kind) {
                continue;
            }
            let Some(notes_text) = ctx.pkg.read_xml(part)? else { continue };
            ctx.rels = ctx.pkg.rels_of(part).or_else(|e| optional(Err(e), &mut ctx.warnings, "notes"))?;
            let result = ctx.render_notes(*kind, &notes_text, part, &mut rendered);
            optional(result, &mut ctx.warnings, "footnotes or endnotes")?;
        }
        // The notes as DPUB-ARIA endnotes (docs/conversion.md, "Footnotes").
        let mut notes_html = String::from("<section role=\"doc-endnotes\"><ol>\n");
        for (i, key) in ctx.notes.iter().enumerate() {
            let n = i + 1;
            let body = rendered.get(key).map(String::as_str).unwrap_or("");
            notes_html.push_str(&format!("<li id=\"fn{n}\">{}</li>\n", body.trim_end()));
        }
        notes_html.push_str("</ol></section>");
        out.block(&notes_html);
    }

    revisions.add(&ctx.revisions);
    let html = format!("{header}{}{footer}", out.finish());
    let images: Vec<ExtractedImage> = std::mem::take(&mut ctx.images);
    if html.trim().is_empty() && images.is_empty() {
        return Err(ConvertError::Empty);
    }
    Ok((Converted { html, images, warnings: ctx.warnings.0, title, tracked: None, origin_job }, revisions))
}

/// A page part: the header or the footer of the pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PagePart {
    Header,
    Footer,
}

impl PagePart {
    fn name(self) -> &'static str {
        match self {
            PagePart::Header => "header",
            PagePart::Footer => "footer",
        }
    }
}

/// One `w:headerReference` or `w:footerReference` of a section's properties.
#[derive(Debug)]
struct PageRef {
    part: PagePart,
    /// `default`, `first` or `even` (`default` when the attribute is absent).
    kind: String,
    rel: String,
    /// The page section it belongs to (0: the first).
    section: usize,
}

/// The header and footer references of every page section, in document order.
#[derive(Debug, Default)]
struct PageRefs(Vec<PageRef>);

impl PageRefs {
    /// Read from the main part's text with a plain reader: the document reader leaves section
    /// properties out. A part that stops parsing gives the references read before.
    fn parse(text: &str) -> PageRefs {
        use quick_xml::events::Event;
        let mut reader = quick_xml::Reader::from_str(text);
        let (mut refs, mut section) = (Vec::new(), 0);
        loop {
            match reader.read_event() {
                Ok(Event::Start(e) | Event::Empty(e)) => {
                    let part = match e.local_name().into_inner() {
                        "headerReference" => PagePart::Header,
                        "footerReference" => PagePart::Footer,
                        _ => continue,
                    };
                    let Some(rel) = xml::attr(&e, "id") else { continue };
                    let kind = xml::attr(&e, "type").map_or_else(|| "default".to_owned(), |k| k.into_owned());
                    if refs.len() < 256 {
                        refs.push(PageRef { part, kind, rel: rel.into_owned(), section });
                    }
                }
                Ok(Event::End(e)) if e.local_name().into_inner() == "sectPr" => section += 1,
                Ok(Event::Eof) | Err(_) => return PageRefs(refs),
                Ok(_) => {}
            }
        }
    }
}

/// The page header or footer as a top-level `<header role="doc-pageheader">` (or `<footer
/// role="doc-pagefooter">`) of the document: the part the first page section shows on most
/// pages (its `default` reference). Parts shown only on the first page, on even pages or by
/// later sections, when they show something else, are named in the warnings. A part that
/// cannot be read costs the part, with a warning, not the document.
fn page_part(
    ctx: &mut Ctx<'_>,
    refs: &PageRefs,
    part: PagePart,
    revisions: &mut Revisions,
) -> Result<String, ConvertError> {
    let target = |ctx: &Ctx<'_>, r: &PageRef| ctx.rels.get(&r.rel).filter(|t| !t.external).map(|t| t.target.clone());
    let mine: Vec<&PageRef> = refs.0.iter().filter(|r| r.part == part).collect();
    let chosen = mine.iter().find(|r| r.kind == "default").and_then(|r| target(ctx, r));
    let name = part.name();
    for r in &mine {
        let Some(other) = target(ctx, r) else { continue };
        if Some(&other) == chosen.as_ref() {
            continue;
        }
        if !ctx.pkg.read_xml(&other).ok().flatten().is_some_and(|t| has_content(&t)) {
            continue;
        }
        let which = match r.kind.as_str() {
            "first" => format!("the first page's {name}"),
            "even" => format!("the even pages' {name}"),
            _ if r.section > 0 => format!("a later page section's {name}"),
            _ => format!("another page {name}"),
        };
        ctx.warnings.add(&format!("{which} was not imported (a Redline document keeps one page {name})"));
    }
    let Some(target) = chosen else { return Ok(String::new()) };
    let Some(text) = ctx.pkg.read_xml(&target)? else { return Ok(String::new()) };
    if !has_content(&text) {
        return Ok(String::new());
    }
    let rels = match ctx.pkg.rels_of(&target) {
        Ok(rels) => rels,
        Err(e) => optional(Err(e), &mut ctx.warnings, &format!("page {name}'s links and pictures"))?,
    };
    let main_rels = std::mem::replace(&mut ctx.rels, rels);
    ctx.in_page_part = true;
    let mut blocks = Blocks::new(true);
    let mut x = Xml::new(&text, &target, ctx.pkg.limits.max_depth).viewing(ctx.view);
    let read = ctx.blocks(&mut x, &mut blocks);
    revisions.add(&x.revisions);
    ctx.in_page_part = false;
    ctx.end_part();
    ctx.rels = main_rels;
    optional(read.map(Some), &mut ctx.warnings, &format!("page {name}"))?;
    let html = blocks.finish();
    if html.trim().is_empty() {
        return Ok(String::new());
    }
    let (tag, role) = match part {
        PagePart::Header => ("header", PAGE_HEADER_ROLE),
        PagePart::Footer => ("footer", PAGE_FOOTER_ROLE),
    };
    Ok(format!("<{tag} role=\"{role}\">\n{html}</{tag}>\n"))
}

/// The custom document property that names the Redline job a tracked export shows
/// (docs/api.md, "The Word round trip").
const JOB_PROPERTY: &str = "RedlineJobId";

/// The text of the custom property `name` (`docProps/custom.xml`, File › Properties ›
/// Custom), trimmed and at most 200 characters; none when the part cannot be read.
fn custom_property(text: &str, part: &str, name: &str, max_depth: usize) -> Option<String> {
    let mut x = Xml::new(text, part, max_depth);
    let mut inside = false;
    loop {
        match x.next().ok()? {
            Ev::Start(e) if local(&e) == "property" => inside = xml::attr(&e, "name").as_deref() == Some(name),
            // A property's value is its one child (`vt:lpwstr`), read before the next property.
            Ev::Start(_) if inside => {
                let mut value = String::new();
                x.text(|t| value.push_str(t)).ok()?;
                let value = value.trim();
                return (!value.is_empty() && value.len() <= 200).then(|| value.to_owned());
            }
            Ev::Eof => return None,
            _ => {}
        }
    }
}

/// The `dc:title` of the core properties (`docProps/core.xml`), the title Word's File ›
/// Info shows. A part that cannot be read gives none: the title is not worth a failed upload.
fn core_title(text: &str, part: &str, max_depth: usize) -> Option<String> {
    let mut x = Xml::new(text, part, max_depth);
    loop {
        match x.next().ok()? {
            Ev::Start(e) if local(&e) == "title" && x.depth() == 2 => {
                let mut title = String::new();
                x.text(|t| title.push_str(t)).ok()?;
                return (!title.trim().is_empty()).then_some(title);
            }
            Ev::Eof => return None,
            _ => {}
        }
    }
}

//! Makes a document loaded by lopdf safe to hand to `pdf-extract`.
//!
//! `pdf-extract` panics on many malformed inputs, decompresses every stream without a
//! limit and follows form XObjects and page-tree parents recursively without a cycle check
//! (a stack overflow aborts the process: `catch_unwind` cannot stop it). So before it runs:
//! every stream it may read is decoded here under a memory budget (images and metadata are
//! emptied: they hold no text), the page tree is flattened so that no page inherits its
//! media box or resources, font dictionaries are repaired where `pdf-extract` would panic
//! on them, and the form XObjects that pages draw are checked for cycles and for
//! exponential fan-out. The result is then copied into the lopdf version that
//! `pdf-extract` is built on.

use std::collections::{BTreeMap, HashMap, HashSet};

use lopdf::{Dictionary, Document, Object, ObjectId, Stream, StringFormat};
use redline_ports::documents::ConvertError;

/// The most pages converted: a longer PDF is refused rather than turned into one huge page.
pub(super) const MAX_PAGES: usize = 2_000;
/// The most objects a PDF may hold.
pub(super) const MAX_OBJECTS: usize = 1_000_000;
/// Decompressed bytes allowed in all: this floor plus a multiple of the input's size.
const DECODE_FLOOR: usize = 32 << 20;
const DECODE_FACTOR: usize = 16;
/// How deep form XObjects may draw one another.
pub(super) const MAX_FORM_DEPTH: usize = 24;
/// How many form XObjects may be run in all (a form that draws another ten times, which
/// draws another ten times... grows exponentially).
const MAX_FORM_RUNS: u64 = 100_000;
/// The most character codes all the ranges of a CID font's `/W` array may span.
const MAX_CID_WIDTH_SPAN: i64 = 1 << 18;

/// The document ready for `pdf-extract`, and what was learned preparing it.
pub(super) struct Prepared {
    pub doc: pdf_extract::Document,
    pub page_count: usize,
    /// Whether the PDF holds images (XObjects or inline images on its pages).
    pub has_images: bool,
    pub warnings: Vec<String>,
    /// The pictures, where the pages draw them.
    pub pictures: super::pictures::Decoded,
    /// The ruling lines the pages draw (table borders among them).
    pub rules: Vec<super::pictures::Rule>,
}

/// The total decompressed bytes allowed for an input of `input_len` bytes.
pub(super) fn decode_budget(input_len: usize) -> usize {
    DECODE_FLOOR.saturating_add(input_len.saturating_mul(DECODE_FACTOR))
}

fn too_complex(reason: impl Into<String>) -> ConvertError {
    ConvertError::TooComplex(reason.into())
}

pub(super) fn prepare(mut doc: Document, input_len: usize) -> Result<Prepared, ConvertError> {
    if doc.objects.len() > MAX_OBJECTS {
        return Err(too_complex(format!("the PDF has more than {MAX_OBJECTS} objects")));
    }
    let pages = doc.get_pages();
    if pages.len() > MAX_PAGES {
        return Err(too_complex(format!(
            "the PDF has {} pages, more than the {MAX_PAGES} a conversion takes; nothing was converted",
            pages.len()
        )));
    }
    if pages.is_empty() {
        return Err(ConvertError::Corrupt { format: "PDF".into(), reason: "it has no pages".into() });
    }
    let mut warnings = Vec::new();
    let images = super::pictures::take_images(&mut doc);
    let mut has_images = decode_streams(&mut doc, decode_budget(input_len))?;
    flatten_pages(&mut doc, &pages);
    repair_fonts(&mut doc, &pages, &mut warnings);
    let inline_images = check_forms(&doc, &pages)?;
    has_images |= inline_images;
    let (drawn, rules) = super::pictures::place(&doc, &pages, &images);
    let pictures = super::pictures::decode_all(&doc, &images, drawn);
    drop(images);
    let page_count = pages.len();
    Ok(Prepared { doc: to_extract_document(doc), page_count, has_images, warnings, pictures, rules })
}

// ---------------------------------------------------------------------------------------
// Streams

enum StreamKind {
    /// Holds no text: emptied.
    Image,
    /// Already expanded by the loader, or never read for text: emptied.
    Unused,
    /// Decoded now so that `pdf-extract` never decompresses anything itself.
    Decode,
}

fn stream_kind(dict: &Dictionary) -> StreamKind {
    let name = |key: &[u8]| match dict.get(key) {
        Ok(Object::Name(n)) => Some(n.as_slice()),
        _ => None,
    };
    match (name(b"Type"), name(b"Subtype")) {
        (_, Some(b"Image")) => StreamKind::Image,
        (Some(b"XRef" | b"ObjStm" | b"Metadata" | b"EmbeddedFile"), _) => StreamKind::Unused,
        _ => StreamKind::Decode,
    }
}

/// Decodes every stream that may be read for text, within `budget` bytes in all. Answers
/// whether the document holds image XObjects.
fn decode_streams(doc: &mut Document, mut budget: usize) -> Result<bool, ConvertError> {
    let mut has_images = false;
    for object in doc.objects.values_mut() {
        let Object::Stream(stream) = object else { continue };
        match stream_kind(&stream.dict) {
            StreamKind::Image => {
                has_images = true;
                stream.set_plain_content(Vec::new());
            }
            StreamKind::Unused => stream.set_plain_content(Vec::new()),
            StreamKind::Decode => {
                if !stream.dict.has(b"Filter") {
                    continue;
                }
                match stream.decompressed_content_with_limit(budget) {
                    Ok(data) => {
                        budget = budget.saturating_sub(data.len());
                        stream.set_plain_content(data);
                    }
                    Err(lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded { .. })) => {
                        return Err(too_complex("its streams decompress to too much data (a decompression bomb?)"));
                    }
                    // A filter lopdf does not decode (JBIG2, DCT on a content stream…) or
                    // damaged data: nothing readable in it.
                    Err(_) => stream.set_plain_content(Vec::new()),
                }
            }
        }
    }
    Ok(has_images)
}

// ---------------------------------------------------------------------------------------
// Pages

fn deref<'a>(doc: &'a Document, object: &'a Object) -> Option<&'a Object> {
    doc.dereference(object).ok().map(|(_, o)| o)
}

fn number(doc: &Document, object: &Object) -> Option<f64> {
    match deref(doc, object)? {
        Object::Integer(i) => Some(*i as f64),
        Object::Real(r) if r.is_finite() => Some(f64::from(*r)),
        _ => None,
    }
}

fn integer(doc: &Document, object: &Object) -> Option<i64> {
    match deref(doc, object)? {
        Object::Integer(i) => Some(*i),
        Object::Real(r) if r.is_finite() && r.fract() == 0.0 && r.abs() < 1e15 => Some(*r as i64),
        _ => None,
    }
}

fn name<'a>(doc: &'a Document, object: Option<&'a Object>) -> Option<&'a [u8]> {
    match deref(doc, object?)? {
        Object::Name(n) => Some(n),
        _ => None,
    }
}

fn four_numbers(doc: &Document, object: &Object) -> Option<[f64; 4]> {
    let Object::Array(items) = deref(doc, object)? else { return None };
    if items.len() < 4 {
        return None;
    }
    let mut out = [0.0; 4];
    for (slot, item) in out.iter_mut().zip(items) {
        *slot = number(doc, item)?;
    }
    Some(out)
}

/// The value of `key` on `page` or the nearest ancestor that has one (at most 64 levels,
/// parent cycles stop the walk).
fn inherited<'a>(
    doc: &'a Document,
    page: &'a Dictionary,
    key: &[u8],
    accept: impl Fn(&Object) -> bool,
) -> Option<&'a Object> {
    let mut node = page;
    let mut seen = HashSet::new();
    for _ in 0..64 {
        if let Ok(value) = node.get(key) {
            if accept(value) {
                return Some(value);
            }
        }
        let Ok(Object::Reference(parent)) = node.get(b"Parent") else { return None };
        if !seen.insert(*parent) {
            return None;
        }
        let Some(Object::Dictionary(parent)) = doc.objects.get(parent) else { return None };
        node = parent;
    }
    None
}

/// Puts a valid media box and the resources on every page itself, so that `pdf-extract`
/// never walks the parent chain (which may be cyclic) nor meets a malformed box.
fn flatten_pages(doc: &mut Document, pages: &BTreeMap<u32, ObjectId>) {
    for page_id in pages.values() {
        let Some(Object::Dictionary(page)) = doc.objects.get(page_id) else { continue };
        let media = inherited(doc, page, b"MediaBox", |o| four_numbers(doc, o).is_some())
            .and_then(|o| four_numbers(doc, o))
            .filter(|b| b[2] != b[0] && b[3] != b[1])
            .unwrap_or([0.0, 0.0, 612.0, 792.0]);
        let resources =
            inherited(doc, page, b"Resources", |o| matches!(deref(doc, o), Some(Object::Dictionary(_)))).cloned();
        let art_box = page.get(b"ArtBox").ok().and_then(|o| four_numbers(doc, o));
        let Some(Object::Dictionary(page)) = doc.objects.get_mut(page_id) else { continue };
        page.set("MediaBox", media.iter().map(|&v| Object::Real(v as f32)).collect::<Vec<_>>());
        match resources {
            Some(resources) => page.set("Resources", resources),
            None => {
                page.remove(b"Resources");
            }
        }
        match art_box {
            Some(b) => page.set("ArtBox", b.iter().map(|&v| Object::Real(v as f32)).collect::<Vec<_>>()),
            None => {
                page.remove(b"ArtBox");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Fonts

/// The encodings `pdf-extract` knows by name.
fn known_encoding(name: &[u8]) -> bool {
    matches!(name, b"WinAnsiEncoding" | b"MacRomanEncoding" | b"MacExpertEncoding")
}

fn is_font(dict: &Dictionary) -> bool {
    matches!(dict.get(b"Type"), Ok(Object::Name(n)) if n == b"Font")
}

/// Repairs the font dictionaries where `pdf-extract` would panic or loop for long.
fn repair_fonts(doc: &mut Document, pages: &BTreeMap<u32, ObjectId>, warnings: &mut Vec<String>) {
    let ids: Vec<ObjectId> = doc
        .objects
        .iter()
        .filter(|(_, o)| matches!(o, Object::Dictionary(d) if is_font(d)))
        .map(|(id, _)| *id)
        .collect();
    let shown_on = font_pages(doc, pages);
    let mut font_files = Vec::new();
    let mut maps = FontMaps::default();
    // The character maps made for fonts, each kept once however many fonts use it.
    let mut made: HashMap<u64, ObjectId> = HashMap::new();
    for id in ids {
        let Some(Object::Dictionary(font)) = doc.objects.get(&id) else { continue };
        // What a font loses is said with the pages that use it.
        let mut said = Vec::new();
        let mut repaired = repair_font(doc, font, &mut said, &mut font_files, &mut maps);
        let on = shown_on.get(&id).map(|p| on_pages(p)).unwrap_or_default();
        warnings.extend(said.into_iter().map(|w| format!("{w}{on}")));
        for key in [&b"Encoding"[..], b"ToUnicode"] {
            // A stream held in the dictionary itself is one made here (a file's own are
            // objects of their own).
            let Ok(Object::Stream(stream)) = repaired.get(key) else { continue };
            let hash = {
                use std::hash::{Hash, Hasher};
                let mut hasher = std::collections::hash_map::DefaultHasher::new();
                stream.content.hash(&mut hasher);
                hasher.finish()
            };
            let stream = stream.clone();
            let object = *made.entry(hash).or_insert_with(|| doc.add_object(stream));
            repaired.set(key, Object::Reference(object));
        }
        doc.objects.insert(id, Object::Dictionary(repaired));
    }
    // `pdf-extract` reads the subtype of every /FontFile3 stream and panics without one.
    for id in font_files {
        if let Some(Object::Stream(stream)) = doc.objects.get_mut(&id) {
            if !matches!(stream.dict.get(b"Subtype"), Ok(Object::Name(_))) {
                stream.dict.set("Subtype", "OpenType");
            }
        }
    }
}

/// The pages whose resources name each font (by reference), in page order.
fn font_pages(doc: &Document, pages: &BTreeMap<u32, ObjectId>) -> HashMap<ObjectId, Vec<u32>> {
    let mut out: HashMap<ObjectId, Vec<u32>> = HashMap::new();
    for (&number, id) in pages {
        let Some(Object::Dictionary(page)) = doc.objects.get(id) else { continue };
        let Some(Object::Dictionary(resources)) = page.get(b"Resources").ok().and_then(|o| deref(doc, o)) else {
            continue;
        };
        let Some(Object::Dictionary(fonts)) = resources.get(b"Font").ok().and_then(|o| deref(doc, o)) else {
            continue;
        };
        for (_, font) in fonts.iter() {
            if let Object::Reference(font_id) = font {
                let on = out.entry(*font_id).or_default();
                if on.last() != Some(&number) {
                    on.push(number);
                }
            }
        }
    }
    out
}

/// " (page 2)", " (pages 1, 3 and 4)", " (pages 1, 2, 3 and 9 more)".
fn on_pages(pages: &[u32]) -> String {
    const NAMED: usize = 3;
    let named: Vec<String> = pages.iter().take(NAMED).map(u32::to_string).collect();
    match pages.len() {
        0 => String::new(),
        1 => format!(" (page {})", named[0]),
        n if n <= NAMED => format!(" (pages {} and {})", named[..n - 1].join(", "), named[n - 1]),
        n => format!(" (pages {} and {} more)", named.join(", "), n - NAMED),
    }
}

/// The character maps read from embedded fonts while repairing a document: each font file
/// read once, and at most [`MAX_EMBEDDED_MAPS`] of them.
#[derive(Default)]
struct FontMaps {
    embedded: HashMap<ObjectId, Option<Vec<u8>>>,
}

/// Embedded fonts read for their own character map in one document.
const MAX_EMBEDDED_MAPS: usize = 64;

fn repair_font(
    doc: &Document,
    font: &Dictionary,
    warnings: &mut Vec<String>,
    font_files: &mut Vec<ObjectId>,
    maps: &mut FontMaps,
) -> Dictionary {
    let mut fixed = font.clone();
    let subtype = name(doc, font.get(b"Subtype").ok()).unwrap_or(b"Type1").to_vec();
    fixed.set("Subtype", Object::Name(subtype.clone()));
    let base_font = name(doc, font.get(b"BaseFont").ok()).unwrap_or(b"Unknown").to_vec();
    fixed.set("BaseFont", Object::Name(base_font.clone()));
    if !matches!(font.get(b"ToUnicode").ok().and_then(|o| deref(doc, o)), Some(Object::Stream(_))) {
        fixed.remove(b"ToUnicode");
    }
    let descriptor = font.get(b"FontDescriptor").ok().and_then(|o| deref(doc, o));
    if let Some(Object::Dictionary(descriptor)) = descriptor {
        if let Ok(Object::Reference(file)) = descriptor.get(b"FontFile3") {
            font_files.push(*file);
        }
    }
    // A Chinese font drawing GBK bytes as one-byte codes: read as a Type 0 font of GBK codes.
    if matches!(subtype.as_slice(), b"TrueType" | b"Type1")
        && !fixed.has(b"ToUnicode")
        && super::cmaps::gb_named(&base_font)
    {
        return gbk_font(doc, font, &base_font);
    }
    match subtype.as_slice() {
        b"Type0" => repair_type0(doc, font, &mut fixed, &base_font, warnings, maps),
        b"CIDFontType0" | b"CIDFontType2" => {
            if !matches!(descriptor, Some(Object::Dictionary(_))) {
                fixed.set("FontDescriptor", Dictionary::from_iter([("Type", Object::from("FontDescriptor"))]));
            }
            repair_cid_widths(doc, font, &mut fixed);
        }
        b"Type3" => {
            repair_encoding(doc, font, &mut fixed, true);
            repair_type3_widths(doc, font, &mut fixed);
        }
        _ => {
            repair_encoding(doc, font, &mut fixed, false);
            // With a unicode map (from /ToUnicode or an embedded CFF font) and no encoding,
            // `pdf-extract` panics on the first code the map lacks: give it a fallback.
            let has_cff = matches!(descriptor, Some(Object::Dictionary(d)) if d.has(b"FontFile3"));
            if !fixed.has(b"Encoding") && subtype != b"TrueType" && (fixed.has(b"ToUnicode") || has_cff) {
                fixed.set("Encoding", "WinAnsiEncoding");
            }
            repair_simple_widths(doc, font, &mut fixed);
        }
    }
    fixed
}

/// Makes `/Encoding` a name `pdf-extract` knows or a direct dictionary with a known base
/// encoding and a clean `/Differences` array (codes 0–255, names only).
fn repair_encoding(doc: &Document, font: &Dictionary, fixed: &mut Dictionary, required: bool) {
    match font.get(b"Encoding").ok().and_then(|o| deref(doc, o)) {
        Some(Object::Name(n)) if known_encoding(n) => fixed.set("Encoding", Object::Name(n.clone())),
        Some(Object::Name(_)) => fixed.set("Encoding", "WinAnsiEncoding"),
        Some(Object::Dictionary(encoding)) => {
            let mut clean = Dictionary::new();
            match name(doc, encoding.get(b"BaseEncoding").ok()) {
                Some(n) if known_encoding(n) => clean.set("BaseEncoding", Object::Name(n.to_vec())),
                Some(_) => clean.set("BaseEncoding", "WinAnsiEncoding"),
                None => {}
            }
            if let Some(Object::Array(differences)) = encoding.get(b"Differences").ok().and_then(|o| deref(doc, o)) {
                clean.set("Differences", clean_differences(doc, differences));
            }
            fixed.set("Encoding", clean);
        }
        _ if required => {
            fixed.set("Encoding", Dictionary::from_iter([("Differences", Object::Array(Vec::new()))]));
        }
        _ => {
            fixed.remove(b"Encoding");
        }
    }
}

fn clean_differences(doc: &Document, differences: &[Object]) -> Vec<Object> {
    let mut out = Vec::new();
    let mut code: Option<i64> = None;
    for item in differences {
        match deref(doc, item) {
            Some(Object::Integer(i)) if (0..=255).contains(i) => {
                code = Some(*i);
                out.push(Object::Integer(*i));
            }
            Some(Object::Integer(_)) => code = None,
            Some(Object::Name(n)) => {
                if let Some(c) = code.filter(|c| *c <= 255) {
                    out.push(Object::Name(n.clone()));
                    code = Some(c + 1);
                }
            }
            _ => {}
        }
    }
    out
}

/// `/FirstChar`, `/LastChar`, `/Widths` made consistent (or removed): `pdf-extract`
/// asserts that they agree.
fn repair_simple_widths(doc: &Document, font: &Dictionary, fixed: &mut Dictionary) {
    let first = font.get(b"FirstChar").ok().and_then(|o| integer(doc, o));
    let widths = match font.get(b"Widths").ok().and_then(|o| deref(doc, o)) {
        Some(Object::Array(items)) => Some(
            items
                .iter()
                .take(65_536)
                .map(|w| Object::Real(number(doc, w).unwrap_or(0.0) as f32))
                .collect::<Vec<Object>>(),
        ),
        _ => None,
    };
    match (first, widths) {
        (Some(first), Some(widths)) if (0..=65_535).contains(&first) && !widths.is_empty() => {
            let last = first + widths.len() as i64 - 1;
            fixed.set("FirstChar", first);
            fixed.set("LastChar", last);
            fixed.set("Widths", Object::Array(widths));
        }
        _ => {
            fixed.remove(b"FirstChar");
            fixed.remove(b"LastChar");
            fixed.remove(b"Widths");
        }
    }
}

/// A Type3 font's widths spread over codes 0–255, since `pdf-extract` panics on a code
/// without one.
fn repair_type3_widths(doc: &Document, font: &Dictionary, fixed: &mut Dictionary) {
    let mut widths = vec![Object::Real(0.0); 256];
    let first = font.get(b"FirstChar").ok().and_then(|o| integer(doc, o)).unwrap_or(0);
    if let Some(Object::Array(items)) = font.get(b"Widths").ok().and_then(|o| deref(doc, o)) {
        for (i, w) in items.iter().enumerate().take(256) {
            let code = first.saturating_add(i as i64);
            if let (Ok(code), Some(w)) = (usize::try_from(code), number(doc, w)) {
                if let Some(slot) = widths.get_mut(code) {
                    *slot = Object::Real(w as f32);
                }
            }
        }
    }
    fixed.set("FirstChar", 0);
    fixed.set("LastChar", 255);
    fixed.set("Widths", widths);
}

/// A CID font's `/W` array rebuilt well-formed and with bounded ranges (`pdf-extract`
/// indexes it without checks), every `first last width` range written out as
/// `first [width …]` (`pdf-extract` reads ranges wrongly: it leaves out the last code and
/// takes `first` for the width).
fn repair_cid_widths(doc: &Document, font: &Dictionary, fixed: &mut Dictionary) {
    let Some(Object::Array(items)) = font.get(b"W").ok().and_then(|o| deref(doc, o)) else {
        fixed.remove(b"W");
        return;
    };
    let mut out = Vec::new();
    let mut span = 0i64;
    let mut i = 0;
    while i < items.len() && span <= MAX_CID_WIDTH_SPAN {
        let Some(first) = integer(doc, &items[i]).filter(|f| (0..=0xFFFF_FFFF).contains(f)) else { break };
        match items.get(i + 1).and_then(|o| deref(doc, o)) {
            Some(Object::Array(widths)) => {
                let widths: Vec<Object> =
                    widths.iter().take(65_536).map(|w| Object::Real(number(doc, w).unwrap_or(0.0) as f32)).collect();
                span += widths.len() as i64;
                out.push(Object::Integer(first));
                out.push(Object::Array(widths));
                i += 2;
            }
            Some(other) => {
                let (Some(last), Some(width)) = (integer(doc, other), items.get(i + 2).and_then(|w| number(doc, w)))
                else {
                    break;
                };
                if last >= first && last - first < 65_536 && span + last - first < MAX_CID_WIDTH_SPAN {
                    span += last - first + 1;
                    out.push(Object::Integer(first));
                    out.push(Object::Array(vec![Object::Real(width as f32); (last - first + 1) as usize]));
                }
                i += 3;
            }
            None => break,
        }
    }
    fixed.set("W", out);
}

fn repair_type0(
    doc: &Document,
    font: &Dictionary,
    fixed: &mut Dictionary,
    base_font: &[u8],
    warnings: &mut Vec<String>,
    maps: &mut FontMaps,
) {
    match font.get(b"Encoding").ok().and_then(|o| deref(doc, o)) {
        Some(Object::Name(n)) if n == b"Identity-H" || n == b"Identity-V" => {
            fixed.set("Encoding", Object::Name(n.clone()));
            // Codes are CIDs: a font of one of Adobe's CJK collections without a map of its
            // own is read through the collection's table (`cmaps.rs`).
            let own = matches!(font.get(b"ToUnicode").ok().and_then(|o| deref(doc, o)), Some(Object::Stream(_)));
            if !own {
                if let Some(map) = adobe_ordering(doc, font).and_then(|o| super::cmaps::collection_to_unicode(&o)) {
                    fixed.set("ToUnicode", Object::Stream(Stream::new(Dictionary::new(), map.to_vec())));
                } else if let Some(map) = embedded_font_map(doc, font, maps) {
                    // Else an embedded TrueType font's own cmap, read backwards.
                    fixed.set("ToUnicode", Object::Stream(Stream::new(Dictionary::new(), map)));
                }
            }
        }
        // Two-byte codes that are UTF-16 code units: read as Identity, the /ToUnicode
        // map (if any) still applies.
        Some(Object::Name(n)) if n.starts_with(b"Uni") && (contains(n, b"UCS2") || contains(n, b"UTF16")) => {
            fixed.set("Encoding", "Identity-H");
        }
        // A predefined CJK CMap: its codes are Shift_JIS, EUC-JP, Big5, GBK or UHC bytes,
        // read as such (`cmaps.rs`); the font's own /ToUnicode, keyed by code, still applies.
        Some(Object::Name(n)) if super::cmaps::legacy(n).is_some() => {
            if let Some(legacy) = super::cmaps::legacy(n) {
                fixed.set("Encoding", Object::Stream(Stream::new(Dictionary::new(), legacy.encoding_cmap())));
                let own = matches!(font.get(b"ToUnicode").ok().and_then(|o| deref(doc, o)), Some(Object::Stream(_)));
                if !own {
                    fixed
                        .set("ToUnicode", Object::Stream(Stream::new(Dictionary::new(), legacy.to_unicode().to_vec())));
                }
            }
        }
        Some(Object::Name(n)) => {
            // Another predefined CMap that pdf-extract cannot map (GB18030's four-byte
            // codes, a name we do not know): its text would be garbage, so it is left out.
            warnings.push(format!(
                "text in the font {} uses the character map {}, which is not supported: that text was left out",
                String::from_utf8_lossy(base_font),
                String::from_utf8_lossy(n)
            ));
            fixed.set("Encoding", "Identity-H");
            fixed.remove(b"ToUnicode");
        }
        Some(Object::Stream(_)) => {}
        _ => fixed.set("Encoding", "Identity-H"),
    }
    // The first descendant must be a dictionary; an inline one is repaired here (one held
    // by reference is repaired as a font of its own).
    match font.get(b"DescendantFonts").ok().and_then(|o| deref(doc, o)) {
        Some(Object::Array(descendants)) if !descendants.is_empty() => match &descendants[0] {
            Object::Reference(_) => {}
            Object::Dictionary(inline) => {
                let mut inline_fixed = inline.clone();
                if !matches!(
                    inline.get(b"FontDescriptor").ok().and_then(|o| deref(doc, o)),
                    Some(Object::Dictionary(_))
                ) {
                    inline_fixed
                        .set("FontDescriptor", Dictionary::from_iter([("Type", Object::from("FontDescriptor"))]));
                }
                repair_cid_widths(doc, inline, &mut inline_fixed);
                let mut rest = descendants.clone();
                rest[0] = Object::Dictionary(inline_fixed);
                fixed.set("DescendantFonts", rest);
            }
            _ => {
                fixed.set("DescendantFonts", vec![Object::Dictionary(empty_cid_font())]);
            }
        },
        _ => fixed.set("DescendantFonts", vec![Object::Dictionary(empty_cid_font())]),
    }
}

/// The simple font `font` as a Type 0 font whose codes are GBK (`cmaps::gb_named`): one-byte
/// codes keep their widths, two-byte ones are a full em.
fn gbk_font(doc: &Document, font: &Dictionary, base_font: &[u8]) -> Dictionary {
    let gbk = super::cmaps::gbk();
    let first = font.get(b"FirstChar").ok().and_then(|o| number(doc, o)).unwrap_or(0.0).clamp(0.0, 255.0) as i64;
    let widths: Vec<Object> = match font.get(b"Widths").ok().and_then(|o| deref(doc, o)) {
        Some(Object::Array(w)) => {
            w.iter().take(256).map(|o| Object::Real(number(doc, o).unwrap_or(500.0) as f32)).collect()
        }
        _ => Vec::new(),
    };
    let mut cid_font = Dictionary::from_iter([
        ("Type", Object::from("Font")),
        ("Subtype", Object::from("CIDFontType2")),
        ("BaseFont", Object::Name(base_font.to_vec())),
        ("FontDescriptor", Object::Dictionary(Dictionary::from_iter([("Type", Object::from("FontDescriptor"))]))),
        ("DW", Object::Integer(1000)),
    ]);
    if !widths.is_empty() {
        cid_font.set("W", vec![Object::Integer(first), Object::Array(widths)]);
    }
    Dictionary::from_iter([
        ("Type", Object::from("Font")),
        ("Subtype", Object::from("Type0")),
        ("BaseFont", Object::Name(base_font.to_vec())),
        ("Encoding", Object::Stream(Stream::new(Dictionary::new(), gbk.encoding_cmap()))),
        ("ToUnicode", Object::Stream(Stream::new(Dictionary::new(), gbk.to_unicode().to_vec()))),
        ("DescendantFonts", Object::Array(vec![Object::Dictionary(cid_font)])),
    ])
}

/// The `ToUnicode` map of a Type 0 font's embedded TrueType descendant (`FontFile2`) from
/// the font's own cmap (`cmaps::font_to_unicode`), through its `CIDToGIDMap`.
fn embedded_font_map(doc: &Document, font: &Dictionary, maps: &mut FontMaps) -> Option<Vec<u8>> {
    let Some(Object::Array(descendants)) = font.get(b"DescendantFonts").ok().and_then(|o| deref(doc, o)) else {
        return None;
    };
    let Some(Object::Dictionary(cid_font)) = descendants.first().and_then(|o| deref(doc, o)) else { return None };
    let Some(Object::Dictionary(descriptor)) = cid_font.get(b"FontDescriptor").ok().and_then(|o| deref(doc, o)) else {
        return None;
    };
    let Ok(Object::Reference(file_id)) = descriptor.get(b"FontFile2") else { return None };
    if let Some(known) = maps.embedded.get(file_id) {
        return known.clone();
    }
    if maps.embedded.len() >= MAX_EMBEDDED_MAPS {
        return None;
    }
    let Some(Object::Stream(file)) = doc.objects.get(file_id) else { return None };
    let content = |stream: &Stream| -> Option<Vec<u8>> {
        let bytes = if stream.filters().map(|f| f.is_empty()).unwrap_or(true) {
            stream.content.clone()
        } else {
            use std::io::Read;
            let filters = stream.filters().ok()?;
            if filters != [b"FlateDecode".as_slice()] {
                return None;
            }
            let mut out = Vec::new();
            let limit = super::cmaps::MAX_FONT_BYTES as u64 + 1;
            flate2::read::ZlibDecoder::new(stream.content.as_slice()).take(limit).read_to_end(&mut out).ok()?;
            out
        };
        (bytes.len() <= super::cmaps::MAX_FONT_BYTES).then_some(bytes)
    };
    let cid_to_gid = match cid_font.get(b"CIDToGIDMap").ok().and_then(|o| deref(doc, o)) {
        Some(Object::Stream(map)) => Some(content(map)?),
        _ => None,
    };
    let map = content(file).and_then(|data| super::cmaps::font_to_unicode(&data, cid_to_gid.as_deref()));
    // Fonts sharing a file share its map (a second CID → glyph map of the same file is not
    // read: rare, and the bound holds).
    maps.embedded.insert(*file_id, map.clone());
    map
}

/// The ordering of an Adobe character collection (`Japan1`, …) the Type 0 font's first
/// descendant names in its `CIDSystemInfo`.
fn adobe_ordering(doc: &Document, font: &Dictionary) -> Option<Vec<u8>> {
    let Some(Object::Array(descendants)) = font.get(b"DescendantFonts").ok().and_then(|o| deref(doc, o)) else {
        return None;
    };
    let Some(Object::Dictionary(cid_font)) = descendants.first().and_then(|o| deref(doc, o)) else { return None };
    let Some(Object::Dictionary(info)) = cid_font.get(b"CIDSystemInfo").ok().and_then(|o| deref(doc, o)) else {
        return None;
    };
    let string = |key: &[u8]| match info.get(key).ok().and_then(|o| deref(doc, o)) {
        Some(Object::String(s, _)) => Some(s.clone()),
        _ => None,
    };
    (string(b"Registry").as_deref() == Some(b"Adobe")).then(|| string(b"Ordering")).flatten()
}

fn empty_cid_font() -> Dictionary {
    Dictionary::from_iter([
        ("Type", Object::from("Font")),
        ("Subtype", Object::from("CIDFontType2")),
        ("FontDescriptor", Object::Dictionary(Dictionary::from_iter([("Type", Object::from("FontDescriptor"))]))),
    ])
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

// ---------------------------------------------------------------------------------------
// Form XObjects

/// Where a resource dictionary lives: its own object, or inline in a page or form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum ResourcesAt {
    Object(ObjectId),
    Inline(ObjectId),
}

type Resources<'a> = Option<(&'a Dictionary, ResourcesAt)>;

fn resources_of<'a>(doc: &'a Document, owner: &'a Dictionary, owner_id: ObjectId) -> Resources<'a> {
    match owner.get(b"Resources").ok()? {
        Object::Reference(id) => match doc.objects.get(id)? {
            Object::Dictionary(d) => Some((d, ResourcesAt::Object(*id))),
            _ => None,
        },
        Object::Dictionary(d) => Some((d, ResourcesAt::Inline(owner_id))),
        _ => None,
    }
}

/// What a content stream draws: how often it runs each XObject, and whether it has inline
/// images.
#[derive(Default)]
struct ContentScan {
    draws: HashMap<Vec<u8>, u64>,
    inline_images: bool,
}

/// A light tokenizer of content streams: skips strings, comments and inline image data,
/// and counts `/Name Do`.
fn scan_content(content: &[u8], scan: &mut ContentScan) {
    let is_delimiter = |b: u8| matches!(b, b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%');
    let mut i = 0;
    let mut last_name: Option<Vec<u8>> = None;
    while i < content.len() {
        let b = content[i];
        if b.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        match b {
            b'%' => {
                while i < content.len() && content[i] != b'\n' && content[i] != b'\r' {
                    i += 1;
                }
            }
            b'(' => {
                let mut depth = 0usize;
                while i < content.len() {
                    match content[i] {
                        b'\\' => i += 1,
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                i += 1;
                last_name = None;
            }
            b'/' => {
                let start = i + 1;
                i += 1;
                while i < content.len() && !content[i].is_ascii_whitespace() && !is_delimiter(content[i]) {
                    i += 1;
                }
                last_name = Some(decode_name(&content[start..i]));
            }
            _ if is_delimiter(b) => {
                i += 1;
                last_name = None;
            }
            _ => {
                let start = i;
                while i < content.len() && !content[i].is_ascii_whitespace() && !is_delimiter(content[i]) {
                    i += 1;
                }
                match &content[start..i] {
                    b"Do" => {
                        if let Some(name) = last_name.take() {
                            *scan.draws.entry(name).or_default() += 1;
                        }
                    }
                    b"BI" => scan.inline_images = true,
                    b"ID" => {
                        // Inline image data runs to the next `EI` between whitespace.
                        while i + 3 < content.len()
                            && !(content[i].is_ascii_whitespace()
                                && &content[i + 1..i + 3] == b"EI"
                                && (content[i + 3].is_ascii_whitespace() || is_delimiter(content[i + 3])))
                        {
                            i += 1;
                        }
                        i = (i + 3).min(content.len());
                    }
                    _ => {}
                }
                last_name = None;
            }
        }
    }
}

/// A name token with its `#xx` escapes decoded.
fn decode_name(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'#' && i + 2 < raw.len() {
            if let (Some(hi), Some(lo)) = (hex_value(raw[i + 1]), hex_value(raw[i + 2])) {
                out.push(hi << 4 | lo);
                i += 3;
                continue;
            }
        }
        out.push(raw[i]);
        i += 1;
    }
    out
}

fn hex_value(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

struct FormWalk<'a> {
    doc: &'a Document,
    runs: HashMap<(ObjectId, ResourcesAt), u64>,
    on_stack: HashSet<(ObjectId, ResourcesAt)>,
    scans: HashMap<ObjectId, ContentScan>,
}

impl<'a> FormWalk<'a> {
    /// How many forms drawing `scan` runs (each form counts, with what it draws), given
    /// the resources in effect.
    fn runs_of(&mut self, scan: &ContentScan, resources: Resources<'a>, depth: usize) -> Result<u64, ConvertError> {
        let Some((resources, at)) = resources else { return Ok(0) };
        let Some(Object::Dictionary(xobjects)) = resources.get(b"XObject").ok().and_then(|o| deref(self.doc, o)) else {
            return Ok(0);
        };
        let mut total = 0u64;
        for (name, count) in &scan.draws {
            let Ok(Object::Reference(id)) = xobjects.get(name) else { continue };
            let Some(Object::Stream(form)) = self.doc.objects.get(id) else { continue };
            if matches!(stream_kind(&form.dict), StreamKind::Image) {
                continue;
            }
            // A form without resources of its own uses those of whoever draws it.
            let inner = resources_of(self.doc, &form.dict, *id).or(Some((resources, at)));
            let node = (*id, inner.map_or(at, |(_, a)| a));
            let runs = match self.runs.get(&node) {
                Some(r) => *r,
                None => {
                    if self.on_stack.contains(&node) {
                        return Err(too_complex("a drawing (form XObject) of the PDF draws itself"));
                    }
                    if depth >= MAX_FORM_DEPTH {
                        return Err(too_complex("drawings (form XObjects) are nested too deeply"));
                    }
                    self.on_stack.insert(node);
                    let scan = self.scans.remove(id).unwrap_or_else(|| {
                        let mut scan = ContentScan::default();
                        scan_content(&form.content, &mut scan);
                        scan
                    });
                    let inner_runs = self.runs_of(&scan, inner, depth + 1);
                    self.scans.insert(*id, scan);
                    self.on_stack.remove(&node);
                    let runs = inner_runs?.saturating_add(1);
                    self.runs.insert(node, runs);
                    runs
                }
            };
            total = total.saturating_add(count.saturating_mul(runs));
            if total > MAX_FORM_RUNS {
                return Err(too_complex("its drawings (form XObjects) draw one another too many times"));
            }
        }
        Ok(total)
    }
}

/// Refuses pages whose forms cycle or fan out exponentially. Answers whether a page has
/// inline images.
fn check_forms(doc: &Document, pages: &BTreeMap<u32, ObjectId>) -> Result<bool, ConvertError> {
    let mut walk = FormWalk { doc, runs: HashMap::new(), on_stack: HashSet::new(), scans: HashMap::new() };
    let mut total = 0u64;
    let mut inline_images = false;
    for page_id in pages.values() {
        let Some(Object::Dictionary(page)) = doc.objects.get(page_id) else { continue };
        let mut scan = ContentScan::default();
        for id in doc.get_page_contents(*page_id) {
            if let Some(Object::Stream(stream)) = doc.objects.get(&id) {
                scan_content(&stream.content, &mut scan);
            }
        }
        inline_images |= scan.inline_images;
        total = total.saturating_add(walk.runs_of(&scan, resources_of(doc, page, *page_id), 0)?);
        if total > MAX_FORM_RUNS {
            return Err(too_complex("its drawings (form XObjects) draw one another too many times"));
        }
    }
    Ok(inline_images)
}

// ---------------------------------------------------------------------------------------
// The copy into pdf-extract's lopdf

fn to_extract_document(doc: Document) -> pdf_extract::Document {
    let mut out = pdf_extract::Document::new();
    out.version = doc.version.clone();
    out.max_id = doc.max_id;
    out.trailer = convert_dictionary(doc.trailer);
    out.objects = doc.objects.into_iter().map(|(id, object)| (id, convert_object(object))).collect();
    out
}

fn convert_dictionary(dict: Dictionary) -> pdf_extract::Dictionary {
    let mut out = pdf_extract::Dictionary::new();
    for (key, value) in dict {
        out.set(key, convert_object(value));
    }
    out
}

fn convert_object(object: Object) -> pdf_extract::Object {
    use pdf_extract::Object as Old;
    match object {
        Object::Null => Old::Null,
        Object::Boolean(b) => Old::Boolean(b),
        Object::Integer(i) => Old::Integer(i),
        Object::Real(r) => Old::Real(r),
        Object::Name(n) => Old::Name(n),
        Object::String(s, format) => Old::String(
            s,
            match format {
                StringFormat::Literal => pdf_extract::StringFormat::Literal,
                StringFormat::Hexadecimal => pdf_extract::StringFormat::Hexadecimal,
            },
        ),
        Object::Array(items) => Old::Array(items.into_iter().map(convert_object).collect()),
        Object::Dictionary(dict) => Old::Dictionary(convert_dictionary(dict)),
        Object::Stream(stream) => Old::Stream(pdf_extract::Stream {
            dict: convert_dictionary(stream.dict),
            content: stream.content,
            allows_compression: stream.allows_compression,
            start_position: stream.start_position,
        }),
        Object::Reference(id) => Old::Reference(id),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn pages_are_named_up_to_three() {
        assert_eq!(super::on_pages(&[]), "");
        assert_eq!(super::on_pages(&[2]), " (page 2)");
        assert_eq!(super::on_pages(&[1, 3, 4]), " (pages 1, 3 and 4)");
        assert_eq!(super::on_pages(&[1, 2, 3, 4, 5]), " (pages 1, 2, 3 and 2 more)");
    }
}

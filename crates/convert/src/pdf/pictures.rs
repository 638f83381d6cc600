//! A PDF's pictures: image XObjects, found where the pages draw them and made into files a
//! browser shows.
//!
//! - [`take_images`] moves every image stream out of the document before its other streams
//!   are decoded for `pdf-extract` (which never needs them).
//! - [`place`] walks each page's content stream (and the forms it draws), following the
//!   transformation matrix (`q`, `Q`, `cm`), and records every `Do` of an image with its page,
//!   the top edge of its box (from the top of the page, as text lines are measured) and its
//!   area.
//! - [`decode`] makes one picture a file: a `DCTDecode` stream is a JPEG as it is; a
//!   `FlateDecode` (or unfiltered) stream of 8-bit RGB, grey, CMYK or indexed samples, or
//!   grey of 1, 2 or 4 bits, becomes a PNG, with its soft mask (`/SMask`) as alpha. Other
//!   encodings (JBIG2, CCITT, JPEG 2000, masks) are skipped with a warning.
//!
//! Bounds: [`MAX_PIXELS`] per picture, [`MAX_DECODED`] decoded bytes for all the pictures
//! of a file, [`MAX_DRAWN`] pictures placed, [`MAX_OPERATIONS`] content operations read;
//! the pictures' files themselves are capped by [`crate::images`].

use std::collections::{BTreeMap, HashMap};

use lopdf::content::Content;
use lopdf::{Dictionary, Document, Object, ObjectId, Stream};

use super::prepare::MAX_FORM_DEPTH;

/// The most pixels one picture may have (a 5,000 × 5,000 scan is 25 million).
pub(super) const MAX_PIXELS: u64 = 40_000_000;
/// The most bytes all the pictures of a file may decode to.
pub(super) const MAX_DECODED: usize = 512 << 20;
/// The largest JPEG taken out of a compressed stream.
const MAX_PICTURE_FILE: usize = crate::images::MAX_PICTURE_BYTES;
/// The most pictures placed in the document (drawings of the same picture each count).
pub(super) const MAX_DRAWN: usize = 1_000;
/// The most content operations read while placing pictures.
const MAX_OPERATIONS: usize = 5_000_000;
/// Pictures smaller than this on either side are decoration (spacers, rules, bullets).
const MIN_SIDE: i64 = 8;

/// A picture drawn on a page.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Drawn {
    pub page: u32,
    /// The top edge of its box, from the top of the page down (as a text line's baseline).
    pub top: f32,
    /// The area of its box on the page, in square points.
    pub area: f32,
    pub id: ObjectId,
}

/// Moves the image streams out of `doc` (their content left empty in it).
pub(super) fn take_images(doc: &mut Document) -> HashMap<ObjectId, Stream> {
    let mut images = HashMap::new();
    for (id, object) in doc.objects.iter_mut() {
        let Object::Stream(stream) = object else { continue };
        if !matches!(stream.dict.get(b"Subtype"), Ok(Object::Name(n)) if n == b"Image") {
            continue;
        }
        let content = std::mem::take(&mut stream.content);
        images.insert(
            *id,
            Stream { dict: stream.dict.clone(), content, allows_compression: false, start_position: None },
        );
        stream.set_plain_content(Vec::new());
    }
    images
}

/// A transformation matrix `[a b c d e f]`.
type Matrix = [f32; 6];

const IDENTITY: Matrix = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0];

/// `m` then `n` (`m × n` in the PDF's row-vector convention).
fn multiply(m: &Matrix, n: &Matrix) -> Matrix {
    [
        m[0] * n[0] + m[1] * n[2],
        m[0] * n[1] + m[1] * n[3],
        m[2] * n[0] + m[3] * n[2],
        m[2] * n[1] + m[3] * n[3],
        m[4] * n[0] + m[5] * n[2] + n[4],
        m[4] * n[1] + m[5] * n[3] + n[5],
    ]
}

fn number(doc: &Document, object: &Object) -> Option<f32> {
    match doc.dereference(object).ok()?.1 {
        Object::Integer(i) => Some(*i as f32),
        Object::Real(r) => Some(*r),
        _ => None,
    }
}

fn matrix(doc: &Document, operands: &[Object]) -> Option<Matrix> {
    let mut m = [0.0; 6];
    if operands.len() != 6 {
        return None;
    }
    for (slot, operand) in m.iter_mut().zip(operands) {
        *slot = number(doc, operand).filter(|n| n.is_finite())?;
    }
    Some(m)
}

fn dict<'a>(doc: &'a Document, object: &'a Object) -> Option<&'a Dictionary> {
    match doc.dereference(object).ok()?.1 {
        Object::Dictionary(d) => Some(d),
        Object::Stream(s) => Some(&s.dict),
        _ => None,
    }
}

struct Walk<'a> {
    doc: &'a Document,
    images: &'a HashMap<ObjectId, Stream>,
    drawn: Vec<Drawn>,
    operations: usize,
    page: u32,
    page_top: f32,
    /// The path being built, in page space.
    path: Path,
    rules: Vec<Rule>,
}

/// A path under construction: its straight segments and its rectangles (page space, y up).
#[derive(Default)]
struct Path {
    segments: Vec<[(f32, f32); 2]>,
    rectangles: Vec<[(f32, f32); 2]>,
    current: Option<(f32, f32)>,
    start: Option<(f32, f32)>,
}

/// A ruling line drawn on a page: a stroked straight segment, a side of a stroked
/// rectangle, or a thin filled rectangle (as word processors draw table borders).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Rule {
    pub page: u32,
    pub horizontal: bool,
    /// Its y from the top of the page (horizontal) or its x (vertical).
    pub at: f32,
    /// Where it starts and ends along its direction (from < to).
    pub from: f32,
    pub to: f32,
}

/// The most ruling lines kept from one file, and segments in one path.
const MAX_RULES: usize = 50_000;
const MAX_PATH: usize = 10_000;
/// A filled rectangle at most this thick is a line.
const THIN: f32 = 3.0;

fn apply(ctm: &Matrix, x: f32, y: f32) -> (f32, f32) {
    (ctm[0] * x + ctm[2] * y + ctm[4], ctm[1] * x + ctm[3] * y + ctm[5])
}

impl Walk<'_> {
    /// Runs a content stream with `resources`, from the matrix `ctm`.
    fn run(&mut self, content: &[u8], resources: Option<&Dictionary>, ctm: Matrix, depth: usize) {
        let mut stack: Vec<Matrix> = Vec::new();
        let mut ctm = ctm;
        for operation in Content::decode_iter(content) {
            let Ok(operation) = operation else { return };
            self.operations += 1;
            if self.operations > MAX_OPERATIONS {
                return;
            }
            match operation.operator.as_str() {
                "q" if stack.len() < 256 => stack.push(ctm),
                "Q" => ctm = stack.pop().unwrap_or(ctm),
                "cm" => {
                    if let Some(m) = matrix(self.doc, &operation.operands) {
                        ctm = multiply(&m, &ctm);
                    }
                }
                "Do" if self.drawn.len() < MAX_DRAWN => {
                    let Some(Object::Name(name)) = operation.operands.first() else { continue };
                    self.draw(name, resources, ctm, depth);
                }
                "m" | "l" | "re" | "h" | "c" | "v" | "y" => self.build(&operation.operator, &operation.operands, &ctm),
                "S" | "s" => self.paint(true, false),
                "f" | "F" | "f*" => self.paint(false, true),
                "B" | "B*" | "b" | "b*" => self.paint(true, true),
                "n" => self.path = Path::default(),
                _ => {}
            }
        }
    }

    fn build(&mut self, operator: &str, operands: &[Object], ctm: &Matrix) {
        let numbers: Vec<f32> = operands.iter().filter_map(|o| number(self.doc, o)).filter(|n| n.is_finite()).collect();
        let path = &mut self.path;
        if path.segments.len() + path.rectangles.len() >= MAX_PATH {
            return;
        }
        match (operator, numbers.as_slice()) {
            ("m", [x, y]) => {
                let p = apply(ctm, *x, *y);
                path.current = Some(p);
                path.start = Some(p);
            }
            ("l", [x, y]) => {
                let p = apply(ctm, *x, *y);
                if let Some(from) = path.current {
                    path.segments.push([from, p]);
                }
                path.current = Some(p);
            }
            ("re", [x, y, w, h]) => {
                let corners = [(*x, *y), (x + w, *y), (x + w, y + h), (*x, y + h)].map(|(x, y)| apply(ctm, x, y));
                let (mut low, mut high) = (corners[0], corners[0]);
                for c in &corners[1..] {
                    low = (low.0.min(c.0), low.1.min(c.1));
                    high = (high.0.max(c.0), high.1.max(c.1));
                }
                path.rectangles.push([low, high]);
                path.current = Some(apply(ctm, *x, *y));
                path.start = path.current;
            }
            ("h", []) => {
                if let (Some(from), Some(to)) = (path.current, path.start) {
                    path.segments.push([from, to]);
                }
                path.current = path.start;
            }
            // Curves are not rules: only the current point moves.
            ("c", [.., x, y]) | ("v", [.., x, y]) | ("y", [.., x, y]) => path.current = Some(apply(ctm, *x, *y)),
            _ => {}
        }
    }

    /// Paints the path: its straight horizontal and vertical strokes, and its thin filled
    /// rectangles, become rules.
    fn paint(&mut self, stroke: bool, fill: bool) {
        let path = std::mem::take(&mut self.path);
        let mut segments = Vec::new();
        if stroke {
            segments.extend(path.segments.iter().copied());
            for [low, high] in &path.rectangles {
                let corners = [*low, (high.0, low.1), *high, (low.0, high.1)];
                for i in 0..4 {
                    segments.push([corners[i], corners[(i + 1) % 4]]);
                }
            }
        } else if fill {
            for [low, high] in &path.rectangles {
                let (w, h) = (high.0 - low.0, high.1 - low.1);
                let (mid_x, mid_y) = ((low.0 + high.0) / 2.0, (low.1 + high.1) / 2.0);
                if h <= THIN && w > THIN {
                    segments.push([(low.0, mid_y), (high.0, mid_y)]);
                } else if w <= THIN && h > THIN {
                    segments.push([(mid_x, low.1), (mid_x, high.1)]);
                }
            }
        }
        for [(x0, y0), (x1, y1)] in segments {
            if self.rules.len() >= MAX_RULES {
                return;
            }
            let (dx, dy) = ((x1 - x0).abs(), (y1 - y0).abs());
            let rule = if dy <= 0.5 && dx >= 2.0 {
                Rule { page: self.page, horizontal: true, at: self.page_top - y0, from: x0.min(x1), to: x0.max(x1) }
            } else if dx <= 0.5 && dy >= 2.0 {
                let (top, bottom) = (self.page_top - y0.max(y1), self.page_top - y0.min(y1));
                Rule { page: self.page, horizontal: false, at: x0, from: top, to: bottom }
            } else {
                continue;
            };
            if rule.at.is_finite() && rule.from.is_finite() && rule.to.is_finite() {
                self.rules.push(rule);
            }
        }
    }

    fn draw(&mut self, name: &[u8], resources: Option<&Dictionary>, ctm: Matrix, depth: usize) {
        let doc = self.doc;
        let Some(xobjects) = resources.and_then(|r| r.get(b"XObject").ok()).and_then(|x| dict(doc, x)) else {
            return;
        };
        let Ok(Object::Reference(id)) = xobjects.get(name) else { return };
        if self.images.contains_key(id) {
            // The unit square, through the matrix.
            let corners = [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)]
                .map(|(x, y): (f32, f32)| (ctm[0] * x + ctm[2] * y + ctm[4], ctm[1] * x + ctm[3] * y + ctm[5]));
            let top = corners.iter().map(|c| c.1).fold(f32::MIN, f32::max);
            let area = (ctm[0] * ctm[3] - ctm[1] * ctm[2]).abs();
            if top.is_finite() && area.is_finite() {
                self.drawn.push(Drawn { page: self.page, top: self.page_top - top, area, id: *id });
            }
            return;
        }
        let Some(Object::Stream(form)) = doc.objects.get(id) else { return };
        if depth >= MAX_FORM_DEPTH || !matches!(form.dict.get(b"Subtype"), Ok(Object::Name(n)) if n == b"Form") {
            return;
        }
        let form_matrix = form.dict.get(b"Matrix").ok().and_then(|m| m.as_array().ok()).and_then(|m| matrix(doc, m));
        let inner = form.dict.get(b"Resources").ok().and_then(|r| dict(doc, r)).or(resources);
        let ctm = multiply(&form_matrix.unwrap_or(IDENTITY), &ctm);
        self.run(&form.content, inner, ctm, depth + 1);
    }
}

/// Where the pages draw the pictures of `images`, page by page in drawing order, and the
/// ruling lines they draw. The content streams must already be decoded (and the pages
/// flattened: each has its own `/Resources` and `/MediaBox`).
pub(super) fn place(
    doc: &Document,
    pages: &BTreeMap<u32, ObjectId>,
    images: &HashMap<ObjectId, Stream>,
) -> (Vec<Drawn>, Vec<Rule>) {
    let mut walk = Walk {
        doc,
        images,
        drawn: Vec::new(),
        operations: 0,
        page: 0,
        page_top: 0.0,
        path: Path::default(),
        rules: Vec::new(),
    };
    for (page_number, page_id) in pages {
        let Some(Object::Dictionary(page)) = doc.objects.get(page_id) else { continue };
        let media_box: Vec<f32> = page
            .get(b"MediaBox")
            .ok()
            .and_then(|b| doc.dereference(b).ok())
            .and_then(|(_, b)| b.as_array().ok())
            .map(|b| b.iter().filter_map(|n| number(doc, n)).collect())
            .unwrap_or_default();
        walk.page = *page_number;
        walk.page_top = match media_box.as_slice() {
            [_, lly, _, ury] => lly.max(*ury),
            _ => 792.0,
        };
        let resources = page.get(b"Resources").ok().and_then(|r| dict(doc, r));
        let mut content = Vec::new();
        for id in doc.get_page_contents(*page_id) {
            if let Some(Object::Stream(stream)) = doc.objects.get(&id) {
                content.extend_from_slice(&stream.content);
                content.push(b'\n');
            }
        }
        walk.path = Path::default();
        walk.run(&content, resources, IDENTITY, 0);
    }
    (walk.drawn, walk.rules)
}

/// Why a picture was not made into a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Skipped {
    /// Too small to be more than decoration: left out silently.
    Tiny,
    /// An encoding or colour space not converted (named in the warning).
    Unsupported(String),
    /// Over [`MAX_PIXELS`] or the decoding budget.
    TooLarge,
    /// Its data is damaged.
    Damaged,
}

/// A picture as a file: its bytes and content type.
pub(super) struct Picture {
    pub bytes: Vec<u8>,
    pub content_type: &'static str,
}

/// How a picture's samples are coloured.
enum Colours {
    Gray,
    Rgb,
    Cmyk,
    /// A palette of RGB entries.
    Indexed(Vec<u8>),
}

fn colours(doc: &Document, space: Option<&Object>) -> Result<Colours, Skipped> {
    let Some(space) = space else { return Err(Skipped::Unsupported("no colour space".into())) };
    let space = doc.dereference(space).map_err(|_| Skipped::Damaged)?.1;
    match space {
        Object::Name(n) => match n.as_slice() {
            b"DeviceGray" | b"CalGray" | b"G" => Ok(Colours::Gray),
            b"DeviceRGB" | b"CalRGB" | b"RGB" => Ok(Colours::Rgb),
            b"DeviceCMYK" | b"CMYK" => Ok(Colours::Cmyk),
            other => Err(Skipped::Unsupported(String::from_utf8_lossy(other).into_owned())),
        },
        Object::Array(parts) => {
            let kind = parts.first().and_then(|k| doc.dereference(k).ok()).and_then(|(_, k)| k.as_name().ok());
            match kind {
                Some(b"ICCBased") => {
                    let n = parts
                        .get(1)
                        .and_then(|s| dict(doc, s))
                        .and_then(|d| d.get(b"N").ok())
                        .and_then(|n| number(doc, n))
                        .unwrap_or(0.0);
                    match n as i64 {
                        1 => Ok(Colours::Gray),
                        3 => Ok(Colours::Rgb),
                        4 => Ok(Colours::Cmyk),
                        _ => Err(Skipped::Unsupported("ICC colour space".into())),
                    }
                }
                Some(b"CalRGB") => Ok(Colours::Rgb),
                Some(b"CalGray") => Ok(Colours::Gray),
                Some(b"Indexed" | b"I") => {
                    let base = colours(doc, parts.get(1))?;
                    let lookup = match parts.get(3).map(|l| doc.dereference(l)) {
                        Some(Ok((_, Object::String(s, _)))) => s.clone(),
                        Some(Ok((_, Object::Stream(s)))) => s.get_plain_content_with_limit(1 << 16).unwrap_or_default(),
                        _ => return Err(Skipped::Damaged),
                    };
                    let palette = match base {
                        Colours::Rgb => lookup,
                        Colours::Gray => lookup.iter().flat_map(|g| [*g, *g, *g]).collect(),
                        Colours::Cmyk => lookup.chunks_exact(4).flat_map(cmyk_to_rgb).collect(),
                        Colours::Indexed(_) => return Err(Skipped::Damaged),
                    };
                    Ok(Colours::Indexed(palette))
                }
                _ => Err(Skipped::Unsupported("colour space".into())),
            }
        }
        _ => Err(Skipped::Damaged),
    }
}

fn cmyk_to_rgb(cmyk: &[u8]) -> [u8; 3] {
    let k = u16::from(cmyk[3]);
    let channel = |c: u8| (255 - (u16::from(c) + k).min(255)) as u8;
    [channel(cmyk[0]), channel(cmyk[1]), channel(cmyk[2])]
}

fn integer(doc: &Document, dict: &Dictionary, key: &[u8]) -> Option<i64> {
    dict.get(key).ok().and_then(|o| number(doc, o)).map(|n| n as i64)
}

/// Makes the picture `id` a file, spending from `budget` the bytes it decodes to.
pub(super) fn decode(
    doc: &Document,
    images: &HashMap<ObjectId, Stream>,
    id: ObjectId,
    budget: &mut usize,
) -> Result<Picture, Skipped> {
    let stream = images.get(&id).ok_or(Skipped::Damaged)?;
    let d = &stream.dict;
    let (width, height) = (integer(doc, d, b"Width").unwrap_or(0), integer(doc, d, b"Height").unwrap_or(0));
    if width < MIN_SIDE || height < MIN_SIDE {
        return Err(Skipped::Tiny);
    }
    if (width as u64).saturating_mul(height as u64) > MAX_PIXELS {
        return Err(Skipped::TooLarge);
    }
    if matches!(d.get(b"ImageMask"), Ok(Object::Boolean(true))) {
        return Err(Skipped::Unsupported("stencil mask".into()));
    }
    let filters: Vec<Vec<u8>> =
        stream.filters().map(|f| f.into_iter().map(<[u8]>::to_vec).collect()).unwrap_or_default();
    match filters.iter().map(Vec::as_slice).collect::<Vec<_>>().as_slice() {
        [b"DCTDecode" | b"DCT"] => {
            if !stream.content.starts_with(b"\xFF\xD8\xFF") {
                return Err(Skipped::Damaged);
            }
            spend(budget, stream.content.len())?;
            return Ok(Picture { bytes: stream.content.clone(), content_type: "image/jpeg" });
        }
        // A JPEG compressed again (`[/FlateDecode /DCTDecode]`): the outer filter undone.
        [outer @ (b"FlateDecode" | b"Fl"), b"DCTDecode" | b"DCT"] => {
            let mut dict = lopdf::Dictionary::new();
            dict.set("Filter", Object::Name(outer.to_vec()));
            if let Ok(Object::Array(params)) = d.get(b"DecodeParms") {
                if let Some(first) = params.first().filter(|p| !matches!(p, Object::Null)) {
                    dict.set("DecodeParms", first.clone());
                }
            }
            let inner =
                Stream { dict, content: stream.content.clone(), allows_compression: false, start_position: None };
            let cap = (*budget).min(MAX_PICTURE_FILE);
            let jpeg = inner.get_plain_content_with_limit(cap).map_err(|_| Skipped::Damaged)?;
            if !jpeg.starts_with(b"\xFF\xD8\xFF") {
                return Err(Skipped::Damaged);
            }
            spend(budget, jpeg.len())?;
            return Ok(Picture { bytes: jpeg, content_type: "image/jpeg" });
        }
        [] | [b"FlateDecode" | b"Fl"] | [b"LZWDecode" | b"LZW"] | [b"RunLengthDecode" | b"RL"] => {}
        [.., other] => {
            let name = String::from_utf8_lossy(other).trim_end_matches("Decode").to_owned();
            return Err(Skipped::Unsupported(name));
        }
    }
    let colours = colours(doc, d.get(b"ColorSpace").ok())?;
    let bits = integer(doc, d, b"BitsPerComponent").unwrap_or(8);
    let components: u64 = match (&colours, bits) {
        (Colours::Gray, 1 | 2 | 4 | 8) | (Colours::Indexed(_), 1 | 2 | 4 | 8) => 1,
        (Colours::Rgb, 8) => 3,
        (Colours::Cmyk, 8) => 4,
        _ => return Err(Skipped::Unsupported(format!("{bits}-bit samples"))),
    };
    let (w, h) = (width as u64, height as u64);
    let row = (w * components * bits as u64).div_ceil(8) as usize;
    let expected = row * h as usize;
    spend(budget, expected)?;
    let samples = stream.get_plain_content_with_limit(expected + 1024).map_err(|_| Skipped::Damaged)?;
    if samples.len() < expected {
        return Err(Skipped::Damaged);
    }
    let mut samples = samples;
    samples.truncate(expected);
    let alpha = soft_mask(doc, images, d, width, height, budget);
    let (color, data, palette) = match (colours, alpha) {
        (Colours::Gray, None) => (png::ColorType::Grayscale, samples, None),
        (Colours::Gray, Some(alpha)) if bits == 8 => {
            (png::ColorType::GrayscaleAlpha, samples.iter().zip(&alpha).flat_map(|(g, a)| [*g, *a]).collect(), None)
        }
        (Colours::Gray, Some(_)) => (png::ColorType::Grayscale, samples, None),
        (Colours::Rgb, None) => (png::ColorType::Rgb, samples, None),
        (Colours::Rgb, Some(alpha)) => (
            png::ColorType::Rgba,
            samples.chunks_exact(3).zip(&alpha).flat_map(|(p, a)| [p[0], p[1], p[2], *a]).collect(),
            None,
        ),
        (Colours::Cmyk, alpha) => {
            let rgb = samples.chunks_exact(4).map(cmyk_to_rgb);
            match alpha {
                None => (png::ColorType::Rgb, rgb.flatten().collect(), None),
                Some(alpha) => {
                    (png::ColorType::Rgba, rgb.zip(&alpha).flat_map(|(p, a)| [p[0], p[1], p[2], *a]).collect(), None)
                }
            }
        }
        (Colours::Indexed(palette), _) => {
            let entries = 1usize << bits;
            let mut palette = palette;
            palette.resize(entries * 3, 0);
            (png::ColorType::Indexed, samples, Some(palette))
        }
    };
    let depth = match (color, bits) {
        (png::ColorType::Grayscale | png::ColorType::Indexed, 1) => png::BitDepth::One,
        (png::ColorType::Grayscale | png::ColorType::Indexed, 2) => png::BitDepth::Two,
        (png::ColorType::Grayscale | png::ColorType::Indexed, 4) => png::BitDepth::Four,
        _ => png::BitDepth::Eight,
    };
    let decode_inverted = matches!(color, png::ColorType::Grayscale)
        && d.get(b"Decode").ok().and_then(|a| a.as_array().ok()).and_then(|a| a.first()).and_then(|n| number(doc, n))
            == Some(1.0);
    let data = if decode_inverted { data.into_iter().map(|b| !b).collect() } else { data };
    let bytes = encode_png(width as u32, height as u32, color, depth, &data, palette).ok_or(Skipped::Damaged)?;
    Ok(Picture { bytes, content_type: "image/png" })
}

fn spend(budget: &mut usize, bytes: usize) -> Result<(), Skipped> {
    *budget = budget.checked_sub(bytes).ok_or(Skipped::TooLarge)?;
    Ok(())
}

/// The 8-bit alpha of a picture's soft mask, if it has a usable one of its size.
fn soft_mask(
    doc: &Document,
    images: &HashMap<ObjectId, Stream>,
    d: &Dictionary,
    width: i64,
    height: i64,
    budget: &mut usize,
) -> Option<Vec<u8>> {
    let Ok(Object::Reference(id)) = d.get(b"SMask") else { return None };
    let mask = images.get(id)?;
    let size = (integer(doc, &mask.dict, b"Width")?, integer(doc, &mask.dict, b"Height")?);
    if size != (width, height) || integer(doc, &mask.dict, b"BitsPerComponent") != Some(8) {
        return None;
    }
    let expected = (width * height) as usize;
    spend(budget, expected).ok()?;
    let mut alpha = mask.get_plain_content_with_limit(expected + 1024).ok()?;
    (alpha.len() >= expected).then(|| {
        alpha.truncate(expected);
        alpha
    })
}

fn encode_png(
    width: u32,
    height: u32,
    color: png::ColorType,
    depth: png::BitDepth,
    data: &[u8],
    palette: Option<Vec<u8>>,
) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(color);
    encoder.set_depth(depth);
    encoder.set_compression(png::Compression::Fast);
    if let Some(palette) = palette {
        encoder.set_palette(palette);
    }
    let mut writer = encoder.write_header().ok()?;
    writer.write_image_data(data).ok()?;
    writer.finish().ok()?;
    Some(out)
}

/// The pictures of a PDF: where each is drawn, and the files they make.
#[derive(Default)]
pub(super) struct Decoded {
    /// Each drawing, with the index of its file in `files`.
    pub drawn: Vec<(Drawn, usize)>,
    pub files: Vec<Picture>,
    pub warnings: Vec<String>,
    /// Some pictures were left out as decoration (too small to be more).
    pub decoration: bool,
}

/// Decodes the pictures drawn (each once, however often it is drawn), within
/// [`MAX_DECODED`] bytes.
pub(super) fn decode_all(doc: &Document, images: &HashMap<ObjectId, Stream>, drawn: Vec<Drawn>) -> Decoded {
    let mut out = Decoded::default();
    let mut done: HashMap<ObjectId, Option<usize>> = HashMap::new();
    let mut budget = MAX_DECODED;
    let warn = |out: &mut Decoded, warning: String| {
        if out.warnings.len() < 16 && !out.warnings.contains(&warning) {
            out.warnings.push(warning);
        }
    };
    for drawing in drawn {
        let index = match done.get(&drawing.id) {
            Some(index) => *index,
            None => {
                let index = match decode(doc, images, drawing.id, &mut budget) {
                    Ok(picture) => {
                        out.files.push(picture);
                        Some(out.files.len() - 1)
                    }
                    Err(Skipped::Tiny) => {
                        out.decoration = true;
                        None
                    }
                    Err(Skipped::Unsupported(what)) => {
                        warn(&mut out, format!("a picture in a form not converted ({what}) was skipped"));
                        None
                    }
                    Err(Skipped::TooLarge) => {
                        warn(
                            &mut out,
                            format!(
                                "a picture over the limits ({} million pixels, {} MiB decoded for all pictures) was skipped",
                                MAX_PIXELS / 1_000_000,
                                MAX_DECODED >> 20
                            ),
                        );
                        None
                    }
                    Err(Skipped::Damaged) => {
                        warn(&mut out, "a damaged picture was skipped".to_owned());
                        None
                    }
                };
                done.insert(drawing.id, index);
                index
            }
        };
        if let Some(index) = index {
            out.drawn.push((drawing, index));
        }
    }
    out
}

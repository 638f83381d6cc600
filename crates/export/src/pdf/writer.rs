//! The PDF objects, written with lopdf: pages with compressed content streams, link
//! annotations (a URI action for an address, a destination on the page where the id starts
//! for a link inside the document), Type0 fonts (subset with `subsetter`, glyph ids as CIDs:
//! CIDFontType2 for TrueType outlines, CIDFontType0 with an OpenType `FontFile3` for CFF
//! ones, a `ToUnicode` CMap mapping each glyph to the text it shows), image XObjects, the
//! catalog and the document information. Shaped glyph positions are written as `TJ`
//! adjustments and rises.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::rc::Rc;

use lopdf::{dictionary, Dictionary, Document, Object, ObjectId, Stream, StringFormat};
use subsetter::GlyphRemapper;
use ttf_parser::GlyphId;

use super::fonts::{FontId, Fonts, Loaded};
use super::images::{Data, PdfImage};
use super::layout::{LinkTo, Op};
use super::shape::{Cluster, Gl};
use super::{Page, PageSetup, PageSink};
use crate::model::Rgb;

/// Glyphs used per font: new glyph ids (the subset's) and the text each shows.
struct UsedFont {
    remapper: GlyphRemapper,
    unicode: BTreeMap<u16, String>,
}

/// Writes the pages as the pager finishes them (each page's content compressed at once, so a
/// long document never holds more than one page of laid-out lines), then the fonts, the
/// pictures and the file.
pub(crate) struct PdfWriter {
    doc: Document,
    pages_id: ObjectId,
    resources_id: ObjectId,
    used: HashMap<FontId, UsedFont>,
    page_ids: Vec<ObjectId>,
    /// Where each id starts: its page and the point (first occurrence wins).
    dests: HashMap<Rc<str>, (ObjectId, f32, f32)>,
    /// Internal links: the annotation, its page, and the id it goes to (resolved at the end,
    /// as a link may point at a later page).
    internal: Vec<(ObjectId, ObjectId, Rc<str>)>,
    setup: PageSetup,
    /// The first failure (a page that could not be compressed), reported by [`Self::finish`].
    failed: Option<String>,
}

impl PdfWriter {
    pub(crate) fn new(setup: PageSetup) -> Self {
        let mut doc = Document::with_version("1.7");
        let pages_id = doc.new_object_id();
        let resources_id = doc.new_object_id();
        PdfWriter {
            doc,
            pages_id,
            resources_id,
            used: HashMap::new(),
            page_ids: Vec::new(),
            dests: HashMap::new(),
            internal: Vec::new(),
            setup,
            failed: None,
        }
    }

    fn add_page(&mut self, page: &Page) -> Result<(), String> {
        let (content, annots, dests) = page_content(page, &mut self.used, self.setup);
        let mut stream = Stream::new(Dictionary::new(), content.into_bytes());
        stream.compress().map_err(|e| format!("compressing a page failed: {e}"))?;
        let doc = &mut self.doc;
        let content_id = doc.add_object(stream);
        let page_id = doc.new_object_id();
        for (id, x, y) in dests {
            self.dests.entry(id).or_insert((page_id, x, y));
        }
        let mut annot_ids = Vec::with_capacity(annots.len());
        for (annot, to) in annots {
            let annot_id = doc.add_object(annot);
            if let Some(id) = to {
                self.internal.push((annot_id, page_id, id));
            }
            annot_ids.push(Object::Reference(annot_id));
        }
        let mut dict = dictionary! {
            "Type" => "Page",
            "Parent" => self.pages_id,
            "MediaBox" => vec![0.into(), 0.into(), self.setup.width.into(), self.setup.height.into()],
            "Resources" => self.resources_id,
            "Contents" => content_id,
        };
        if !annot_ids.is_empty() {
            dict.set("Annots", annot_ids);
        }
        doc.objects.insert(page_id, Object::Dictionary(dict));
        self.page_ids.push(page_id);
        Ok(())
    }

    /// Points each internal link at the page and place where its id starts (`/XYZ`, the
    /// zoom left as it is); a link to an id the document does not have is removed.
    fn resolve_links(&mut self) {
        for (annot_id, page_id, id) in std::mem::take(&mut self.internal) {
            match self.dests.get(&id) {
                Some(&(target, x, y)) => {
                    if let Some(Object::Dictionary(annot)) = self.doc.objects.get_mut(&annot_id) {
                        let dest = vec![target.into(), "XYZ".into(), x.into(), y.into(), Object::Null];
                        annot.set("Dest", dest);
                    }
                }
                None => {
                    self.doc.objects.remove(&annot_id);
                    if let Some(Object::Dictionary(page)) = self.doc.objects.get_mut(&page_id) {
                        if let Ok(Object::Array(annots)) = page.get_mut(b"Annots") {
                            annots.retain(|a| a.as_reference().ok() != Some(annot_id));
                        }
                    }
                }
            }
        }
    }

    pub(crate) fn finish(mut self, fonts: &Fonts, pictures: Vec<PdfImage>, title: &str) -> Result<Vec<u8>, String> {
        self.resolve_links();
        let PdfWriter { mut doc, pages_id, resources_id, mut used, page_ids, failed, .. } = self;
        if let Some(e) = failed {
            return Err(e);
        }
        let mut font_dict = Dictionary::new();
        for (i, loaded) in fonts.all().iter().enumerate() {
            let font = FontId(u16::try_from(i).unwrap_or(u16::MAX));
            if let Some(u) = used.remove(&font) {
                let id = embed_font(&mut doc, loaded, font, u)?;
                font_dict.set(format!("F{}", font.0), id);
            }
        }
        let mut xobjects = Dictionary::new();
        for (i, picture) in pictures.into_iter().enumerate() {
            let id = embed_image(&mut doc, picture)?;
            xobjects.set(format!("Im{i}"), id);
        }
        doc.objects.insert(
            resources_id,
            Object::Dictionary(dictionary! {
                "Font" => font_dict,
                "XObject" => xobjects,
                "ProcSet" => vec!["PDF".into(), "Text".into(), "ImageB".into(), "ImageC".into()],
            }),
        );
        let count = page_ids.len() as i64;
        doc.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! {
                "Type" => "Pages",
                "Kids" => page_ids.into_iter().map(Object::Reference).collect::<Vec<_>>(),
                "Count" => count,
            }),
        );
        let catalog_id = doc.add_object(dictionary! {
            "Type" => "Catalog",
            "Pages" => pages_id,
            "ViewerPreferences" => dictionary! { "DisplayDocTitle" => true },
        });
        let info_id = doc.add_object(dictionary! {
            "Title" => text_string(title),
            "Producer" => Object::string_literal("Redline"),
        });
        doc.trailer.set("Root", catalog_id);
        doc.trailer.set("Info", info_id);
        let mut out = Vec::new();
        doc.save_to(&mut out).map_err(|e| format!("writing the file failed: {e}"))?;
        Ok(out)
    }
}

impl PageSink for PdfWriter {
    fn page(&mut self, page: Page) {
        if self.failed.is_none() {
            if let Err(e) = self.add_page(&page) {
                self.failed = Some(e);
            }
        }
    }
}

/// A PDF text string: PDFDocEncoding-safe ASCII as is, anything else as UTF-16BE.
fn text_string(s: &str) -> Object {
    if s.chars().all(|c| (' '..='~').contains(&c)) {
        return Object::String(s.as_bytes().to_vec(), StringFormat::Literal);
    }
    let mut bytes = vec![0xFE, 0xFF];
    for unit in s.encode_utf16() {
        bytes.extend(unit.to_be_bytes());
    }
    Object::String(bytes, StringFormat::Hexadecimal)
}

/// A number for a content stream (two decimals, no exponent).
fn num(v: f32) -> String {
    let v = if v.is_finite() { v } else { 0.0 };
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" || s.is_empty() {
        "0".to_string()
    } else {
        s.to_string()
    }
}

fn rgb(c: Rgb) -> String {
    format!("{} {} {}", num(f32::from(c.0) / 255.0), num(f32::from(c.1) / 255.0), num(f32::from(c.2) / 255.0))
}

/// A URI as 7-bit ASCII (other bytes percent-encoded).
fn ascii_uri(uri: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(uri.len());
    for b in uri.bytes() {
        if b.is_ascii_graphic() {
            out.push(b);
        } else {
            out.extend(format!("%{b:02X}").bytes());
        }
    }
    out
}

/// A page's content stream, its link annotations (with the id an internal one goes to, its
/// destination set once known), and the ids that start on it with their point.
type PageContent = (String, Vec<(Dictionary, Option<Rc<str>>)>, Vec<(Rc<str>, f32, f32)>);

/// The content stream, link annotations and destinations of a page.
fn page_content(page: &Page, used: &mut HashMap<FontId, UsedFont>, setup: PageSetup) -> PageContent {
    let margin = setup.margin;
    let mut s = String::new();
    let mut annots = Vec::new();
    let mut dests = Vec::new();
    // Page coordinates of a point `dy` below the top of a line placed at `line_y`.
    let top = setup.height - margin;
    for (line_y, line) in page {
        for op in &line.ops {
            match op {
                Op::Fill { x, y, w, h, color } => {
                    let _ = writeln!(
                        s,
                        "{} rg {} {} {} {} re f",
                        rgb(*color),
                        num(margin + x),
                        num(top - line_y - y - h),
                        num(*w),
                        num(*h)
                    );
                }
                Op::Stroke { x, y, w, h, color, width } => {
                    let _ = writeln!(
                        s,
                        "{} w {} RG {} {} {} {} re S",
                        num(*width),
                        rgb(*color),
                        num(margin + x),
                        num(top - line_y - y - h),
                        num(*w),
                        num(*h)
                    );
                }
                Op::Text { x, y, font, size, color, skew, glyphs } => {
                    let u = used.entry(*font).or_insert_with(|| {
                        let mut remapper = GlyphRemapper::new();
                        remapper.remap(0);
                        UsedFont { remapper, unicode: BTreeMap::new() }
                    });
                    let _ = write!(
                        s,
                        "BT /F{} {} Tf {} rg {} {} {} Tm ",
                        font.0,
                        num(*size),
                        rgb(*color),
                        if *skew { "1 0 0.2 1" } else { "1 0 0 1" },
                        num(margin + x),
                        num(top - line_y - y)
                    );
                    show_glyphs(&mut s, glyphs, *size, u);
                    s.push_str("ET\n");
                }
                Op::Image { x, y, w, h, image } => {
                    let _ = writeln!(
                        s,
                        "q {} 0 0 {} {} {} cm /Im{image} Do Q",
                        num(*w),
                        num(*h),
                        num(margin + x),
                        num(top - line_y - y - h)
                    );
                }
                Op::NoteRef(_) => {}
                Op::Dest { x, y, ids } => {
                    for id in ids {
                        dests.push((id.clone(), margin + x, top - line_y - y));
                    }
                }
                Op::Link { x, y, w, h, to } => {
                    let (x0, y0) = (margin + x, top - line_y - y - h);
                    let mut annot = dictionary! {
                        "Type" => "Annot",
                        "Subtype" => "Link",
                        "Rect" => vec![x0.into(), y0.into(), (x0 + w).into(), (y0 + h).into()],
                        "Border" => vec![0.into(), 0.into(), 0.into()],
                    };
                    let internal = match to {
                        LinkTo::Uri(uri) => {
                            annot.set(
                                "A",
                                dictionary! {
                                    "Type" => "Action",
                                    "S" => "URI",
                                    "URI" => Object::String(ascii_uri(uri), StringFormat::Literal),
                                },
                            );
                            None
                        }
                        LinkTo::Id(id) => Some(id.clone()),
                    };
                    annots.push((annot, internal));
                }
            }
        }
    }
    (s, annots, dests)
}

/// Shows shaped glyphs: `TJ` arrays whose numbers move each glyph from the advance the viewer
/// takes from the font to the shaped one (kerning, marks), and `Ts` rises for vertical offsets.
fn show_glyphs(s: &mut String, glyphs: &[Gl], size: f32, u: &mut UsedFont) {
    let mut rise = 0.0f32;
    let mut open = false;
    let adjust = |s: &mut String, n: f32| {
        let n = (n * 1000.0).round();
        if n != 0.0 {
            let _ = write!(s, " {n} ");
        }
    };
    for g in glyphs {
        if (g.dy - rise).abs() > 1e-4 {
            if open {
                s.push_str("] TJ ");
                open = false;
            }
            rise = g.dy;
            let _ = write!(s, "{} Ts ", num(rise * size));
        }
        if !open {
            s.push('[');
            open = true;
        }
        // A positive number moves left: `-dx` before the glyph, back after it.
        adjust(s, -g.dx);
        let new = u.remapper.remap(g.gid);
        match &g.text {
            Cluster::One(c) => {
                u.unicode.entry(new).or_insert_with(|| c.to_string());
            }
            Cluster::Many(text) => {
                u.unicode.entry(new).or_insert_with(|| text.to_string());
            }
            Cluster::None => {}
        }
        let _ = write!(s, "<{new:04X}>");
        // The viewer advances by the `W` entry: `hmtx` rounded to 1/1000 em.
        adjust(s, (g.hmtx * 1000.0).round() / 1000.0 - g.adv + g.dx);
    }
    if open {
        s.push_str("] TJ ");
    }
    if rise != 0.0 {
        s.push_str("0 Ts ");
    }
}

/// A subset tag (`ABCDEF+`) derived from the glyphs kept.
fn subset_tag(font: FontId, remapper: &GlyphRemapper) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ u64::from(font.0);
    for gid in remapper.remapped_gids() {
        h = (h ^ u64::from(gid)).wrapping_mul(0x0100_0000_01b3);
    }
    (0..6).map(|i| char::from(b'A' + ((h >> (i * 5)) % 26) as u8)).collect()
}

fn embed_font(doc: &mut Document, loaded: &Loaded, font: FontId, used: UsedFont) -> Result<ObjectId, String> {
    let face = &loaded.face;
    let subset = subsetter::subset(loaded.data, loaded.index, &used.remapper)
        .map_err(|e| format!("subsetting {} failed: {e}", loaded.name))?;
    let units = loaded.units;
    let scale = |v: f32| (v * 1000.0 / units).round() as i64;
    let name = format!("{}+{}", subset_tag(font, &used.remapper), loaded.name);

    let file_dict = if loaded.cff {
        dictionary! { "Subtype" => "OpenType" }
    } else {
        dictionary! { "Length1" => subset.len() as i64 }
    };
    let mut file = Stream::new(file_dict, subset);
    file.compress().map_err(|e| format!("compressing a font failed: {e}"))?;
    let file_id = doc.add_object(file);

    let bbox = face.global_bounding_box();
    let mut flags = 32;
    if loaded.mono {
        flags |= 1;
    }
    if loaded.italic {
        flags |= 64;
    }
    let descriptor_id = doc.add_object(dictionary! {
        "Type" => "FontDescriptor",
        "FontName" => Object::Name(name.clone().into_bytes()),
        "Flags" => flags,
        "FontBBox" => vec![
            scale(f32::from(bbox.x_min)).into(),
            scale(f32::from(bbox.y_min)).into(),
            scale(f32::from(bbox.x_max)).into(),
            scale(f32::from(bbox.y_max)).into(),
        ],
        "ItalicAngle" => face.italic_angle(),
        "Ascent" => scale(f32::from(face.ascender())),
        "Descent" => scale(f32::from(face.descender())),
        "CapHeight" => scale(f32::from(face.capital_height().unwrap_or(face.ascender()))),
        "StemV" => if loaded.bold { 120 } else { 80 },
        if loaded.cff { "FontFile3" } else { "FontFile2" } => file_id,
    });

    let widths: Vec<Object> = used
        .remapper
        .remapped_gids()
        .map(|old| Object::Integer(scale(f32::from(face.glyph_hor_advance(GlyphId(old)).unwrap_or(0)))))
        .collect();
    let mut cid_font = dictionary! {
        "Type" => "Font",
        "Subtype" => if loaded.cff { "CIDFontType0" } else { "CIDFontType2" },
        "BaseFont" => Object::Name(name.clone().into_bytes()),
        "CIDSystemInfo" => dictionary! {
            "Registry" => Object::string_literal("Adobe"),
            "Ordering" => Object::string_literal("Identity"),
            "Supplement" => 0,
        },
        "FontDescriptor" => descriptor_id,
        "W" => vec![0.into(), Object::Array(widths)],
    };
    if !loaded.cff {
        cid_font.set("CIDToGIDMap", "Identity");
    }
    let cid_font_id = doc.add_object(cid_font);

    let mut cmap = Stream::new(Dictionary::new(), to_unicode(&used.unicode).into_bytes());
    cmap.compress().map_err(|e| format!("compressing a font map failed: {e}"))?;
    let cmap_id = doc.add_object(cmap);

    Ok(doc.add_object(dictionary! {
        "Type" => "Font",
        "Subtype" => "Type0",
        "BaseFont" => Object::Name(name.into_bytes()),
        "Encoding" => "Identity-H",
        "DescendantFonts" => vec![cid_font_id.into()],
        "ToUnicode" => cmap_id,
    }))
}

/// The `ToUnicode` CMap: each glyph id to the character it was used for.
fn to_unicode(map: &BTreeMap<u16, String>) -> String {
    let mut s = String::from(
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n\
         /CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n\
         /CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n\
         1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n",
    );
    let entries: Vec<(&u16, &String)> = map.iter().collect();
    for chunk in entries.chunks(100) {
        let _ = writeln!(s, "{} beginbfchar", chunk.len());
        for (gid, c) in chunk {
            let hex: String = c.encode_utf16().map(|u| format!("{u:04X}")).collect();
            let _ = writeln!(s, "<{gid:04X}> <{hex}>");
        }
        s.push_str("endbfchar\n");
    }
    s.push_str("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n");
    s
}

fn embed_image(doc: &mut Document, picture: PdfImage) -> Result<ObjectId, String> {
    let (w, h) = (i64::from(picture.width), i64::from(picture.height));
    match picture.data {
        Data::Jpeg { bytes, components, adobe } => {
            let space = match components {
                1 => "DeviceGray",
                4 => "DeviceCMYK",
                _ => "DeviceRGB",
            };
            let mut dict = dictionary! {
                "Type" => "XObject",
                "Subtype" => "Image",
                "Width" => w,
                "Height" => h,
                "ColorSpace" => space,
                "BitsPerComponent" => 8,
                "Filter" => "DCTDecode",
            };
            if components == 4 && adobe {
                dict.set("Decode", (0..4).flat_map(|_| [Object::Integer(1), Object::Integer(0)]).collect::<Vec<_>>());
            }
            Ok(doc.add_object(Stream::new(dict, bytes).with_compression(false)))
        }
        Data::Raw { samples, gray, alpha } => {
            let mut dict = dictionary! {
                "Type" => "XObject",
                "Subtype" => "Image",
                "Width" => w,
                "Height" => h,
                "ColorSpace" => if gray { "DeviceGray" } else { "DeviceRGB" },
                "BitsPerComponent" => 8,
            };
            if let Some(alpha) = alpha {
                let mut mask = Stream::new(
                    dictionary! {
                        "Type" => "XObject",
                        "Subtype" => "Image",
                        "Width" => w,
                        "Height" => h,
                        "ColorSpace" => "DeviceGray",
                        "BitsPerComponent" => 8,
                    },
                    alpha,
                );
                mask.compress().map_err(|e| format!("compressing an image failed: {e}"))?;
                dict.set("SMask", doc.add_object(mask));
            }
            let mut stream = Stream::new(dict, samples);
            stream.compress().map_err(|e| format!("compressing an image failed: {e}"))?;
            Ok(doc.add_object(stream))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_strings() {
        assert_eq!(num(1.0), "1");
        assert_eq!(num(-0.001), "0");
        assert_eq!(num(12.345), "12.35");
        assert_eq!(num(f32::NAN), "0");
        assert_eq!(text_string("Plain"), Object::String(b"Plain".to_vec(), StringFormat::Literal));
        assert_eq!(text_string("é"), Object::String(vec![0xFE, 0xFF, 0x00, 0xE9], StringFormat::Hexadecimal));
        assert_eq!(ascii_uri("https://x.test/é"), b"https://x.test/%C3%A9");
        let cmap = to_unicode(&BTreeMap::from([(1, "A".to_string()), (2, "😀".to_string()), (3, "fi".to_string())]));
        assert!(cmap.contains("<0001> <0041>") && cmap.contains("<0002> <D83DDE00>"), "{cmap}");
        assert!(cmap.contains("<0003> <00660069>"), "{cmap}");
    }
}

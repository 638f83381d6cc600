//! The PDF objects, written with lopdf: pages with compressed content streams, link
//! annotations, Type0/CIDFontType2 fonts (subset with `subsetter`, glyph ids as CIDs, a
//! `ToUnicode` CMap), image XObjects, the catalog and the document information.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use lopdf::{dictionary, Dictionary, Document, Object, ObjectId, Stream, StringFormat};
use subsetter::GlyphRemapper;
use ttf_parser::GlyphId;

use super::fonts::{FontId, Fonts, ALL_FONTS};
use super::images::{Data, PdfImage};
use super::layout::Op;
use super::{Page, PageSink, MARGIN, PAGE_H, PAGE_W};
use crate::model::Rgb;

/// Glyphs used per font: new glyph ids (the subset's) and the text each shows.
struct UsedFont {
    remapper: GlyphRemapper,
    unicode: BTreeMap<u16, char>,
}

/// Writes the pages as the pager finishes them (each page's content compressed at once, so a
/// long document never holds more than one page of laid-out lines), then the fonts, the
/// pictures and the file.
pub(crate) struct PdfWriter {
    doc: Document,
    pages_id: ObjectId,
    resources_id: ObjectId,
    used: [Option<UsedFont>; 5],
    page_ids: Vec<ObjectId>,
    /// The first failure (a page that could not be compressed), reported by [`Self::finish`].
    failed: Option<String>,
}

impl PdfWriter {
    pub(crate) fn new() -> Self {
        let mut doc = Document::with_version("1.7");
        let pages_id = doc.new_object_id();
        let resources_id = doc.new_object_id();
        PdfWriter { doc, pages_id, resources_id, used: Default::default(), page_ids: Vec::new(), failed: None }
    }

    fn add_page(&mut self, page: &Page) -> Result<(), String> {
        let (content, annots) = page_content(page, &mut self.used);
        let mut stream = Stream::new(Dictionary::new(), content.into_bytes());
        stream.compress().map_err(|e| format!("compressing a page failed: {e}"))?;
        let doc = &mut self.doc;
        let content_id = doc.add_object(stream);
        let annot_ids: Vec<Object> = annots.into_iter().map(|a| Object::Reference(doc.add_object(a))).collect();
        let mut dict = dictionary! {
            "Type" => "Page",
            "Parent" => self.pages_id,
            "MediaBox" => vec![0.into(), 0.into(), PAGE_W.into(), PAGE_H.into()],
            "Resources" => self.resources_id,
            "Contents" => content_id,
        };
        if !annot_ids.is_empty() {
            dict.set("Annots", annot_ids);
        }
        self.page_ids.push(doc.add_object(dict));
        Ok(())
    }

    pub(crate) fn finish(self, fonts: &Fonts, pictures: Vec<PdfImage>, title: &str) -> Result<Vec<u8>, String> {
        let PdfWriter { mut doc, pages_id, resources_id, mut used, page_ids, failed } = self;
        if let Some(e) = failed {
            return Err(e);
        }
        let mut font_dict = Dictionary::new();
        for font in ALL_FONTS {
            if let Some(u) = used[font.index()].take() {
                let id = embed_font(&mut doc, fonts, font, u)?;
                font_dict.set(format!("F{}", font.index()), id);
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

/// The content stream and link annotations of a page.
fn page_content(page: &Page, used: &mut [Option<UsedFont>; 5]) -> (String, Vec<Dictionary>) {
    let mut s = String::new();
    let mut annots = Vec::new();
    // Page coordinates of a point `dy` below the top of a line placed at `line_y`.
    let top = PAGE_H - MARGIN;
    for (line_y, line) in page {
        for op in &line.ops {
            match op {
                Op::Fill { x, y, w, h, color } => {
                    let _ = writeln!(
                        s,
                        "{} rg {} {} {} {} re f",
                        rgb(*color),
                        num(MARGIN + x),
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
                        num(MARGIN + x),
                        num(top - line_y - y - h),
                        num(*w),
                        num(*h)
                    );
                }
                Op::Text { x, y, font, size, color, glyphs } => {
                    let u = used[font.index()].get_or_insert_with(|| {
                        let mut remapper = GlyphRemapper::new();
                        remapper.remap(0);
                        UsedFont { remapper, unicode: BTreeMap::new() }
                    });
                    let mut hex = String::with_capacity(glyphs.len() * 4);
                    for (gid, c) in glyphs {
                        let new = u.remapper.remap(*gid);
                        if *gid != 0 {
                            u.unicode.entry(new).or_insert(*c);
                        }
                        let _ = write!(hex, "{new:04X}");
                    }
                    let _ = writeln!(
                        s,
                        "BT /F{} {} Tf {} rg 1 0 0 1 {} {} Tm <{hex}> Tj ET",
                        font.index(),
                        num(*size),
                        rgb(*color),
                        num(MARGIN + x),
                        num(top - line_y - y)
                    );
                }
                Op::Image { x, y, w, h, image } => {
                    let _ = writeln!(
                        s,
                        "q {} 0 0 {} {} {} cm /Im{image} Do Q",
                        num(*w),
                        num(*h),
                        num(MARGIN + x),
                        num(top - line_y - y - h)
                    );
                }
                Op::Link { x, y, w, h, uri } => {
                    let (x0, y0) = (MARGIN + x, top - line_y - y - h);
                    annots.push(dictionary! {
                        "Type" => "Annot",
                        "Subtype" => "Link",
                        "Rect" => vec![x0.into(), y0.into(), (x0 + w).into(), (y0 + h).into()],
                        "Border" => vec![0.into(), 0.into(), 0.into()],
                        "A" => dictionary! {
                            "Type" => "Action",
                            "S" => "URI",
                            "URI" => Object::String(ascii_uri(uri), StringFormat::Literal),
                        },
                    });
                }
            }
        }
    }
    (s, annots)
}

/// A subset tag (`ABCDEF+`) derived from the glyphs kept.
fn subset_tag(font: FontId, remapper: &GlyphRemapper) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ font.index() as u64;
    for gid in remapper.remapped_gids() {
        h = (h ^ u64::from(gid)).wrapping_mul(0x0100_0000_01b3);
    }
    (0..6).map(|i| char::from(b'A' + ((h >> (i * 5)) % 26) as u8)).collect()
}

fn embed_font(doc: &mut Document, fonts: &Fonts, font: FontId, used: UsedFont) -> Result<ObjectId, String> {
    let face = fonts.face(font);
    let subset = subsetter::subset(font.data(), 0, &used.remapper)
        .map_err(|e| format!("subsetting {} failed: {e}", font.postscript_name()))?;
    let units = f32::from(face.units_per_em().max(1));
    let scale = |v: f32| (v * 1000.0 / units).round() as i64;
    let name = format!("{}+{}", subset_tag(font, &used.remapper), font.postscript_name());

    let mut file = Stream::new(dictionary! { "Length1" => subset.len() as i64 }, subset);
    file.compress().map_err(|e| format!("compressing a font failed: {e}"))?;
    let file_id = doc.add_object(file);

    let bbox = face.global_bounding_box();
    let mut flags = 32;
    if font == FontId::Mono {
        flags |= 1;
    }
    if matches!(font, FontId::Italic | FontId::BoldItalic) {
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
        "StemV" => if matches!(font, FontId::Bold | FontId::BoldItalic) { 120 } else { 80 },
        "FontFile2" => file_id,
    });

    let widths: Vec<Object> = used
        .remapper
        .remapped_gids()
        .map(|old| Object::Integer(scale(f32::from(face.glyph_hor_advance(GlyphId(old)).unwrap_or(0)))))
        .collect();
    let cid_font_id = doc.add_object(dictionary! {
        "Type" => "Font",
        "Subtype" => "CIDFontType2",
        "BaseFont" => Object::Name(name.clone().into_bytes()),
        "CIDSystemInfo" => dictionary! {
            "Registry" => Object::string_literal("Adobe"),
            "Ordering" => Object::string_literal("Identity"),
            "Supplement" => 0,
        },
        "FontDescriptor" => descriptor_id,
        "W" => vec![0.into(), Object::Array(widths)],
        "CIDToGIDMap" => "Identity",
    });

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
fn to_unicode(map: &BTreeMap<u16, char>) -> String {
    let mut s = String::from(
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n\
         /CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n\
         /CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n\
         1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n",
    );
    let entries: Vec<(&u16, &char)> = map.iter().collect();
    for chunk in entries.chunks(100) {
        let _ = writeln!(s, "{} beginbfchar", chunk.len());
        for (gid, c) in chunk {
            let mut units = [0u16; 2];
            let hex: String = c.encode_utf16(&mut units).iter().map(|u| format!("{u:04X}")).collect();
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
        let cmap = to_unicode(&BTreeMap::from([(1, 'A'), (2, '😀')]));
        assert!(cmap.contains("<0001> <0041>") && cmap.contains("<0002> <D83DDE00>"), "{cmap}");
    }
}

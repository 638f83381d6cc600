//! Images referenced by the document: `data:` URLs and `/v1/documents/images/{id}` URLs
//! (answered by the [`ImageSource`]). The type is read from the bytes, never trusted from
//! the URL, and the pixel size from the file's header. Word processors are given WebP
//! pictures as PNGs ([`office_picture`]).

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use base64::Engine;
use redline_ports::ImageSource;

use crate::model::ImageRef;

/// Where the product serves a document's images.
pub(crate) const IMAGE_PATH: &str = "/v1/documents/images/";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Png,
    Jpeg,
    Gif,
    Bmp,
    Webp,
}

impl Kind {
    pub(crate) fn extension(self) -> &'static str {
        match self {
            Kind::Png => "png",
            Kind::Jpeg => "jpeg",
            Kind::Gif => "gif",
            Kind::Bmp => "bmp",
            Kind::Webp => "webp",
        }
    }

    pub(crate) fn content_type(self) -> &'static str {
        match self {
            Kind::Png => "image/png",
            Kind::Jpeg => "image/jpeg",
            Kind::Gif => "image/gif",
            Kind::Bmp => "image/bmp",
            Kind::Webp => "image/webp",
        }
    }
}

/// An image's bytes, type and size in pixels.
#[derive(Debug, Clone)]
pub(crate) struct Picture {
    pub kind: Kind,
    pub bytes: Vec<u8>,
    pub width: u32,
    pub height: u32,
}

/// The image id of a `/v1/documents/images/{id}` URL (relative or absolute).
pub(crate) fn image_id(src: &str) -> Option<&str> {
    let src = src.trim();
    let path_start = if src.starts_with('/') {
        0
    } else {
        let rest = src.strip_prefix("https://").or_else(|| src.strip_prefix("http://"))?;
        src.len() - rest.len() + rest.find('/')?
    };
    let id = src[path_start..].strip_prefix(IMAGE_PATH)?;
    let id = id.split(['?', '#']).next().unwrap_or("");
    (!id.is_empty() && !id.contains('/')).then_some(id)
}

/// The bytes of a `data:…;base64,…` URL.
fn data_url(src: &str) -> Option<Vec<u8>> {
    let src = src.trim();
    let rest = src.get(..5).filter(|p| p.eq_ignore_ascii_case("data:")).and(src.get(5..))?;
    let (meta, payload) = rest.split_once(',')?;
    if !meta.to_ascii_lowercase().ends_with(";base64") {
        return None;
    }
    let clean: String = payload.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    STANDARD.decode(&clean).ok().or_else(|| STANDARD_NO_PAD.decode(clean.trim_end_matches('=')).ok())
}

/// The picture `src` refers to, when it can be had here and is a PNG, JPEG, GIF, BMP or
/// WebP whose size can be read.
pub(crate) fn resolve(src: &str, images: &dyn ImageSource) -> Option<Picture> {
    picture(bytes_of(src, images)?)
}

/// `bytes` as a picture, when they are a PNG, JPEG, GIF, BMP or WebP whose size can be read.
pub(crate) fn picture(bytes: Vec<u8>) -> Option<Picture> {
    let (kind, width, height) = sniff(&bytes)?;
    Some(Picture { kind, bytes, width, height })
}

/// The bytes `src` refers to, when they can be had here (any type).
pub(crate) fn bytes_of(src: &str, images: &dyn ImageSource) -> Option<Vec<u8>> {
    if let Some(id) = image_id(src) {
        Some(images.image(id)?.1)
    } else {
        data_url(src)
    }
}

/// The type and pixel size of an image file.
pub(crate) fn sniff(b: &[u8]) -> Option<(Kind, u32, u32)> {
    let be32 = |i: usize| b.get(i..i + 4).map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]));
    let le16 = |i: usize| b.get(i..i + 2).map(|s| u32::from(u16::from_le_bytes([s[0], s[1]])));
    let le32 = |i: usize| b.get(i..i + 4).map(|s| i32::from_le_bytes([s[0], s[1], s[2], s[3]]));
    let (kind, w, h) = if b.starts_with(b"\x89PNG\r\n\x1a\n") && b.get(12..16) == Some(b"IHDR") {
        (Kind::Png, be32(16)?, be32(20)?)
    } else if b.starts_with(&[0xFF, 0xD8, 0xFF]) {
        let info = jpeg_info(b)?;
        (Kind::Jpeg, info.width, info.height)
    } else if b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a") {
        (Kind::Gif, le16(6)?, le16(8)?)
    } else if b.starts_with(b"BM") {
        (Kind::Bmp, le32(18)?.unsigned_abs(), le32(22)?.unsigned_abs())
    } else if b.len() > 12 && b.starts_with(b"RIFF") && &b[8..12] == b"WEBP" {
        // The decoder reads the headers only.
        let (w, h) = image_webp::WebPDecoder::new(std::io::Cursor::new(b)).ok()?.dimensions();
        (Kind::Webp, w, h)
    } else {
        return None;
    };
    (w > 0 && h > 0 && w <= 100_000 && h <= 100_000).then_some((kind, w, h))
}

/// Largest decoded picture accepted, in bytes of samples.
pub(crate) const MAX_SAMPLES: usize = 128 << 20;
/// Decoded samples of all the pictures of one document (a small file can decode to a lot).
pub(crate) const DOCUMENT_SAMPLES: usize = 384 << 20;

/// A WebP picture's samples (its first frame when animated): width, height, whether they are
/// RGBA (else RGB), and the samples, when they fit in `budget` (which they are taken from).
pub(crate) fn decode_webp(bytes: &[u8], budget: &mut usize) -> Option<(u32, u32, bool, Vec<u8>)> {
    let mut decoder = image_webp::WebPDecoder::new(std::io::Cursor::new(bytes)).ok()?;
    decoder.set_memory_limit(MAX_SAMPLES);
    let (width, height) = decoder.dimensions();
    let size = decoder.output_buffer_size()?;
    if width == 0 || height == 0 || size > MAX_SAMPLES || size > *budget {
        return None;
    }
    *budget -= size;
    let mut buf = vec![0; size];
    decoder.read_image(&mut buf).ok()?;
    Some((width, height, decoder.has_alpha(), buf))
}

/// The picture as a word processor takes it: a WebP (which Word before 2024 and other
/// readers do not show) as a PNG of the same pixels, its samples taken from the document's
/// `budget`; other types as they are. `None` when a WebP cannot be decoded within it.
pub(crate) fn office_picture(pic: Picture, budget: &mut usize) -> Option<Picture> {
    if pic.kind != Kind::Webp {
        return Some(pic);
    }
    let (width, height, alpha, samples) = decode_webp(&pic.bytes, budget)?;
    let mut bytes = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut bytes, width, height);
        encoder.set_color(if alpha { png::ColorType::Rgba } else { png::ColorType::Rgb });
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().ok()?;
        writer.write_image_data(&samples).ok()?;
    }
    Some(Picture { kind: Kind::Png, bytes, width, height })
}

/// What a PDF needs to embed a JPEG as is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct JpegInfo {
    pub width: u32,
    pub height: u32,
    pub components: u8,
    /// An Adobe APP14 marker: CMYK data is stored inverted.
    pub adobe: bool,
}

/// Reads a JPEG's markers up to its frame header.
pub(crate) fn jpeg_info(b: &[u8]) -> Option<JpegInfo> {
    let mut i = 2;
    let mut adobe = false;
    while i + 4 <= b.len() {
        if b[i] != 0xFF {
            return None;
        }
        let marker = b[i + 1];
        if marker == 0xFF {
            i += 1;
            continue;
        }
        if matches!(marker, 0x01 | 0xD0..=0xD9) {
            i += 2;
            continue;
        }
        let len = usize::from(u16::from_be_bytes([b[i + 2], b[i + 3]]));
        if len < 2 {
            return None;
        }
        if marker == 0xEE && b.get(i + 4..i + 9) == Some(b"Adobe") {
            adobe = true;
        }
        if matches!(marker, 0xC0..=0xCF) && !matches!(marker, 0xC4 | 0xC8 | 0xCC) {
            let s = b.get(i + 4..i + 10)?;
            let height = u32::from(u16::from_be_bytes([s[1], s[2]]));
            let width = u32::from(u16::from_be_bytes([s[3], s[4]]));
            return Some(JpegInfo { width, height, components: s[5], adobe });
        }
        i += 2 + len;
    }
    None
}

/// The size to show an image at, in CSS pixels: the `width`/`height` attributes (one of
/// them scales the other), else the picture's own size.
pub(crate) fn display_px(img: &ImageRef, width: u32, height: u32) -> (f32, f32) {
    let (pw, ph) = (width as f32, height as f32);
    match (img.width, img.height) {
        (Some(w), Some(h)) => (w as f32, h as f32),
        (Some(w), None) => (w as f32, w as f32 * ph / pw),
        (None, Some(h)) => (h as f32 * pw / ph, h as f32),
        (None, None) => (pw, ph),
    }
}

/// As [`display_px`], with a percentage width (`width_pct`) taken of `avail_px`, the
/// width of the text the picture sits in.
pub(crate) fn display_px_in(img: &ImageRef, width: u32, height: u32, avail_px: f32) -> (f32, f32) {
    match img.width_pct {
        Some(pct) if img.width.is_none() => {
            let w = (avail_px * pct / 100.0).max(1.0);
            let h = match img.height {
                Some(h) => h as f32,
                None => w * height as f32 / (width as f32).max(1.0),
            };
            (w, h)
        }
        _ => display_px(img, width, height),
    }
}

/// `(w, h)` scaled down (never up) to fit `max_w` × `max_h`, keeping the ratio.
pub(crate) fn fit(w: f32, h: f32, max_w: f32, max_h: f32) -> (f32, f32) {
    let scale = (max_w / w).min(max_h / h).min(1.0);
    ((w * scale).max(1.0), (h * scale).max(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct One;
    impl ImageSource for One {
        fn image(&self, id: &str) -> Option<(String, Vec<u8>)> {
            (id == "abc").then(|| ("image/png".into(), crate::tests_support::png_2x1()))
        }
    }

    #[test]
    fn ids_of_image_urls() {
        assert_eq!(image_id("/v1/documents/images/abc"), Some("abc"));
        assert_eq!(image_id("https://h.test/v1/documents/images/abc?x=1"), Some("abc"));
        assert_eq!(image_id("/v1/documents/images/"), None);
        assert_eq!(image_id("/v1/documents/images/a/b"), None);
        assert_eq!(image_id("https://h.test/other/abc"), None);
        assert_eq!(image_id("data:image/png;base64,AAAA"), None);
    }

    #[test]
    fn resolving_reads_type_and_size() {
        let png = crate::tests_support::png_2x1();
        let url = format!("data:image/png;base64,{}", STANDARD.encode(&png));
        let p = resolve(&url, &One).expect("data url");
        assert_eq!((p.kind, p.width, p.height), (Kind::Png, 2, 1));
        let p = resolve("/v1/documents/images/abc", &One).expect("source");
        assert_eq!((p.kind, p.width, p.height), (Kind::Png, 2, 1));
        assert!(resolve("/v1/documents/images/nope", &One).is_none());
        assert!(resolve("data:image/png;base64,!!!", &One).is_none());
        assert!(resolve("data:é", &One).is_none());
        assert!(resolve("https://elsewhere.test/x.png", &One).is_none());
    }

    #[test]
    fn jpeg_and_gif_headers() {
        let mut jpeg = vec![0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x00, 0x00];
        jpeg.extend([0xFF, 0xC0, 0x00, 0x0B, 0x08, 0x00, 0x20, 0x00, 0x40, 0x03, 0x01, 0x22, 0x00]);
        assert_eq!(jpeg_info(&jpeg), Some(JpegInfo { width: 64, height: 32, components: 3, adobe: false }));
        assert_eq!(sniff(&jpeg), Some((Kind::Jpeg, 64, 32)));
        assert_eq!(sniff(b"GIF89a\x05\x00\x03\x00"), Some((Kind::Gif, 5, 3)));
        assert_eq!(sniff(b"\xFF\xD8\xFF"), None);
        assert_eq!(sniff(b""), None);
    }

    #[test]
    fn webp_pictures_are_read_and_given_to_word_processors_as_png() {
        let samples: Vec<u8> = (0..4 * 3 * 4).map(|i| (i * 7) as u8).collect();
        let mut webp = Vec::new();
        image_webp::WebPEncoder::new(&mut webp).encode(&samples, 4, 3, image_webp::ColorType::Rgba8).expect("webp");
        let pic = picture(webp).expect("a webp picture");
        assert_eq!((pic.kind, pic.width, pic.height), (Kind::Webp, 4, 3));
        let mut budget = DOCUMENT_SAMPLES;
        let png = office_picture(pic.clone(), &mut budget).expect("transcoded");
        assert_eq!(budget, DOCUMENT_SAMPLES - 4 * 3 * 4, "its samples taken from the budget");
        assert!(office_picture(pic, &mut 10).is_none(), "none past the budget");
        assert_eq!((png.kind, png.width, png.height), (Kind::Png, 4, 3));
        let decoder = png::Decoder::new(std::io::Cursor::new(png.bytes));
        let mut reader = decoder.read_info().expect("a png");
        let mut out = vec![0; reader.output_buffer_size().expect("size")];
        reader.next_frame(&mut out).expect("frame");
        assert_eq!(out, samples, "the same pixels, alpha kept");
        // Not a WebP after all: nothing.
        let broken = Picture { kind: Kind::Webp, bytes: b"RIFF\0\0\0\0WEBPVP8 ".to_vec(), width: 1, height: 1 };
        assert!(office_picture(broken, &mut budget).is_none());
    }

    #[test]
    fn sizes() {
        let img = |w, h| ImageRef {
            src: String::new(),
            alt: String::new(),
            width: w,
            height: h,
            width_pct: None,
            link: None,
            rev: None,
        };
        assert_eq!(display_px(&img(None, None), 200, 100), (200.0, 100.0));
        assert_eq!(display_px(&img(Some(50), None), 200, 100), (50.0, 25.0));
        assert_eq!(display_px(&img(None, Some(50)), 200, 100), (100.0, 50.0));
        assert_eq!(fit(200.0, 100.0, 100.0, 1000.0), (100.0, 50.0));
        assert_eq!(fit(20.0, 10.0, 100.0, 1000.0), (20.0, 10.0));
    }
}

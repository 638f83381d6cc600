//! Pictures as PDF image XObjects: JPEGs are embedded as they are (`DCTDecode`), PNGs are
//! decoded to 8-bit samples (their alpha channel becoming a soft mask). Other types are
//! shown by their alt text.

use std::io::Cursor;

use crate::image::{jpeg_info, Kind, Picture};

/// Largest decoded PNG accepted, in bytes of samples.
const MAX_SAMPLES: usize = 128 << 20;
/// Decoded samples of all the pictures of one document (a small PNG can decode to a lot).
pub(crate) const SAMPLE_BUDGET: usize = 384 << 20;

#[derive(Debug)]
pub(crate) enum Data {
    Jpeg { bytes: Vec<u8>, components: u8, adobe: bool },
    Raw { samples: Vec<u8>, gray: bool, alpha: Option<Vec<u8>> },
}

#[derive(Debug)]
pub(crate) struct PdfImage {
    pub width: u32,
    pub height: u32,
    pub data: Data,
}

/// The picture ready to embed, if it is a PNG or JPEG whose samples fit in `budget` (which
/// they are taken from).
pub(crate) fn prepare(pic: Picture, budget: &mut usize) -> Option<PdfImage> {
    match pic.kind {
        Kind::Jpeg => {
            let info = jpeg_info(&pic.bytes)?;
            if !matches!(info.components, 1 | 3 | 4) || info.width == 0 || info.height == 0 {
                return None;
            }
            Some(PdfImage {
                width: info.width,
                height: info.height,
                data: Data::Jpeg { bytes: pic.bytes, components: info.components, adobe: info.adobe },
            })
        }
        Kind::Png => decode_png(&pic.bytes, budget),
        Kind::Gif | Kind::Bmp => None,
    }
}

fn decode_png(bytes: &[u8], budget: &mut usize) -> Option<PdfImage> {
    let mut decoder = png::Decoder::new_with_limits(Cursor::new(bytes), png::Limits { bytes: MAX_SAMPLES });
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().ok()?;
    let size = reader.output_buffer_size()?;
    if size > MAX_SAMPLES || size > *budget {
        return None;
    }
    *budget -= size;
    let mut buf = vec![0; size];
    let info = reader.next_frame(&mut buf).ok()?;
    buf.truncate(info.buffer_size());
    let (width, height) = (info.width, info.height);
    let pixels = (width as usize).checked_mul(height as usize)?;
    let data = match info.color_type {
        png::ColorType::Grayscale => Data::Raw { samples: buf, gray: true, alpha: None },
        png::ColorType::Rgb => Data::Raw { samples: buf, gray: false, alpha: None },
        png::ColorType::GrayscaleAlpha => {
            let (samples, alpha) = split_alpha(&buf, 1, pixels)?;
            Data::Raw { samples, gray: true, alpha }
        }
        png::ColorType::Rgba => {
            let (samples, alpha) = split_alpha(&buf, 3, pixels)?;
            Data::Raw { samples, gray: false, alpha }
        }
        png::ColorType::Indexed => return None,
    };
    if let Data::Raw { samples, gray, .. } = &data {
        if samples.len() != pixels * if *gray { 1 } else { 3 } {
            return None;
        }
    }
    Some(PdfImage { width, height, data })
}

/// Colour samples and the alpha channel (`None` when fully opaque).
fn split_alpha(buf: &[u8], colors: usize, pixels: usize) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
    if buf.len() != pixels * (colors + 1) {
        return None;
    }
    let mut samples = Vec::with_capacity(pixels * colors);
    let mut alpha = Vec::with_capacity(pixels);
    for px in buf.chunks_exact(colors + 1) {
        samples.extend_from_slice(&px[..colors]);
        alpha.push(px[colors]);
    }
    let opaque = alpha.iter().all(|&a| a == 255);
    Some((samples, (!opaque).then_some(alpha)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pngs_are_decoded() {
        let bytes = crate::tests_support::png_2x1();
        let mut budget = 100;
        let img =
            prepare(Picture { kind: Kind::Png, bytes: bytes.clone(), width: 2, height: 1 }, &mut budget).expect("png");
        assert_eq!(budget, 94);
        assert_eq!((img.width, img.height), (2, 1));
        let Data::Raw { samples, gray, alpha } = img.data else { panic!("raw") };
        assert_eq!(samples, [255, 0, 0, 0, 0, 255]);
        assert!(!gray && alpha.is_none());
        let broken = Picture { kind: Kind::Png, bytes: b"\x89PNG\r\n\x1a\nbroken".to_vec(), width: 1, height: 1 };
        assert!(prepare(broken, &mut budget).is_none());
        let mut small = 5;
        assert!(prepare(Picture { kind: Kind::Png, bytes, width: 2, height: 1 }, &mut small).is_none(), "over budget");
        let (s, a) = split_alpha(&[1, 2, 3, 4, 5, 6, 7, 255], 3, 2).expect("split");
        assert_eq!((s, a), (vec![1, 2, 3, 5, 6, 7], Some(vec![4, 255])));
    }
}

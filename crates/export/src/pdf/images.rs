//! Pictures as PDF image XObjects: JPEGs are embedded as they are (`DCTDecode`); PNG, GIF
//! (its first frame) and WebP are decoded to 8-bit samples (an alpha channel becoming a
//! soft mask). Other types (BMP) are shown by their alt text.

use std::io::Cursor;

use crate::image::{jpeg_info, Kind, Picture, MAX_SAMPLES};

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
        Kind::Gif => decode_gif(&pic.bytes, budget),
        Kind::Webp => decode_webp(&pic.bytes, budget),
        Kind::Bmp => None,
    }
}

/// Takes `size` bytes of samples from the budget, if they fit in it and in one picture's cap.
fn take(budget: &mut usize, size: usize) -> bool {
    if size > MAX_SAMPLES || size > *budget {
        return false;
    }
    *budget -= size;
    true
}

/// RGBA samples as an image (alpha as a soft mask when not opaque).
fn from_rgba(rgba: &[u8], width: u32, height: u32) -> Option<PdfImage> {
    let pixels = (width as usize).checked_mul(height as usize)?;
    let (samples, alpha) = split_alpha(rgba, 3, pixels)?;
    Some(PdfImage { width, height, data: Data::Raw { samples, gray: false, alpha } })
}

/// The first frame of a GIF, placed on its logical screen.
fn decode_gif(bytes: &[u8], budget: &mut usize) -> Option<PdfImage> {
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    options.set_memory_limit(gif::MemoryLimit::Bytes(std::num::NonZeroU64::new(MAX_SAMPLES as u64)?));
    let mut decoder = options.read_info(Cursor::new(bytes)).ok()?;
    let (width, height) = (u32::from(decoder.width()), u32::from(decoder.height()));
    let canvas = (width as usize).checked_mul(height as usize)?.checked_mul(4)?;
    let (left, top, fw, fh) = {
        let frame = decoder.next_frame_info().ok()??;
        (usize::from(frame.left), usize::from(frame.top), usize::from(frame.width), usize::from(frame.height))
    };
    if canvas == 0 || !take(budget, canvas + decoder.buffer_size()) {
        return None;
    }
    let mut frame = vec![0; decoder.buffer_size()];
    decoder.read_into_buffer(&mut frame).ok()?;
    let mut rgba = vec![0u8; canvas];
    let w = width as usize;
    for row in 0..fh {
        let y = top + row;
        if y >= height as usize || left >= w {
            break;
        }
        let n = fw.min(w - left);
        let src = frame.get(row * fw * 4..(row * fw + n) * 4)?;
        rgba[(y * w + left) * 4..(y * w + left + n) * 4].copy_from_slice(src);
    }
    from_rgba(&rgba, width, height)
}

/// A WebP picture (its first frame when animated), when its samples fit in `budget`.
fn decode_webp(bytes: &[u8], budget: &mut usize) -> Option<PdfImage> {
    let (width, height, alpha, samples) = crate::image::decode_webp(bytes, budget)?;
    if alpha {
        return from_rgba(&samples, width, height);
    }
    let pixels = (width as usize).checked_mul(height as usize)?;
    (samples.len() == pixels * 3).then_some(PdfImage {
        width,
        height,
        data: Data::Raw { samples, gray: false, alpha: None },
    })
}

fn decode_png(bytes: &[u8], budget: &mut usize) -> Option<PdfImage> {
    let mut decoder = png::Decoder::new_with_limits(Cursor::new(bytes), png::Limits { bytes: MAX_SAMPLES });
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().ok()?;
    let size = reader.output_buffer_size()?;
    if !take(budget, size) {
        return None;
    }
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

//! Pictures of PDFs: decoded, placed in the flow, and scanned pages read by OCR.

use std::sync::Mutex;

use lopdf::{dictionary, Document, Object, ObjectId, Stream};
use redline_ports::{Ocr, OcrError};

use super::*;

/// A one-page PDF (A4) with `content`, Helvetica as /F1 and the given XObjects as /Im0, /Im1….
fn pdf_with_images(content: &str, images: Vec<Stream>) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica" });
    let mut xobjects = lopdf::Dictionary::new();
    for (i, image) in images.into_iter().enumerate() {
        let id = add_image(&mut doc, image);
        xobjects.set(format!("Im{i}"), id);
    }
    let content_id = doc.add_object(Stream::new(dictionary! {}, content.as_bytes().to_vec()));
    let page_id = doc.add_object(dictionary! {
        "Type" => "Page",
        "Parent" => pages_id,
        "Contents" => content_id,
        "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        "Resources" => dictionary! { "Font" => dictionary! { "F1" => font_id }, "XObject" => xobjects },
    });
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => vec![page_id.into()], "Count" => 1 }),
    );
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog_id);
    let mut out = Vec::new();
    doc.save_to(&mut out).expect("save the test PDF");
    out
}

/// Adds an image; an `/SMask` given inline (as a stream in the dictionary) becomes an object.
fn add_image(doc: &mut Document, mut image: Stream) -> ObjectId {
    if let Ok(Object::Stream(mask)) = image.dict.get(b"SMask").cloned() {
        let mask_id = doc.add_object(mask);
        image.dict.set("SMask", mask_id);
    }
    doc.add_object(image)
}

/// An image XObject of raw samples, Flate-compressed when that makes it smaller.
fn flate_image(width: i64, height: i64, space: &str, samples: Vec<u8>) -> Stream {
    let mut stream = Stream::new(
        dictionary! {
            "Type" => "XObject", "Subtype" => "Image", "Width" => width, "Height" => height,
            "ColorSpace" => space, "BitsPerComponent" => 8,
        },
        samples,
    );
    stream.compress().expect("compress");
    stream
}

const JPEG: &[u8] = b"\xFF\xD8\xFF\xE0\0\x10JFIF\0 not really a whole JPEG";

fn jpeg_image(width: i64, height: i64) -> Stream {
    Stream::new(
        dictionary! {
            "Type" => "XObject", "Subtype" => "Image", "Width" => width, "Height" => height,
            "ColorSpace" => "DeviceRGB", "BitsPerComponent" => 8, "Filter" => "DCTDecode",
        },
        JPEG.to_vec(),
    )
}

fn read_png(bytes: &[u8]) -> (png::ColorType, u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut pixels = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut pixels).expect("a frame");
    pixels.truncate(info.buffer_size());
    (info.color_type, info.width, info.height, pixels)
}

#[test]
fn a_picture_is_placed_between_the_lines_above_and_below_it() {
    let rgb: Vec<u8> = (0..16 * 16).flat_map(|i| [i as u8, 0, 255]).collect();
    let content = "BT /F1 12 Tf 72 780 Td (Above the picture.) Tj ET\n\
                   q 200 0 0 100 72 600 cm /Im0 Do Q\n\
                   BT /F1 12 Tf 72 560 Td (Below the picture.) Tj ET\n";
    let image = flate_image(16, 16, "DeviceRGB", rgb.clone());
    assert!(image.dict.has(b"Filter"), "the samples are Flate-compressed");
    let converted = convert(&pdf_with_images(content, vec![image])).unwrap();
    assert_eq!(
        converted.html,
        "<p>Above the picture.</p>\n<p><img src=\"redline-image:0\" alt=\"\"></p>\n<p>Below the picture.</p>\n"
    );
    assert_eq!(converted.images.len(), 1);
    assert_eq!(converted.images[0].content_type, "image/png");
    assert_eq!(read_png(&converted.images[0].bytes), (png::ColorType::Rgb, 16, 16, rgb));
    assert!(converted.warnings.is_empty(), "{:?}", converted.warnings);
}

#[test]
fn a_soft_mask_becomes_alpha_and_grey_stays_grey() {
    let grey: Vec<u8> = (0..8 * 8).map(|i| (i * 4) as u8).collect();
    let alpha: Vec<u8> = (0..8 * 8).map(|i| 255 - i as u8).collect();
    let mut image = flate_image(8, 8, "DeviceGray", grey.clone());
    image.dict.set("SMask", flate_image(8, 8, "DeviceGray", alpha.clone()));
    let content = "BT /F1 12 Tf 72 780 Td (Text.) Tj ET\nq 80 0 0 80 72 600 cm /Im0 Do Q\n";
    let converted = convert(&pdf_with_images(content, vec![image])).unwrap();
    let expected: Vec<u8> = grey.iter().zip(&alpha).flat_map(|(g, a)| [*g, *a]).collect();
    assert_eq!(read_png(&converted.images[0].bytes), (png::ColorType::GrayscaleAlpha, 8, 8, expected));
}

#[test]
fn a_jpeg_is_kept_as_it_is_and_drawn_twice_stored_once() {
    let content = "q 100 0 0 100 72 700 cm /Im0 Do Q\nBT /F1 12 Tf 72 650 Td (Between.) Tj ET\n\
                   q 100 0 0 100 72 500 cm /Im0 Do Q\n";
    let converted = convert(&pdf_with_images(content, vec![jpeg_image(10, 10)])).unwrap();
    assert_eq!(converted.images.len(), 1);
    assert_eq!((converted.images[0].content_type.as_str(), converted.images[0].bytes.as_slice()), ("image/jpeg", JPEG));
    assert_eq!(
        converted.html,
        "<p><img src=\"redline-image:0\" alt=\"\"></p>\n<p>Between.</p>\n<p><img src=\"redline-image:0\" alt=\"\"></p>\n"
    );
}

#[test]
fn a_picture_inside_a_form_is_placed_by_the_forms_matrix() {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica" });
    let image_id = doc.add_object(jpeg_image(10, 10));
    let form_id = doc.add_object(Stream::new(
        dictionary! {
            "Type" => "XObject", "Subtype" => "Form", "BBox" => vec![0.into(), 0.into(), 1.into(), 1.into()],
            "Matrix" => vec![1.into(), 0.into(), 0.into(), 1.into(), 0.into(), 700.into()],
            "Resources" => dictionary! { "XObject" => dictionary! { "Pic" => image_id } },
        },
        b"q 100 0 0 100 0 0 cm /Pic Do Q".to_vec(),
    ));
    let content = b"BT /F1 12 Tf 72 820 Td (Top.) Tj ET\n/Fm0 Do\nBT /F1 12 Tf 72 600 Td (Bottom.) Tj ET\n".to_vec();
    let content_id = doc.add_object(Stream::new(dictionary! {}, content));
    let page_id = doc.add_object(dictionary! {
        "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
        "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        "Resources" => dictionary! { "Font" => dictionary! { "F1" => font_id }, "XObject" => dictionary! { "Fm0" => form_id } },
    });
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => vec![page_id.into()], "Count" => 1 }),
    );
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog_id);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    let converted = convert(&bytes).unwrap();
    assert_eq!(converted.html, "<p>Top.</p>\n<p><img src=\"redline-image:0\" alt=\"\"></p>\n<p>Bottom.</p>\n");
}

#[test]
fn unsupported_tiny_and_oversized_pictures_are_left_out() {
    let mut jbig2 = jpeg_image(100, 100);
    jbig2.dict.set("Filter", "JBIG2Decode");
    let tiny = flate_image(2, 2, "DeviceRGB", vec![0; 12]);
    let huge = flate_image(100_000, 100_000, "DeviceGray", vec![0; 10]);
    let content = "BT /F1 12 Tf 72 780 Td (Text.) Tj ET\nq 9 0 0 9 0 0 cm /Im0 Do /Im1 Do /Im2 Do Q\n";
    let converted = convert(&pdf_with_images(content, vec![jbig2, tiny, huge])).unwrap();
    assert_eq!(converted.html, "<p>Text.</p>\n");
    assert!(converted.images.is_empty());
    assert!(converted.warnings.iter().any(|w| w.contains("(JBIG2)")), "{:?}", converted.warnings);
    assert!(converted.warnings.iter().any(|w| w.contains("million pixels")), "{:?}", converted.warnings);
    assert_eq!(converted.warnings.len(), 2, "{:?}", converted.warnings);
}

#[test]
fn damaged_samples_are_a_warning_not_an_error() {
    let mut short = flate_image(20, 20, "DeviceRGB", vec![7; 30]);
    short.dict.set("ColorSpace", "DeviceRGB");
    let mut garbage = jpeg_image(20, 20);
    garbage.dict.set("Filter", "FlateDecode");
    let content = "BT /F1 12 Tf 72 780 Td (Text.) Tj ET\nq 9 0 0 9 0 0 cm /Im0 Do /Im1 Do Q\n";
    let converted = convert(&pdf_with_images(content, vec![short, garbage])).unwrap();
    assert!(converted.images.is_empty());
    assert_eq!(converted.warnings, ["a damaged picture was skipped"]);
}

/// An OCR engine that answers what it was given, and counts its calls.
struct FakeOcr {
    answer: Result<String, OcrError>,
    calls: Mutex<Vec<Vec<u8>>>,
}

impl Ocr for FakeOcr {
    fn read(&self, picture: &[u8]) -> Result<String, OcrError> {
        self.calls.lock().unwrap().push(picture.to_vec());
        self.answer.clone()
    }
}

fn fake(answer: Result<&str, OcrError>) -> FakeOcr {
    FakeOcr { answer: answer.map(str::to_owned), calls: Mutex::new(Vec::new()) }
}

/// Two pages: a scan (a small picture and the page-sized one), then a page of text.
fn scan_then_text() -> Vec<u8> {
    let mut doc = Document::load_mem(&pdf_with_images(
        "q 50 0 0 50 10 10 cm /Im1 Do Q q 595 0 0 842 0 0 cm /Im0 Do Q\n",
        vec![jpeg_image(1000, 1400), flate_image(10, 10, "DeviceGray", vec![9; 100])],
    ))
    .unwrap();
    let pages = doc.get_pages();
    let first = *pages.get(&1).unwrap();
    let Object::Dictionary(page) = doc.get_object(first).unwrap().clone() else { panic!("a page") };
    let pages_id = page.get(b"Parent").unwrap().as_reference().unwrap();
    let content_id =
        doc.add_object(Stream::new(dictionary! {}, b"BT /F1 12 Tf 72 780 Td (Typed page.) Tj ET".to_vec()));
    let mut second = page.clone();
    second.set("Contents", content_id);
    let second_id = doc.add_object(second);
    let Ok(Object::Dictionary(pages)) = doc.get_object_mut(pages_id) else { panic!("pages") };
    pages.set("Kids", vec![first.into(), second_id.into()]);
    pages.set("Count", 2);
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

#[test]
fn a_scanned_page_is_its_largest_picture_and_the_text_ocr_reads() {
    let ocr = fake(Ok("Dear Sir,\n\nWe write to con-\nfirm the order\nof May.\n"));
    let converted = convert_with(&scan_then_text(), Some(&ocr)).unwrap();
    assert_eq!(
        converted.html,
        "<p><img src=\"redline-image:1\" alt=\"\"></p>\n<p>Dear Sir,</p>\n<p>We write to confirm the order of May.</p>\n\
         <p>Typed page.</p>\n"
    );
    assert_eq!(converted.images.len(), 2, "the small picture is stored but only the page picture is shown");
    assert_eq!(*ocr.calls.lock().unwrap(), [JPEG.to_vec()]);
    assert_eq!(
        converted.warnings,
        ["the text of page 1 was read by OCR from the scanned picture, and may have errors"]
    );
}

#[test]
fn without_ocr_a_scan_is_its_picture_with_a_warning() {
    let only_scan = pdf_with_images("q 595 0 0 842 0 0 cm /Im0 Do Q\n", vec![jpeg_image(1000, 1400)]);
    for (ocr, why) in [
        (None, "OCR is not available;"),
        (Some(fake(Err(OcrError::Unavailable("no tesseract".into())))), "OCR is not available (no tesseract)"),
        (Some(fake(Ok("  \n"))), "OCR found no text in it"),
    ] {
        let converted = convert_with(&only_scan, ocr.as_ref().map(|o| o as &dyn Ocr)).unwrap();
        assert_eq!(converted.html, "<p><img src=\"redline-image:0\" alt=\"\"></p>\n");
        assert_eq!(converted.warnings.len(), 1, "{:?}", converted.warnings);
        assert!(converted.warnings[0].starts_with("no text could be read from page 1: it is a picture"));
        assert!(converted.warnings[0].contains(why), "{:?}", converted.warnings);
    }
    // A failure on a page is said, and the picture kept.
    let failing = fake(Err(OcrError::TimedOut { seconds: 120 }));
    let converted = convert_with(&only_scan, Some(&failing)).unwrap();
    assert_eq!(converted.images.len(), 1);
    assert!(
        converted.warnings.iter().any(|w| w == "page 1: OCR took longer than 120 seconds"),
        "{:?}",
        converted.warnings
    );
}

#[test]
fn ocr_paragraphs_join_lines_and_split_on_blank_lines() {
    assert_eq!(ocr_paragraphs("a\nb-\nc\n\n\n d \n"), ["a bc", "d"]);
    assert!(ocr_paragraphs(" \n\u{c}").len() <= 1);
}

#[test]
fn a_jpeg_compressed_again_is_unwrapped() {
    let mut jpeg = JPEG.to_vec();
    jpeg.resize(400, 0);
    let mut twice = Stream::new(
        dictionary! { "Type" => "XObject", "Subtype" => "Image", "Width" => 10, "Height" => 10 },
        jpeg.clone(),
    );
    twice.compress().expect("compress");
    assert!(twice.content.len() < 100, "compressed");
    twice.dict.set("Filter", vec![Object::Name(b"FlateDecode".to_vec()), Object::Name(b"DCTDecode".to_vec())]);
    twice.dict.set("DecodeParms", vec![Object::Null, Object::Dictionary(dictionary! { "Quality" => 65 })]);
    let converted = convert(&pdf_with_images("q 100 0 0 100 72 700 cm /Im0 Do Q\n", vec![twice])).unwrap();
    assert_eq!(converted.images[0].bytes, jpeg);
    assert_eq!(converted.images[0].content_type, "image/jpeg");
}

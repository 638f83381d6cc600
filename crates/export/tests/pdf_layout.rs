//! PDF layout read back with pdf-extract and lopdf: GIF and WebP pictures embedded, table
//! header rows repeated on every page the table continues on, the page size and margins of
//! the exporter's [`PageSetup`], right-to-left paragraphs set from the right.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use redline_domain::export::ExportFormat;
use redline_export::{FileExporter, PageSetup};
use redline_ports::export::NoImages;
use redline_ports::DocumentExporter;

fn pdf(exporter: &FileExporter, html: &str) -> Vec<u8> {
    exporter.export(html, "Layout", ExportFormat::Pdf, &NoImages).expect("pdf")
}

/// Image XObjects of the file: (width, height, has a soft mask).
fn images(bytes: &[u8]) -> Vec<(i64, i64, bool)> {
    let doc = lopdf::Document::load_mem(bytes).expect("lopdf reads it");
    let mut found: Vec<(i64, i64, bool)> = doc
        .objects
        .values()
        .filter_map(|o| match o {
            lopdf::Object::Stream(s)
                if s.dict.get(b"Subtype").and_then(|o| o.as_name()).ok() == Some(b"Image".as_slice())
                    && s.dict.get(b"ColorSpace").and_then(|o| o.as_name()).ok() != Some(b"DeviceGray".as_slice()) =>
            {
                let get = |k: &[u8]| s.dict.get(k).and_then(|o| o.as_i64()).unwrap_or(0);
                Some((get(b"Width"), get(b"Height"), s.dict.has(b"SMask")))
            }
            _ => None,
        })
        .collect();
    found.sort_unstable();
    found
}

/// A 3×2 GIF (a palette of red and blue, the second colour transparent) at offset 0.
fn gif() -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut encoder = gif::Encoder::new(&mut out, 3, 2, &[255, 0, 0, 0, 0, 255]).expect("gif header");
        let frame = gif::Frame {
            width: 3,
            height: 2,
            transparent: Some(1),
            buffer: std::borrow::Cow::Owned(vec![0, 1, 0, 1, 0, 1]),
            ..gif::Frame::default()
        };
        encoder.write_frame(&frame).expect("gif frame");
    }
    out
}

/// A 4×3 lossless WebP, opaque.
fn webp() -> Vec<u8> {
    let mut out = Vec::new();
    let data: Vec<u8> = (0..12).flat_map(|i| [i * 20, 100, 200]).collect();
    image_webp::WebPEncoder::new(&mut out).encode(&data, 4, 3, image_webp::ColorType::Rgb8).expect("webp");
    out
}

#[test]
fn gif_and_webp_pictures_are_embedded() {
    let html = format!(
        "<p><img src=\"data:image/gif;base64,{}\" alt=\"the gif\"> <img src=\"data:image/webp;base64,{}\" alt=\"the webp\"></p>",
        STANDARD.encode(gif()),
        STANDARD.encode(webp())
    );
    let bytes = pdf(&FileExporter::new(), &html);
    assert_eq!(images(&bytes), [(3, 2, true), (4, 3, false)], "the GIF with its transparency, the WebP");
    let text = pdf_extract::extract_text_from_mem(&bytes).expect("text");
    assert!(!text.contains("the gif") && !text.contains("the webp"), "no alt text instead: {text}");
    // A broken file still shows its alt text.
    let broken = format!(
        "<p><img src=\"data:image/webp;base64,{}\" alt=\"broken\"></p>",
        STANDARD.encode(b"RIFF\0\0\0\0WEBPVP8 xx")
    );
    let text = pdf_extract::extract_text_from_mem(&pdf(&FileExporter::new(), &broken)).expect("text");
    assert!(text.contains("[broken]"), "{text}");
}

#[test]
fn table_header_rows_repeat_on_every_page() {
    let mut html = String::from("<table><thead><tr><th>Headcol</th><th>Other</th></tr></thead><tbody>");
    for i in 0..150 {
        html.push_str(&format!("<tr><td>row{i}</td><td>value {i}</td></tr>"));
    }
    html.push_str("</tbody></table><p>After.</p>");
    let bytes = pdf(&FileExporter::new(), &html);
    let pages = pdf_extract::extract_text_from_mem_by_pages(&bytes).expect("text");
    assert!(pages.len() >= 3, "{} pages", pages.len());
    let with_rows: Vec<&String> = pages.iter().filter(|p| p.contains("row")).collect();
    assert!(with_rows.len() >= 3, "{} pages of rows", with_rows.len());
    for (i, page) in with_rows.iter().enumerate() {
        assert_eq!(page.matches("Headcol").count(), 1, "page {i}: {page}");
        let first_row = page.find("row").expect("rows");
        assert!(page.find("Headcol").expect("header") < first_row, "the header comes first on page {i}");
    }
    let all = pages.join(" ");
    assert!(all.contains("row0") && all.contains("row149") && all.contains("After."));

    // A leading row of <th> cells is a header row too.
    let th = html.replace("<thead>", "").replace("</thead><tbody>", "").replace("</tbody>", "");
    let pages = pdf_extract::extract_text_from_mem_by_pages(&pdf(&FileExporter::new(), &th)).expect("text");
    assert!(pages.iter().filter(|p| p.contains("row")).all(|p| p.contains("Headcol")));
}

#[test]
fn page_size_and_margins_come_from_the_exporter() {
    let html = "<p>Hello</p>";
    let media_box = |bytes: &[u8]| -> Vec<f32> {
        let doc = lopdf::Document::load_mem(bytes).expect("pdf");
        let (_, page) = doc.get_pages().into_iter().next().expect("a page");
        let dict = doc.get_dictionary(page).expect("page dict");
        let arr = dict.get(b"MediaBox").and_then(|o| o.as_array()).expect("media box");
        arr.iter().map(|o| o.as_float().or_else(|_| o.as_i64().map(|i| i as f32)).expect("number")).collect()
    };
    let a4 = pdf(&FileExporter::new(), html);
    assert_eq!(media_box(&a4), [0.0, 0.0, 595.28, 841.89]);
    let letter = pdf(&FileExporter::new().with_page(PageSetup::LETTER), html);
    assert_eq!(media_box(&letter), [0.0, 0.0, 612.0, 792.0]);
    // Narrow pages: more pages for the same text; absurd sizes are kept within bounds.
    let long: String = (0..400).map(|i| format!("<p>paragraph {i} with a few words</p>")).collect();
    let count = |e: &FileExporter| lopdf::Document::load_mem(&pdf(e, &long)).expect("pdf").get_pages().len();
    let small = PageSetup { width: 300.0, height: 400.0, margin: 20.0 };
    assert!(count(&FileExporter::new().with_page(small)) > count(&FileExporter::new()));
    let absurd = PageSetup { width: f32::NAN, height: 1.0, margin: 1e9 };
    let bytes = pdf(&FileExporter::new().with_page(absurd), html);
    assert_eq!(media_box(&bytes), [0.0, 0.0, 595.28, 144.0]);
}

/// The x of the first text operation on the first page.
fn first_text_x(bytes: &[u8]) -> f32 {
    let doc = lopdf::Document::load_mem(bytes).expect("pdf");
    let (_, page) = doc.get_pages().into_iter().next().expect("a page");
    let content = doc.get_and_decode_page_content(page).expect("content");
    let tm = content.operations.iter().find(|op| op.operator == "Tm").expect("a text matrix");
    let x = &tm.operands[4];
    x.as_float().or_else(|_| x.as_i64().map(|i| i as f32)).expect("x")
}

#[test]
fn right_to_left_paragraphs_start_at_the_right() {
    let ltr = first_text_x(&pdf(&FileExporter::new(), "<p>Hello</p>"));
    let rtl = first_text_x(&pdf(&FileExporter::new(), "<p>שלום עולם</p>"));
    assert!((ltr - 56.69).abs() < 0.1, "{ltr}");
    assert!(rtl > 400.0, "set against the right margin: {rtl}");
}

//! PDF layout read back with pdf-extract and lopdf: GIF and WebP pictures embedded, table
//! header rows repeated on every page the table continues on, the page size and margins of
//! the exporter's [`PageSetup`], right-to-left paragraphs set from the right, links inside
//! the document as link annotations to the page of their target.

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

/// Where a link annotation goes.
#[derive(Debug, Clone, PartialEq)]
enum To {
    /// A destination: the page (from 1) and the top of the place on it.
    Page(u32, f32),
    Uri(String),
}

/// The link annotations of the file: (the page they are on, from 1; where they go).
fn links(bytes: &[u8]) -> Vec<(u32, To)> {
    let doc = lopdf::Document::load_mem(bytes).expect("lopdf reads it");
    let pages = doc.get_pages();
    let number = |id: lopdf::ObjectId| pages.iter().find(|(_, p)| **p == id).map(|(n, _)| *n).expect("a page");
    let num = |o: &lopdf::Object| o.as_float().or_else(|_| o.as_i64().map(|v| v as f32)).expect("a number");
    let mut out = Vec::new();
    for (&n, &page_id) in &pages {
        let page = doc.get_dictionary(page_id).expect("page");
        let Ok(annots) = page.get(b"Annots").and_then(|a| a.as_array()) else { continue };
        for annot in annots {
            let annot = doc.get_dictionary(annot.as_reference().expect("a reference")).expect("annotation");
            assert_eq!(annot.get(b"Subtype").and_then(|s| s.as_name()).ok(), Some(b"Link".as_slice()));
            let to = match annot.get(b"Dest").and_then(|d| d.as_array()) {
                Ok(dest) => {
                    assert_eq!(dest[1].as_name().ok(), Some(b"XYZ".as_slice()), "{dest:?}");
                    To::Page(number(dest[0].as_reference().expect("a page reference")), num(&dest[3]))
                }
                Err(_) => {
                    let action = annot.get(b"A").and_then(|a| a.as_dict()).expect("a URI action");
                    To::Uri(
                        String::from_utf8_lossy(action.get(b"URI").and_then(|u| u.as_str()).expect("URI")).to_string(),
                    )
                }
            };
            out.push((n, to));
        }
    }
    out
}

#[test]
fn internal_links_go_to_the_page_of_their_target() {
    let filler: String = (0..90).map(|i| format!("<p>Filler paragraph {i} of ordinary running text.</p>")).collect();
    let html = format!(
        "<h1 id=\"user-content-top\">Top</h1>\
         <p><a href=\"#user-content-far\">Down to far</a>, <a href=\"https://example.com/x\">outside</a>, \
         <a href=\"#user-content-missing\">nowhere</a>, a note<a href=\"#user-content-fn1\" id=\"user-content-fnref1\" \
         role=\"doc-noteref\"><sup>1</sup></a>.</p>{filler}\
         <h2 id=\"user-content-far\">Far section</h2><p><a href=\"#user-content-top\">Back up</a></p>\
         <section role=\"doc-endnotes\"><ol><li id=\"user-content-fn1\"><p>The note. \
         <a href=\"#user-content-fnref1\" role=\"doc-backlink\">back</a></p></li></ol></section>"
    );
    let bytes = pdf(&FileExporter::new(), &html);
    let text = pdf_extract::extract_text_from_mem_by_pages(&bytes).expect("text");
    let page_of = |what: &str| text.iter().position(|p| p.contains(what)).expect(what) as u32 + 1;
    let (first, far) = (page_of("Down to far"), page_of("Far section"));
    assert_eq!(first, 1);
    assert!(far > 1, "the target is on a later page");
    assert_eq!(page_of("Back up"), far);
    let top = 841.89 - 56.69;

    let links = links(&bytes);
    let on = |page: u32| links.iter().filter(move |l| l.0 == page).collect::<Vec<_>>();
    // Page 1: the link down, the external one and the note mark; the link to no id is gone.
    let internal = |page: u32| -> Vec<(u32, f32)> {
        on(page)
            .iter()
            .filter_map(|l| match l.1 {
                To::Page(p, y) => Some((p, y)),
                To::Uri(_) => None,
            })
            .collect()
    };
    let internal1 = internal(1);
    assert_eq!(internal1.len(), 2, "{links:?}");
    let (to_far, to_note) = (internal1[0], internal1[1]);
    assert_eq!(to_far.0, far, "{links:?}");
    assert!(to_far.1 <= top + 0.5 && to_far.1 > 56.69, "the heading's place on its page: {links:?}");
    assert_eq!(to_note.0, 1, "the note is at the foot of page 1: {links:?}");
    assert!(to_note.1 < 841.89 / 3.0, "at the foot: {links:?}");
    let uris: Vec<&To> = on(1).into_iter().map(|l| &l.1).filter(|to| matches!(to, To::Uri(_))).collect();
    assert_eq!(uris, [&To::Uri("https://example.com/x".into())]);
    // The far page: back to the top of page 1.
    let back = internal(far);
    assert_eq!(back.len(), 1, "{links:?}");
    assert_eq!(back[0].0, 1);
    assert!((back[0].1 - top).abs() < 1.0, "the heading starts the page: {links:?}");
    assert_eq!(links.len(), 4, "{links:?}");
}

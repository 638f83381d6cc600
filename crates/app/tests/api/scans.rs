//! Scanned PDFs (docs/conversion.md, "Scanned pages"): a page that is only a picture comes
//! back as its picture plus the text Tesseract reads from it, or, without Tesseract, as its
//! picture with a warning; never a 422. The scan is made here: a PDF of a known paragraph,
//! rendered by poppler's `pdftoppm`, wrapped as the only content of a new PDF.

use std::collections::HashMap;
use std::process::Command;

use lopdf::content::{Content, Operation};
use lopdf::{dictionary, Document, Object, Stream};

use crate::attachments::{attach_processed, search};
use crate::files::{image_srcs, upload};
use crate::helpers::*;

const PARAGRAPH: &str = "The harbour master counted seventeen fishing boats returning before the storm. \
    Each captain signed the ledger, and the clerk wrote the weight of every catch beside the name \
    of the boat. When the wind turned north, the lighthouse keeper lit the great lamp early, and \
    the families waited on the stone pier until the last sail was safely inside the breakwater.";

/// Whether the tools are here; under CI=true they must be (scripts/setup-tests.sh).
fn have(tools: &[(&str, &[&str], &str)]) -> bool {
    for (program, args, expect) in tools {
        let ok = Command::new(program).args(*args).output().is_ok_and(|o| {
            String::from_utf8_lossy(&o.stdout).contains(expect) || String::from_utf8_lossy(&o.stderr).contains(expect)
        });
        if !ok {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI=true and {program} is missing: scripts/setup-tests.sh installs it"
            );
            eprintln!("SKIPPED: {program} is missing (poppler-utils, tesseract-ocr, tesseract-ocr-eng)");
            return false;
        }
    }
    true
}

const PDFTOPPM: (&str, &[&str], &str) = ("pdftoppm", &["-v"], "pdftoppm");
const TESSERACT: (&str, &[&str], &str) = ("tesseract", &["--list-langs"], "eng");

fn save(mut doc: Document) -> Vec<u8> {
    let mut out = Vec::new();
    doc.save_to(&mut out).expect("the PDF is written");
    out
}

/// A one-page PDF (US Letter) of `items`, with the resources and content given.
fn one_page(resources: lopdf::Dictionary, operations: Vec<Operation>, extra: Vec<(ObjectIdMaker, Object)>) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let mut resources = resources;
    for (make, object) in extra {
        let id = doc.add_object(object);
        make(&mut resources, id);
    }
    let content = Content { operations }.encode().expect("content");
    let content_id = doc.add_object(Stream::new(dictionary! {}, content));
    let page_id = doc.add_object(dictionary! {
        "Type" => "Page",
        "Parent" => pages_id,
        "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        "Contents" => content_id,
        "Resources" => resources,
    });
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => vec![page_id.into()], "Count" => 1 }),
    );
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog_id);
    save(doc)
}

type ObjectIdMaker = fn(&mut lopdf::Dictionary, lopdf::ObjectId);

/// A PDF of [`PARAGRAPH`] in 14-point Helvetica, about 70 characters a line.
fn text_pdf() -> Vec<u8> {
    let mut lines = vec![String::new()];
    for word in PARAGRAPH.split_whitespace() {
        let line = lines.last_mut().unwrap();
        if line.len() + word.len() > 70 {
            lines.push(word.to_owned());
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    let mut operations = vec![
        Operation::new("BT", vec![]),
        Operation::new("Tf", vec!["F1".into(), 14.into()]),
        Operation::new("TL", vec![20.into()]),
        Operation::new("Td", vec![60.into(), 700.into()]),
    ];
    for line in &lines {
        operations.push(Operation::new("Tj", vec![Object::string_literal(line.as_str())]));
        operations.push(Operation::new("T*", vec![]));
    }
    operations.push(Operation::new("ET", vec![]));
    let font = dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica", "Encoding" => "WinAnsiEncoding" };
    one_page(
        dictionary! {},
        operations,
        vec![(|r: &mut lopdf::Dictionary, id| r.set("Font", dictionary! { "F1" => id }), Object::Dictionary(font))],
    )
}

/// The page of `pdf` as a greyscale JPEG of 1275 × 1650 pixels (150 dpi), by `pdftoppm`.
fn render(pdf: &[u8]) -> Vec<u8> {
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("page.pdf");
    std::fs::write(&input, pdf).expect("write");
    let out = dir.path().join("page");
    let status = Command::new("pdftoppm")
        .args(["-r", "150", "-gray", "-jpeg", "-singlefile", "-scale-to-x", "1275", "-scale-to-y", "1650"])
        .arg(&input)
        .arg(&out)
        .status()
        .expect("pdftoppm runs");
    assert!(status.success());
    std::fs::read(dir.path().join("page.jpg")).expect("the rendered page")
}

/// A PDF whose only page is the picture `jpeg` (1275 × 1650, grey) over the whole page: a scan.
fn scanned_pdf(jpeg: Vec<u8>) -> Vec<u8> {
    let image = Stream::new(
        dictionary! {
            "Type" => "XObject",
            "Subtype" => "Image",
            "Width" => 1275,
            "Height" => 1650,
            "ColorSpace" => "DeviceGray",
            "BitsPerComponent" => 8,
            "Filter" => "DCTDecode",
        },
        jpeg,
    );
    let operations = vec![
        Operation::new("q", vec![]),
        Operation::new("cm", vec![612.into(), 0.into(), 0.into(), 792.into(), 0.into(), 0.into()]),
        Operation::new("Do", vec!["Im0".into()]),
        Operation::new("Q", vec![]),
    ];
    one_page(
        dictionary! {},
        operations,
        vec![(|r: &mut lopdf::Dictionary, id| r.set("XObject", dictionary! { "Im0" => id }), Object::Stream(image))],
    )
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

/// The share of the paragraph's words (with multiplicity) found in `text`.
fn recall(text: &str) -> f64 {
    let mut found: HashMap<String, usize> = HashMap::new();
    for word in words(text) {
        *found.entry(word).or_default() += 1;
    }
    let expected = words(PARAGRAPH);
    let hits = expected
        .iter()
        .filter(|w| match found.get_mut(*w) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        })
        .count();
    hits as f64 / expected.len() as f64
}

fn text_of(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                out.push(' ');
            }
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&amp;", "&").replace("&#39;", "'")
}

#[tokio::test]
async fn a_scanned_pdf_is_read_by_ocr_and_keeps_its_page_picture() {
    if !have(&[PDFTOPPM, TESSERACT]) {
        return;
    }
    let scan = scanned_pdf(render(&text_pdf()));
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let r = upload(&app, &key, "scan", "letter.pdf", &scan).await;
    r.expect_status(200);
    let html = r.json["html"].as_str().unwrap();
    let srcs = image_srcs(html);
    assert_eq!(srcs.len(), 1, "the page's picture: {html}");
    assert_eq!(r.json["images"].as_array().map(Vec::len), Some(1), "{r:?}");
    let picture = app.send(app.client.get(&srcs[0])).await;
    picture.expect_status(200);
    assert_eq!(picture.header("content-type"), Some("image/jpeg"));
    let recall = recall(&text_of(html));
    assert!(recall >= 0.9, "OCR word recall {recall:.2}: {html}");
    let warnings = r.json["warnings"].to_string();
    assert!(warnings.contains("read by OCR"), "{warnings}");

    // As an attachment, the OCR text is indexed for search.
    attach_processed(&app, &key, "scan", "letter.pdf", &scan).await;
    let hits = search(&app, &key, "scan", "lighthouse keeper lamp").await;
    assert!(!hits.is_empty(), "the scanned attachment's text is searchable");
    assert!(hits[0].to_string().to_lowercase().contains("lighthouse"), "{hits:?}");
}

#[tokio::test]
async fn without_tesseract_a_scanned_pdf_keeps_its_picture_with_a_warning() {
    if !have(&[PDFTOPPM]) {
        return;
    }
    let scan = scanned_pdf(render(&text_pdf()));
    let app = spawn_app_with(&[("REDLINE_OCR_COMMAND", "/nonexistent/tesseract")]).await;
    let key = app.agent_key().await;
    let r = upload(&app, &key, "scan", "letter.pdf", &scan).await;
    r.expect_status(200);
    let html = r.json["html"].as_str().unwrap();
    assert_eq!(image_srcs(html).len(), 1, "{html}");
    assert_eq!(r.json["images"].as_array().map(Vec::len), Some(1), "{r:?}");
    assert!(words(&text_of(html)).is_empty(), "no text without OCR: {html}");
    let warnings = r.json["warnings"].to_string();
    assert!(warnings.contains("no text could be read from page 1"), "{warnings}");
    assert!(warnings.contains("OCR is not available"), "{warnings}");
}

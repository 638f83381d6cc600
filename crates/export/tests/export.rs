//! Black-box tests of the exporter: a representative document in every format, checked
//! structurally (DOCX parts, PDF text and objects) or exactly (Markdown, text); the
//! conformance suite's document; hostile input; and a property test that nothing panics.

// Footnotes, ids, direction and alignment through the writers; third-party readers of
// the DOCX; LibreOffice opening every export of the corpus.
#[path = "export/corpus.rs"]
mod corpus;
#[path = "export/kinds.rs"]
mod kinds;
#[path = "export/notes.rs"]
mod notes;
#[path = "export/pages.rs"]
mod pages;
#[path = "export/readers.rs"]
mod readers;
#[path = "export/tracked.rs"]
mod tracked;

use std::collections::HashMap;
use std::io::{Cursor, Read};
use std::time::{Duration, Instant};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use proptest::prelude::*;
use redline_domain::export::ExportFormat;
use redline_export::FileExporter;
use redline_ports::export::NoImages;
use redline_ports::{DocumentExporter, ImageSource};

/// A PNG of `w`×`h` pixels: a colour gradient, half transparent on the right.
fn png(w: u32, h: u32) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, w, h);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().expect("png header");
        let mut data = Vec::with_capacity((w * h * 4) as usize);
        for y in 0..h {
            for x in 0..w {
                let a = if x > w / 2 { 128 } else { 255 };
                data.extend([(x * 255 / w.max(1)) as u8, (y * 255 / h.max(1)) as u8, 160, a]);
            }
        }
        writer.write_image_data(&data).expect("png data");
    }
    out
}

struct Images(HashMap<String, Vec<u8>>);

impl ImageSource for Images {
    fn image(&self, image_id: &str) -> Option<(String, Vec<u8>)> {
        self.0.get(image_id).map(|b| ("image/png".to_string(), b.clone()))
    }
}

fn images() -> Images {
    Images(HashMap::from([("img1".to_string(), png(120, 60))]))
}

fn sample_html() -> String {
    let logo = STANDARD.encode(png(40, 20));
    format!(
        "<h1 data-chunk-id=\"c1\">Quarterly Report</h1>\
         <p data-chunk-id=\"c2\">Revenue grew <strong>12%</strong> in <em>Q3</em>, with \
         <span style=\"color: #ff0000\">red flags</span> in <u>two</u> regions and <s>no</s> losses. \
         See <a href=\"https://example.com/report\">the full report</a>.</p>\
         <h2 data-chunk-id=\"c3\">Highlights</h2>\
         <ul data-chunk-id=\"c4\"><li>North region<ul><li>Store openings</li><li>New hires</li></ul></li><li>South region</li></ul>\
         <ol data-chunk-id=\"c5\"><li>First step</li><li>Second step<ol><li>Sub step</li></ol></li></ol>\
         <table data-chunk-id=\"c6\"><thead><tr><th>Region</th><th colspan=\"2\">Sales</th></tr></thead>\
         <tbody><tr><td rowspan=\"2\">North</td><td>Q2</td><td>100</td></tr><tr><td>Q3</td><td>112</td></tr></tbody></table>\
         <p data-chunk-id=\"c7\"><img src=\"data:image/png;base64,{logo}\" alt=\"Logo\" width=\"40\" height=\"20\"> \
         <img src=\"/v1/documents/images/img1\" alt=\"Chart\"></p>\
         <blockquote data-chunk-id=\"c8\"><p>Quoted <mark>words</mark>.</p></blockquote>\
         <pre data-chunk-id=\"c9\">let x = 1;\n  x * 2</pre>"
    )
}

fn export(html: &str, format: ExportFormat, images: &dyn ImageSource) -> Vec<u8> {
    FileExporter::new().export(html, "Quarterly & more", format, images).expect("export")
}

fn unzip(bytes: &[u8]) -> HashMap<String, Vec<u8>> {
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).expect("a zip");
    let mut parts = HashMap::new();
    for i in 0..zip.len() {
        let mut f = zip.by_index(i).expect("entry");
        let mut data = Vec::new();
        f.read_to_end(&mut data).expect("read entry");
        parts.insert(f.name().expect("entry name").to_string(), data);
    }
    parts
}

/// Every XML part parses, with matching end tags.
fn assert_well_formed(parts: &HashMap<String, Vec<u8>>) {
    for (name, data) in parts {
        if !(name.ends_with(".xml") || name.ends_with(".rels")) {
            continue;
        }
        let mut reader = quick_xml::Reader::from_reader(data.as_slice());
        let mut buf = Vec::new();
        let mut depth = 0i64;
        loop {
            match reader.read_event_into(&mut buf) {
                Ok(quick_xml::events::Event::Start(_)) => depth += 1,
                Ok(quick_xml::events::Event::End(_)) => depth -= 1,
                Ok(quick_xml::events::Event::Eof) => break,
                Ok(_) => {}
                Err(e) => panic!("{name} is not well-formed XML: {e}"),
            }
            buf.clear();
        }
        assert_eq!(depth, 0, "{name}: unbalanced");
    }
}

fn text_of(xml: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in xml.replace("</w:p>", "\n").chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&amp;", "&")
}

#[test]
fn docx_is_a_complete_package() {
    let bytes = export(&sample_html(), ExportFormat::Docx, &images());
    let parts = unzip(&bytes);
    assert_well_formed(&parts);
    for part in [
        "[Content_Types].xml",
        "_rels/.rels",
        "word/document.xml",
        "word/_rels/document.xml.rels",
        "word/styles.xml",
        "word/numbering.xml",
        "word/settings.xml",
        "docProps/core.xml",
        "docProps/app.xml",
    ] {
        assert!(parts.contains_key(part), "{part} missing: {:?}", parts.keys());
    }
    let doc = String::from_utf8(parts["word/document.xml"].clone()).expect("utf-8");
    for needle in [
        "<w:pStyle w:val=\"Heading1\"/>",
        "<w:pStyle w:val=\"Heading2\"/>",
        "<w:numPr><w:ilvl w:val=\"0\"/><w:numId w:val=\"1\"/></w:numPr>",
        "<w:numPr><w:ilvl w:val=\"1\"/><w:numId w:val=\"1\"/></w:numPr>",
        "<w:numPr><w:ilvl w:val=\"0\"/><w:numId w:val=\"2\"/></w:numPr>",
        "<w:numPr><w:ilvl w:val=\"1\"/><w:numId w:val=\"3\"/></w:numPr>",
        "<w:gridSpan w:val=\"2\"/>",
        "<w:vMerge w:val=\"restart\"/>",
        "<w:vMerge/>",
        "<w:color w:val=\"FF0000\"/>",
        "<w:b/>",
        "<w:i/>",
        "<w:u w:val=\"single\"/>",
        "<w:strike/>",
        "<w:highlight w:val=\"yellow\"/>",
        "<w:drawing>",
        "<w:hyperlink r:id=\"rId10\" w:history=\"1\">",
        "<w:pStyle w:val=\"SourceCode\"/>",
        "<w:pStyle w:val=\"Quote\"/>",
        "descr=\"Chart\"",
    ] {
        assert!(doc.contains(needle), "document.xml lacks {needle}");
    }
    assert_eq!(doc.matches("<w:drawing>").count(), 2);
    // The conformance suite reads the text with the tags stripped.
    let text = text_of(&doc);
    for needle in
        ["Quarterly Report", "Revenue grew 12% in Q3, with red flags", "Store openings", "Sub step", "let x = 1;"]
    {
        assert!(text.contains(needle), "{needle} not in {text}");
    }

    let rels = String::from_utf8(parts["word/_rels/document.xml.rels"].clone()).expect("utf-8");
    assert!(rels.contains("Target=\"https://example.com/report\" TargetMode=\"External\""), "{rels}");
    assert!(rels.contains("Target=\"media/image1.png\"") && rels.contains("Target=\"media/image2.png\""), "{rels}");
    assert_eq!(parts["word/media/image1.png"], png(40, 20));
    assert_eq!(parts["word/media/image2.png"], images().0["img1"]);
    let types = String::from_utf8(parts["[Content_Types].xml"].clone()).expect("utf-8");
    assert!(types.contains("Extension=\"png\" ContentType=\"image/png\""), "{types}");

    // 40×20 px at 9525 EMU a pixel; the 120×60 chart at its own size.
    assert!(doc.contains("<wp:extent cx=\"381000\" cy=\"190500\"/>"), "logo size");
    assert!(doc.contains("<wp:extent cx=\"1143000\" cy=\"571500\"/>"), "chart size");

    // The columns share the text width by their content.
    let grid_cols: Vec<i64> = doc
        .split("<w:gridCol w:w=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next().and_then(|n| n.parse().ok()))
        .collect();
    assert_eq!(grid_cols.len(), 3);
    assert!((grid_cols.iter().sum::<i64>() - 9026).abs() <= 3, "{grid_cols:?}");
    assert!(grid_cols.iter().all(|&w| w >= 400), "{grid_cols:?}");

    let numbering = String::from_utf8(parts["word/numbering.xml"].clone()).expect("utf-8");
    assert!(numbering.contains("<w:numFmt w:val=\"bullet\"/>") && numbering.contains("<w:numFmt w:val=\"decimal\"/>"));
    assert!(numbering.contains(
        "<w:num w:numId=\"3\"><w:abstractNumId w:val=\"1\"/><w:lvlOverride w:ilvl=\"1\"><w:startOverride w:val=\"1\"/>"
    ));
    let styles = String::from_utf8(parts["word/styles.xml"].clone()).expect("utf-8");
    for level in 1..=6 {
        assert!(styles.contains(&format!("w:styleId=\"Heading{level}\"")), "Heading{level}");
    }
    let core = String::from_utf8(parts["docProps/core.xml"].clone()).expect("utf-8");
    assert!(core.contains("<dc:title>Quarterly &amp; more</dc:title>"), "{core}");
}

#[test]
fn docx_of_an_empty_document_is_valid() {
    for html in ["", "   ", "<p></p>", "<table></table>", "<table><tr><td>x</td></tr></table>"] {
        let parts = unzip(&export(html, ExportFormat::Docx, &NoImages));
        assert_well_formed(&parts);
        let doc = String::from_utf8(parts["word/document.xml"].clone()).expect("utf-8");
        assert!(doc.contains("<w:body>") && doc.contains("<w:sectPr>"), "{doc}");
        let body = &doc[doc.find("<w:body>").unwrap_or(0)..doc.find("<w:sectPr>").unwrap_or(0)];
        assert!(body.ends_with("</w:p>") || body.ends_with("<w:p/>"), "the body ends with a paragraph: {body}");
    }
}

#[test]
fn docx_header_rows_come_back_as_header_rows() {
    use redline_ports::DocumentConverter;
    // Leading rows of `<th>` cells and `<thead>` rows are Word header rows, and read back as such.
    for html in [
        "<table><tr><th>Item</th><th>Price</th></tr><tr><td>crate</td><td>10</td></tr></table>",
        "<table><thead><tr><td>Item</td><td>Price</td></tr></thead><tbody><tr><td>crate</td><td>10</td></tr></tbody></table>",
    ] {
        let docx = export(html, ExportFormat::Docx, &NoImages);
        let parts = unzip(&docx);
        let doc = String::from_utf8(parts["word/document.xml"].clone()).expect("utf-8");
        assert_eq!(doc.matches("<w:tblHeader/>").count(), 1, "{html}");
        let back = redline_convert::Converters
            .convert(redline_domain::formats::SourceFormat::Docx, &docx)
            .expect("reads back");
        assert!(back.html.contains("<thead><tr><th"), "{html} came back as {}", back.html);
    }
}

#[test]
fn docx_tables_in_a_row_stay_apart() {
    let html = "<table><tr><td>a</td></tr></table><table><tr><td>b</td></tr></table>";
    let parts = unzip(&export(html, ExportFormat::Docx, &NoImages));
    let doc = String::from_utf8(parts["word/document.xml"].clone()).expect("utf-8");
    assert_eq!(doc.matches("<w:tbl>").count(), 2);
    assert!(!doc.contains("</w:tbl><w:tbl>"), "a paragraph separates them");
}

/// A stored WebP picture (a type browsers show and uploads take) reaches every export: a PNG of
/// its pixels in the DOCX, embedded as it is in the HTML, drawn in the PDF.
#[test]
fn webp_pictures_survive_every_export() {
    let samples: Vec<u8> = (0..6 * 4 * 3).map(|i| (i * 11) as u8).collect();
    let mut webp = Vec::new();
    image_webp::WebPEncoder::new(&mut webp).encode(&samples, 6, 4, image_webp::ColorType::Rgb8).expect("webp");
    let source = Images(HashMap::from([("w1".to_string(), webp.clone())]));
    let body = "<p data-chunk-id=\"a\">Logo <img src=\"/v1/documents/images/w1\" alt=\"the logo\"></p>";

    let parts = unzip(&export(body, ExportFormat::Docx, &source));
    assert_well_formed(&parts);
    let media = &parts["word/media/image1.png"];
    let mut reader = png::Decoder::new(Cursor::new(media.clone())).read_info().expect("a PNG");
    let mut pixels = vec![0; reader.output_buffer_size().expect("size")];
    reader.next_frame(&mut pixels).expect("frame");
    assert_eq!(pixels, samples, "the WebP's pixels");
    let doc = String::from_utf8(parts["word/document.xml"].clone()).expect("utf-8");
    assert!(doc.contains("<wp:extent cx=\"57150\" cy=\"38100\"/>"), "6×4 px: {doc}");
    let types = String::from_utf8(parts["[Content_Types].xml"].clone()).expect("utf-8");
    assert!(types.contains("Extension=\"png\" ContentType=\"image/png\""), "{types}");

    let html = String::from_utf8(export(body, ExportFormat::Html, &source)).expect("utf-8");
    assert!(html.contains(&format!("src=\"data:image/webp;base64,{}\"", STANDARD.encode(&webp))), "{html}");

    let pdf = String::from_utf8_lossy(&export(body, ExportFormat::Pdf, &source)).into_owned();
    assert!(pdf.contains("/Subtype /Image") || pdf.contains("/Subtype/Image"), "the PDF draws it");
}

#[test]
fn pdf_has_the_words_fonts_links_and_pictures() {
    let bytes = export(&sample_html(), ExportFormat::Pdf, &images());
    assert!(bytes.starts_with(b"%PDF-1.7"));
    let text = pdf_extract::extract_text_from_mem(&bytes).expect("text");
    let squashed: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for needle in [
        "Quarterly Report",
        "Revenue grew 12% in Q3, with red flags in two regions and no losses.",
        "the full report",
        "Store openings",
        "First step",
        "Sub step",
        "Region",
        "Sales",
        "North",
        "112",
        "Quoted words.",
        "let x = 1;",
    ] {
        assert!(squashed.contains(needle), "{needle:?} not in {squashed:?}");
    }
    let doc = lopdf::Document::load_mem(&bytes).expect("lopdf reads it");
    assert_eq!(doc.get_pages().len(), 1);
    let mut font_files = 0;
    let mut images = 0;
    let mut uris = Vec::new();
    let mut title = None;
    for object in doc.objects.values() {
        match object {
            lopdf::Object::Dictionary(d) => {
                if d.has(b"FontFile2") {
                    font_files += 1;
                }
                if let Ok(lopdf::Object::Dictionary(a)) = d.get(b"A") {
                    if let Ok(lopdf::Object::String(uri, _)) = a.get(b"URI") {
                        uris.push(String::from_utf8_lossy(uri).to_string());
                    }
                }
                if let Ok(lopdf::Object::String(t, _)) = d.get(b"Title") {
                    title = Some(String::from_utf8_lossy(t).to_string());
                }
            }
            lopdf::Object::Stream(s)
                if s.dict.get(b"Subtype").and_then(|o| o.as_name()).ok() == Some(b"Image".as_slice())
                    && s.dict.has(b"SMask") =>
            {
                images += 1;
            }
            _ => {}
        }
    }
    assert!(font_files >= 3, "regular, bold, italic and mono are embedded: {font_files}");
    assert_eq!(images, 2, "both pictures, with their transparency");
    assert!(!uris.is_empty() && uris.iter().all(|u| u == "https://example.com/report"), "{uris:?}");
    assert_eq!(title.as_deref(), Some("Quarterly & more"));
    assert!(bytes.len() < 200_000, "fonts are subset: {} bytes", bytes.len());
}

#[test]
fn pdf_breaks_pages_and_keeps_all_the_text() {
    let mut html = String::from("<h1>Long</h1>");
    for i in 0..300 {
        html.push_str(&format!("<p>Paragraph {i} says something long enough to wrap across the line at least once or twice, word{i}end.</p>"));
    }
    html.push_str("<h2>Tall row</h2><table><tr><td>");
    for i in 0..400 {
        html.push_str(&format!("cellword{i} "));
    }
    html.push_str("</td><td>short</td></tr></table><p>After the table.</p>");
    let bytes = export(&html, ExportFormat::Pdf, &NoImages);
    let pages = pdf_extract::extract_text_from_mem_by_pages(&bytes).expect("text");
    assert!(pages.len() > 10, "{} pages", pages.len());
    let all: String = pages.join(" ");
    for needle in ["word0end.", "word150end.", "word299end.", "cellword0", "cellword399", "short", "After the table."] {
        assert!(all.contains(needle), "{needle}");
    }
    // The row taller than a page starts under its heading, cut where the page ends.
    let heading_page = pages.iter().position(|p| p.contains("Tall row")).expect("heading");
    assert!(pages[heading_page].contains("cellword0"), "{}", pages[heading_page]);
    assert!(!pages[heading_page].contains("cellword399"));
}

#[test]
fn pdf_text_outside_the_fonts_is_kept_where_possible() {
    let html = "<p>Ünïcödé ŝtrïng — “quotes” • Ελληνικά Кириллица</p><p>中文 😀</p>";
    let bytes = export(html, ExportFormat::Pdf, &NoImages);
    let text = pdf_extract::extract_text_from_mem(&bytes).expect("text");
    assert!(text.contains("Ünïcödé ŝtrïng — “quotes” • Ελληνικά Кириллица"), "{text}");
}

#[test]
fn html_is_standalone() {
    let html = sample_html();
    let out = String::from_utf8(export(&html, ExportFormat::Html, &images())).expect("utf-8");
    assert!(out.starts_with("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">"), "{out}");
    assert!(out.contains("<title>Quarterly &amp; more</title>"));
    assert!(out.contains("<style>"));
    assert!(!out.contains("/v1/documents/images/img1"), "the service's picture is embedded");
    assert!(out.contains(&format!("src=\"data:image/png;base64,{}\"", STANDARD.encode(images().0["img1"].clone()))));
    assert!(out.contains("<h1 data-chunk-id=\"c1\">Quarterly Report</h1>"));

    // Without service pictures the body is written exactly as given.
    let body = "<h1 data-chunk-id=\"a\">T</h1><p data-chunk-id=\"b\">x &amp; y</p>";
    let out = String::from_utf8(export(body, ExportFormat::Html, &NoImages)).expect("utf-8");
    assert!(out.contains(&format!("<body>\n{body}\n</body>")), "{out}");
}

#[test]
fn markdown_is_exact() {
    let html = sample_html().replace(&STANDARD.encode(png(40, 20)), "AAAA");
    let md = String::from_utf8(export(&html, ExportFormat::Markdown, &images())).expect("utf-8");
    let expected = "\
# Quarterly Report

Revenue grew **12%** in *Q3*, with red flags in two regions and ~~no~~ losses. See [the full report](https://example.com/report).

## Highlights

- North region
  - Store openings
  - New hires
- South region

1. First step
2. Second step
   1. Sub step

| Region | Sales |  |
| --- | --- | --- |
| North | Q2 | 100 |
|  | Q3 | 112 |

![Logo](data:image/png;base64,AAAA) ![Chart](/v1/documents/images/img1)

> Quoted words.

```
let x = 1;
  x * 2
```
";
    assert_eq!(md, expected);
}

#[test]
fn txt_is_exact() {
    let txt = String::from_utf8(export(&sample_html(), ExportFormat::Txt, &images())).expect("utf-8");
    let expected = "\
Quarterly Report

Revenue grew 12% in Q3, with red flags in two regions and no losses. See the full report (https://example.com/report).

Highlights

- North region
  - Store openings
  - New hires
- South region

1. First step
2. Second step
   1. Sub step

Region\tSales\t
North\tQ2\t100
\tQ3\t112

[Logo] [Chart]

> Quoted words.

let x = 1;
  x * 2
";
    assert_eq!(txt, expected);
}

/// The document of the conformance suite's export tests, checked as they check it.
#[test]
fn the_conformance_document_in_every_format() {
    let html = "<h1>Export Title</h1><p>Export check phrase alpha.</p><ul><li>List item bravo</li></ul>";
    let phrase = "Export check phrase alpha.";
    for format in ExportFormat::ALL {
        let out = FileExporter::new().export(html, "export", format, &NoImages).expect("export");
        match format {
            ExportFormat::Docx => {
                let text = text_of(&String::from_utf8(unzip(&out)["word/document.xml"].clone()).expect("utf-8"));
                for needle in [phrase, "Export Title", "List item bravo"] {
                    assert!(text.contains(needle), "{needle}");
                }
            }
            ExportFormat::Pdf => {
                let text = pdf_extract::extract_text_from_mem(&out).expect("text");
                let squash = |s: &str| s.split_whitespace().collect::<String>();
                assert!(squash(&text).contains(&squash(phrase)), "{text}");
            }
            ExportFormat::Html => {
                let text = String::from_utf8(out).expect("utf-8");
                assert!(text.contains(phrase) && text.contains("<h1"));
            }
            ExportFormat::Markdown => {
                let text = String::from_utf8(out).expect("utf-8");
                assert_eq!(text, "# Export Title\n\nExport check phrase alpha.\n\n- List item bravo\n");
            }
            ExportFormat::Txt => {
                let text = String::from_utf8(out).expect("utf-8");
                assert_eq!(text, "Export Title\n\nExport check phrase alpha.\n\n- List item bravo\n");
            }
        }
    }
}

fn all_formats_quickly(html: &str, limit: Duration) {
    for format in ExportFormat::ALL {
        let started = Instant::now();
        let out = FileExporter::new().export(html, "t", format, &NoImages);
        assert!(out.is_ok(), "{format}: {out:?}");
        assert!(started.elapsed() < limit, "{format} took {:?}", started.elapsed());
    }
}

#[test]
fn hostile_input_is_bounded() {
    let limit = Duration::from_secs(20);
    for tag in ["div", "span", "ul", "li", "blockquote", "table", "b", "h1", "p", "td", "ol"] {
        let html = format!("<{tag}>").repeat(3000) + "deep text";
        all_formats_quickly(&html, limit);
    }
    all_formats_quickly(&"<table><tr><td>".repeat(300), limit);
    all_formats_quickly(&"<div>".repeat(60_000), limit);
    // Spans: a huge rowspan and colspan over many rows.
    let mut spans = String::from("<table><tr><td rowspan=\"0\" colspan=\"1000\">x</td></tr>");
    spans.push_str(&"<tr><td>y</td></tr>".repeat(2000));
    spans.push_str("</table>");
    all_formats_quickly(&spans, limit);
    // Many columns, wide words, control characters, a broken picture.
    let wide = format!("<table><tr>{}</tr></table>", "<td>w</td>".repeat(500));
    all_formats_quickly(&wide, limit);
    all_formats_quickly(&format!("<p>{}</p>", "x".repeat(100_000)), limit);
    all_formats_quickly(
        "<p>\u{1}\u{7}\u{b}\u{FFFF}\u{FFFE} ok</p><img src=\"data:image/png;base64,iVBORw0KGgo=\">",
        limit,
    );
    all_formats_quickly(
        "<img src=\"/v1/documents/images/none\" alt=\"gone\"><img src=\"https://x.test/p.png\">",
        limit,
    );
    all_formats_quickly("<img width=\"100000\" height=\"1\" src=\"data:image/png;base64,iVBORw0KGgo=\">", limit);
}

#[test]
fn titles_with_control_characters_are_cleaned() {
    let out = FileExporter::new().export("<p>x</p>", "a\u{0}b<c>", ExportFormat::Html, &NoImages).expect("html");
    assert!(String::from_utf8(out).expect("utf-8").contains("<title>ab&lt;c&gt;</title>"));
    let out = FileExporter::new().export("<p>x</p>", "é\u{1}", ExportFormat::Docx, &NoImages).expect("docx");
    assert_well_formed(&unzip(&out));
}

/// Tag soup from a small vocabulary, with attributes the exporters read.
fn soup() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("<p>".to_string()),
        Just("</p>".to_string()),
        Just("<h2>".to_string()),
        Just("<ul><li>".to_string()),
        Just("<ol start=\"-5\" type=\"I\"><li>".to_string()),
        Just("</li>".to_string()),
        Just("</ul>".to_string()),
        Just("<table><tr><td rowspan=\"3\" colspan=\"2\">".to_string()),
        Just("<td colspan=\"0\">".to_string()),
        Just("<th rowspan=\"0\">".to_string()),
        Just("</tr><tr>".to_string()),
        Just("</table>".to_string()),
        Just("<blockquote>".to_string()),
        Just("<pre>".to_string()),
        Just("<b>".to_string()),
        Just("<i>".to_string()),
        Just("</b>".to_string()),
        Just("<a href=\"https://x.test/(a)\">".to_string()),
        Just("</a>".to_string()),
        Just("<span style=\"color: #ff0000; background-color: rgb(1,2,3); font-size: 30pt\">".to_string()),
        Just("<br>".to_string()),
        Just("<hr>".to_string()),
        Just("<img src=\"/v1/documents/images/img1\" alt=\"[x]\" width=\"3000\">".to_string()),
        Just("<sup>".to_string()),
        Just("<code>".to_string()),
        "[a-z#*_`|\\-+. \u{e9}\u{4e2d}]{0,12}".prop_map(|s| s),
    ];
    prop::collection::vec(piece, 0..40).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_html_never_panics(html in soup()) {
        let images = images();
        for format in ExportFormat::ALL {
            let out = FileExporter::new().export(&html, "t", format, &images);
            prop_assert!(out.is_ok(), "{format}: {out:?}");
            let out = out.unwrap_or_default();
            match format {
                ExportFormat::Docx => assert_well_formed(&unzip(&out)),
                ExportFormat::Pdf => prop_assert!(lopdf::Document::load_mem(&out).is_ok()),
                _ => prop_assert!(String::from_utf8(out).is_ok()),
            }
        }
    }
}

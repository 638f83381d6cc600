//! Pictures keep the size the document shows them at (docs/conversion.md, "Pictures"): in the
//! corpus' `python-docx-having-images.docx` a poster and logos of one pixel size are shown at
//! five sizes, and each converts to its `wp:extent` in CSS pixels (the page header's logo, kept
//! first, too).

use std::io::Read;

use redline_convert::Converters;
use redline_domain::formats::SourceFormat;
use redline_ports::documents::DocumentConverter;

fn corpus(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/corpus/docx").join(name);
    std::fs::read(path).expect("corpus file")
}

/// The `wp:extent` of each picture of a part of the file, in EMU, in document order.
fn extents(docx: &[u8], part: &str) -> Vec<(f64, f64)> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(docx)).expect("zip");
    let mut xml = String::new();
    zip.by_name(part).expect("the part").read_to_string(&mut xml).expect("utf-8");
    xml.split("<wp:extent ")
        .skip(1)
        .map(|rest| {
            let value = |name: &str| -> f64 {
                let at = rest.find(&format!("{name}=\"")).expect("attribute") + name.len() + 2;
                rest[at..].split('"').next().and_then(|v| v.parse().ok()).expect("number")
            };
            (value("cx"), value("cy"))
        })
        .collect()
}

#[test]
fn each_picture_is_shown_at_its_extent() {
    let docx = corpus("python-docx-having-images.docx");
    let html = Converters.convert(SourceFormat::Docx, &docx).expect("converts").html;
    let shown: Vec<(u32, u32)> = html
        .split("<img ")
        .skip(1)
        .map(|tag| {
            let tag = tag.split('>').next().unwrap_or_default();
            let value = |name: &str| -> u32 {
                let at = tag.find(&format!(" {name}=\"")).unwrap_or_else(|| panic!("{name} in {tag}")) + name.len() + 3;
                tag[at..].split('"').next().and_then(|v| v.parse().ok()).expect("number")
            };
            (value("width"), value("height"))
        })
        .collect();
    let mut all = extents(&docx, "word/header1.xml");
    assert_eq!(all.len(), 1, "the header's logo");
    all.extend(extents(&docx, "word/document.xml"));
    let want: Vec<(u32, u32)> =
        all.iter().map(|(cx, cy)| ((cx / 9525.0).round() as u32, (cy / 9525.0).round() as u32)).collect();
    assert_eq!(want.len(), 6, "the file's pictures");
    assert_eq!(shown, want);
}

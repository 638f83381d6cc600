//! Footnotes, ids and internal links, direction and alignment through every writer but
//! PDF: the DOCX's parts (checked against what Word reads), Markdown and text exactly.

use std::collections::HashMap;
use std::io::{Cursor, Read};

use redline_domain::export::ExportFormat;
use redline_export::FileExporter;
use redline_ports::export::NoImages;
use redline_ports::DocumentExporter;

/// Two references to the first note, one to the second, a note nothing references, an
/// internal link and a note reference to a note the document does not hold.
const HTML: &str = "<h2 data-chunk-id=\"a\" id=\"user-content-top\">Top</h2>\
    <p data-chunk-id=\"b\">One<a href=\"#user-content-fn2\" id=\"user-content-fnref2\" role=\"doc-noteref\"><sup>[2]</sup></a>, \
    two<a href=\"#user-content-fn1\" role=\"doc-noteref\"><sup>1</sup></a>, \
    again<a href=\"#user-content-fn2\" role=\"doc-noteref\"><sup>2</sup></a>, \
    lost<a href=\"#user-content-fn9\" role=\"doc-noteref\"><sup>9</sup></a>; \
    <a href=\"#user-content-top\">up</a> <a href=\"tel:+15550100\">call</a>.</p>\
    <div data-chunk-id=\"c\" role=\"doc-endnotes\"><ol>\
    <li id=\"user-content-fn1\"><p>Note one<a href=\"#user-content-fn2\" role=\"doc-noteref\"><sup>2</sup></a>. \
    <a href=\"#user-content-fnref1\" role=\"doc-backlink\">↩</a></p></li>\
    <li id=\"user-content-fn2\"><p>Note <em>two</em>.</p><p>Second paragraph.</p></li>\
    <li id=\"user-content-fn3\"><p>Never referenced.</p></li></ol></div>";

fn export(html: &str, format: ExportFormat) -> Vec<u8> {
    FileExporter::new().export(html, "Notes", format, &NoImages).expect("export")
}

fn parts(bytes: &[u8]) -> HashMap<String, String> {
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).expect("a zip");
    let mut out = HashMap::new();
    for i in 0..zip.len() {
        let mut f = zip.by_index(i).expect("entry");
        let mut text = String::new();
        if f.read_to_string(&mut text).is_ok() {
            out.insert(f.name().expect("name").to_string(), text);
        }
    }
    out
}

#[test]
fn markdown_has_footnotes() {
    let md = String::from_utf8(export(HTML, ExportFormat::Markdown)).unwrap();
    assert_eq!(
        md,
        "## Top\n\n\
         One[^1], two[^2], again[^1], lost<sup>9</sup>; up [call](tel:+15550100).\n\n\
         1. Never referenced.\n\n\
         [^1]: Note *two*.\n\n    Second paragraph.\n\n\
         [^2]: Note one[^1].\n"
    );
}

#[test]
fn text_has_the_notes_at_the_end() {
    let txt = String::from_utf8(export(HTML, ExportFormat::Txt)).unwrap();
    assert_eq!(
        txt,
        "Top\n\n\
         One[1], two[2], again[1], lost9; up call (tel:+15550100).\n\n\
         1. Never referenced.\n\n---\n\n\
         [1] Note two.\n\n    Second paragraph.\n\
         [2] Note one[1].\n"
    );
}

#[test]
fn docx_has_real_footnotes_bookmarks_and_anchors() {
    let parts = parts(&export(HTML, ExportFormat::Docx));
    let doc = &parts["word/document.xml"];
    let notes = &parts["word/footnotes.xml"];
    assert!(parts["[Content_Types].xml"].contains("/word/footnotes.xml"));
    assert!(parts["word/_rels/document.xml.rels"].contains("Target=\"footnotes.xml\""));
    // Note 2 of the HTML is referenced first: it is footnote 1, twice.
    assert_eq!(doc.matches("<w:footnoteReference w:id=\"1\"/>").count(), 2, "{doc}");
    assert_eq!(doc.matches("<w:footnoteReference w:id=\"2\"/>").count(), 1, "{doc}");
    assert!(!doc.contains("[2]") && !doc.contains(">1<"), "the HTML's marks are Word's now: {doc}");
    assert!(doc.contains(">9<"), "a reference to a missing note stays text: {doc}");
    let first = notes.split("<w:footnote w:id=\"1\">").nth(1).expect("footnote 1");
    assert!(
        first.starts_with(
            "<w:p><w:pPr></w:pPr><w:r><w:rPr><w:rStyle w:val=\"FootnoteReference\"/></w:rPr><w:footnoteRef/>"
        ),
        "{first}"
    );
    assert!(first.contains("Second paragraph"), "{notes}");
    // A reference inside a note is text there (its number), not a note of a note.
    assert!(notes.contains("Note one</w:t></w:r><w:r><w:rPr><w:vertAlign w:val=\"superscript\"/></w:rPr><w:t xml:space=\"preserve\">1</w:t>"), "{notes}");
    assert!(!notes.contains("w:footnoteReference"), "{notes}");
    assert!(!notes.contains('↩'), "{notes}");
    assert!(!notes.contains("Never referenced"), "{notes}");
    assert!(doc.contains("Never referenced"), "{doc}");
    assert!(doc.contains("<w:bookmarkStart w:id=\"0\" w:name=\"top\"/><w:bookmarkEnd w:id=\"0\"/>"), "{doc}");
    assert!(doc.contains("<w:hyperlink w:anchor=\"top\" w:history=\"1\">"), "{doc}");
    assert!(parts["word/_rels/document.xml.rels"].contains("Target=\"tel:+15550100\""));
}

#[test]
fn docx_direction_alignment_and_highlights() {
    let html = "<p dir=\"rtl\" style=\"text-align: left\">שלום</p><p>abc <span dir=\"rtl\">שלום</span></p>\
                <p style=\"text-align: center\">c</p>\
                <table><tr style=\"text-align: right\"><td>r</td><td align=\"center\">m</td></tr></table>\
                <p><mark style=\"background-color: #00ff00\">green</mark> <mark style=\"background-color: #123456\">odd</mark></p>";
    let parts = parts(&export(html, ExportFormat::Docx));
    let doc = &parts["word/document.xml"];
    let paras: Vec<&str> = doc.split("<w:p>").skip(1).collect();
    // `left` in a right-to-left paragraph is its end.
    assert!(paras[0].starts_with("<w:pPr><w:bidi/><w:jc w:val=\"right\"/></w:pPr>"), "{}", paras[0]);
    assert!(paras[0].contains("<w:rtl/>"), "{}", paras[0]);
    assert!(!paras[1].contains("<w:bidi/>") && paras[1].contains("<w:rtl/>"), "{}", paras[1]);
    assert!(paras[2].contains("<w:jc w:val=\"center\"/>"), "{}", paras[2]);
    assert!(paras[3].contains("<w:jc w:val=\"right\"/>") && paras[3].contains(">r<"), "{}", paras[3]);
    assert!(paras[4].contains("<w:jc w:val=\"center\"/>") && paras[4].contains(">m<"), "{}", paras[4]);
    assert!(doc.contains("<w:highlight w:val=\"green\"/>"), "{doc}");
    assert!(doc.contains("<w:shd w:val=\"clear\" w:color=\"auto\" w:fill=\"123456\"/>"), "{doc}");
}

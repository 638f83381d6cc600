#![allow(dead_code)]

use redline_domain::document::{ChunkId, Document, Section};
use redline_html::Html5everSections;
use redline_ports::documents::HtmlError;
use redline_ports::HtmlSections;

/// An id generator answering `<prefix>1`, `<prefix>2`, …
pub fn ids(prefix: &'static str) -> impl FnMut() -> ChunkId {
    let mut n = 0;
    move || {
        n += 1;
        ChunkId::parse(&format!("{prefix}{n}")).expect("valid id")
    }
}

pub fn try_sections(html: &str) -> Result<Vec<Section>, HtmlError> {
    Html5everSections::new().sectionize(html, &mut ids("n"))
}

pub fn sections(html: &str) -> Vec<Section> {
    try_sections(html).expect("sectionize")
}

pub fn to_html(sections: &[Section]) -> String {
    Document::new(sections.to_vec()).expect("unique ids").to_html()
}

/// Sections `html`, sections the result's HTML again, and checks both give the same.
pub fn round_trip(html: &str) -> Vec<Section> {
    let adapter = Html5everSections::new();
    let first = adapter.sectionize(html, &mut ids("n")).expect("first pass");
    let second = adapter.sectionize(&to_html(&first), &mut ids("m")).expect("second pass");
    assert_eq!(first, second, "not idempotent for input {html:?}");
    first
}

pub fn all_html(sections: &[Section]) -> String {
    sections.iter().map(|s| s.html.as_str()).collect::<Vec<_>>().join("\n")
}

pub fn all_text(sections: &[Section]) -> String {
    sections.iter().map(|s| s.text.as_str()).filter(|t| !t.is_empty()).collect::<Vec<_>>().join(" ")
}

//! Footnotes as the AI's tools show them: a section that references notes is answered with
//! those notes beside its HTML (docs/api.md, "Footnotes"), so that a note reads as part of
//! the section that references it although all notes are stored in one section of their own
//! (`role="doc-endnotes"`).
//!
//! The stored HTML is sanitized and serialized by html5ever with its attributes sorted, so a
//! reference is always written `<a href="#ID" …role="doc-noteref">` and a note
//! `<li id="ID">…</li>`: plain string scanning finds them.

use redline_domain::document::{Document, Section};
use serde_json::{json, Value};

/// Most notes shown with one section.
const MAX_NOTES: usize = 50;

/// The ids of the notes a section's HTML references, in order, without repeats.
fn referenced(html: &str) -> Vec<&str> {
    let mut ids: Vec<&str> = Vec::new();
    for tag in html.split("<a ").skip(1) {
        let Some(tag) = tag.split('>').next() else { continue };
        if !tag.contains("role=\"doc-noteref\"") {
            continue;
        }
        let Some(id) = tag.split("href=\"#").nth(1).and_then(|rest| rest.split('"').next()) else { continue };
        if !id.is_empty() && !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

/// The whole `<li id="id">…</li>` element in `html`, nested items included.
fn note_html<'h>(html: &'h str, id: &str) -> Option<&'h str> {
    let start = html.find(&format!("<li id=\"{id}\">"))?;
    let mut depth = 0usize;
    let mut at = start;
    loop {
        let rest = &html[at..];
        let open = rest.find("<li");
        let close = rest.find("</li>")?;
        match open {
            Some(o) if o < close => {
                depth += 1;
                at += o + 3;
            }
            _ => {
                depth -= 1;
                at += close + 5;
                if depth == 0 {
                    return Some(&html[start..at]);
                }
            }
        }
    }
}

/// The notes `section` references, each with the chunk id of the section that holds it
/// (where an edit of the note goes): `[{"id", "chunk_id", "html"}]`.
pub(crate) fn notes_of(doc: &Document, section: &Section) -> Vec<Value> {
    let ids = referenced(&section.html);
    if ids.is_empty() {
        return Vec::new();
    }
    let holders: Vec<&Section> = doc.sections().iter().filter(|s| s.html.contains("role=\"doc-endnotes\"")).collect();
    let mut out = Vec::new();
    for id in ids.into_iter().take(MAX_NOTES) {
        if let Some((holder, html)) = holders.iter().find_map(|s| note_html(&s.html, id).map(|h| (s, h))) {
            out.push(json!({"id": id, "chunk_id": holder.id.as_str(), "html": html}));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use redline_domain::document::ChunkId;

    fn sec(id: &str, tag: &str, html: &str) -> Section {
        Section { id: ChunkId::parse(id).unwrap(), tag: tag.into(), html: html.into(), text: String::new() }
    }

    #[test]
    fn a_section_brings_the_notes_it_references() {
        let text = sec(
            "p1",
            "p",
            "<p data-chunk-id=\"p1\">A<a href=\"#user-content-fn2\" id=\"user-content-fnref2\" role=\"doc-noteref\"><sup>2</sup></a> \
             B<a href=\"#user-content-fn1\" role=\"doc-noteref\"><sup>1</sup></a> <a href=\"#user-content-x\">x</a></p>",
        );
        let notes = sec(
            "n1",
            "div",
            "<div data-chunk-id=\"n1\" role=\"doc-endnotes\"><ol><li id=\"user-content-fn1\"><p>One</p>\
             <ul><li>inner</li></ul></li><li id=\"user-content-fn2\"><p>Two</p></li></ol></div>",
        );
        let doc = Document::new(vec![text.clone(), notes]).unwrap();
        let found = notes_of(&doc, &text);
        assert_eq!(
            found,
            vec![
                json!({"id": "user-content-fn2", "chunk_id": "n1", "html": "<li id=\"user-content-fn2\"><p>Two</p></li>"}),
                json!({"id": "user-content-fn1", "chunk_id": "n1",
                       "html": "<li id=\"user-content-fn1\"><p>One</p><ul><li>inner</li></ul></li>"}),
            ]
        );
        assert!(notes_of(&doc, &sec("p2", "p", "<p>none</p>")).is_empty());
        assert_eq!(note_html("<li id=\"a\"><li>unclosed", "a"), None);
    }
}

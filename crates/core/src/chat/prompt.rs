//! What the model is told: instructions, the outline of the document (never the whole
//! document), the session's attachments, earlier turns and the request.

use redline_domain::document::Document;
use redline_ports::attachments::AttachmentSummary;
use serde_json::{json, Value};

/// Documents up to this many sections get every section in the outline; larger ones get
/// their headings and both ends (the model searches and reads the rest).
pub const FULL_OUTLINE_SECTIONS: usize = 150;
const ENDS: usize = 10;

const INSTRUCTIONS: &str = "You are Redline, an AI editor working on one HTML document made of sections. \
Each section is a top-level block with a chunk id. You see an outline, not the whole document: \
use read_sections to read sections in full, search_document to find text, and search_attachments to \
search files attached to the session. Change the document only through edit_section, create_section \
and delete_section, giving a short explanation for the person who reviews the change. Write valid HTML \
blocks (p, h1-h6, ul, ol, table, blockquote, pre). When you are done, answer the user in plain text, \
briefly saying what you did or answering the question.";

fn entry(e: &redline_domain::document::OutlineEntry) -> Value {
    let mut v = json!({"id": e.chunk_id.as_str(), "tag": e.tag, "chars": e.chars});
    match &e.heading {
        Some(h) => v["heading"] = json!(h),
        None => v["first_words"] = json!(e.first_words),
    }
    v
}

/// The outline object: `section_count`, `first_chunk_id`, `last_chunk_id`, `sections`, and
/// `omitted` (sections left out of a large document's outline).
pub fn outline(doc: &Document) -> Value {
    let all = doc.outline();
    let n = all.len();
    let sections: Vec<Value> = if n <= FULL_OUTLINE_SECTIONS {
        all.iter().map(entry).collect()
    } else {
        all.iter()
            .enumerate()
            .filter(|(i, e)| *i < ENDS || *i >= n - ENDS || e.heading.is_some())
            .map(|(_, e)| entry(e))
            .collect()
    };
    json!({
        "section_count": n,
        "first_chunk_id": all.first().map(|e| e.chunk_id.as_str()),
        "last_chunk_id": all.last().map(|e| e.chunk_id.as_str()),
        "omitted": n - sections.len(),
        "sections": sections,
    })
}

/// The system message.
pub fn system(doc: &Document, attachments: &[AttachmentSummary]) -> String {
    let atts: Vec<Value> =
        attachments.iter().map(|a| json!({"attachment_id": a.attachment_id, "filename": a.filename})).collect();
    format!(
        "{INSTRUCTIONS}\n\nDocument outline (JSON):\n<outline>\n{}\n</outline>\n\nAttachments of this session (JSON):\n<attachments>\n{}\n</attachments>",
        outline(doc),
        Value::Array(atts)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use redline_domain::document::{ChunkId, Section};

    fn doc(n: usize) -> Document {
        Document::new(
            (0..n)
                .map(|i| {
                    let tag = if i % 50 == 0 { "h2" } else { "p" };
                    let text = format!("Section {i} says something rather long about item number {i} and more");
                    Section {
                        id: ChunkId::parse(&format!("c{i}")).unwrap(),
                        tag: tag.into(),
                        html: format!("<{tag} data-chunk-id=\"c{i}\">{text}</{tag}>"),
                        text,
                    }
                })
                .collect(),
        )
        .unwrap()
    }

    #[test]
    fn small_documents_list_every_section() {
        let o = outline(&doc(3));
        assert_eq!(o["sections"].as_array().unwrap().len(), 3);
        assert_eq!(o["last_chunk_id"], "c2");
        assert_eq!(o["omitted"], 0);
    }

    #[test]
    fn large_documents_list_headings_and_ends() {
        let o = outline(&doc(1000));
        let listed = o["sections"].as_array().unwrap().len();
        assert_eq!(listed, 10 + 10 + 18, "both ends and the headings between");
        assert_eq!(o["omitted"], 1000 - listed);
        assert_eq!(o["last_chunk_id"], "c999");
    }
}

//! What the model is told: instructions, the outline of the document (never the whole
//! document), the session's attachments, earlier turns and the request.

use redline_domain::document::Document;
use redline_ports::attachments::AttachmentSummary;
use serde_json::{json, Value};

/// Documents up to this many sections get every section in the outline; larger ones get
/// their headings and both ends (the model searches and reads the rest).
pub const FULL_OUTLINE_SECTIONS: usize = 150;
const ENDS: usize = 3;

const INSTRUCTIONS: &str = "You are Redline, an AI editor of one HTML document made of sections, each a \
top-level block with a chunk id. You see an outline, not the document (a large document's outline lists its \
headings and both ends). Read with read_sections, find text with search_document, search attached files \
with search_attachments. Edit only with edit_section, create_section and delete_section, each with a short \
explanation for the reviewer, writing HTML blocks (p, h1-h6, ul, ol, table, blockquote, pre). Then answer \
the user in plain text: what you did, or the answer.";

/// One outline line: a heading as `{"id", "h2": text}`, any other section as `{"id",
/// "chars", "first_words"}` (with `tag` unless it is a paragraph). Short keys keep the outline
/// of a large document small.
fn entry(e: &redline_domain::document::OutlineEntry) -> Value {
    let mut v = json!({"id": e.chunk_id.as_str()});
    match &e.heading {
        Some(h) => v[e.tag.as_str()] = json!(h),
        None => {
            v["chars"] = json!(e.chars);
            if e.tag != "p" {
                v["tag"] = json!(e.tag);
            }
            v["first_words"] = json!(e.first_words);
        }
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

    /// docs/benchmarks.md "Prompt size": the prompt characters of a one-section edit on a
    /// 1,000-section document (outline, the section read, the edit and its answer, over the
    /// three model calls of the turn) against sending the whole document once.
    #[test]
    fn a_one_section_edit_costs_a_small_share_of_the_whole_document() {
        let d = realistic(1000);
        let tools = serde_json::to_string(&crate::chat::tools::specs()).unwrap().len();
        // The least the other way costs: one call with the whole document and the tools.
        let whole = d.to_html().len() + 200 + tools;
        let system = system(&d, &[]).len() + tools;
        let section = d.sections()[500].html.len();
        // Call 1: system + message. Call 2: + read_sections call and its answer. Call 3: +
        // edit_section call (new HTML) and its answer.
        let call1 = system + 60;
        let call2 = call1 + 80 + section + 40;
        let call3 = call2 + section + 120 + 60;
        let turn = call1 + call2 + call3;
        let share = turn as f64 / whole as f64;
        eprintln!(
            "prompt chars: whole document {whole}, system prompt with outline and tools {system} (tools {tools}), one-section edit turn {turn} ({:.2}%)",
            share * 100.0
        );
        assert!(share < 0.06, "a one-section edit costs {:.1}% of the whole document", share * 100.0);
    }

    /// Sections of about 60 words, a heading every 20.
    fn realistic(n: usize) -> Document {
        let words = "the committee reviewed the proposal in detail and agreed that the budget for the next quarter should cover staffing travel equipment and the training programme while keeping a reserve for unexpected costs raised by the regional offices during the consultation which ended last month with broad support from every team";
        Document::new(
            (0..n)
                .map(|i| {
                    let (tag, text) = if i % 20 == 0 {
                        ("h2", format!("Part {} of the report", i / 20 + 1))
                    } else {
                        ("p", format!("Paragraph {i}: {words}."))
                    };
                    Section {
                        id: ChunkId::parse(&format!("c{i:012x}")).unwrap(),
                        tag: tag.into(),
                        html: format!("<{tag} data-chunk-id=\"c{i:012x}\">{text}</{tag}>"),
                        text,
                    }
                })
                .collect(),
        )
        .unwrap()
    }

    #[test]
    fn large_documents_list_headings_and_ends() {
        let o = outline(&doc(1000));
        let listed = o["sections"].as_array().unwrap().len();
        // Sections 0-2 and 997-999, and the headings (every 50th) between: 50, 100, ... 950.
        assert_eq!(listed, 3 + 3 + 19, "both ends and the headings between");
        assert_eq!(o["omitted"], 1000 - listed);
        assert_eq!(o["last_chunk_id"], "c999");
    }
}

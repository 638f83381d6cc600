//! What the chat's unit tests share.

use redline_domain::document::{ChunkId, Section};

/// A paragraph section `id` (a valid chunk id) holding `text`.
pub(crate) fn section(id: &str, text: &str) -> Section {
    let id = ChunkId::parse(id).expect("id");
    let html = format!("<p data-chunk-id=\"{}\">{text}</p>", id.as_str());
    Section { id, tag: "p".to_owned(), html, text: text.to_owned() }
}

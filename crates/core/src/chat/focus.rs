//! The part of a document a text protocol shows the model (docs/api.md, "Edit protocols"):
//! the whole document when it is small, else the sections that match the request best (its
//! quoted phrases first, then its words), in document order, within a budget of bytes that
//! keeps the prompt and the rewritten answer inside a small model's context.

use std::collections::BTreeSet;

use redline_domain::document::Document;

use super::tools::search_sections;

/// Bytes of section HTML shown at most (about 1,700 tokens of English, fewer of CJK).
pub const VIEW_BYTES: usize = 6_000;

/// Indices of the sections in view, in document order.
pub fn view(doc: &Document, request: &str, budget: usize) -> Vec<usize> {
    let sections = doc.sections();
    let total: usize = sections.iter().map(|s| s.html.len()).sum();
    if total <= budget {
        return (0..sections.len()).collect();
    }
    let index_of = |id: &redline_domain::document::ChunkId| sections.iter().position(|s| &s.id == id);
    let mut ranked: Vec<usize> = Vec::new();
    for phrase in quoted(request) {
        for s in search_sections(doc, &phrase, usize::MAX) {
            if s.text.to_lowercase().contains(&phrase.to_lowercase()) {
                ranked.extend(index_of(&s.id));
            }
        }
    }
    ranked.extend(search_sections(doc, request, usize::MAX).iter().filter_map(|s| index_of(&s.id)));
    if ranked.is_empty() {
        // Nothing matches: the ends of the document (where "add … at the end" goes).
        ranked.extend([0, sections.len() - 1]);
    }
    let mut chosen = BTreeSet::new();
    let mut used = 0usize;
    for i in ranked {
        if chosen.contains(&i) {
            continue;
        }
        let size = sections[i].html.len();
        if used + size > budget && !chosen.is_empty() {
            continue;
        }
        used += size;
        chosen.insert(i);
    }
    chosen.into_iter().collect()
}

/// Phrases between quotes in a request ("…", '…', “…”, «…», 「…」), at least two characters.
pub fn quoted(request: &str) -> Vec<String> {
    const PAIRS: [(char, char); 6] = [('"', '"'), ('\'', '\''), ('“', '”'), ('‘', '’'), ('«', '»'), ('「', '」')];
    let mut out = Vec::new();
    for (open, close) in PAIRS {
        let mut rest = request;
        while let Some(start) = rest.find(open) {
            let after = &rest[start + open.len_utf8()..];
            let Some(end) = after.find(close) else { break };
            let phrase = after[..end].trim();
            // An apostrophe inside a word is not a quote.
            let word_before = open == '\'' && rest[..start].chars().last().is_some_and(char::is_alphanumeric);
            if !word_before && phrase.chars().count() >= 2 && !out.iter().any(|p| p == phrase) {
                out.push(phrase.to_owned());
            }
            rest = &after[end + close.len_utf8()..];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use redline_domain::document::{ChunkId, Section};

    fn doc(texts: &[&str]) -> Document {
        Document::new(
            texts
                .iter()
                .enumerate()
                .map(|(i, t)| Section {
                    id: ChunkId::parse(&format!("c{i}")).unwrap(),
                    tag: "p".into(),
                    html: format!("<p data-chunk-id=\"c{i}\">{t}</p>"),
                    text: (*t).to_owned(),
                })
                .collect(),
        )
        .unwrap()
    }

    #[test]
    fn a_small_document_is_shown_whole() {
        let d = doc(&["one", "two", "three"]);
        assert_eq!(view(&d, "anything", VIEW_BYTES), vec![0, 1, 2]);
    }

    #[test]
    fn a_large_document_shows_what_the_request_names_in_order() {
        let filler = "lorem words about nothing in particular ".repeat(5);
        let mut texts: Vec<String> = (0..100).map(|i| format!("Paragraph {i}: {filler}")).collect();
        texts[70] = "The Acme Corporation was founded in 1901.".into();
        texts[20] = "Acme Corporation makes anvils.".into();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let d = doc(&refs);
        assert_eq!(view(&d, "Rename \"Acme Corporation\" to Zenith", 400), vec![20, 70]);
        // Nothing matches: the two ends.
        assert_eq!(view(&d, "add a closing remark", 1_000), vec![0, 99]);
    }

    #[test]
    fn quotes_are_found_but_apostrophes_are_not() {
        assert_eq!(quoted("Replace \"old name\" with 'new name' in Ann's text"), ["old name", "new name"]);
        assert_eq!(quoted("将「東京」改为「大阪」"), ["東京", "大阪"]);
        assert_eq!(quoted("don't and can't"), Vec::<String>::new());
    }
}

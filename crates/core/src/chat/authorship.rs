//! Who made a file's tracked change (docs/api.md, "Upload"): a change proposed from a DOCX's
//! revisions names, in its explanation, the authors and dates of the revisions in the
//! paragraphs it shows — the new text of an edit or a creation, the old text of a deletion.

use std::collections::HashMap;

use redline_domain::document::Document;
use redline_domain::job::{Change, ChangeOp};
use redline_ports::documents::{Attributed, Authorship, Reviser};

/// Revisers named in one explanation; more are counted.
const NAMED: usize = 3;

/// Revisers kept for one change (beyond [`NAMED`] they are only counted).
const MAX_KEPT: usize = 64;

/// Characters compared by the part-of search in one call of [`explain`]: past it, a section
/// whose text is no paragraph's names only exact matches (the work stays linear in the file).
const PART_BUDGET: usize = 50_000_000;

/// Gives each change the explanation `lead` followed by who made it and when ("A tracked
/// change of f.docx, by Ann Lee on 2026-05-03."), or `fallback` when the file says nothing of
/// the paragraphs it shows. `base` is the document the changes apply to.
pub(super) fn explain(changes: &mut [Change], base: &Document, who: &Authorship, lead: &str, fallback: &str) {
    let (accepted, original) = (Index::new(&who.accepted), Index::new(&who.original));
    let mut budget = PART_BUDGET;
    for change in changes {
        let mut by = Vec::new();
        match change.op {
            ChangeOp::Delete => {
                if let Some(s) = base.get(&change.chunk_id) {
                    original.revisers(&s.text, &mut budget, &mut by);
                }
            }
            ChangeOp::Edit | ChangeOp::Create => {
                for s in &change.new_sections {
                    accepted.revisers(&s.text, &mut budget, &mut by);
                }
                // An edit that only deleted words may show no paragraph with revisions in
                // its new text; the old text then tells.
                if by.is_empty() && change.op == ChangeOp::Edit {
                    if let Some(s) = base.get(&change.chunk_id) {
                        original.revisers(&s.text, &mut budget, &mut by);
                    }
                }
            }
        }
        change.explanation = Some(match describe(&by) {
            Some(said) => format!("{lead}, {said}."),
            None => fallback.to_owned(),
        });
    }
}

/// One reading's paragraphs with revisions, keyed by their text without white space (which
/// the readings place differently between elements).
struct Index<'a> {
    paragraphs: &'a [Attributed],
    keys: Vec<String>,
    exact: HashMap<String, Vec<usize>>,
}

impl<'a> Index<'a> {
    fn new(paragraphs: &'a [Attributed]) -> Self {
        let keys: Vec<String> = paragraphs.iter().map(|p| squeeze(&p.text)).collect();
        let mut exact: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, key) in keys.iter().enumerate().filter(|(_, k)| !k.is_empty()) {
            exact.entry(key.clone()).or_default().push(i);
        }
        Index { paragraphs, keys, exact }
    }

    /// Adds to `by` the revisers of the paragraphs `text` shows: those whose text is `text`,
    /// else those whose text is part of it (a list or a table holds several), while `budget`
    /// lasts.
    fn revisers(&self, text: &str, budget: &mut usize, by: &mut Vec<&'a Reviser>) {
        let key = squeeze(text);
        if key.is_empty() {
            return;
        }
        let found: Vec<usize> = match self.exact.get(&key) {
            Some(found) => found.clone(),
            None => {
                let mut found = Vec::new();
                for (i, k) in self.keys.iter().enumerate() {
                    let cost = key.len().max(k.len());
                    if *budget < cost {
                        break;
                    }
                    *budget -= cost;
                    if !k.is_empty() && k.len() <= key.len() && key.contains(k.as_str()) {
                        found.push(i);
                    }
                }
                found
            }
        };
        for r in found.into_iter().flat_map(|i| &self.paragraphs[i].by) {
            if by.len() < MAX_KEPT && !by.contains(&r) {
                by.push(r);
            }
        }
    }
}

fn squeeze(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// "by Ann Lee on 2026-05-03 and Bob on 2026-05-04", "by A, B, C and 2 more";
/// `None` when nobody is named or dated.
fn describe(by: &[&Reviser]) -> Option<String> {
    let one = |r: &Reviser| {
        let day = r.date.as_deref().map(|d| d.get(..10).filter(|_| d.len() > 10).unwrap_or(d));
        match (r.author.as_deref(), day) {
            (Some(a), Some(d)) => Some(format!("{a} on {d}")),
            (Some(a), None) => Some(a.to_owned()),
            (None, Some(d)) => Some(format!("an unnamed author on {d}")),
            (None, None) => None,
        }
    };
    let named: Vec<String> = by.iter().filter_map(|r| one(r)).collect();
    match named.len() {
        0 => None,
        n if n <= NAMED => Some(format!("by {}", and_list(&named))),
        n => Some(format!("by {} and {} more", named[..NAMED].join(", "), n - NAMED)),
    }
}

/// "a", "a and b", "a, b and c".
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::test_support::section;
    use redline_domain::document::{ChunkId, Section};

    fn by(author: &str, date: &str) -> Reviser {
        Reviser { author: Some(author.to_owned()), date: (!date.is_empty()).then(|| date.to_owned()) }
    }

    fn paragraph(text: &str, by: Vec<Reviser>) -> Attributed {
        Attributed { text: text.to_owned(), by }
    }

    fn change(op: ChangeOp, id: &str, new: &[Section]) -> Change {
        Change {
            change_id: format!("ch_{id}"),
            op,
            chunk_id: ChunkId::parse(id).expect("id"),
            after: None,
            old_html: None,
            new_sections: new.to_vec(),
            explanation: None,
            edited: false,
        }
    }

    #[test]
    fn each_change_names_the_authors_and_days_of_its_own_paragraphs() {
        let base = Document::new(vec![section("a1", "one two"), section("b2", "gone for good"), section("c3", "x")])
            .expect("doc");
        let who = Authorship {
            accepted: vec![
                paragraph("one  three", vec![by("Ann Lee", "2026-05-03T10:00:00Z")]),
                paragraph("brand new", vec![by("Bob", "2026-05-04T09:00:00Z"), by("Ann Lee", "2026-05-03T10:00:00Z")]),
                paragraph("untouched elsewhere", vec![by("Cy", "")]),
            ],
            original: vec![paragraph("gone for good", vec![by("Dee", "2026-01-02T00:00:00Z")])],
        };
        let mut changes = vec![
            change(ChangeOp::Edit, "a1", &[section("a1", "one three")]),
            change(ChangeOp::Create, "d4", &[section("d4", "brand new")]),
            change(ChangeOp::Delete, "b2", &[]),
            change(ChangeOp::Edit, "c3", &[section("c3", "y")]),
        ];
        explain(&mut changes, &base, &who, "A tracked change of f.docx", "A tracked change of f.docx (summary).");
        let said: Vec<&str> = changes.iter().map(|c| c.explanation.as_deref().unwrap_or_default()).collect();
        assert_eq!(
            said,
            [
                "A tracked change of f.docx, by Ann Lee on 2026-05-03.",
                "A tracked change of f.docx, by Bob on 2026-05-04 and Ann Lee on 2026-05-03.",
                "A tracked change of f.docx, by Dee on 2026-01-02.",
                "A tracked change of f.docx (summary).",
            ]
        );
    }

    #[test]
    fn a_list_takes_its_items_revisers_and_many_are_counted() {
        let base = Document::new(vec![section("a1", "x")]).expect("doc");
        let who = Authorship {
            accepted: ["first", "second", "third", "fourth"]
                .iter()
                .enumerate()
                .map(|(i, t)| paragraph(t, vec![by(&format!("R{i}"), "")]))
                .collect(),
            original: Vec::new(),
        };
        let mut changes = vec![change(ChangeOp::Edit, "a1", &[section("a1", "first second third fourth")])];
        explain(&mut changes, &base, &who, "Lead", "Fallback.");
        assert_eq!(changes[0].explanation.as_deref(), Some("Lead, by R0, R1, R2 and 1 more."));
    }
}

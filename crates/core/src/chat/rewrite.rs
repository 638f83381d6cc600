//! The `rewrite` protocol's answer: the model returns the revised HTML of the sections in view
//! and Redline turns the difference into section-level edits (docs/api.md, "Edit protocols").
//!
//! The revised sections are aligned with the old ones by a longest common subsequence whose
//! matches are a kept `data-chunk-id`, or, for a section without a known id, the same HTML.
//! Matched sections whose HTML changed are edits; between two matches, a new section like
//! the next old one (same tag, half its text's character pairs) is an edit of it, the other
//! new ones are created after the last old section before them, and the old ones left over
//! are deleted (the caller keeps them when the request asks for no deletion: a small model
//! often answers with only the sections it changed).

use redline_domain::document::{ChunkId, Section};

use super::tools::ToolRequest;

/// The HTML of the answer: the body of its first ```html fence (or a bare ``` fence whose body
/// starts with a tag); else the lines from the first that starts with a tag to the last that
/// ends with one, when they hold a `data-chunk-id` or the answer starts with a tag ("Sure,
/// here's the revised HTML:" and the sections, unfenced). The rest of the answer is the text
/// for the person.
pub fn extract_html(answer: &str) -> Option<(String, String)> {
    let mut at = 0;
    while let Some(i) = answer[at..].find("```") {
        let start = at + i;
        let Some(nl) = answer[start..].find('\n') else { break };
        let info = answer[start + 3..start + nl].trim().to_ascii_lowercase();
        let body_start = start + nl + 1;
        let (body_end, end) = match answer[body_start..].find("```") {
            Some(j) => (body_start + j, body_start + j + 3),
            None => (answer.len(), answer.len()),
        };
        let body = answer[body_start..body_end].trim();
        if info == "html" || info == "xml" || (info.is_empty() && body.starts_with('<')) {
            let text = format!("{} {}", answer[..start].trim(), answer[end..].trim());
            return Some((body.to_owned(), text.trim().to_owned()));
        }
        at = end;
    }
    let trimmed = answer.trim();
    if trimmed.starts_with("<tool_call>") {
        return None;
    }
    let lines: Vec<&str> = trimmed.lines().collect();
    let first = lines.iter().position(|l| l.trim_start().starts_with('<'))?;
    let last = lines.iter().rposition(|l| l.trim_end().ends_with('>'))?;
    if last < first {
        return None;
    }
    let html = lines[first..=last].join("\n");
    if first > 0 && !html.contains("data-chunk-id=") {
        return None;
    }
    let text = format!("{} {}", lines[..first].join(" ").trim(), lines[last + 1..].join(" ").trim());
    Some((html, text.trim().to_owned()))
}

/// A section's HTML without its `data-chunk-id` attribute (as the text protocols show it).
pub fn without_chunk_id(html: &str) -> String {
    match html.find(" data-chunk-id=\"") {
        None => html.to_owned(),
        Some(i) => {
            let after = &html[i + " data-chunk-id=\"".len()..];
            let rest = after.find('"').map_or("", |j| &after[j + 1..]);
            format!("{}{rest}", &html[..i])
        }
    }
}

/// HTML compared for sameness: without `data-chunk-id`, with runs of white space as one
/// space and none between tags.
pub fn normalized(html: &str) -> String {
    let s = redline_domain::document::without_chunk_ids(html);
    let collapsed = s.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed.replace("> <", "><")
}

/// The requests that turn `old` (the sections in view, in document order) into `new` (the
/// model's revision, sectioned). `before` is the section just before the view's first
/// (`None` at the start of the document): where sections created first in view go.
pub fn diff(old: &[Section], new: &[Section], before: Option<&ChunkId>) -> Vec<ToolRequest> {
    let old_norm: Vec<String> = old.iter().map(|s| normalized(&s.html)).collect();
    let new_norm: Vec<String> = new.iter().map(|s| normalized(&s.html)).collect();
    // A new section's anchor: the old section it is. First a kept id on the same HTML; then
    // the same HTML under an id the view did not have; then a kept id. A model that copies an
    // id onto a section it adds (seen: a paragraph put before a heading took the heading's
    // id, and the sectioner gave the heading a fresh one) gets the old section back on the
    // copy that did not change, and the other one is new.
    let mut claimed = std::collections::HashSet::new();
    let mut anchors: Vec<Option<usize>> = vec![None; new.len()];
    let known = |j: usize| old.iter().position(|o| o.id == new[j].id);
    for pass in 0..3 {
        for j in 0..new.len() {
            if anchors[j].is_some() {
                continue;
            }
            let candidate = match pass {
                0 => known(j).filter(|&i| old_norm[i] == new_norm[j]),
                1 if known(j).is_none() => {
                    (0..old.len()).find(|&i| !claimed.contains(&i) && old_norm[i] == new_norm[j])
                }
                2 => known(j),
                _ => None,
            };
            if let Some(i) = candidate.filter(|i| !claimed.contains(i)) {
                claimed.insert(i);
                anchors[j] = Some(i);
            }
        }
    }
    let same = |i: usize, j: usize| match anchors[j] {
        Some(a) => a == i,
        None => !claimed.contains(&i) && old_norm[i] == new_norm[j],
    };
    // Longest common subsequence.
    let (n, m) = (old.len(), new.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if same(i, j) { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let mut pairs = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if same(i, j) {
            pairs.push((i, j));
            i += 1;
            j += 1;
        } else if lcs[i + 1][j] >= lcs[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    pairs.push((n, m));

    let mut out = Vec::new();
    let mut last_old: Option<ChunkId> = before.cloned();
    let (mut oi, mut nj) = (0, 0);
    for (pi, pj) in pairs {
        // The gap before this match: each new section is an edit of the next old one like it
        // (the model dropped or changed its id), else created after the last old section
        // before it; the old sections left over are deleted.
        let mut next_old = oi;
        let mut created = String::new();
        let flush = |created: &mut String, last_old: &Option<ChunkId>, out: &mut Vec<ToolRequest>| {
            if !created.is_empty() {
                out.push(ToolRequest::Create {
                    after: last_old.as_ref().map(|c| c.as_str().to_owned()),
                    new_html: std::mem::take(created),
                    explanation: None,
                });
            }
        };
        for nw in nj..pj {
            match (next_old..pi).find(|&o| alike(&old[o], &new[nw])) {
                Some(o) => {
                    flush(&mut created, &last_old, &mut out);
                    for gone in &old[next_old..o] {
                        out.push(ToolRequest::Delete { chunk_id: gone.id.as_str().to_owned(), explanation: None });
                    }
                    if old_norm[o] != new_norm[nw] {
                        out.push(edit(&old[o], &new[nw]));
                    }
                    last_old = Some(old[o].id.clone());
                    next_old = o + 1;
                }
                None => created.push_str(&new[nw].html),
            }
        }
        flush(&mut created, &last_old, &mut out);
        for gone in &old[next_old..pi] {
            out.push(ToolRequest::Delete { chunk_id: gone.id.as_str().to_owned(), explanation: None });
        }
        if pi < n {
            if old_norm[pi] != new_norm[pj] {
                out.push(edit(&old[pi], &new[pj]));
            }
            last_old = Some(old[pi].id.clone());
        }
        oi = pi + 1;
        nj = pj + 1;
    }
    out
}

/// Whether a revised section without a known id is an edit of an old one: the same tag
/// and at least half their character pairs in common (Dice's coefficient on the text's
/// bigrams, which works for text without spaces too), or both without text.
fn alike(old: &Section, new: &Section) -> bool {
    fn bigrams(text: &str) -> Vec<(char, char)> {
        let chars: Vec<char> = text.to_lowercase().chars().filter(|c| !c.is_whitespace()).collect();
        let mut b: Vec<(char, char)> = chars.windows(2).map(|w| (w[0], w[1])).collect();
        b.sort_unstable();
        b
    }
    if old.tag != new.tag {
        return false;
    }
    let (a, b) = (bigrams(&old.text), bigrams(&new.text));
    if a.is_empty() || b.is_empty() {
        return a.is_empty() && b.is_empty();
    }
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    4 * common >= a.len() + b.len()
}

fn edit(old: &Section, new: &Section) -> ToolRequest {
    ToolRequest::Edit { chunk_id: old.id.as_str().to_owned(), new_html: new.html.clone(), explanation: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sec(id: &str, html_body: &str) -> Section {
        Section {
            id: ChunkId::parse(id).unwrap(),
            tag: "p".into(),
            html: format!("<p data-chunk-id=\"{id}\">{html_body}</p>"),
            text: html_body.to_owned(),
        }
    }

    fn names(reqs: &[ToolRequest]) -> Vec<String> {
        reqs.iter()
            .map(|r| match r {
                ToolRequest::Edit { chunk_id, new_html, .. } => format!("edit {chunk_id}: {}", normalized(new_html)),
                ToolRequest::Create { after, new_html, .. } => {
                    format!("create after {after:?}: {}", normalized(new_html))
                }
                ToolRequest::Delete { chunk_id, .. } => format!("delete {chunk_id}"),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn the_fence_or_the_bare_html_is_the_revision() {
        let (html, text) = extract_html("Here it is:\n```html\n<p>a</p>\n```\nI fixed the typo.").unwrap();
        assert_eq!((html.as_str(), text.as_str()), ("<p>a</p>", "Here it is: I fixed the typo."));
        assert_eq!(extract_html("<p>b</p>").unwrap().0, "<p>b</p>");
        assert_eq!(extract_html("```\n<h1>x</h1>\n```").unwrap().0, "<h1>x</h1>");
        assert!(extract_html("The answer is 42.").is_none());
        assert!(extract_html("```json\n{}\n```").is_none());
        // Unfenced after a lead-in (seen from Qwen2.5-Coder-0.5B).
        let (html, text) =
            extract_html("Sure, here's the revised HTML:\n<p data-chunk-id=\"a\">x</p>\n<p>y</p>\nDone.").unwrap();
        assert_eq!(
            (html.as_str(), text.as_str()),
            ("<p data-chunk-id=\"a\">x</p>\n<p>y</p>", "Sure, here's the revised HTML: Done.")
        );
        // A lead-in and a tag that is not the document's stay an answer.
        assert!(extract_html("Use the tag\n<b>bold</b>\nfor that.").is_none());
    }

    #[test]
    fn unchanged_sections_give_nothing_and_kept_ids_anchor_edits() {
        let old = [sec("a", "One"), sec("b", "Two"), sec("c", "Three")];
        assert!(diff(&old, &old, None).is_empty());
        let new = [sec("a", "One"), sec("b", "Deux"), sec("c", "Three")];
        assert_eq!(names(&diff(&old, &new, None)), ["edit b: <p>Deux</p>"]);
    }

    #[test]
    fn sections_without_ids_are_aligned_by_their_html() {
        let old = [sec("a", "One"), sec("b", "Two"), sec("c", "Three")];
        // The model dropped every id, inserted a section and changed the last.
        let new = [sec("x1", "One"), sec("x2", "Two"), sec("x3", "New"), sec("x4", "Three!")];
        assert_eq!(names(&diff(&old, &new, None)), ["create after Some(\"b\"): <p>New</p>", "edit c: <p>Three!</p>"]);
        // A deletion, and an insertion at the start of a view that begins mid-document.
        let new = [sec("y", "Zero"), sec("a", "One"), sec("c", "Three")];
        assert_eq!(
            names(&diff(&old, &new, Some(&ChunkId::parse("p").unwrap()))),
            ["create after Some(\"p\"): <p>Zero</p>", "delete b"]
        );
    }

    #[test]
    fn an_id_copied_onto_an_added_section_stays_with_the_section_it_names() {
        let old = [sec("a", "Title"), sec("b", "Two")];
        // Seen from Qwen2.5-Coder-1.5B: the paragraph put before the heading took its id (the
        // sectioner gives the second copy a fresh id; kept here too).
        for second in ["a", "fresh"] {
            let new = [sec("a", "Draft"), sec(second, "Title"), sec("b", "Two")];
            assert_eq!(names(&diff(&old, &new, None)), ["create after None: <p>Draft</p>"], "{second}");
        }
        // Neither copy equal to the old section: the first keeps the id, as before.
        let new = [sec("a", "Title!"), sec("a", "Other"), sec("b", "Two")];
        assert_eq!(names(&diff(&old, &new, None)), ["edit a: <p>Title!</p>", "create after Some(\"a\"): <p>Other</p>"]);
    }

    #[test]
    fn a_section_without_a_known_id_edits_the_old_one_it_is_like() {
        let old = [
            sec("a", "Next steps"),
            sec("b", "Ask three suppliers for quotes."),
            sec("c", "Book a trial with the night shift."),
        ];
        // Only the changed section, its id lost: an edit of the one it is like, not of the
        // first; what is left out is for the caller to keep or delete.
        let new = [sec("zz", "Book a trial with the day shift.")];
        assert_eq!(
            names(&diff(&old, &new, None)),
            ["delete a", "delete b", "edit c: <p>Book a trial with the day shift.</p>"]
        );
        // Nothing like it: created where it stands.
        let new = [sec("a", "Next steps"), sec("zz", "Completely different words here")];
        assert_eq!(
            names(&diff(&old, &new, None)),
            ["create after Some(\"a\"): <p>Completely different words here</p>", "delete b", "delete c"]
        );
    }

    #[test]
    fn white_space_and_ids_do_not_count_as_changes() {
        let old = [sec("a", "One <b>two</b>")];
        let new = [Section { html: "<p>One  <b>two</b>\n</p>".into(), ..sec("zz", "x") }];
        assert!(diff(&old, &new, None).is_empty());
    }
}

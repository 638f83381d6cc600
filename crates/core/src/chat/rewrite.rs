//! The `rewrite` protocol's answer: the model returns the revised HTML of the sections in view
//! and Redline turns the difference into section-level edits (docs/api.md, "Edit protocols").
//!
//! The revised sections are aligned with the old ones by a longest common subsequence whose
//! matches are a kept `data-chunk-id`, or, for a section without a known id, the same HTML.
//! Matched sections whose HTML changed are edits; between two matches, old and new sections
//! are paired in order as edits, the new ones left over are created after the last old
//! section before them, and the old ones left over are deleted.

use redline_domain::document::{ChunkId, Section};

use super::tools::ToolRequest;

/// The HTML of the answer: the body of its first ```html fence (or a bare ``` fence whose body
/// starts with a tag); else the whole answer when it starts with a tag. The rest of the
/// answer is the text for the person.
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
    (trimmed.starts_with('<') && !trimmed.starts_with("<tool_call>")).then(|| (trimmed.to_owned(), String::new()))
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
    let mut s = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(i) = rest.find(" data-chunk-id=\"") {
        s.push_str(&rest[..i]);
        let after = &rest[i + " data-chunk-id=\"".len()..];
        rest = after.find('"').map_or("", |j| &after[j + 1..]);
    }
    s.push_str(rest);
    let collapsed = s.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed.replace("> <", "><")
}

/// The requests that turn `old` (the sections in view, in document order) into `new` (the
/// model's revision, sectioned). `before` is the section just before the view's first
/// (`None` at the start of the document): where sections created first in view go.
pub fn diff(old: &[Section], new: &[Section], before: Option<&ChunkId>) -> Vec<ToolRequest> {
    // A new section's anchor: its id, when it is the id of an old section not claimed before.
    let mut claimed = std::collections::HashSet::new();
    let anchors: Vec<Option<usize>> =
        new.iter().map(|n| old.iter().position(|o| o.id == n.id).filter(|i| claimed.insert(*i))).collect();
    let old_norm: Vec<String> = old.iter().map(|s| normalized(&s.html)).collect();
    let new_norm: Vec<String> = new.iter().map(|s| normalized(&s.html)).collect();
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
        // The gap before this match: pair in order, then create or delete the rest.
        let olds = oi..pi;
        let news = nj..pj;
        let paired = olds.len().min(news.len());
        for k in 0..paired {
            let (o, nw) = (oi + k, nj + k);
            if old_norm[o] != new_norm[nw] {
                out.push(edit(&old[o], &new[nw]));
            }
            last_old = Some(old[o].id.clone());
        }
        if news.len() > paired {
            let html: String = new[nj + paired..pj].iter().map(|s| s.html.as_str()).collect();
            out.push(ToolRequest::Create {
                after: last_old.as_ref().map(|c| c.as_str().to_owned()),
                new_html: html,
                explanation: None,
            });
        }
        for gone in &old[oi + paired..pi] {
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
        assert_eq!(names(&diff(&old, &new, None)), ["edit c: <p>New</p>", "create after Some(\"c\"): <p>Three!</p>"]);
        // A deletion, and an insertion at the start of a view that begins mid-document.
        let new = [sec("y", "Zero"), sec("a", "One"), sec("c", "Three")];
        assert_eq!(
            names(&diff(&old, &new, Some(&ChunkId::parse("p").unwrap()))),
            ["create after Some(\"p\"): <p>Zero</p>", "delete b"]
        );
    }

    #[test]
    fn white_space_and_ids_do_not_count_as_changes() {
        let old = [sec("a", "One <b>two</b>")];
        let new = [Section { html: "<p>One  <b>two</b>\n</p>".into(), ..sec("zz", "x") }];
        assert!(diff(&old, &new, None).is_empty());
    }
}

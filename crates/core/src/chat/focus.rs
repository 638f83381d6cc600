//! The part of a document a text protocol shows the model (docs/api.md, "Edit protocols"):
//! the whole document when it is small, else the sections that match the request best, in
//! document order, within a budget of bytes that keeps the prompt and the rewritten answer
//! small (the model writes back every section it sees under `rewrite`).
//!
//! How sections are ranked: a section holding one of the request's quoted phrases first; then
//! by the request's words and its runs of two and three words ("Pump Station 9", "Brightline
//! Services") found in the section's text, each weighted by how rare it is in the document
//! (a run counts two or three times a word). Sections scoring under a third of the best are
//! left out. A heading among the three best brings the sections under it (up to the next
//! heading of its level or above) and ends the ranking (sections scoring as high are still
//! shown): "the maintenance paragraph of Pump Station 9" names the chapter, and the other
//! chapters' maintenance paragraphs are not what it asks for. A view of one or two sections
//! gets their neighbours too.

use std::collections::BTreeSet;

use redline_domain::document::{Document, Section};

/// A document whose sections' HTML is at most this many bytes is shown whole (about 1,700
/// tokens of English, fewer of CJK).
pub const VIEW_BYTES: usize = 6_000;

/// Bytes of section HTML shown at most from a longer document: a chapter of a manual and a
/// few more sections (about 700 tokens of English).
pub const PARTIAL_VIEW_BYTES: usize = 2_500;

/// Indices of the sections in view, in document order.
pub fn view(doc: &Document, request: &str) -> Vec<usize> {
    view_within(doc, request, VIEW_BYTES, PARTIAL_VIEW_BYTES)
}

fn view_within(doc: &Document, request: &str, whole: usize, partial: usize) -> Vec<usize> {
    let sections = doc.sections();
    let total: usize = sections.iter().map(|s| s.html.len()).sum();
    if total <= whole {
        return (0..sections.len()).collect();
    }
    let ranked = ranked(sections, request);
    let mut chosen = BTreeSet::new();
    let mut used = 0usize;
    let mut take = |i: usize, chosen: &mut BTreeSet<usize>| {
        let size = sections[i].html.len();
        if chosen.contains(&i) || (used + size > partial && !chosen.is_empty()) {
            return;
        }
        used += size;
        chosen.insert(i);
    };
    if ranked.is_empty() {
        // Nothing matches: the ends of the document (where "add … at the end" goes).
        take(0, &mut chosen);
        take(sections.len() - 1, &mut chosen);
    }
    // A heading among the three best stops the ranking there: the request names that part.
    let mut floor = 0.0;
    for (rank, &(i, score)) in ranked.iter().enumerate() {
        if score < floor {
            break;
        }
        take(i, &mut chosen);
        if rank < 3 {
            if let Some(level) = heading_level(&sections[i]) {
                let under = sections[i + 1..].iter().take_while(|s| heading_level(s).is_none_or(|l| l > level));
                for (k, _) in under.enumerate() {
                    take(i + 1 + k, &mut chosen);
                }
                floor = score;
            }
        }
    }
    // A view of one or two sections also shows their neighbours: the model then sees where
    // they stand, and under `rewrite` deletes a section by leaving it out between two it keeps.
    if chosen.len() < 3 {
        let picked: Vec<usize> = chosen.iter().copied().collect();
        for i in picked {
            take(i.saturating_sub(1), &mut chosen);
            if i + 1 < sections.len() {
                take(i + 1, &mut chosen);
            }
        }
    }
    chosen.into_iter().collect()
}

/// The sections that match the request with their scores, best first (see the module's
/// comment).
fn ranked(sections: &[Section], request: &str) -> Vec<(usize, f64)> {
    let texts: Vec<String> = sections.iter().map(|s| s.text.to_lowercase()).collect();
    let words: Vec<Vec<&str>> = texts.iter().map(|t| words_of(t)).collect();
    let lower = request.to_lowercase();
    let asked = words_of(&lower);
    let mut grams: Vec<&[&str]> = Vec::new();
    for n in 1..=3 {
        for g in asked.windows(n) {
            let trivial = n == 1 && (STOP.contains(&g[0]) || g[0].chars().count() < 2);
            if !trivial && !grams.contains(&g) {
                grams.push(g);
            }
        }
    }
    let quoted: Vec<String> = quoted(request).iter().map(|q| q.to_lowercase()).collect();
    let names = names(request);
    // How many sections hold each run of words.
    let mut df = vec![0usize; grams.len()];
    let holds: Vec<Vec<usize>> = words
        .iter()
        .map(|w| {
            let found: Vec<usize> =
                (0..grams.len()).filter(|&g| w.windows(grams[g].len()).any(|x| x == grams[g])).collect();
            for &g in &found {
                df[g] += 1;
            }
            found
        })
        .collect();
    let n = sections.len() as f64;
    let mut scored: Vec<(usize, f64)> = holds
        .iter()
        .enumerate()
        .map(|(i, found)| {
            let mut score: f64 =
                found.iter().map(|&g| grams[g].len() as f64 * (1.0 + n / df[g] as f64).ln()).sum::<f64>();
            if quoted.iter().any(|q| texts[i].contains(q.as_str())) {
                score += 1_000.0;
            }
            let w = &words[i];
            score += 100.0 * names.iter().filter(|n| w.windows(n.len()).any(|x| x == n.as_slice())).count() as f64;
            (i, score)
        })
        .filter(|&(_, score)| score > 0.0)
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let best = scored.first().map_or(0.0, |s| s.1);
    scored.into_iter().take_while(|s| s.1 * 3.0 >= best).collect()
}

/// The names a request holds: runs of two to four words, the first capitalized and each
/// capitalized or a number, with only spaces between them ("Pump Station 9", "Brightline
/// Services"), lower-cased; a longer run gives each of its runs ("At Reservoir 4" gives
/// "reservoir 4" too).
fn names(request: &str) -> Vec<Vec<String>> {
    let mut runs: Vec<Vec<&str>> = vec![Vec::new()];
    let mut rest = request;
    while let Some(start) = rest.find(char::is_alphanumeric) {
        let gap = &rest[..start];
        let end = rest[start..].find(|c: char| !c.is_alphanumeric()).map_or(rest.len(), |e| start + e);
        let word = &rest[start..end];
        let capital = word.chars().next().is_some_and(char::is_uppercase);
        let number = word.chars().all(|c| c.is_ascii_digit());
        let run = runs.last_mut().expect("never empty");
        let joined = !run.is_empty() && gap.chars().all(char::is_whitespace);
        if !(capital || number) || !joined {
            runs.push(Vec::new());
        }
        if capital || number {
            runs.last_mut().expect("never empty").push(word);
        }
        rest = &rest[end..];
    }
    let mut out: Vec<Vec<String>> = Vec::new();
    for run in runs {
        for from in 0..run.len() {
            if !run[from].chars().next().is_some_and(char::is_uppercase) {
                continue;
            }
            for len in 2..=4.min(run.len() - from) {
                let name: Vec<String> = run[from..from + len].iter().map(|w| w.to_lowercase()).collect();
                if !out.contains(&name) {
                    out.push(name);
                }
            }
        }
    }
    out
}

/// Words too common to rank by on their own.
const STOP: [&str; 30] = [
    "the", "and", "for", "are", "was", "what", "who", "how", "why", "when", "where", "which", "this", "that", "with",
    "from", "does", "did", "is", "of", "in", "a", "an", "to", "at", "on", "it", "its", "by", "be",
];

fn words_of(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect()
}

fn heading_level(s: &Section) -> Option<u8> {
    match s.tag.as_bytes() {
        [b'h', d @ b'1'..=b'6'] => Some(d - b'0'),
        _ => None,
    }
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

    fn tagged(sections: &[(String, String)]) -> Document {
        Document::new(
            sections
                .iter()
                .enumerate()
                .map(|(i, (tag, t))| Section {
                    id: ChunkId::parse(&format!("c{i}")).unwrap(),
                    tag: tag.clone(),
                    html: format!("<{tag} data-chunk-id=\"c{i}\">{t}</{tag}>"),
                    text: t.clone(),
                })
                .collect(),
        )
        .unwrap()
    }

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
        assert_eq!(view(&d, "anything"), vec![0, 1, 2]);
    }

    #[test]
    fn a_large_document_shows_what_the_request_names_in_order() {
        let filler = "lorem words about nothing in particular ".repeat(5);
        let mut texts: Vec<String> = (0..100).map(|i| format!("Paragraph {i}: {filler}")).collect();
        texts[70] = "The Acme Corporation was founded in 1901.".into();
        texts[20] = "Acme Corporation makes anvils.".into();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let d = doc(&refs);
        // Two sections match: they come with their neighbours.
        assert_eq!(view_within(&d, "Rename \"Acme Corporation\" to Zenith", 400, 2_000), vec![19, 20, 21, 69, 70, 71]);
        // Within the budget, the matches first.
        assert_eq!(view_within(&d, "Rename \"Acme Corporation\" to Zenith", 100, 130), vec![20, 70]);
        // Nothing matches: the two ends.
        assert_eq!(view_within(&d, "add a closing remark", 1_000, 2_000), vec![0, 1, 98, 99]);
    }

    #[test]
    fn a_heading_the_request_names_brings_its_chapter() {
        // Chapters alike but for their names: the request names one by a run of words.
        let mut d = Vec::new();
        for c in 1..=12 {
            d.push(("h2".to_owned(), format!("Pump Station {c}, Mill Lane")));
            d.push(("p".into(), format!("Pump Station {c} supplies some households.")));
            d.push(("p".into(), "Routine inspections take place every 14 days.".to_owned()));
            d.push(("p".into(), "Spare seals are kept in the cabinet.".to_owned()));
        }
        let d = tagged(&d);
        let v = view_within(
            &d,
            "At Pump Station 7, inspections now take place every 21 days. Update its maintenance paragraph.",
            100,
            400,
        );
        assert!(v.contains(&26), "{v:?}: the maintenance paragraph of chapter 7 is shown");
        assert!(v.contains(&24) && v.contains(&25), "{v:?}");
        assert!(!v.contains(&2) && !v.contains(&30), "{v:?}: other chapters' paragraphs are not");
    }
    /// The evaluation's 500-section manual (scripts/eval/tasks/docs.py, one block a line) and
    /// its requests with the sections each must show (scripts/eval/tasks/long.py).
    #[test]
    fn the_evaluations_long_manual_shows_each_request_its_sections_within_the_budget() {
        let html = include_str!("../../tests/fixtures/manual-500.html");
        let blocks: Vec<(String, String)> = html
            .lines()
            .map(|line| {
                let tag: String = line[1..].chars().take_while(char::is_ascii_alphanumeric).collect();
                let mut text = String::new();
                let mut in_tag = false;
                for c in line.chars() {
                    match c {
                        '<' => in_tag = true,
                        '>' => {
                            in_tag = false;
                            text.push(' ');
                        }
                        c if !in_tag => text.push(c),
                        _ => {}
                    }
                }
                let text = text.replace("&amp;", "&").split_whitespace().collect::<Vec<_>>().join(" ");
                (tag, text)
            })
            .collect();
        assert_eq!(blocks.len(), 500);
        let d = tagged(&blocks);
        let cases: Vec<serde_json::Value> =
            serde_json::from_str(include_str!("../../tests/fixtures/manual-500-requests.json")).unwrap();
        assert_eq!(cases.len(), 6);
        for case in cases {
            let request = case["request"].as_str().unwrap();
            let v = view(&d, request);
            let bytes: usize = v.iter().map(|&i| d.sections()[i].html.len()).sum();
            for must in case["must_show"].as_array().unwrap() {
                let must = must.as_u64().unwrap() as usize;
                assert!(v.contains(&must), "{}: section {must} is not in view {v:?}", case["task"]);
            }
            assert!(bytes <= PARTIAL_VIEW_BYTES, "{}: {bytes} bytes in view", case["task"]);
            // One chapter (11 sections) at most: what matches the request and nothing else.
            assert!(v.len() <= 11, "{}: {v:?}", case["task"]);
            eprintln!("{}: {} sections, {bytes} bytes: {v:?}", case["task"], v.len());
        }
    }

    #[test]
    fn names_are_runs_of_capitalized_words_and_numbers() {
        let n = |r: &str| names(r).into_iter().map(|n| n.join(" ")).collect::<Vec<_>>();
        assert_eq!(n("At Reservoir 4, inspections take place"), ["at reservoir", "at reservoir 4", "reservoir 4"]);
        assert_eq!(
            n("Brightline Services has been renamed Keystone Maintenance."),
            ["brightline services", "keystone maintenance"]
        );
        assert_eq!(
            n("Add \"Eyewash\" to the list of Pump Station 11."),
            ["pump station", "pump station 11", "station 11"]
        );
        assert_eq!(n("fix the typo in 2024 figures"), Vec::<String>::new());
    }

    #[test]
    fn quotes_are_found_but_apostrophes_are_not() {
        assert_eq!(quoted("Replace \"old name\" with 'new name' in Ann's text"), ["old name", "new name"]);
        assert_eq!(quoted("将「東京」改为「大阪」"), ["東京", "大阪"]);
        assert_eq!(quoted("don't and can't"), Vec::<String>::new());
    }
}

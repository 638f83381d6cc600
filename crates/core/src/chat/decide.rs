//! What a reviewer decided in Word (docs/api.md, "The Word round trip"): the pending changes
//! of a turn read against the file they sent back.
//!
//! The document is cut into regions at *fences*: sections no change touches that the
//! reviewer's reading still has, unchanged and in order (a longest common subsequence by
//! content). Within a region each change is a piece that reads either as it was (`Left`) or
//! as proposed (`Taken`), and each section no change touches reads as it was. The region's
//! text in the reading is matched against those pieces in order; where no choice matches, the
//! fewest pieces take whatever text stands in their place instead: the reviewer changed the
//! proposal before accepting it (`Edited`), or wrote text of their own beside the change as
//! proposed or as it was (read as `Taken` or `Left`; the caller proposes their text again). A region whose match does not replay exactly
//! (changes whose order the pieces do not model) leaves all its changes `Left`: the caller
//! proposes the reviewer's text again rather than guess.

use redline_domain::document::{Document, Section};
use redline_domain::job::{apply_approved, Change, ChangeOp};

use super::revisions::{align, content, Step};

/// What the reading says of one pending change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// The reading shows the change as proposed.
    Taken,
    /// The reading shows the sections as they were.
    Left,
    /// The reading shows these sections where the change stood: accepted with the
    /// reviewer's corrections.
    Edited(Vec<Section>),
}

/// The largest match work of one region (pieces × reading sections², each cell 32 bytes when
/// only exact matches are tried); a larger region is matched exactly or, past this many cells,
/// not at all.
const MAX_WORK: usize = 2_000_000;

/// One piece of a region: a change, or a section no change touches (`change: None`).
struct Piece {
    change: Option<usize>,
    old: Vec<String>,
    new: Vec<String>,
    /// The text of the section it stood on (empty for a creation).
    old_text: String,
}

/// A piece's reading: as it was, as proposed, or other text (reading indices `from..to`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    Old,
    New,
    Free(usize, usize),
}

/// Each pending change of `doc` as `reading` (the reviewed file, sectioned) shows it.
pub(crate) fn decide(doc: &Document, pending: &[Change], reading: &[Section]) -> Vec<Decision> {
    let sections = doc.sections();
    let n = sections.len();
    let mut out = vec![Decision::Left; pending.len()];
    // Where each change stands: the section it edits or deletes, or that a creation follows
    // (`None`: the start).
    let mut touched = vec![false; n];
    let mut at_start = Vec::new();
    let mut after: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut on: Vec<Option<usize>> = vec![None; n];
    for (k, c) in pending.iter().enumerate() {
        match c.op {
            ChangeOp::Edit | ChangeOp::Delete => match doc.position(&c.chunk_id) {
                Some(i) if on[i].is_none() && c.is_current(doc) => {
                    on[i] = Some(k);
                    touched[i] = true;
                }
                _ => {}
            },
            ChangeOp::Create => match c.after.as_ref().map(|a| doc.position(a)) {
                None => at_start.push(k),
                Some(Some(i)) => {
                    after[i].push(k);
                    touched[i] = true;
                }
                Some(None) => {}
            },
        }
    }
    let old: Vec<String> = sections.iter().map(content).collect();
    let read: Vec<String> = reading.iter().map(content).collect();
    let mut fences: Vec<(usize, usize)> = Vec::new();
    for step in align(n, read.len(), |i, j| old[i] == read[j]) {
        if let Step::Pair(i, j) = step {
            if !touched[i] {
                fences.push((i, j));
            }
        }
    }
    // The gaps between fences, with the reading's sections between them.
    let mut gaps = Vec::with_capacity(fences.len() + 1);
    let mut prev = (0usize, 0usize);
    for &(i, j) in &fences {
        gaps.push((prev.0..i, prev.1..j));
        prev = (i + 1, j + 1);
    }
    gaps.push((prev.0..n, prev.1..read.len()));
    for (k, (span, there)) in gaps.into_iter().enumerate() {
        let mut pieces = Vec::new();
        let creation = |c: usize| Piece {
            change: Some(c),
            old: Vec::new(),
            new: pending[c].new_sections.iter().map(content).collect(),
            old_text: String::new(),
        };
        if k == 0 {
            pieces.extend(at_start.iter().rev().map(|&c| creation(c)));
        }
        for i in span.clone() {
            pieces.push(match on[i] {
                Some(c) => Piece {
                    change: Some(c),
                    old: vec![old[i].clone()],
                    new: pending[c].new_sections.iter().map(content).collect(),
                    old_text: sections[i].text.clone(),
                },
                None => Piece {
                    change: None,
                    old: vec![old[i].clone()],
                    new: vec![old[i].clone()],
                    old_text: String::new(),
                },
            });
            pieces.extend(after[i].iter().rev().map(|&c| creation(c)));
        }
        if pieces.iter().all(|p| p.change.is_none()) {
            continue;
        }
        let Some(choices) = best_match(&pieces, &read[there.clone()]) else { continue };
        let region = &reading[there.clone()];
        let texts = &read[there.clone()];
        let decisions: Vec<(usize, Decision)> = pieces
            .iter()
            .zip(&choices)
            .filter_map(|(p, choice)| {
                let c = p.change?;
                let decision = match *choice {
                    Choice::Old => Decision::Left,
                    Choice::New => Decision::Taken,
                    Choice::Free(from, to) => free_decision(p, pending[c].op, &region[from..to], &texts[from..to]),
                };
                Some((c, decision))
            })
            .collect();
        if replays(doc, &span, pending, &decisions, &pieces, &choices, &read[there]) {
            for (c, d) in decisions {
                out[c] = d;
            }
        }
    }
    out
}

/// What a change reads as where other text stands in its place (`sections`, their contents
/// `read`): the reviewer's own text beside it is proposed again by the caller, so the change
/// reads as taken when the text holds what it proposed, as left when it holds the section as
/// it was, and otherwise as accepted with the reviewer's corrections — except a section
/// emptied (left), and a deletion, which reads as left when the text is an edit of the
/// section it deletes (most of its words kept) and as taken when it is new text.
fn free_decision(piece: &Piece, op: ChangeOp, sections: &[Section], read: &[String]) -> Decision {
    let holds = |run: &[String]| !run.is_empty() && read.windows(run.len()).any(|w| w == run);
    if sections.is_empty() {
        return Decision::Left;
    }
    if op != ChangeOp::Delete && holds(&piece.new) {
        return Decision::Taken;
    }
    if holds(&piece.old) {
        return Decision::Left;
    }
    if op != ChangeOp::Delete {
        return Decision::Edited(sections.to_vec());
    }
    let was = words(&piece.old_text);
    let kept = sections.iter().any(|s| {
        let now = words(&s.text);
        2 * was.intersection(&now).count() >= was.len().max(1)
    });
    if kept {
        Decision::Left
    } else {
        Decision::Taken
    }
}

/// The words of `text`, lower case, without punctuation.
fn words(text: &str) -> std::collections::HashSet<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

/// The choice for each piece whose readings, in order, make `read` with the fewest pieces
/// taking other text, and of those the fewest sections taken so; `None` when nothing does
/// within [`MAX_WORK`].
fn best_match(pieces: &[Piece], read: &[String]) -> Option<Vec<Choice>> {
    let (p, l) = (pieces.len(), read.len());
    let free = p.saturating_mul(l + 1).saturating_mul(l + 1) <= MAX_WORK;
    if !free && p.saturating_mul(l + 1) > MAX_WORK {
        return None;
    }
    const NONE: u64 = u64::MAX;
    let w = l + 1;
    // A piece taking other text costs more than all the sections it can take.
    let piece_cost = w as u64;
    // cost[i * w + q]: the least cost of making read[..q] from pieces[..i].
    let mut cost = vec![NONE; (p + 1) * w];
    let mut from: Vec<(usize, Choice)> = vec![(0, Choice::Old); (p + 1) * w];
    cost[0] = 0;
    for i in 0..p {
        for q in 0..=l {
            let here = cost[i * w + q];
            if here == NONE {
                continue;
            }
            let mut relax = |to: usize, c: u64, choice: Choice| {
                if c < cost[(i + 1) * w + to] {
                    cost[(i + 1) * w + to] = c;
                    from[(i + 1) * w + to] = (q, choice);
                }
            };
            // Taken first: where both readings match, the change is taken.
            for (option, choice) in [(&pieces[i].new, Choice::New), (&pieces[i].old, Choice::Old)] {
                let end = q + option.len();
                if end <= l && read[q..end] == option[..] {
                    relax(end, here, choice);
                }
            }
            if free {
                for to in q..=l {
                    relax(to, here + piece_cost + (to - q) as u64, Choice::Free(q, to));
                }
            }
        }
    }
    if cost[p * w + l] == NONE {
        return None;
    }
    let mut choices = vec![Choice::Old; p];
    let mut q = l;
    for i in (1..=p).rev() {
        let (prev, choice) = from[i * w + q];
        choices[i - 1] = choice;
        q = prev;
    }
    Some(choices)
}

/// Whether applying `decisions` to the region `span` of `doc` gives the sections the
/// pieces' choices say (the order of creations and multi-section edits as modelled).
fn replays(
    doc: &Document,
    span: &std::ops::Range<usize>,
    pending: &[Change],
    decisions: &[(usize, Decision)],
    pieces: &[Piece],
    choices: &[Choice],
    read: &[String],
) -> bool {
    let Ok(region) = Document::new(doc.sections()[span.clone()].to_vec()) else { return false };
    let mut changes: Vec<Change> = Vec::new();
    for (c, decision) in decisions {
        let mut change = pending[*c].clone();
        match decision {
            Decision::Left => continue,
            Decision::Taken => {}
            Decision::Edited(sections) => change.new_sections.clone_from(sections),
        }
        changes.push(change);
    }
    // Sections a change makes are compared by content: their ids do not matter here.
    let refs: Vec<&Change> = changes.iter().collect();
    let Ok(result) = apply_approved(&region, &refs) else { return false };
    let got: Vec<String> = result.sections().iter().map(content).collect();
    let mut want: Vec<String> = Vec::new();
    for (piece, choice) in pieces.iter().zip(choices) {
        match (*choice, piece.change) {
            (Choice::New, _) => want.extend(piece.new.iter().cloned()),
            (Choice::Old, _) | (Choice::Free(..), None) => want.extend(piece.old.iter().cloned()),
            (Choice::Free(from, to), Some(c)) => match decisions.iter().find(|(k, _)| *k == c) {
                Some((_, Decision::Edited(_))) => want.extend(read_slice(read, from, to)),
                Some((_, Decision::Taken)) => want.extend(piece.new.iter().cloned()),
                _ => want.extend(piece.old.iter().cloned()),
            },
        }
    }
    got == want
}

fn read_slice(read: &[String], from: usize, to: usize) -> Vec<String> {
    read.get(from..to).map(<[String]>::to_vec).unwrap_or_default()
}

#[cfg(test)]
mod tests;

use redline_domain::document::{ChunkId, Document, Section};
use redline_domain::job::{Change, ChangeOp};

use super::{decide, Decision};
use crate::chat::test_support::section;

/// The reading a reviewer sends back: its sections have ids of their own.
fn reading(texts: &[&str]) -> Vec<Section> {
    texts.iter().enumerate().map(|(k, t)| section(&format!("r{k}"), t)).collect()
}

fn doc() -> Document {
    Document::new(vec![section("a1", "one"), section("b2", "two"), section("c3", "three"), section("d4", "four")])
        .expect("doc")
}

fn change(id: &str, op: ChangeOp, chunk: &str, after: Option<&str>, new: &[(&str, &str)]) -> Change {
    let d = doc();
    Change {
        change_id: id.to_owned(),
        op,
        chunk_id: ChunkId::parse(chunk).expect("id"),
        after: after.and_then(ChunkId::parse),
        old_html: d.get(&ChunkId::parse(chunk).expect("id")).map(|s| s.html.clone()),
        new_sections: new.iter().map(|(id, t)| section(id, t)).collect(),
        explanation: None,
        edited: false,
    }
}

fn pending() -> Vec<Change> {
    vec![
        change("k1", ChangeOp::Create, "n1", Some("a1"), &[("n1", "one and a half")]),
        change("k2", ChangeOp::Edit, "b2", None, &[("b2", "TWO")]),
        change("k3", ChangeOp::Edit, "c3", None, &[("c3", "THREE")]),
        change("k4", ChangeOp::Delete, "d4", None, &[]),
    ]
}

#[test]
fn each_change_reads_as_taken_or_left() {
    let got = decide(&doc(), &pending(), &reading(&["one", "one and a half", "TWO", "three", "four"]));
    assert_eq!(got, vec![Decision::Taken, Decision::Taken, Decision::Left, Decision::Left]);
    let got = decide(&doc(), &pending(), &reading(&["one", "two", "THREE"]));
    assert_eq!(got, vec![Decision::Left, Decision::Left, Decision::Taken, Decision::Taken]);
    let got = decide(&doc(), &pending(), &reading(&["one", "two", "three", "four"]));
    assert_eq!(got, vec![Decision::Left; 4]);
}

#[test]
fn a_proposal_changed_before_it_was_accepted_reads_as_edited() {
    let r = reading(&["one", "one and a half", "Two, as the reviewer put it", "three", "four"]);
    let got = decide(&doc(), &pending(), &r);
    assert_eq!(got[0], Decision::Taken);
    assert_eq!(got[1], Decision::Edited(vec![r[2].clone()]));
    assert_eq!(got[2..], [Decision::Left, Decision::Left]);
    // Emptied, or a deletion kept with other text: the reviewer's own edit, not the change.
    let got = decide(&doc(), &pending(), &reading(&["one", "three", "FOUR!"]));
    assert_eq!(got, vec![Decision::Left; 4]);
}

#[test]
fn an_edit_the_reviewer_made_beside_the_changes_does_not_hide_them() {
    // "one" (untouched, but the anchor of the creation) edited by the reviewer.
    let got = decide(&doc(), &pending(), &reading(&["One!", "one and a half", "TWO", "THREE", "four"]));
    assert_eq!(got, vec![Decision::Taken, Decision::Taken, Decision::Taken, Decision::Left]);
}

#[test]
fn an_edit_into_several_sections_and_creations_at_the_start_read_whole() {
    let d = doc();
    let pending = vec![
        change("k1", ChangeOp::Create, "n0", None, &[("n0", "zero")]),
        change("k2", ChangeOp::Edit, "b2", None, &[("b2", "two a"), ("n2", "two b")]),
    ];
    let got = decide(&d, &pending, &reading(&["zero", "one", "two a", "two b", "three", "four"]));
    assert_eq!(got, vec![Decision::Taken, Decision::Taken]);
    let got = decide(&d, &pending, &reading(&["one", "two a", "two b", "three", "four"]));
    assert_eq!(got, vec![Decision::Left, Decision::Taken]);
}

#[test]
fn a_change_whose_section_moved_on_is_left() {
    let mut stale = change("k2", ChangeOp::Edit, "b2", None, &[("b2", "TWO")]);
    stale.old_html = Some("<p data-chunk-id=\"b2\">other</p>".to_owned());
    let got = decide(&doc(), &[stale], &reading(&["one", "TWO", "three", "four"]));
    assert_eq!(got, vec![Decision::Left]);
}

#[test]
fn text_of_the_reviewers_own_beside_a_change_does_not_change_its_reading() {
    // The edit of "two" rejected, and a paragraph of their own typed after it: left, not
    // accepted with corrections.
    let got = decide(&doc(), &pending(), &reading(&["one", "two", "a new paragraph", "three", "four"]));
    assert_eq!(got[1], Decision::Left);
    // The edit accepted, and their own paragraph after it: taken.
    let got = decide(&doc(), &pending(), &reading(&["one", "TWO", "a new paragraph", "three", "four"]));
    assert_eq!(got[1], Decision::Taken);
    // The deletion of "four" accepted and new text typed in its place: taken; "four" edited
    // instead (most of its words kept): left, their edit proposed again.
    let got = decide(&doc(), &pending(), &reading(&["one", "two", "three", "something else entirely"]));
    assert_eq!(got[3], Decision::Taken);
    let got = decide(&doc(), &pending(), &reading(&["one", "two", "three", "Four, again"]));
    assert_eq!(got[3], Decision::Left);
}

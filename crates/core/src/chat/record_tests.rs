//! The stored format of chat jobs against fixtures: `fixtures/turn_v1/` holds requests,
//! states, metadata and results as the build before these types wrote them (format 1, without
//! a `format` field), captured from real turns. Each must read into its type and write back
//! as the same JSON.

use std::path::PathBuf;

use redline_domain::job::ChangeOp;
use serde_json::{json, Map, Value};

use super::*;

fn fixtures() -> Vec<(String, Value)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/turn_v1");
    let mut out: Vec<(String, Value)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            (name, serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn fixture(name: &str) -> Value {
    fixtures().into_iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no fixture {name}")).1
}

/// The object without its `format` key.
fn without_format(v: Value) -> Value {
    let Value::Object(mut m) = v else { panic!("not an object: {v}") };
    assert_eq!(m.remove("format"), Some(json!(FORMAT)), "written with the current format");
    Value::Object(m)
}

/// A state without the keys that hold their default (null, an empty list, 0): every reader of
/// a state, this build's and the one before, takes an absent key for its default.
fn without_defaults(v: Value) -> Value {
    let Value::Object(m) = v else { panic!("not an object: {v}") };
    let kept: Map<String, Value> =
        m.into_iter().filter(|(_, v)| !(v.is_null() || v == &json!([]) || v == &json!(0))).collect();
    Value::Object(kept)
}

#[test]
fn every_fixture_reads_and_writes_back_the_same() {
    let all = fixtures();
    assert!(all.len() >= 8, "fixtures: {:?}", all.iter().map(|f| &f.0).collect::<Vec<_>>());
    for (name, stored) in all {
        match name.split('_').next() {
            Some("request") => {
                let t = TurnRequest::read(&stored).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(t.format, 1, "{name}");
                assert_eq!(without_format(t.to_value()), stored, "{name}");
            }
            Some("result") => {
                let t = TurnResult::read(&stored).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(t.format, 1, "{name}");
                assert_eq!(without_format(t.to_value()), stored, "{name}");
            }
            Some("metadata") => {
                let t = TurnMetadata::read(&stored).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(t.to_value(), stored, "{name}");
            }
            Some("state") => {
                let t = TurnState::read(&stored).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(t.format, 1, "{name}");
                // Each change kept in full reads into a domain change.
                t.pending_changes().unwrap_or_else(|e| panic!("{name}: {e}"));
                t.prior_changes().unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(without_defaults(without_format(t.to_value())), without_defaults(stored), "{name}");
            }
            _ => panic!("a fixture named {name} is none of request_, state_, metadata_, result_"),
        }
    }
}

#[test]
fn the_fixtures_hold_what_their_turns_did() {
    let queued = TurnState::read(&fixture("state_queued")).unwrap();
    assert_eq!(queued, TurnState { format: 1, ..TurnState::default() });

    let awaiting = TurnState::read(&fixture("state_awaiting")).unwrap();
    let pending = awaiting.pending_changes().unwrap();
    assert!(!pending.is_empty());
    assert!(awaiting.response.is_some() && awaiting.continuation.is_none());

    let requeued = TurnState::read(&fixture("state_requeued")).unwrap();
    let c = requeued.continuation.as_ref().expect("the reviewer's answer");
    assert!(!c.feedback.is_empty() && !c.rejected.is_empty());
    assert!(requeued.applied_sections > 0 && !requeued.prior_changes().unwrap().is_empty());
    assert!(requeued.turn_version_before.is_some() && requeued.turn_version_after.is_some());

    let failed = TurnState::read(&fixture("state_failed_conflict")).unwrap();
    assert_eq!(failed.failure, Some(Failure::Conflict));

    let full = TurnResult::read(&fixture("result_full")).unwrap();
    assert!(full.document_changes.updated_html.is_some() && full.document_changes.chunk_diffs.is_none());
    assert_eq!(full.document_changes.pending_changes, None);
    let compact = TurnResult::read(&fixture("result_compact")).unwrap();
    assert!(compact.document_changes.updated_html.is_none());
    assert_eq!(compact.document_changes.chunk_diffs.as_ref(), Some(&compact.document_changes.changes));

    let request = TurnRequest::read(&fixture("request_compact")).unwrap();
    assert_eq!(request.response_mode, ResponseMode::Compact);
}

#[test]
fn a_format_from_a_newer_build_is_refused() {
    let mut newer = fixture("request_full");
    newer["format"] = json!(FORMAT + 1);
    let e = TurnRequest::read(&newer).unwrap_err().to_string();
    assert!(e.contains("newer build"), "{e}");
    assert!(TurnState::read(&json!({"format": FORMAT + 1})).is_err());
    assert!(TurnState::read(&json!({"format": FORMAT})).is_ok());
}

#[test]
fn corrupt_parts_are_errors_not_defaults() {
    assert!(TurnState::read(&json!({"pending": {"nope": 1}})).is_err());
    assert!(TurnState::read(&json!({"failure": "meteor"})).is_err());
    let bad_id = json!({"pending": [{
        "change_id": "chg_1", "op": "edit", "chunk_id": "not an id!", "after": null,
        "old_html": null, "new_sections": [], "explanation": null
    }]});
    let state = TurnState::read(&bad_id).unwrap();
    assert!(state.pending_changes().is_err());
    let mut op = bad_id.clone();
    op["pending"][0]["op"] = json!("rename");
    assert!(TurnState::read(&op).is_err());
    let change: PublicChange =
        serde_json::from_value(fixture("result_full")["document_changes"]["changes"][0].clone()).unwrap();
    assert_eq!((change.document_id, change.operation == ChangeOp::Delete), (None, change.new_html.is_none()));
}

//! Job bodies against the wire: `fixtures/jobs/` holds jobs as the build before these types
//! stored them (the record's columns and events) with the exact text it answered for each.
//! The bodies must answer the same bytes: same keys, same order, same nulls and absences.

use std::path::PathBuf;

use redline_domain::job::JobType;
use redline_domain::time_util::parse_iso8601;
use redline_domain::{OrgId, Owner, SessionId, UserId};
use redline_ports::jobs::JobRecord;

use super::*;

fn text(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or_else(|| panic!("{key} in {v}")).to_owned()
}

fn millis(v: &Value, key: &str) -> i64 {
    parse_iso8601(&text(v, key)).unwrap_or_else(|| panic!("{key} in {v}"))
}

fn record(j: &Value) -> JobRecord {
    let owner = match j["organization_id"].as_str() {
        Some(org) => Owner::Org(OrgId::parse(org).unwrap()),
        None => Owner::User(UserId::parse(&text(j, "user_id")).unwrap()),
    };
    JobRecord {
        job_id: text(j, "job_id"),
        owner,
        session_id: SessionId::parse(&text(j, "session_id")).unwrap(),
        job_type: JobType::parse(&text(j, "job_type")).unwrap(),
        status: JobStatus::parse(&text(j, "status")).unwrap(),
        progress: i32::try_from(j["progress"].as_i64().unwrap()).unwrap(),
        attempts: 1,
        request: j["request"].clone(),
        result: Some(j["result"].clone()).filter(|r| !r.is_null()),
        error: j["error"].as_str().map(str::to_owned),
        metadata: j["metadata"].clone(),
        state: j["state"].clone(),
        created_at: millis(j, "created_at"),
        updated_at: millis(j, "updated_at"),
        finished_at: None,
        lease_until: None,
    }
}

fn event(e: &Value) -> JobEvent {
    JobEvent {
        sequence: e["sequence"].as_i64().unwrap(),
        kind: text(e, "type"),
        content: e["content"].clone(),
        at: millis(e, "timestamp"),
    }
}

#[test]
fn job_bodies_answer_what_the_service_always_answered() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/jobs");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let fixture: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let events = fixture["events"].as_array().unwrap().iter().map(event).collect();
        let view = JobView::read(&record(&fixture["job"]), events).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let body = JobBody::new(&view, fixture["compact"].as_bool().unwrap());
        let answered = String::from_utf8(render(&body).to_vec()).unwrap();
        assert_eq!(answered, text(&fixture, "wire"), "{}", path.display());
        // The event stream's `final` frame is the same JSON.
        assert_eq!(value(&body).to_string(), answered, "{}", path.display());
        seen += 1;
    }
    assert!(seen >= 10, "{seen} fixtures");
}

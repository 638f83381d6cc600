//! Job bodies against the wire: `fixtures/jobs/` holds jobs as the build before these types
//! stored them (the record's columns and events) with the exact text it answered for each.
//! The bodies must answer the same bytes: same keys, same order, same nulls and absences.

use std::path::PathBuf;

use redline_domain::job::JobType;
use redline_domain::time_util::parse_iso8601;
use redline_domain::{OrgId, Owner, SessionId, UserId};
use redline_ports::jobs::JobRecord;

use super::*;

/// The public base URL the bodies are rendered under (the fixtures hold no own picture).
const BASE: &str = "https://r.example";

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
        let answered = String::from_utf8(render(&body, BASE).to_vec()).unwrap();
        assert_eq!(answered, text(&fixture, "wire"), "{}", path.display());
        // The event stream's `final` frame is the same JSON.
        assert_eq!(value(&body, BASE).to_string(), answered, "{}", path.display());
        seen += 1;
    }
    assert!(seen >= 10, "{seen} fixtures");
}

fn fixture_views() -> Vec<JobView> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/jobs");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let fixture: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            let events = fixture["events"].as_array().unwrap().iter().map(event).collect();
            JobView::read(&record(&fixture["job"]), events).unwrap()
        })
        .collect()
}

#[test]
fn a_page_of_jobs_is_the_list_body_byte_for_byte() {
    use redline_domain::page::{Cursor, Page};
    for compact in [false, true] {
        let next = Some(Cursor::new(5, "job-x"));
        let (bytes, cursor) = crate::routes::jobs::page_body(
            Page { items: fixture_views(), next: next.clone() },
            compact,
            usize::MAX,
            BASE,
        );
        assert_eq!(cursor, next);
        let jobs: Vec<JobBody> = fixture_views().iter().map(|v| JobBody::new(v, compact)).collect();
        let body = JobListBody { total: jobs.len(), jobs, next_cursor: next.as_ref().map(Cursor::encode) };
        assert_eq!(
            String::from_utf8(bytes.to_vec()).unwrap(),
            String::from_utf8(render(&body, BASE).to_vec()).unwrap()
        );
    }
}

#[test]
fn a_page_of_full_jobs_stops_at_its_byte_budget_and_goes_on_from_there() {
    use redline_domain::page::Page;
    let views = fixture_views();
    let sizes: Vec<usize> = views.iter().map(|v| render(&JobBody::new(v, false), BASE).len()).collect();
    let budget = sizes[0] + sizes[1] + 2;
    let (bytes, next) =
        crate::routes::jobs::page_body(Page { items: fixture_views(), next: None }, false, budget, BASE);
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(body["total"], 2, "{sizes:?}");
    assert_eq!(body["jobs"].as_array().unwrap().len(), 2);
    let next = next.expect("the rest is on the next page");
    assert_eq!((next.number, next.id.as_str()), (views[1].created_at, views[1].job_id.as_str()));
    assert_eq!(body["next_cursor"], next.encode());
    // A single job over the budget still makes a page, so that paging always moves on.
    let (bytes, _) = crate::routes::jobs::page_body(Page { items: fixture_views(), next: None }, false, 1, BASE);
    assert_eq!(serde_json::from_slice::<Value>(&bytes).unwrap()["total"], 1);
}

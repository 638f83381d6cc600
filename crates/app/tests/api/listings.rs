//! Paged listings over HTTP: `limit` and `cursor`, the `Link: <…>; rel="next"` header whose
//! address is followed as it is, `next_cursor` in job listings, and 422 for a damaged cursor.

use serde_json::{json, Value};

use crate::helpers::*;

/// The address of the next page, from a `Link` header.
fn next_link(r: &Reply) -> Option<String> {
    let link = r.header("link")?;
    assert!(link.ends_with(">; rel=\"next\""), "{link}");
    Some(link.trim_start_matches('<').split('>').next().unwrap_or_default().to_owned())
}

/// Follows `Link` from `first` until the last page; each page's items, in order.
async fn pages(app: &TestApp, key: &str, first: &str, items: impl Fn(&Value) -> Vec<Value>) -> Vec<Vec<Value>> {
    let mut url = app.url(first);
    let mut out = Vec::new();
    loop {
        let r = app.send(app.client.get(&url).bearer_auth(key)).await;
        r.expect_status(200);
        out.push(items(&r.json));
        match next_link(&r) {
            Some(next) => {
                assert!(next.starts_with(&app.url("/")), "an absolute address on this server: {next}");
                url = next;
            }
            None => break,
        }
        assert!(out.len() < 100, "paging does not end");
    }
    out
}

#[tokio::test]
async fn sessions_page_by_link_and_every_session_is_reached_once() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    for i in 0..5 {
        let r = app
            .send(
                app.client
                    .put(app.url(&format!("/v1/documents/doc-{i}")))
                    .bearer_auth(&key)
                    .json(&json!({"html": format!("<p>{i}</p>")})),
            )
            .await;
        r.expect_status(200);
    }
    let everything = app.send(app.get("/v1/sessions").bearer_auth(&key)).await;
    everything.expect_status(200);
    assert!(everything.header("link").is_none(), "five sessions fit in the default page");
    let all: Vec<Value> = everything.json.as_array().unwrap().clone();
    assert_eq!(all.len(), 5);

    let paged = pages(&app, &key, "/v1/sessions?limit=2", |v| v.as_array().unwrap().clone()).await;
    assert_eq!(paged.iter().map(Vec::len).collect::<Vec<_>>(), [2, 2, 1]);
    assert_eq!(paged.concat(), all, "the pages are the whole list, in its order");

    // Another caller's list is theirs alone, and a cursor does not cross owners.
    let other = app.agent_key().await;
    let first = app.send(app.get("/v1/sessions?limit=2").bearer_auth(&key)).await;
    let theirs = app.send(app.client.get(next_link(&first).unwrap()).bearer_auth(&other)).await;
    theirs.expect_status(200);
    assert_eq!(theirs.json, json!([]));
}

#[tokio::test]
async fn damaged_cursors_and_limits_are_refused_with_422() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    for path in ["/v1/sessions", "/v1/jobs", "/v1/sessions/s/jobs"] {
        let r = app.send(app.get(&format!("{path}?cursor=not-a-cursor")).bearer_auth(&key)).await;
        r.expect_422_at(&[json!("query"), json!("cursor")]);
        let r = app.send(app.get(&format!("{path}?limit=0")).bearer_auth(&key)).await;
        r.expect_422_at(&[json!("query"), json!("limit")]);
        let r = app.send(app.get(&format!("{path}?cursor=")).bearer_auth(&key)).await;
        r.expect_status(200);
    }
}

#[tokio::test]
async fn jobs_page_by_cursor_with_every_filter() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let r = app
        .send(app.client.put(app.url("/v1/documents/jobs")).bearer_auth(&key).json(&json!({"html": "<p>a</p>"})))
        .await;
    r.expect_status(200);
    let mut ids = Vec::new();
    for i in 0..5 {
        let r = app
            .send(
                app.post("/v1/chat")
                    .bearer_auth(&key)
                    .json(&json!({"session_id": "jobs", "message": format!("append a section: s{i}")})),
            )
            .await;
        r.expect_status(200);
        ids.push(r.json["job_id"].as_str().unwrap().to_owned());
    }
    ids.reverse();
    let jobs = |v: &Value| v["jobs"].as_array().unwrap().clone();
    let id_of = |j: &Value| j["job_id"].as_str().unwrap().to_owned();
    for first in [
        "/v1/jobs?limit=2",
        "/v1/sessions/jobs/jobs?limit=2",
        "/v1/jobs?limit=2&status=completed&job_type=chat&compact=true",
    ] {
        let paged = pages(&app, &key, first, jobs).await;
        assert_eq!(paged.iter().map(Vec::len).collect::<Vec<_>>(), [2, 2, 1], "{first}");
        assert_eq!(paged.concat().iter().map(id_of).collect::<Vec<_>>(), ids, "{first}");
    }
    // The body carries the cursor too, and it gives the same page as the Link header.
    let first = app.send(app.get("/v1/jobs?limit=2").bearer_auth(&key)).await;
    let cursor = first.json["next_cursor"].as_str().expect("next_cursor").to_owned();
    assert_eq!(first.json["total"], 2);
    assert!(next_link(&first).unwrap().contains(&format!("cursor={cursor}")));
    let second = app.send(app.get(&format!("/v1/jobs?limit=2&cursor={cursor}")).bearer_auth(&key)).await;
    assert_eq!(jobs(&second.json).iter().map(id_of).collect::<Vec<_>>(), ids[2..4]);
    let last = app.send(app.get("/v1/jobs?limit=10").bearer_auth(&key)).await;
    assert_eq!(last.json["next_cursor"], Value::Null);
    assert!(last.header("link").is_none());
}

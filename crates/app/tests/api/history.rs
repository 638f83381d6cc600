//! A document's history (docs/api.md, "Documents"): restoring an earlier version makes it the
//! document again as a new version, and every version in between stays.

use serde_json::{json, Value};

use crate::helpers::*;

async fn put(app: &TestApp, key: &str, html: &str) -> Value {
    let r = app.send(app.put("/v1/documents/h").bearer_auth(key).json(&json!({"html": html}))).await;
    r.expect_status(200);
    r.json
}

#[tokio::test]
async fn an_earlier_version_is_restored_as_a_new_one_and_the_history_keeps_all() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let first = put(&app, &key, "<p>The original words.</p>").await;
    let second = put(&app, &key, "<p>Words changed later.</p><p>And a second section.</p>").await;
    let v1 = first["version_id"].as_str().unwrap().to_owned();
    let v2 = second["version_id"].as_str().unwrap().to_owned();

    let restore = |version: &str, body: Option<Value>| {
        let req = app.post(&format!("/v1/documents/h/versions/{version}/restore")).bearer_auth(&key);
        let req = match body {
            Some(b) => req.json(&b),
            None => req,
        };
        app.send(req)
    };
    // Only over the current version when the caller names one.
    let r = restore(&v1, Some(json!({"base_version_id": v1}))).await;
    r.expect_status(409).expect_json();
    let r = restore(&v1, Some(json!({"base_version_id": v2}))).await;
    r.expect_status(200);
    let v3 = r.json["version_id"].as_str().unwrap().to_owned();
    assert!(v3 != v1 && v3 != v2, "a new version: {r:?}");
    assert!(r.json["html"].as_str().unwrap().contains("The original words."), "{r:?}");
    assert_eq!(r.json["section_count"], 1);
    let doc = app.send(app.get("/v1/documents/h").bearer_auth(&key)).await;
    assert_eq!(doc.json["version_id"], v3.as_str());
    assert!(!doc.json["html"].as_str().unwrap().contains("changed later"));

    let versions = app.send(app.get("/v1/documents/h/versions").bearer_auth(&key)).await;
    let listed: Vec<(String, String)> = versions.json["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["version_id"].as_str().unwrap().to_owned(), v["source"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(
        listed,
        [(v3.clone(), "restore".to_owned()), (v2.clone(), "save".to_owned()), (v1.clone(), "save".to_owned())],
        "every version stays, the restore on top"
    );
    // Without a body: over whatever is current.
    restore(&v2, None).await.expect_status(200);

    // Unknown versions and sessions, and other owners' documents, are 404.
    restore("nonsense", None).await.expect_status(404).expect_json();
    let other = app.agent_key().await;
    let r = app.send(app.post(&format!("/v1/documents/h/versions/{v1}/restore")).bearer_auth(&other)).await;
    r.expect_status(404);
    let r = app.send(app.post(&format!("/v1/documents/nope/versions/{v1}/restore")).bearer_auth(&key)).await;
    r.expect_status(404);
    restore(&v1, Some(json!({"base_version_id": 5}))).await.expect_422_at(&[json!("body"), json!("base_version_id")]);
    let r = app.send(app.post(&format!("/v1/documents/h/versions/{v1}/restore"))).await;
    r.expect_401();
}

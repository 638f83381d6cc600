//! What integrators rely on (docs/api.md, "Key scopes, expiry and last use" and "Idempotent
//! retries"): keys restricted to scopes and expiring, and retries that run once.

use std::time::Duration;

use redline_domain::time_util::iso8601;
use serde_json::{json, Value};

use crate::chat::seed;
use crate::helpers::*;

async fn key_with(app: &TestApp, token: &str, body: Value) -> Reply {
    app.send(app.post("/v1/users/me/api-keys").bearer_auth(token).json(&body)).await
}

async fn scoped_key(app: &TestApp, token: &str, scopes: &[&str]) -> String {
    let r = key_with(app, token, json!({"name": scopes.join("+"), "scopes": scopes})).await;
    r.expect_status(201);
    let mut expected: Vec<&str> = scopes.to_vec();
    if expected.contains(&"edit") && !expected.contains(&"read") {
        expected.insert(0, "read");
    }
    assert_eq!(r.json["scopes"], json!(expected), "{r:?}");
    r.json["api_key"].as_str().expect("api_key").to_owned()
}

fn allows(held: &[&str], needed: &str) -> bool {
    held.contains(&needed) || (needed == "read" && held.contains(&"edit"))
}

/// Every API-key operation of the served OpenAPI document, called with a key of each scope:
/// refused with the 403 naming the scope exactly when the key lacks the scope the document
/// names. A new operation is in the document, so it is in this test.
#[tokio::test]
async fn every_operation_admits_exactly_the_scopes_the_document_names() {
    let app = spawn_app().await;
    let (_, _, token) = app.web_user().await;
    let holders: Vec<(Vec<&str>, String)> = {
        let mut v = Vec::new();
        for scopes in [vec!["read"], vec!["edit"], vec!["admin"]] {
            let key = scoped_key(&app, &token, &scopes).await;
            v.push((scopes, key));
        }
        v
    };
    let doc = app.send(app.get("/openapi.json")).await;
    doc.expect_status(200);
    let mut checked = 0;
    for (path, item) in doc.json["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("path item") {
            let needed = op["security"]
                .as_array()
                .into_iter()
                .flatten()
                .find_map(|r| r["bearer"].as_array().and_then(|s| s.first()).and_then(Value::as_str));
            let Some(needed) = needed else { continue };
            let url = path
                .split('/')
                .map(|segment| if segment.starts_with('{') { "s1" } else { segment })
                .collect::<Vec<_>>()
                .join("/");
            for (held, key) in &holders {
                let req = match method.as_str() {
                    "get" => app.get(&url),
                    "post" => app.post(&url).json(&json!({})),
                    "put" => app.put(&url).json(&json!({})),
                    "delete" => app.delete(&url),
                    "patch" => app.client.patch(app.url(&url)).json(&json!({})),
                    other => panic!("method {other}"),
                };
                let r = app.send(req.bearer_auth(key).timeout(Duration::from_secs(30))).await;
                let refused_for_scope = r.status == 403 && r.detail().contains("scope");
                if allows(held, needed) {
                    assert!(!refused_for_scope, "{method} {path} with {held:?} (needs {needed}): {r:?}");
                } else {
                    assert!(
                        refused_for_scope && r.detail().contains(&format!("'{needed}' scope")),
                        "{method} {path} with {held:?} must be refused for lacking {needed}: {r:?}"
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 3 * 30, "{checked} calls");
}

#[tokio::test]
async fn a_read_key_reads_and_cannot_edit_and_a_full_key_keeps_full_access() {
    let app = spawn_app().await;
    let (_, _, token) = app.web_user().await;
    let full = app.create_key(&token, "full").await.json["api_key"].as_str().expect("api_key").to_owned();
    seed(&app, &full, "s1", &["The quick brown fox."]).await;
    let read = scoped_key(&app, &token, &["read"]).await;
    app.send(app.get("/v1/documents/s1").bearer_auth(&read)).await.expect_status(200);
    let chat =
        app.send(app.post("/v1/chat").bearer_auth(&read).json(&json!({"session_id": "s1", "message": "hi"}))).await;
    chat.expect_status(403);
    assert_eq!(
        chat.detail(),
        "This API key lacks the 'edit' scope, which POST /v1/chat needs. Use a key made with it (POST /v1/users/me/api-keys {\"scopes\": [\"edit\"]})."
    );
    // So is the same request with an Idempotency-Key (checked before the key is claimed).
    let keyed = app.post("/v1/chat").bearer_auth(&read).header("Idempotency-Key", "k");
    let r = app.send(keyed.json(&json!({"session_id": "s1", "message": "hi"}))).await;
    r.expect_status(403);
    assert_eq!(r.detail(), chat.detail());
    // An export changes nothing: a read key may make one.
    let export = app
        .send(app.post("/v1/documents/export").bearer_auth(&read).json(&json!({"session_id": "s1", "format": "txt"})))
        .await;
    export.expect_status(200);
    let listed = app.list_keys(&token).await;
    let full_listed = listed.json["keys"].as_array().unwrap().iter().find(|k| k["name"] == "full").cloned().unwrap();
    assert_eq!(full_listed["scopes"], json!(["read", "edit", "admin"]));
    assert_eq!(full_listed["expires_at"], Value::Null);
}

#[tokio::test]
async fn an_expired_key_is_refused_like_a_revoked_one_and_keys_tell_their_last_use() {
    let app = spawn_app().await;
    let (_, _, token) = app.web_user().await;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    let year = key_with(&app, &token, json!({"name": "year", "expires_at": iso8601(now + 365 * 86_400_000)})).await;
    year.expect_status(201);
    assert_eq!(year.json["scopes"], json!(["read", "edit", "admin"]));
    let year_key = year.json["api_key"].as_str().unwrap().to_owned();
    app.assert_key_works(&year_key).await;

    let soon = key_with(&app, &token, json!({"name": "soon", "expires_at": iso8601(now + 1_500)})).await;
    soon.expect_status(201);
    let soon_key = soon.json["api_key"].as_str().unwrap().to_owned();
    tokio::time::sleep(Duration::from_millis(2_000)).await;
    let r = app.sessions_with_key(&soon_key).await;
    assert_eq!(r.expect_401(), "Invalid API key", "an expired key gets the revoked key's 401");

    // The last use is written off the request's path: it shows within moments.
    let mut last_used = Value::Null;
    for _ in 0..100 {
        let listed = app.list_keys(&token).await;
        let keys = listed.json["keys"].as_array().unwrap().clone();
        let year = keys.iter().find(|k| k["name"] == "year").unwrap();
        let soon = keys.iter().find(|k| k["name"] == "soon").unwrap();
        assert_eq!(soon["expired"], true);
        assert_eq!(year["expired"], false);
        last_used = year["last_used_at"].clone();
        if !last_used.is_null() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let at = redline_domain::time_util::parse_iso8601(last_used.as_str().expect("last_used_at is set")).unwrap();
    assert!((at - now).abs() < 60_000, "{last_used}");
}

#[tokio::test]
async fn key_terms_are_checked() {
    let app = spawn_app().await;
    let (_, _, token) = app.web_user().await;
    key_with(&app, &token, json!({"scopes": ["write"]})).await.expect_422_at(&[json!("body"), json!("scopes")]);
    key_with(&app, &token, json!({"scopes": []})).await.expect_422_at(&[json!("body"), json!("scopes")]);
    key_with(&app, &token, json!({"scopes": "read"})).await.expect_422_at(&[json!("body"), json!("scopes")]);
    key_with(&app, &token, json!({"expires_at": "2001-01-01T00:00:00Z"}))
        .await
        .expect_422_at(&[json!("body"), json!("expires_at")]);
    key_with(&app, &token, json!({"expires_at": "tomorrow"}))
        .await
        .expect_422_at(&[json!("body"), json!("expires_at")]);
    assert_eq!(app.list_keys(&token).await.json["keys"], json!([]), "nothing was made");
}

/// 50 identical retries at once, spread over `replicas` (of one database): one job, one
/// charge, 50 identical answers.
async fn fifty_retries_run_once(replicas: &[&TestApp]) {
    let app = replicas[0];
    let key = app.agent_key().await;
    seed(app, &key, "s1", &["The quick brown fox.", "A lazy dog."]).await;
    let body = json!({"session_id": "s1", "message": "replace \"fox\" with \"cat\""});
    let idem = uuid::Uuid::new_v4().to_string();
    let calls = (0..50).map(|i| {
        let replica = replicas[i % replicas.len()];
        let req = replica.post("/v1/chat").bearer_auth(&key).header("Idempotency-Key", &idem).json(&body);
        replica.send(req)
    });
    let replies = futures_util::future::join_all(calls).await;
    for r in &replies {
        r.expect_status(200);
        assert_eq!(r.json, replies[0].json, "every retry gets the first answer");
    }
    let replayed = replies.iter().filter(|r| r.header("idempotent-replayed") == Some("true")).count();
    assert_eq!(replayed, 49, "one ran, 49 were replayed");
    let jobs = app.send(app.get("/v1/sessions/s1/jobs").bearer_auth(&key)).await;
    let chats: Vec<&Value> = jobs.json["jobs"].as_array().unwrap().iter().filter(|j| j["job_type"] == "chat").collect();
    assert_eq!(chats.len(), 1, "{jobs:?}");
    assert_eq!(app.send(app.get("/v1/usage").bearer_auth(&key)).await.json["monthly_used"], 1);

    // Later retries too; the same key with another body is refused; another key runs anew.
    let again = app.send(app.post("/v1/chat").bearer_auth(&key).header("Idempotency-Key", &idem).json(&body)).await;
    assert_eq!(again.json, replies[0].json);
    let other = json!({"session_id": "s1", "message": "replace \"dog\" with \"cow\""});
    let r = app.send(app.post("/v1/chat").bearer_auth(&key).header("Idempotency-Key", &idem).json(&other)).await;
    r.expect_422_at(&[json!("header"), json!("Idempotency-Key")]);
    let fresh = app.send(app.post("/v1/chat").bearer_auth(&key).header("Idempotency-Key", "k2").json(&other)).await;
    fresh.expect_status(200);
    assert_eq!(app.send(app.get("/v1/usage").bearer_auth(&key)).await.json["monthly_used"], 2);
}

#[tokio::test]
async fn fifty_concurrent_retries_run_once_on_sqlite() {
    fifty_retries_run_once(&[&spawn_app().await]).await;
}

#[tokio::test]
async fn fifty_concurrent_retries_over_two_replicas_run_once_on_postgres() {
    let Some(db) = PgDatabase::create("redline_idempotency").await else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let fleet = fleet_env(&db, dir.path());
    let (a, b) = (spawn_app_with(&borrowed(&fleet)).await, spawn_app_with(&borrowed(&fleet)).await);
    fifty_retries_run_once(&[&a, &b]).await;
}

#[tokio::test]
async fn a_retry_of_an_async_turn_gets_the_same_job_and_failures_free_the_key() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    seed(&app, &key, "s1", &["The quick brown fox."]).await;
    let body = json!({"session_id": "s1", "message": "replace \"fox\" with \"cat\""});
    let send = |idem: &str, body: &Value| {
        app.send(app.post("/v1/chat/async").bearer_auth(&key).header("Idempotency-Key", idem).json(body))
    };
    let first = send("a", &body).await;
    first.expect_status(202);
    let second = send("a", &body).await;
    second.expect_status(202);
    assert_eq!(second.json["job_id"], first.json["job_id"]);
    assert_eq!(second.header("idempotent-replayed"), Some("true"));
    // Fields in another order are the same request.
    let reordered: Value =
        serde_json::from_str(r#"{"message": "replace \"fox\" with \"cat\"", "session_id": "s1"}"#).unwrap();
    assert_eq!(send("a", &reordered).await.json["job_id"], first.json["job_id"]);

    // A refused request changed nothing: the key stays free for the corrected one.
    send("b", &json!({"session_id": "s1", "message": 5})).await.expect_status(422);
    let corrected = send("b", &body).await;
    assert_ne!(corrected.status, 422, "{corrected:?}");

    // A key that is not 1 to 255 visible characters is refused before anything runs.
    send(&"x".repeat(256), &body).await.expect_status(400);
    // A refused credential gets its own answer, with or without a key.
    let wrong = app.post("/v1/chat/async").bearer_auth(format!("sk_{}", "0".repeat(32)));
    let r = app.send(wrong.header("Idempotency-Key", "c").json(&body)).await;
    assert_eq!(r.expect_401(), "Invalid API key");
}

#[tokio::test]
async fn an_estimate_tells_the_cost_and_admission_without_running_or_charging() {
    let app = spawn_app().await;
    let signup = app.agent_signup().await;
    let key = signup["api_key"].as_str().expect("api_key").to_owned();
    let paragraphs: Vec<String> = (0..60).map(|i| format!("Paragraph {i}.")).collect();
    let refs: Vec<&str> = paragraphs.iter().map(String::as_str).collect();
    seed(&app, &key, "s1", &refs).await;
    let estimate = |body: Value| app.send(app.post("/v1/chat/estimate").bearer_auth(&key).json(&body));

    let r = estimate(json!({"session_id": "s1", "message": "replace \"Paragraph\" with \"Section\""})).await;
    r.expect_status(200);
    assert_eq!(r.json["sections"], 60);
    assert_eq!(r.json["held_ops"], 1);
    assert_eq!(r.json["max_ops_charged"], 3, "ceil(60 / 25)");
    assert_eq!(r.json["admitted"], true);
    assert_eq!(r.json["usage"]["monthly_used"], 0);
    // The editor copy sent is what counts; a session not made yet has no sections.
    let sent = estimate(json!({"session_id": "s1", "message": "x", "document_html": "<p>a</p><p>b</p>"})).await;
    assert_eq!(sent.json["sections"], 2);
    assert_eq!(sent.json["max_ops_charged"], 1);
    let fresh = estimate(json!({"session_id": "new", "message": "x"})).await;
    assert_eq!(fresh.json["sections"], 0);
    estimate(json!({"session_id": "s1", "message": " "})).await.expect_status(400);
    estimate(json!({"session_id": "s1"})).await.expect_422_at(&[json!("body"), json!("message")]);

    // Nothing ran, nothing was charged, no session was made.
    assert_eq!(app.send(app.get("/v1/usage").bearer_auth(&key)).await.json["monthly_used"], 0);
    let jobs = app.send(app.get("/v1/jobs").bearer_auth(&key)).await;
    assert_eq!(jobs.json["jobs"], json!([]));
    app.send(app.get("/v1/documents/new").bearer_auth(&key)).await.expect_status(404);

    // With the quota used up, the estimate says so.
    app.admin(&[
        "set-plan",
        "--user-id",
        signup["user_id"].as_str().unwrap(),
        "--plan",
        "free",
        "--monthly-limit",
        "0",
    ]);
    let r = estimate(json!({"session_id": "s1", "message": "x"})).await;
    r.expect_status(200);
    assert_eq!(r.json["admitted"], false, "{r:?}");
    assert_eq!(r.json["usage"]["quota_exhausted"], true);
}

/// An upload retried with its key (a new multipart boundary each time, as clients draw one per
/// try) is answered again without a second document version or a second attachment; another
/// file under the same key is refused.
#[tokio::test]
async fn uploads_retried_with_a_key_run_once() {
    use crate::attachments::multipart;
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let send = |path: &'static str, file: &'static [u8], idem: &'static str| {
        let (content_type, body) = multipart(&[("session_id", "up")], Some(("notes.txt", file)));
        app.send(
            app.post(path)
                .bearer_auth(&key)
                .header("content-type", content_type)
                .header("Idempotency-Key", idem)
                .body(body),
        )
    };
    let first = send("/v1/documents/upload", b"First words.", "doc-1").await;
    first.expect_status(200);
    let again = send("/v1/documents/upload", b"First words.", "doc-1").await;
    again.expect_status(200);
    assert_eq!(again.header("idempotent-replayed"), Some("true"), "{again:?}");
    assert_eq!(again.text, first.text);
    let versions = app.send(app.get("/v1/documents/up/versions").bearer_auth(&key)).await;
    assert_eq!(versions.json["versions"].as_array().map(Vec::len), Some(1), "{versions:?}");
    let other = send("/v1/documents/upload", b"Other words.", "doc-1").await;
    other.expect_422_at(&[json!("header"), json!("Idempotency-Key")]);

    let attached = send("/v1/attachments/upload", b"The harvest came early.", "att-1").await;
    attached.expect_status(202);
    let retried = send("/v1/attachments/upload", b"The harvest came early.", "att-1").await;
    assert_eq!(
        (retried.status.as_u16(), retried.json["attachment_id"].clone()),
        (202, attached.json["attachment_id"].clone())
    );
    let listed = app.send(app.get("/v1/attachments?session_id=up").bearer_auth(&key)).await;
    listed.expect_status(200);
    assert_eq!(listed.json["attachments"].as_array().map(Vec::len), Some(1), "{listed:?}");
}

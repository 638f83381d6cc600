//! Picture addresses (docs/api.md, "Images"): stored HTML holds `/v1/documents/images/{id}`
//! only, never an origin of the service; every HTML the API answers names pictures under
//! `REDLINE_PUBLIC_BASE_URL`, also those of documents stored with another origin's address.
//! On PostgreSQL, where the stored HTML can be read beside the service.

use std::time::Duration;

use serde_json::{json, Value};

use crate::files::{image_srcs, upload};
use crate::helpers::*;

/// A 1×1 PNG, base64.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

async fn replica(db: &PgDatabase, base: &str) -> TestApp {
    spawn_app_with(&[
        ("REDLINE_DATABASE_URL", db.url.as_str()),
        ("REDLINE_SINGLE_REPLICA", "true"),
        ("REDLINE_PUBLIC_BASE_URL", base),
    ])
    .await
}

/// Every row of every table of the database, as text, and every stored version's HTML (kept
/// compressed in chunks, so read through the store).
async fn everything_stored(db: &PgDatabase) -> String {
    use redline_ports::DocumentStore;
    let (client, connection) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls).await.expect("connect");
    tokio::spawn(connection);
    let mut all = String::new();
    let tables = client
        .query("SELECT tablename::text FROM pg_tables WHERE schemaname = 'public'", &[])
        .await
        .expect("the tables");
    for t in tables {
        let table: String = t.get(0);
        for row in client.query(&format!("SELECT CAST(t AS text) FROM \"{table}\" t"), &[]).await.expect("rows") {
            all.push_str(&row.get::<_, String>(0));
        }
    }
    let store = redline_storage::Db::open(&redline_storage::DbConfig::new(db.url.clone())).await.expect("the store");
    for row in client.query("SELECT owner, session_id, version_id FROM document_versions", &[]).await.expect("versions")
    {
        let owner = redline_domain::Owner::parse(row.get(0)).expect("an owner");
        let session = redline_domain::SessionId::parse(row.get(1)).expect("a session");
        let version = store.version(owner, &session, row.get(2)).await.expect("read").expect("the version");
        all.push_str(&version.html);
    }
    all
}

/// Stores a new version of the session `pics` whose pictures name `origin`, as a replica of
/// a build before this rule stored them.
async fn store_with_origin(db: &PgDatabase, origin: &str) {
    use redline_ports::documents::NewVersion;
    use redline_ports::DocumentStore;
    let (client, connection) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls).await.expect("connect");
    tokio::spawn(connection);
    let row = client.query_one("SELECT owner FROM sessions WHERE session_id = 'pics'", &[]).await.expect("the session");
    let owner = redline_domain::Owner::parse(row.get(0)).expect("an owner");
    let session = redline_domain::SessionId::parse("pics").expect("a session");
    let store = redline_storage::Db::open(&redline_storage::DbConfig::new(db.url.clone())).await.expect("the store");
    let doc = store.document(owner, &session).await.expect("read").expect("the document");
    let new = NewVersion {
        version_id: "v_with_origin".to_owned(),
        html: doc.html.replace("src=\"/v1/", &format!("src=\"{origin}/v1/")),
        section_count: doc.section_count,
        source: "edit".to_owned(),
        title: None,
        now: doc.updated_at + 1,
    };
    store.commit_version(owner, &session, None, &new).await.expect("commit");
}

fn own_srcs(html: &str) -> Vec<String> {
    image_srcs(html).into_iter().filter(|s| s.contains("/v1/documents/images/img_")).collect()
}

/// The answered pictures of `html`, each under `base`; their paths.
fn answered_under(html: &str, base: &str) -> Vec<String> {
    let srcs = own_srcs(html);
    assert!(!srcs.is_empty(), "a picture: {html}");
    srcs.iter()
        .map(|s| s.strip_prefix(base).unwrap_or_else(|| panic!("{s} is not under {base}: {html}")).to_owned())
        .collect()
}

async fn job_until(app: &TestApp, key: &str, id: &str, status: &str) -> Value {
    for _ in 0..600 {
        let r = app.send(app.get(&format!("/v1/jobs/{id}")).bearer_auth(key)).await;
        r.expect_status(200);
        if r.json["status"] == status {
            return r.json.clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("job {id} never reached {status}");
}

#[tokio::test]
async fn stored_html_holds_picture_paths_and_answers_name_the_public_base_url() {
    let Some(db) = PgDatabase::create("image_urls").await else { return };
    let one = "https://one.example";
    let app = replica(&db, one).await;
    let key = app.agent_key().await;

    // An upload: its picture goes to the blob store; the answer names it under the base URL.
    let page = format!("<p>The fox <img alt=\"dot\" src=\"data:image/png;base64,{PNG}\"> sleeps.</p><p>Plain.</p>");
    let r = upload(&app, &key, "pics", "page.html", page.as_bytes()).await;
    r.expect_status(200);
    let paths = answered_under(r.json["html"].as_str().unwrap(), one);
    let path = paths[0].clone();
    let served = app.send(app.get(&path)).await;
    served.expect_status(200);
    assert_eq!(served.header("content-type"), Some("image/png"));

    // Sent back either way (absolute under the base, or relative): stored by the path.
    let doc = app.send(app.get("/v1/documents/pics").bearer_auth(&key)).await;
    doc.expect_status(200);
    let answered = doc.json["html"].as_str().unwrap().to_owned();
    assert_eq!(answered_under(&answered, one), paths);
    let both = format!("{answered}<p>Again <img src=\"{path}\"></p>");
    let saved =
        app.send(app.client.put(app.url("/v1/documents/pics")).bearer_auth(&key).json(&json!({"html": both}))).await;
    saved.expect_status(200);
    assert_eq!(answered_under(saved.json["html"].as_str().unwrap(), one), vec![path.clone(), path.clone()]);

    // A template and a chat turn awaiting approval, then approved.
    let t = app
        .send(app.post("/v1/templates").bearer_auth(&key).json(&json!({"name": "With picture", "html": answered})))
        .await;
    t.expect_status(201);
    answered_under(t.json["html"].as_str().unwrap(), one);
    let job = app
        .send(app.post("/v1/chat/async").bearer_auth(&key).json(&json!({
            "session_id": "pics", "message": "replace \"fox\" with \"cat\"", "require_approval": true
        })))
        .await;
    job.expect_status(202);
    let id = job.json["job_id"].as_str().unwrap().to_owned();
    let waiting = job_until(&app, &key, &id, "awaiting_approval").await;
    let pending = waiting["metadata"]["pending_changes"].as_array().cloned().unwrap_or_default();
    let change = pending.iter().find(|c| c["new_html"].as_str().unwrap_or_default().contains("cat")).expect("a change");
    answered_under(change["old_html"].as_str().unwrap(), one);
    answered_under(change["new_html"].as_str().unwrap(), one);
    let approved = app
        .send(app.post("/v1/chat/pics/approve").bearer_auth(&key).json(&json!({"job_id": id, "approve_all": true})))
        .await;
    approved.expect_status(200);
    let done = job_until(&app, &key, &id, "completed").await;
    let updated = done["result"]["document_changes"]["updated_html"].as_str().expect("updated_html").to_owned();
    assert!(updated.contains("The cat"), "{updated}");
    answered_under(&updated, one);
    let versions = app.send(app.get("/v1/documents/pics/versions").bearer_auth(&key)).await;
    versions.expect_status(200);
    let first = versions.json["versions"].as_array().and_then(|v| v.last()).expect("a version")["version_id"].clone();
    let v =
        app.send(app.get(&format!("/v1/documents/pics/versions/{}", first.as_str().unwrap())).bearer_auth(&key)).await;
    v.expect_status(200);
    answered_under(v.json["html"].as_str().unwrap(), one);
    let md = app
        .send(
            app.post("/v1/documents/export")
                .bearer_auth(&key)
                .json(&json!({"session_id": "pics", "format": "markdown"})),
        )
        .await;
    md.expect_status(200);
    assert!(md.text.contains(&format!("]({one}{path})")), "{}", md.text);

    // Nothing the database holds names an origin of the service.
    let stored = everything_stored(&db).await;
    assert!(stored.contains(&path), "{stored}");
    for origin in [one, app.base.as_str()] {
        assert!(!stored.contains(origin), "{origin} stored: {stored}");
    }

    // HTML stored with an old replica's address (before this rule) is answered under the
    // base URL, and stored by the path when written again.
    store_with_origin(&db, "http://10.9.9.9:8080").await;
    let old = app.send(app.get("/v1/documents/pics").bearer_auth(&key)).await;
    old.expect_status(200);
    let healed = old.json["html"].as_str().unwrap().to_owned();
    assert!(!healed.contains("10.9.9.9"), "{healed}");
    answered_under(&healed, one);
    let again =
        app.send(app.client.put(app.url("/v1/documents/pics")).bearer_auth(&key).json(&json!({"html": healed}))).await;
    again.expect_status(200);
    assert!(!again.json["html"].as_str().unwrap().contains("remote-image"), "{:?}", again.json);

    // Another host name for the same data: every answer moves to it at once.
    let two = "https://two.example";
    let other = replica(&db, two).await;
    let moved = other.send(other.get("/v1/documents/pics").bearer_auth(&key)).await;
    moved.expect_status(200);
    assert_eq!(answered_under(moved.json["html"].as_str().unwrap(), two), vec![path.clone(), path]);
}

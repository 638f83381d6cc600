//! Templates (the contract's /v1/templates; docs/api.md "Templates"): built-in and owned
//! templates, applying one to a session, 403 for what is not the caller's.

use serde_json::{json, Value};

use crate::helpers::*;

async fn list(app: &TestApp, key: &str) -> Vec<Value> {
    let r = app.send(app.get("/v1/templates").bearer_auth(key)).await;
    r.expect_status(200).expect_json();
    let templates = r.json["templates"].as_array().unwrap_or_else(|| panic!("{r:?}")).clone();
    assert_eq!(r.json["total"], templates.len());
    templates
}

async fn create(app: &TestApp, key: &str, body: Value) -> Reply {
    app.send(app.post("/v1/templates").bearer_auth(key).json(&body)).await
}

async fn apply(app: &TestApp, key: &str, template_id: &str, session_id: &str) -> Reply {
    app.send(
        app.post(&format!("/v1/templates/{template_id}/apply"))
            .bearer_auth(key)
            .json(&json!({"session_id": session_id})),
    )
    .await
}

#[tokio::test]
async fn builtin_templates_are_listed_for_everyone_and_read_only() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let templates = list(&app, &key).await;
    let ids: Vec<&str> = templates.iter().map(|t| t["template_id"].as_str().unwrap()).collect();
    for id in ["builtin-meeting-notes", "builtin-project-proposal", "builtin-memo", "builtin-report"] {
        assert!(ids.contains(&id), "{id} in {ids:?}");
    }
    for t in &templates {
        assert_eq!(t["builtin"], true);
        assert!(t["section_count"].as_i64().unwrap() > 1, "{t}");
        assert!(t.get("html").is_none(), "listings are light: {t}");
        assert!(t["name"].is_string() && t["created_at"].is_string());
    }
    let r = app.send(app.get("/v1/templates/builtin-memo").bearer_auth(&key)).await;
    r.expect_status(200);
    assert!(r.json["html"].as_str().unwrap().contains("data-chunk-id"), "{r:?}");

    let r = app.send(app.delete("/v1/templates/builtin-memo").bearer_auth(&key)).await;
    assert!(r.expect_status(403).detail().contains("Built-in"), "{r:?}");
    assert_eq!(list(&app, &key).await.len(), templates.len());
    app.send(app.get("/v1/templates/builtin-nothing").bearer_auth(&key)).await.expect_status(404);
    app.send(app.get("/v1/templates/tpl_00000000000000000000000000000000").bearer_auth(&key)).await.expect_status(404);

    assert_eq!(app.send(app.get("/v1/templates")).await.expect_401(), MISSING_HEADER);
}

#[tokio::test]
async fn own_templates_crud_and_another_accounts_are_forbidden() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let builtins = list(&app, &key).await.len();

    let r = create(
        &app,
        &key,
        json!({
            "name": "  Weekly status  ",
            "description": "Team update",
            "html": "<h2>Done</h2><p onclick=\"x()\">Shipped <script>alert(1)</script>things</p><ul><li>One</li></ul>",
        }),
    )
    .await;
    r.expect_status(201).expect_json();
    let id = r.json["template_id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("tpl_"), "{id}");
    assert_eq!(r.json["name"], "Weekly status");
    assert_eq!(r.json["description"], "Team update");
    assert_eq!(r.json["builtin"], false);
    assert_eq!(r.json["section_count"], 3);
    let html = r.json["html"].as_str().unwrap();
    assert!(!html.contains("script") && !html.contains("onclick"), "sanitized: {html}");
    assert_eq!(html.matches("data-chunk-id").count(), 3, "sectioned: {html}");

    // Newest first is by creation time (milliseconds).
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let second = create(&app, &key, json!({"name": "Second", "html": "<p>two</p>"})).await;
    second.expect_status(201);
    let second_id = second.json["template_id"].as_str().unwrap().to_owned();
    let templates = list(&app, &key).await;
    assert_eq!(templates.len(), builtins + 2);
    let own: Vec<&str> = templates[builtins..].iter().map(|t| t["template_id"].as_str().unwrap()).collect();
    assert_eq!(own, [second_id.as_str(), id.as_str()], "after the built-ins, newest first");
    assert_eq!(templates[builtins]["description"], Value::Null);

    let r = app.send(app.get(&format!("/v1/templates/{id}")).bearer_auth(&key)).await;
    r.expect_status(200);
    assert_eq!(r.json["html"].as_str(), Some(html));

    // Another account sees only the built-ins and is refused the others' template.
    let other = app.agent_key().await;
    assert_eq!(list(&app, &other).await.len(), builtins);
    app.send(app.get(&format!("/v1/templates/{id}")).bearer_auth(&other)).await.expect_status(403);
    app.send(app.delete(&format!("/v1/templates/{id}")).bearer_auth(&other)).await.expect_status(403);
    apply(&app, &other, &id, "theirs").await.expect_status(403);
    app.send(app.get("/v1/documents/theirs").bearer_auth(&other)).await.expect_status(404);

    app.send(app.delete(&format!("/v1/templates/{id}")).bearer_auth(&key)).await.expect_status(204);
    app.send(app.get(&format!("/v1/templates/{id}")).bearer_auth(&key)).await.expect_status(404);
    app.send(app.delete(&format!("/v1/templates/{id}")).bearer_auth(&key)).await.expect_status(404);
    assert_eq!(list(&app, &key).await.len(), builtins + 1);
}

#[tokio::test]
async fn invalid_templates_are_422() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let r = create(&app, &key, json!({"html": "<p>x</p>"})).await;
    assert_eq!(r.expect_422_at(&[json!("body"), json!("name")])["type"], "missing");
    let r = create(&app, &key, json!({"name": "   ", "html": "<p>x</p>"})).await;
    assert_eq!(r.expect_422_at(&[json!("body"), json!("name")])["type"], "string_too_short");
    let r = create(&app, &key, json!({"name": "n".repeat(201), "html": "<p>x</p>"})).await;
    assert_eq!(r.expect_422_at(&[json!("body"), json!("name")])["type"], "string_too_long");
    let r = create(&app, &key, json!({"name": "Empty", "html": "  <script>x</script> "})).await;
    r.expect_422_at(&[json!("body"), json!("html")]);
    let r = create(&app, &key, json!({"name": "No html"})).await;
    r.expect_422_at(&[json!("body"), json!("html")]);
    let r = apply(&app, &key, "builtin-memo", "bad id!").await;
    assert_eq!(r.expect_422_at(&[json!("body"), json!("session_id")])["type"], "string_pattern_mismatch");
    assert_eq!(list(&app, &key).await.iter().filter(|t| t["builtin"] == false).count(), 0);
}

#[tokio::test]
async fn applying_a_template_makes_a_new_version() {
    let app = spawn_app().await;
    let key = app.agent_key().await;

    // On a new session: the session is created.
    let r = apply(&app, &key, "builtin-meeting-notes", "notes").await;
    r.expect_status(200).expect_json();
    assert_eq!(r.json["session_id"], "notes");
    assert!(r.json["html"].as_str().unwrap().contains("Meeting notes"));
    let first_version = r.json["version_id"].as_str().unwrap().to_owned();
    let doc = app.send(app.get("/v1/documents/notes").bearer_auth(&key)).await;
    assert_eq!(doc.expect_status(200).json["version_id"].as_str(), Some(first_version.as_str()));

    // Over an existing document: replaced, as a new version with source `template`.
    let own = create(&app, &key, json!({"name": "Mine", "html": "<h1>Mine</h1><p>Body</p>"})).await;
    let own_id = own.json["template_id"].as_str().unwrap().to_owned();
    let r = apply(&app, &key, &own_id, "notes").await;
    r.expect_status(200);
    assert_eq!(r.json["section_count"], 2);
    assert_ne!(r.json["version_id"].as_str(), Some(first_version.as_str()));
    let versions = app.send(app.get("/v1/documents/notes/versions").bearer_auth(&key)).await;
    let sources: Vec<&str> =
        versions.json["versions"].as_array().unwrap().iter().map(|v| v["source"].as_str().unwrap()).collect();
    assert_eq!(sources, ["template", "template"]);
    let sessions = app.send(app.get("/v1/sessions").bearer_auth(&key)).await;
    assert_eq!(sessions.json[0]["title"], "Meeting notes", "a new session is named after the template");

    apply(&app, &key, "tpl_0123456789abcdef0123456789abcdef", "notes").await.expect_status(404);
}

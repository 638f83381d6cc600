//! Operational endpoints, the 404 of unknown paths, 405, HEAD and OPTIONS, request ids.

use serde_json::json;

use crate::helpers::*;

#[tokio::test]
async fn healthz_and_readyz() {
    let app = spawn_app().await;
    let r = app.send(app.get("/healthz")).await;
    r.expect_status(200);
    let r = app.send(app.get("/readyz")).await;
    r.expect_status(200).expect_json();
    assert_eq!(r.json["status"], "ready", "{r:?}");
}

#[tokio::test]
async fn metrics_count_requests() {
    let app = spawn_app().await;
    app.send(app.get("/healthz")).await.expect_status(200);
    app.send(app.get("/v1/sessions")).await.expect_status(401);
    let r = app.send(app.get("/metrics")).await;
    r.expect_status(200);
    assert!(r.header("content-type").unwrap_or_default().starts_with("text/plain"), "{r:?}");
    assert!(r.text.contains("redline_http_requests_total"), "{}", r.text);
    assert!(r.text.contains("redline_http_requests_total{status=\"4xx\"} 1"), "{}", r.text);
}

#[tokio::test]
async fn openapi_document_and_docs() {
    let app = spawn_app().await;
    let r = app.send(app.get("/openapi.json")).await;
    r.expect_status(200).expect_json();
    let version = r.json["openapi"].as_str().unwrap_or_else(|| panic!("openapi field: {}", r.text));
    assert!(version.starts_with("3.1"), "openapi {version}");
    assert_eq!(r.json["info"]["version"], "2.0.0");
    assert!(r.json["paths"]["/v1/sessions"].is_object(), "GET /v1/sessions is documented");
    assert!(r.json["paths"]["/v1/agents/signup"].is_object());
    // The reference (the web crate's page) reads the document from this origin, unframed.
    let r = app.send(app.get("/docs")).await;
    r.expect_status(200);
    assert!(r.header("content-type").unwrap_or_default().starts_with("text/html"), "{r:?}");
    assert!(r.text.contains("data-url=\"/openapi.json\""), "{}", r.text);
    assert!(r.header("content-security-policy").unwrap_or_default().contains("frame-ancestors 'none'"), "{r:?}");
    assert_eq!(r.header("x-frame-options"), Some("DENY"));
}

#[tokio::test]
async fn unknown_paths_are_404_json() {
    let app = spawn_app().await;
    for path in ["/nope", "/v1/nope", "/v1/sessions/x/y/z/w", "/v2/sessions"] {
        let r = app.send(app.get(path)).await;
        r.expect_status(404).expect_json();
        assert!(!r.detail().is_empty(), "{path}: {r:?}");
        assert_eq!(r.json.as_object().map(|o| o.len()), Some(1), "{path}: {r:?}");
    }
}

#[tokio::test]
async fn wrong_methods_get_405_with_allow() {
    let app = spawn_app().await;
    for (method, path, allow) in [
        ("GET", "/v1/agents/signup", "POST, OPTIONS"),
        ("DELETE", "/v1/sessions", "GET, HEAD, OPTIONS"),
        ("PUT", "/v1/users/me", "GET, HEAD, OPTIONS"),
        ("PATCH", "/v1/templates/abc", "GET, HEAD, DELETE, OPTIONS"),
        ("POST", "/v1/jobs/abc", "GET, HEAD, OPTIONS"),
        // Also a `/v1/documents/{session_id}`, which answers GET and PUT.
        ("DELETE", "/v1/documents/export", "GET, HEAD, POST, PUT, OPTIONS"),
    ] {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let r = app.send(app.client.request(method.clone(), app.url(path))).await;
        r.expect_status(405).expect_json();
        assert_eq!(r.detail(), "Method Not Allowed", "{method} {path}");
        assert_eq!(r.header("allow"), Some(allow), "{method} {path}");
    }
    // Unknown paths stay 404 whatever the method.
    let r = app.send(app.client.request(reqwest::Method::PATCH, app.url("/v1/nope"))).await;
    r.expect_status(404).expect_json();
    assert_eq!(r.header("allow"), None);
}

#[tokio::test]
async fn options_lists_the_methods_of_a_path() {
    let app = spawn_app().await;
    let r = app.send(app.client.request(reqwest::Method::OPTIONS, app.url("/v1/templates"))).await;
    r.expect_status(204);
    assert_eq!(r.header("allow"), Some("GET, HEAD, POST, OPTIONS"));
    assert!(r.text.is_empty());
    let r = app.send(app.client.request(reqwest::Method::OPTIONS, app.url("/v1/nope"))).await;
    r.expect_status(404);
}

#[tokio::test]
async fn head_answers_as_get_without_the_body() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    for path in ["/healthz", "/openapi.json", "/v1/sessions", "/v1/usage"] {
        let get = app.send(app.get(path).bearer_auth(&key)).await;
        get.expect_status(200);
        let head = app.send(app.client.head(app.url(path)).bearer_auth(&key)).await;
        head.expect_status(200);
        assert!(head.text.is_empty(), "{path}: {head:?}");
        assert_eq!(head.header("content-type"), get.header("content-type"), "{path}");
        // No length: actix frames an answer by the last request parsed, so a HEAD answer that
        // announced one could be taken for a pipelined GET's (tests/api/protocol.rs).
        assert_eq!(head.header("content-length"), None, "{path}");
        assert!(head.header("x-request-id").is_some(), "{path}");
    }
    // The same checks as a GET: no key, no answer; an unknown job, 404; a POST-only path, 405.
    app.send(app.client.head(app.url("/v1/sessions"))).await.expect_status(401);
    app.send(app.client.head(app.url("/v1/jobs/nope")).bearer_auth(&key)).await.expect_status(404);
    let r = app.send(app.client.head(app.url("/v1/agents/signup"))).await;
    r.expect_status(405);
    assert!(r.text.is_empty());
}

#[tokio::test]
async fn every_response_has_a_request_id() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let replies = [
        app.send(app.get("/healthz")).await,
        app.send(app.get("/readyz")).await,
        app.send(app.get("/metrics")).await,
        app.send(app.get("/openapi.json")).await,
        app.send(app.get("/nope")).await,
        app.send(app.get("/v1/sessions")).await,
        app.sessions_with_key(&key).await,
        app.send(app.post("/v1/agents/signup").json(&json!({}))).await,
        app.send(app.post("/v1/agents/signup").json(&json!({"name": 1}))).await,
        app.send(app.post("/v1/agents/signup").header("content-type", "text/plain").body("x")).await,
        app.send(app.post("/v1/auth/login").json(&json!({"email": "a@b.c", "password": "nope nope"}))).await,
    ];
    let mut ids = std::collections::HashSet::new();
    for r in &replies {
        let id = r.header("x-request-id").unwrap_or_else(|| panic!("no x-request-id: {r:?}"));
        assert!(!id.is_empty());
        assert!(ids.insert(id.to_owned()), "request ids must differ: {id}");
    }
}

#[tokio::test]
async fn sessions_of_a_fresh_key_is_an_empty_list() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let r = app.sessions_with_key(&key).await;
    r.expect_status(200).expect_json();
    assert_eq!(r.json, json!([]));
}

/// The job and model figures after a chat turn, and the queue depth; every metric the shipped
/// Grafana dashboard (`deploy/grafana/redline-dashboard.json`) graphs is one `/metrics` serves.
#[tokio::test]
async fn metrics_show_jobs_the_model_and_the_queue() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let put = app.client.put(app.url("/v1/documents/m")).bearer_auth(&key).json(&json!({"html": "<p>alpha</p>"}));
    app.send(put).await.expect_status(200);
    let turn = json!({"session_id": "m", "message": "replace \"alpha\" with \"omega\""});
    app.send(app.post("/v1/chat").bearer_auth(&key).json(&turn)).await.expect_status(200);
    // The worker records the run just after the job completes.
    let mut text = String::new();
    for _ in 0..50 {
        text = app.send(app.get("/metrics")).await.text;
        if text.contains("redline_job_run_seconds_count{type=\"chat\"} 1") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    for line in [
        "redline_job_run_seconds_count{type=\"chat\"} 1",
        "redline_job_duration_seconds_count{type=\"chat\",status=\"completed\"} 1",
        "redline_jobs{type=\"chat\",status=\"pending\"} 0",
        "redline_jobs{type=\"attachment_processing\",status=\"in_progress\"} 0",
        "redline_model_call_failures_total 0",
    ] {
        assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
    }
    let calls = text
        .lines()
        .find_map(|l| l.strip_prefix("redline_model_call_seconds_count "))
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no model call count in\n{text}"));
    assert!(calls >= 1, "{text}");

    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../deploy/grafana/redline-dashboard.json");
    let dashboard = std::fs::read_to_string(path).expect("the dashboard");
    let dashboard: serde_json::Value = serde_json::from_str(&dashboard).expect("the dashboard is JSON");
    let mut graphed = std::collections::BTreeSet::new();
    for panel in dashboard["panels"].as_array().expect("panels") {
        for target in panel["targets"].as_array().into_iter().flatten() {
            let expr = target["expr"].as_str().expect("expr");
            let mut rest = expr;
            while let Some(at) = rest.find("redline_") {
                let name: String = rest[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                rest = &rest[at + name.len()..];
                graphed.insert(name);
            }
        }
    }
    assert!(graphed.len() >= 6, "{graphed:?}");
    for name in &graphed {
        assert!(
            text.lines().any(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} "))),
            "the dashboard graphs {name}, which /metrics does not serve"
        );
    }
}

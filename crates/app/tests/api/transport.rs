//! Transport and caching (docs/api.md, "Transport"): `nosniff` on every answer, HSTS when
//! the public base URL is https (unless `REDLINE_HSTS=off`), the `__Host-` session cookie on
//! https, and links that leave for another host without a scheme (`//host`, `\\host\share`)
//! dropped from stored HTML and its exports.

use reqwest::header::{COOKIE, ORIGIN, SET_COOKIE};
use serde_json::json;

use crate::helpers::*;

const HTTPS_BASE: &str = "https://docs.example.test";

/// Answers of every kind: a page of the web app, a health check, a 401, a 404 and a 422.
async fn answers(app: &TestApp) -> Vec<(String, Reply)> {
    let mut out = Vec::new();
    for path in ["/", "/healthz", "/v1/sessions", "/v1/no-such-route"] {
        out.push((path.to_owned(), app.send(app.get(path)).await));
    }
    out.push(("POST /v1/auth/login".to_owned(), app.send(app.post("/v1/auth/login").json(&json!({}))).await));
    out
}

#[tokio::test]
async fn every_answer_says_nosniff_and_only_an_https_service_sends_hsts() {
    let plain = spawn_app().await;
    for (what, r) in answers(&plain).await {
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"), "{what}: {r:?}");
        assert_eq!(r.header("strict-transport-security"), None, "{what}: no HSTS over plain http");
    }
    let https = spawn_app_with(&[("REDLINE_PUBLIC_BASE_URL", HTTPS_BASE)]).await;
    let statuses: Vec<u16> = answers(&https).await.iter().map(|(_, r)| r.status.as_u16()).collect();
    assert_eq!(statuses, [200, 200, 401, 404, 422]);
    for (what, r) in answers(&https).await {
        assert_eq!(r.header("strict-transport-security"), Some("max-age=31536000"), "{what}: {r:?}");
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"), "{what}");
    }
    let off = spawn_app_with(&[("REDLINE_PUBLIC_BASE_URL", HTTPS_BASE), ("REDLINE_HSTS", "off")]).await;
    for (what, r) in answers(&off).await {
        assert_eq!(r.header("strict-transport-security"), None, "{what}: REDLINE_HSTS=off");
    }
}

#[tokio::test]
async fn on_https_the_session_cookie_is_host_prefixed_and_only_that_name_signs_in() {
    let app = spawn_app_with(&[("REDLINE_PUBLIC_BASE_URL", HTTPS_BASE)]).await;
    let email = unique_email();
    app.web_signup(&email, "correct horse battery").await.expect_status(201);
    let r = app.login(&email, "correct horse battery").await;
    r.expect_status(200);
    let cookie = r.header(SET_COOKIE.as_str()).expect("a session cookie").to_owned();
    let token = r.json["token"].as_str().expect("token");
    assert!(cookie.starts_with(&format!("__Host-redline_session={token};")), "{cookie}");
    let attributes: Vec<String> = cookie.split(';').skip(1).map(|a| a.trim().to_ascii_lowercase()).collect();
    for needed in ["secure", "httponly", "path=/"] {
        assert!(attributes.iter().any(|a| a == needed), "{cookie}: no {needed}");
    }
    assert!(!attributes.iter().any(|a| a.starts_with("domain")), "{cookie}: a __Host- cookie has no Domain");

    let with = |name: &str| app.get("/v1/usage").header(COOKIE, format!("{name}={token}")).header(ORIGIN, HTTPS_BASE);
    app.send(with("__Host-redline_session")).await.expect_status(200);
    // The plain name is what a sibling subdomain could set: not a credential here.
    app.send(with("redline_session")).await.expect_401();
}

#[tokio::test]
async fn links_to_another_host_without_a_scheme_are_dropped_from_stored_html_and_exports() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let html = concat!(
        r#"<p><a href="//evil.example/login">a</a> <a href="\\evil\share\x.exe">b</a> "#,
        r#"<a href="/\evil.example">c</a> <a href="/v1/help">d</a> <a href="https://example.com/">e</a></p>"#
    );
    app.send(app.client.put(app.url("/v1/documents/links")).bearer_auth(&key).json(&json!({"html": html})))
        .await
        .expect_status(200);
    let stored = app.send(app.get("/v1/documents/links").bearer_auth(&key)).await;
    stored.expect_status(200);
    let export = app
        .send(
            app.post("/v1/documents/export").bearer_auth(&key).json(&json!({"session_id": "links", "format": "html"})),
        )
        .await;
    export.expect_status(200);
    for (what, text) in [("stored", stored.json["html"].as_str().expect("html").to_owned()), ("export", export.text)] {
        assert!(!text.contains("evil"), "{what}: {text}");
        assert!(
            text.contains(r#"href="/v1/help""#) && text.contains(r#"href="https://example.com/""#),
            "{what}: {text}"
        );
    }
}

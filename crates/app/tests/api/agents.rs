//! `POST /v1/agents/signup` (docs/api.md, "Agents").

use serde_json::json;

use crate::helpers::*;

#[tokio::test]
async fn signup_returns_a_working_free_key() {
    let app = spawn_app().await;
    let r = app.send(app.post("/v1/agents/signup").json(&json!({"name": "research bot"}))).await;
    r.expect_status(201).expect_json();
    let key = r.json["api_key"].as_str().unwrap_or_else(|| panic!("api_key: {r:?}"));
    assert!(is_user_key(key), "api_key must be sk_ + 32 lowercase hex, got {key:?}");
    assert!(r.json["key_id"].as_str().is_some_and(|s| !s.is_empty()), "key_id: {r:?}");
    assert!(r.json["user_id"].as_str().is_some_and(|s| !s.is_empty()), "user_id: {r:?}");
    assert_eq!(r.json["subscription_tier"], "free");
    assert_eq!(r.json["monthly_limit"], 500);
    app.assert_key_works(key).await;
    let sessions = app.sessions_with_key(key).await;
    assert_eq!(sessions.json, json!([]));
}

#[tokio::test]
async fn two_signups_are_two_accounts() {
    let app = spawn_app().await;
    let a = app.agent_signup().await;
    let b = app.agent_signup().await;
    assert_ne!(a["api_key"], b["api_key"]);
    assert_ne!(a["user_id"], b["user_id"]);
    assert_ne!(a["key_id"], b["key_id"]);
}

#[tokio::test]
async fn name_is_optional() {
    let app = spawn_app().await;
    let requests = [
        app.post("/v1/agents/signup"),
        app.post("/v1/agents/signup").json(&json!({})),
        app.post("/v1/agents/signup").json(&json!({"name": null})),
        app.post("/v1/agents/signup")
            .header("content-type", "application/json; charset=utf-8")
            .body("{\"name\":\"x\"}"),
        app.post("/v1/agents/signup").header("content-type", "application/json").body(""),
    ];
    for req in requests {
        let r = app.send(req).await;
        r.expect_status(201);
        let key = r.json["api_key"].as_str().expect("api_key");
        assert!(is_user_key(key));
        app.assert_key_works(key).await;
    }
}

#[tokio::test]
async fn name_of_the_wrong_type_is_422_at_body_name() {
    let app = spawn_app().await;
    let r = app.send(app.post("/v1/agents/signup").json(&json!({"name": 5}))).await;
    let item = r.expect_422_at(&[json!("body"), json!("name")]);
    assert_eq!(item["type"], "string_type");
}

#[tokio::test]
async fn malformed_json_is_422_json_invalid() {
    let app = spawn_app().await;
    let r = app
        .send(app.post("/v1/agents/signup").header("content-type", "application/json").body("{\"name\": \"bot\""))
        .await;
    r.expect_status(422).expect_json();
    let items = r.json["detail"].as_array().expect("detail array");
    assert_eq!(items[0]["type"], "json_invalid", "{r:?}");
    assert_eq!(items[0]["loc"][0], "body");
    assert!(items[0]["msg"].is_string());
}

#[tokio::test]
async fn text_plain_body_is_415_with_a_string_detail() {
    let app = spawn_app().await;
    let r = app.send(app.post("/v1/agents/signup").header("content-type", "text/plain").body("name=bot")).await;
    r.expect_status(415).expect_json();
    assert!(!r.detail().is_empty());
}

#[tokio::test]
async fn json_array_body_is_422() {
    let app = spawn_app().await;
    let r = app.send(app.post("/v1/agents/signup").json(&json!([{"name": "bot"}]))).await;
    let item = r.expect_422_at(&[json!("body")]);
    assert!(item["msg"].as_str().is_some_and(|m| !m.is_empty()));
}

#[tokio::test]
async fn signup_cooldown_is_429_with_retry_after() {
    let app = spawn_app_with(&[("REDLINE_SIGNUP_COOLDOWN_SECS", "60")]).await;
    app.send(app.post("/v1/agents/signup").json(&json!({}))).await.expect_status(201);
    let r = app.send(app.post("/v1/agents/signup").json(&json!({}))).await;
    r.expect_status(429).expect_json();
    let retry: u64 = r
        .header("retry-after")
        .unwrap_or_else(|| panic!("429 without Retry-After: {r:?}"))
        .parse()
        .expect("Retry-After in seconds");
    assert!((1..=60).contains(&retry), "Retry-After {retry}");
    assert!(!r.detail().is_empty());
}

#[tokio::test]
async fn the_cooldown_keys_on_the_address_a_trusted_proxy_forwards_for() {
    // The test's requests come from 127.0.0.1: as the load balancer.
    let app =
        spawn_app_with(&[("REDLINE_SIGNUP_COOLDOWN_SECS", "60"), ("REDLINE_TRUSTED_PROXIES", "127.0.0.0/8")]).await;
    let signup = |client: &str| app.post("/v1/agents/signup").header("x-forwarded-for", client).json(&json!({}));
    app.send(signup("198.51.100.1")).await.expect_status(201);
    app.send(signup("198.51.100.2")).await.expect_status(201);
    app.send(signup("198.51.100.1")).await.expect_status(429);
    // A client cannot step out of its cooldown by writing the header itself: the proxy
    // appends the address it saw, and that one counts.
    app.send(signup("203.0.113.50, 198.51.100.2")).await.expect_status(429);
    let forwarded = app.post("/v1/agents/signup").header("forwarded", "for=\"[2001:db8::5]:443\"").json(&json!({}));
    app.send(forwarded).await.expect_status(201);
}

#[tokio::test]
async fn forwarding_headers_from_anyone_else_are_ignored() {
    let app = spawn_app_with(&[("REDLINE_SIGNUP_COOLDOWN_SECS", "60")]).await;
    let signup = |client: &str| app.post("/v1/agents/signup").header("x-forwarded-for", client).json(&json!({}));
    app.send(signup("198.51.100.1")).await.expect_status(201);
    app.send(signup("198.51.100.2")).await.expect_status(429);
}

//! Agent handoff: link + 6-digit code, countdown of wrong codes, 410 for ever, claim
//! (docs/api.md, "Agents", the contract's Authentication 10).

use serde_json::{json, Value};

use crate::helpers::*;

struct Handoff {
    url: String,
    token: String,
    code: String,
    body: Value,
}

async fn start(app: &TestApp, key: &str) -> Handoff {
    let r = app.send(app.post("/v1/agents/handoff").bearer_auth(key)).await;
    r.expect_status(201).expect_json();
    let url = r.json["handoff_url"].as_str().unwrap_or_else(|| panic!("handoff_url: {r:?}")).to_owned();
    let code = r.json["code"].as_str().unwrap_or_else(|| panic!("code: {r:?}")).to_owned();
    assert!(r.json["expires_at"].as_str().is_some_and(|s| !s.is_empty()), "expires_at: {r:?}");
    assert!(code.len() == 6 && code.bytes().all(|b| b.is_ascii_digit()), "code {code:?} must be 6 digits");
    assert!(url.contains("/v1/agents/handoff/"), "{url}");
    let token = last_segment(&url).to_owned();
    assert!(token.len() >= 22, "the link token {token:?} is too short to be unguessable");
    Handoff { url, token, code, body: r.json }
}

fn wrong_code(right: &str) -> String {
    let first = if right.starts_with('1') { '2' } else { '1' };
    format!("{first}{}", &right[1..])
}

async fn claim(app: &TestApp, token: &str, code: &str, email: &str, password: &str) -> Reply {
    let body = json!({"code": code, "email": email, "password": password});
    app.send(app.post(&format!("/v1/agents/handoff/{token}/claim")).json(&body)).await
}

async fn summary(app: &TestApp, token: &str) -> Reply {
    app.send(app.get(&format!("/v1/agents/handoff/{token}"))).await
}

#[tokio::test]
async fn start_and_look_at_a_handoff() {
    let app = spawn_app().await;
    let agent = app.agent_signup().await;
    let key = agent["api_key"].as_str().expect("api_key");
    let h = start(&app, key).await;
    let r = summary(&app, &h.token).await;
    r.expect_status(200).expect_json();
    assert_eq!(r.json["user_id"], agent["user_id"]);
    assert!(!r.text.contains(&h.code), "the summary must not show the code");
    assert_eq!(h.body["expires_at"], r.json["expires_at"]);
}

#[tokio::test]
async fn handoff_url_points_at_the_listening_server() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let h = start(&app, &key).await;
    assert_eq!(h.url, format!("{}/v1/agents/handoff/{}", app.base, h.token), "handoff_url must be usable as given");
    let r = app.send(app.client.get(&h.url)).await;
    r.expect_status(200);
}

#[tokio::test]
async fn handoff_url_uses_the_public_base_url() {
    let app = spawn_app_with(&[("REDLINE_PUBLIC_BASE_URL", "https://redline.example/")]).await;
    let key = app.agent_key().await;
    let h = start(&app, &key).await;
    assert_eq!(h.url, format!("https://redline.example/v1/agents/handoff/{}", h.token));
}

#[tokio::test]
async fn wrong_codes_count_down_then_the_link_is_gone_for_ever() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let h = start(&app, &key).await;
    let bad = wrong_code(&h.code);
    for left in (1..=4).rev() {
        let r = claim(&app, &h.token, &bad, &unique_email(), "a password").await;
        r.expect_status(403).expect_json();
        let detail = r.detail();
        let expected = if left == 1 { "1 attempt left.".to_owned() } else { format!("{left} attempts left.") };
        assert!(detail.contains(&expected), "expected {expected:?} in {detail:?}");
    }
    // The fifth wrong code uses the last attempt.
    let r = claim(&app, &h.token, &bad, &unique_email(), "a password").await;
    match r.status.as_u16() {
        403 => assert!(r.detail().contains("0 attempts"), "{r:?}"),
        410 => {}
        _ => panic!("fifth wrong code: {r:?}"),
    }
    // From now on: 410, even with the right code.
    let email = unique_email();
    for _ in 0..2 {
        let r = claim(&app, &h.token, &h.code, &email, "a password").await;
        r.expect_status(410).expect_json();
        assert!(!r.detail().is_empty());
        summary(&app, &h.token).await.expect_status(410);
    }
    app.login(&email, "a password").await.expect_401();
    // The agent's key is unaffected.
    app.assert_key_works(&key).await;
}

/// Codes sent at the same moment get no more checks between them than the link has attempts:
/// five 403s in all, the rest 410 (it was as many 403s as got past the first check).
#[tokio::test]
async fn wrong_codes_at_the_same_moment_get_five_checks_in_all() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let h = start(&app, &key).await;
    let right: u32 = h.code.parse().expect("digits");
    let guesses: Vec<String> = (1..=30u32).map(|i| format!("{:06}", (right + i) % 1_000_000)).collect();
    let answers = futures_util::future::join_all(
        guesses.iter().map(|code| claim(&app, &h.token, code, "guess@example.com", "a password")),
    )
    .await;
    let wrong = answers.iter().filter(|r| r.status.as_u16() == 403).count();
    let gone = answers.iter().filter(|r| r.status.as_u16() == 410).count();
    assert_eq!((wrong, gone), (5, 25), "{:?}", answers.iter().map(|r| r.status.as_u16()).collect::<Vec<_>>());
    let mut left: Vec<&str> = answers.iter().filter(|r| r.status.as_u16() == 403).map(|r| r.detail()).collect();
    left.sort_unstable();
    for (detail, n) in left.iter().zip(["0 attempts", "1 attempt left", "2 attempts", "3 attempts", "4 attempts"]) {
        assert!(detail.contains(n), "{detail:?} should say {n:?}");
    }
    claim(&app, &h.token, &h.code, &unique_email(), "a password").await.expect_status(410);
}

#[tokio::test]
async fn malformed_codes_count_as_wrong() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let h = start(&app, &key).await;
    let r = claim(&app, &h.token, "abc", &unique_email(), "a password").await;
    r.expect_status(403);
    assert!(r.detail().contains("4 attempts left"), "{r:?}");
    let r = summary(&app, &h.token).await;
    r.expect_status(200);
}

#[tokio::test]
async fn right_code_turns_the_agent_into_a_web_user() {
    let app = spawn_app().await;
    let agent = app.agent_signup().await;
    let key = agent["api_key"].as_str().expect("api_key").to_owned();
    let h = start(&app, &key).await;
    // One wrong code first does not spoil the link.
    claim(&app, &h.token, &wrong_code(&h.code), &unique_email(), "whatever pw").await.expect_status(403);

    let email = unique_email();
    let password = "operator password";
    let r = claim(&app, &h.token, &h.code, &email, password).await;
    r.expect_status(200).expect_json();
    assert_eq!(r.json["user_id"], agent["user_id"]);
    assert!(!r.text.contains(password));

    let token = app.login_token(&email, password).await;
    let me = app.send(app.get("/v1/users/me").bearer_auth(&token)).await;
    me.expect_status(200);
    assert_eq!(me.json["user_id"], agent["user_id"]);
    assert_eq!(me.json["email"], email.as_str());
    // The agent's key keeps working and is the user's key.
    app.assert_key_works(&key).await;
    let keys = app.list_keys(&token).await;
    keys.expect_status(200);
    assert!(keys.text.contains(agent["key_id"].as_str().expect("key_id")), "{keys:?}");

    // The link is used up.
    let again = claim(&app, &h.token, &h.code, &unique_email(), password).await;
    again.expect_status(404).expect_json();
    summary(&app, &h.token).await.expect_status(404);
    // A claimed account cannot be handed off again.
    let r = app.send(app.post("/v1/agents/handoff").bearer_auth(&key)).await;
    assert!(r.status.is_client_error(), "{r:?}");
}

#[tokio::test]
async fn once_one_link_is_claimed_the_accounts_other_links_are_gone() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let (first, second) = (start(&app, &key).await, start(&app, &key).await);
    let (email, password) = (unique_email(), "first operator pw");
    claim(&app, &first.token, &first.code, &email, password).await.expect_status(200);

    // The other link neither shows nor takes over the account, even with its right code.
    summary(&app, &second.token).await.expect_status(404).expect_json();
    let other = unique_email();
    claim(&app, &second.token, &second.code, &other, "second operator pw").await.expect_status(404).expect_json();
    let token = app.login_token(&email, password).await;
    let me = app.send(app.get("/v1/users/me").bearer_auth(&token)).await;
    me.expect_status(200);
    assert_eq!(me.json["email"], email.as_str(), "the first operator keeps the account");
    app.login(&other, "second operator pw").await.expect_status(401);
}

#[tokio::test]
async fn claim_with_a_taken_email_is_409_and_the_link_still_works() {
    let app = spawn_app().await;
    let taken = unique_email();
    app.web_signup(&taken, "existing user pw").await.expect_status(201);
    let key = app.agent_key().await;
    let h = start(&app, &key).await;
    let r = claim(&app, &h.token, &h.code, &taken, "agent operator pw").await;
    r.expect_status(409).expect_json();
    assert!(!r.detail().is_empty());
    // The existing user is untouched; the agent's operator cannot sign in as them.
    app.login(&taken, "agent operator pw").await.expect_401();
    app.login_token(&taken, "existing user pw").await;
    // The link still works.
    let s = summary(&app, &h.token).await;
    s.expect_status(200);
    let email = unique_email();
    claim(&app, &h.token, &h.code, &email, "agent operator pw").await.expect_status(200);
    app.login_token(&email, "agent operator pw").await;
}

#[tokio::test]
async fn claim_body_is_validated() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let h = start(&app, &key).await;
    let path = format!("/v1/agents/handoff/{}/claim", h.token);
    let r = app.send(app.post(&path).json(&json!({"code": h.code, "email": "nope", "password": "Xq7#z"}))).await;
    r.expect_422_at(&[json!("body"), json!("email")]);
    r.expect_422_at(&[json!("body"), json!("password")]);
    assert!(!r.text.contains("Xq7#z"), "the password is echoed: {}", r.text);
    let r = app.send(app.post(&path).json(&json!({}))).await;
    r.expect_422_at(&[json!("body"), json!("code")]);
    // Validation failures do not use up attempts.
    let s = summary(&app, &h.token).await;
    s.expect_status(200);
    claim(&app, &h.token, &h.code, &unique_email(), "valid password").await.expect_status(200);
}

#[tokio::test]
async fn unknown_links_are_404() {
    let app = spawn_app().await;
    for token in ["ho_doesnotexist".to_owned(), format!("ho_{}", "A".repeat(43)), "x".to_owned()] {
        summary(&app, &token).await.expect_status(404).expect_json();
        let r = claim(&app, &token, "123456", &unique_email(), "some password").await;
        r.expect_status(404).expect_json();
    }
}

#[tokio::test]
async fn handoff_needs_the_agents_own_user_key() {
    let app = spawn_app().await;
    let r = app.send(app.post("/v1/agents/handoff")).await;
    assert_eq!(r.expect_401(), MISSING_HEADER);
    let r = app.send(app.post("/v1/agents/handoff").bearer_auth(format!("sk_{}", random_hex()))).await;
    assert_eq!(r.expect_401(), INVALID_KEY);

    let (_, _, token) = app.web_user().await;
    let r = app.send(app.post("/v1/users/me/organizations").bearer_auth(&token).json(&json!({"name": "Org"}))).await;
    let org_id = r.json["org_id"].as_str().expect("org_id").to_owned();
    let r = app
        .send(app.post(&format!("/v1/users/me/organizations/{org_id}/api-keys")).bearer_auth(&token).json(&json!({})))
        .await;
    let org_key = r.json["api_key"].as_str().expect("api_key").to_owned();
    let r = app.send(app.post("/v1/agents/handoff").bearer_auth(&org_key)).await;
    r.expect_status(403).expect_json();
    assert!(!r.detail().is_empty());
    assert!(r.json.get("code").is_none());
}

#[tokio::test]
async fn expired_links_are_404() {
    let app = spawn_app_with(&[("REDLINE_HANDOFF_TTL_SECS", "1")]).await;
    let key = app.agent_key().await;
    let h = start(&app, &key).await;
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    summary(&app, &h.token).await.expect_status(404).expect_json();
    claim(&app, &h.token, &h.code, &unique_email(), "late password").await.expect_status(404);
    // A new link can be started.
    let again = start(&app, &key).await;
    summary(&app, &again.token).await.expect_status(200);
}

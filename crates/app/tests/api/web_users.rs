//! Web-app users: signup, login, logout, `/v1/users/me`, the cookie and its `Origin` check
//! (docs/api.md, "Authentication").

use reqwest::header::{COOKIE, ORIGIN};
use serde_json::json;

use crate::helpers::*;

#[tokio::test]
async fn signup_creates_a_free_user_and_never_echoes_the_password() {
    let app = spawn_app().await;
    let email = unique_email();
    let password = "correct horse battery";
    let r = app.web_signup(&email, password).await;
    r.expect_status(201).expect_json();
    assert!(r.json["user_id"].as_str().is_some_and(|s| !s.is_empty()), "{r:?}");
    assert_eq!(r.json["email"], email.as_str());
    assert_eq!(r.json["subscription_tier"], "free");
    assert!(!r.text.contains(password), "the password is echoed: {}", r.text);
}

#[tokio::test]
async fn duplicate_email_is_409() {
    let app = spawn_app().await;
    let email = unique_email();
    app.web_signup(&email, "first password").await.expect_status(201);
    let r = app.web_signup(&email, "second password").await;
    r.expect_status(409).expect_json();
    assert!(!r.detail().is_empty());
    // E-mail addresses are compared without regard to case.
    let r = app.web_signup(&email.to_uppercase(), "third password").await;
    r.expect_status(409);
}

#[tokio::test]
async fn invalid_email_is_422_at_body_email() {
    let app = spawn_app().await;
    for bad in ["not-an-email", "a@b", "@example.com", ""] {
        let r = app.web_signup(bad, "long enough password").await;
        r.expect_422_at(&[json!("body"), json!("email")]);
    }
}

#[tokio::test]
async fn short_password_is_422_at_body_password_and_not_echoed() {
    let app = spawn_app().await;
    let password = "Xq7#zP";
    let r = app.web_signup(&unique_email(), password).await;
    r.expect_422_at(&[json!("body"), json!("password")]);
    assert!(!r.text.contains(password), "the password is echoed: {}", r.text);
    // Nor inside the body echoed for a missing field, on any endpoint that takes one; a
    // handoff's code neither. An over-long password is `string_too_long` on each.
    let secret = "MySecretPass1";
    for path in ["/v1/auth/signup", "/v1/auth/login", "/v1/agents/handoff/ho_unknown/claim"] {
        let r = app.send(app.post(path).json(&json!({"password": secret, "code": "482913"}))).await;
        r.expect_422_at(&[json!("body"), json!("email")]);
        assert!(!r.text.contains(secret) && !r.text.contains("482913"), "{path} echoes a secret: {}", r.text);
    }
    let long = "p".repeat(1025);
    for path in ["/v1/auth/signup", "/v1/agents/handoff/ho_unknown/claim"] {
        let body = json!({"email": unique_email(), "password": long, "code": "1"});
        let r = app.send(app.post(path).json(&body)).await;
        let item = r.expect_422_at(&[json!("body"), json!("password")]);
        assert_eq!(item["type"], "string_too_long", "{path}: {item}");
    }
}

#[tokio::test]
async fn missing_fields_are_422() {
    let app = spawn_app().await;
    let r = app.send(app.post("/v1/auth/signup").json(&json!({}))).await;
    r.expect_422_at(&[json!("body"), json!("email")]);
    r.expect_422_at(&[json!("body"), json!("password")]);
}

#[tokio::test]
async fn login_returns_a_session_token_and_cookie() {
    let app = spawn_app().await;
    let email = unique_email();
    let signup = app.web_signup(&email, "my secret password").await;
    signup.expect_status(201);
    let r = app.login(&email, "my secret password").await;
    r.expect_status(200).expect_json();
    let token = r.json["token"].as_str().unwrap_or_else(|| panic!("token: {r:?}"));
    assert!(is_session_token(token), "token {token:?} must match ^ws_[A-Za-z0-9_-]{{43}}$");
    assert_eq!(r.json["user_id"], signup.json["user_id"]);
    let cookie = r.header("set-cookie").unwrap_or_else(|| panic!("no Set-Cookie: {r:?}"));
    assert!(cookie.starts_with(&format!("redline_session={token}")), "{cookie}");
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Lax"), "{cookie}");
    // Two logins are two sessions; the e-mail is matched without regard to case.
    let second = app.login_token(&email.to_uppercase(), "my secret password").await;
    assert_ne!(second, token);
    app.send(app.get("/v1/users/me").bearer_auth(&second)).await.expect_status(200);
}

#[tokio::test]
async fn wrong_password_and_unknown_email_are_the_same_401() {
    let app = spawn_app().await;
    let email = unique_email();
    app.web_signup(&email, "right password").await.expect_status(201);
    let wrong = app.login(&email, "wrong password").await;
    let unknown = app.login(&unique_email(), "right password").await;
    let a = wrong.expect_401();
    let b = unknown.expect_401();
    assert_eq!(a, b, "the two failures must not tell which one it was");
    assert_eq!(wrong.json, unknown.json);
    assert!(!wrong.text.contains("wrong password"));
}

#[tokio::test]
async fn me_with_the_session_token() {
    let app = spawn_app().await;
    let email = unique_email();
    let signup = app.web_signup(&email, "a fine password").await;
    let token = app.login_token(&email, "a fine password").await;
    let r = app.send(app.get("/v1/users/me").bearer_auth(&token)).await;
    r.expect_status(200).expect_json();
    assert_eq!(r.json["user_id"], signup.json["user_id"]);
    assert_eq!(r.json["email"], email.as_str());
    assert_eq!(r.json["subscription_tier"], "free");
}

#[tokio::test]
async fn me_without_credentials_is_401() {
    let app = spawn_app().await;
    let r = app.send(app.get("/v1/users/me")).await;
    r.expect_401();
    let r = app.send(app.get("/v1/users/me").bearer_auth(format!("ws_{}", "A".repeat(43)))).await;
    r.expect_401();
    let r = app.send(app.get("/v1/users/me").header("authorization", "Token abc")).await;
    r.expect_401();
}

#[tokio::test]
async fn api_keys_are_refused_on_users_endpoints() {
    let app = spawn_app().await;
    let (_, _, token) = app.web_user().await;
    let web_key = app.create_key(&token, "mine").await;
    web_key.expect_status(201);
    let web_key_id = web_key.json["key_id"].as_str().expect("key_id").to_owned();
    for key in [app.agent_key().await, web_key.json["api_key"].as_str().expect("api_key").to_owned()] {
        app.send(app.get("/v1/users/me").bearer_auth(&key)).await.expect_401();
        app.send(app.get("/v1/users/me/api-keys").bearer_auth(&key)).await.expect_401();
        app.send(app.post("/v1/users/me/api-keys").bearer_auth(&key).json(&json!({"name": "x"}))).await.expect_401();
        app.send(app.delete(&format!("/v1/users/me/api-keys/{web_key_id}")).bearer_auth(&key)).await.expect_401();
    }
    // Nothing was created or revoked by those requests.
    let list = app.list_keys(&token).await;
    list.expect_status(200);
    let keys = list.json["keys"].as_array().expect("keys");
    assert_eq!(keys.len(), 1, "{list:?}");
    app.assert_key_works(web_key.json["api_key"].as_str().unwrap()).await;
}

#[tokio::test]
async fn logout_invalidates_the_token_at_once() {
    let app = spawn_app().await;
    let (_, _, token) = app.web_user().await;
    app.send(app.get("/v1/users/me").bearer_auth(&token)).await.expect_status(200);
    let r = app.send(app.post("/v1/auth/logout").bearer_auth(&token)).await;
    assert!(r.status.is_success(), "logout: {r:?}");
    let r = app.send(app.get("/v1/users/me").bearer_auth(&token)).await;
    r.expect_401();
    app.send(app.get("/v1/users/me/api-keys").bearer_auth(&token)).await.expect_401();
}

#[tokio::test]
async fn the_cookie_counts_only_from_the_apps_own_origin() {
    let app = spawn_app().await;
    let (_, _, token) = app.web_user().await;
    let cookie = format!("redline_session={token}");
    // A cookie alone (no Origin) is not a credential.
    let r = app.send(app.get("/v1/users/me").header(COOKIE, &cookie)).await;
    r.expect_401();
    // The web app itself (Origin = the service's own origin).
    let r = app.send(app.get("/v1/users/me").header(COOKIE, &cookie).header(ORIGIN, &app.base)).await;
    r.expect_status(200);
    // A write from a foreign origin with the cookie is refused and changes nothing.
    let r = app
        .send(
            app.post("/v1/users/me/api-keys")
                .header(COOKIE, &cookie)
                .header(ORIGIN, "http://evil.example")
                .json(&json!({"name": "csrf"})),
        )
        .await;
    r.expect_401();
    let list = app.list_keys(&token).await;
    assert_eq!(list.json["keys"].as_array().map(Vec::len), Some(0), "{list:?}");
    // The same write from the app's own origin works.
    let r = app
        .send(
            app.post("/v1/users/me/api-keys")
                .header(COOKIE, &cookie)
                .header(ORIGIN, &app.base)
                .json(&json!({"name": "from the web app"})),
        )
        .await;
    r.expect_status(201);
}

#[tokio::test]
async fn the_cookie_origin_check_follows_the_public_base_url() {
    let app = spawn_app_with(&[("REDLINE_PUBLIC_BASE_URL", "https://redline.example")]).await;
    let (_, _, token) = app.web_user().await;
    // On https the cookie has the `__Host-` prefix (docs/api.md, "Authentication").
    let cookie = format!("__Host-redline_session={token}");
    let r = app.send(app.get("/v1/users/me").header(COOKIE, &cookie).header(ORIGIN, "https://redline.example")).await;
    r.expect_status(200);
    for foreign in ["http://evil.example", "https://redline.example.evil.example", "null", &app.base] {
        let r = app
            .send(
                app.post("/v1/users/me/api-keys")
                    .header(COOKIE, &cookie)
                    .header(ORIGIN, foreign)
                    .json(&json!({"name": "csrf"})),
            )
            .await;
        r.expect_401();
    }
    // Logging out through the cookie from a foreign origin does not end the session.
    let r = app.send(app.post("/v1/auth/logout").header(COOKIE, &cookie).header(ORIGIN, "http://evil.example")).await;
    r.expect_401();
    app.send(app.get("/v1/users/me").bearer_auth(&token)).await.expect_status(200);
}

//! The three 401s of an API-key endpoint (docs/api.md, "Authentication"), on `GET /v1/sessions`; a header sent twice.

use reqwest::header::{HeaderValue, AUTHORIZATION};

use crate::helpers::*;

#[tokio::test]
async fn missing_header_is_401_with_the_exact_detail() {
    let app = spawn_app().await;
    let r = app.send(app.get("/v1/sessions")).await;
    assert_eq!(r.expect_401(), MISSING_HEADER);
    assert_eq!(r.json, serde_json::json!({ "detail": MISSING_HEADER }));
}

#[tokio::test]
async fn header_without_bearer_is_401_naming_the_format() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let values = [
        "Token x".to_owned(),
        "Basic dXNlcjpwYXNzd29yZA==".to_owned(),
        "Bearer:x".to_owned(),
        format!("Bearer:{key}"),
        key.clone(),
        format!("Token {key}"),
        format!("Basic {key}"),
        "Bearer".to_owned(),
    ];
    for value in values {
        let r = app.send(app.get("/v1/sessions").header(AUTHORIZATION, value.as_str())).await;
        let detail = r.expect_401();
        assert!(detail.contains(BEARER_FORMAT), "{value:?}: detail {detail:?} must say 'Bearer <API_KEY>'");
        assert_ne!(detail, INVALID_KEY, "{value:?} is a format error, not an invalid key");
    }
    // The same key in the right format works.
    app.assert_key_works(&key).await;
}

#[tokio::test]
async fn unknown_keys_are_401_invalid_api_key() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let upper = format!("sk_{}", key["sk_".len()..].to_ascii_uppercase());
    // (A web-app session token is a credential here too: tests/api/web_sessions.rs.)
    let values = [
        format!("sk_{}", random_hex()),
        format!("lce_{}", random_hex()),
        "garbage".to_owned(),
        upper,
        format!("sk_{}", &random_hex()[..31]),
        format!("{key}0"),
        format!("sk_{}", "g".repeat(32)),
    ];
    for value in values {
        let r = app.sessions_with_key(&value).await;
        assert_eq!(r.expect_401(), INVALID_KEY, "key {value:?}");
        assert_eq!(r.json, serde_json::json!({ "detail": INVALID_KEY }));
    }
}

#[tokio::test]
async fn non_ascii_authorization_header_is_401() {
    let app = spawn_app().await;
    let values: [&[u8]; 3] = [
        "Bearer sk_é€🔑".as_bytes(),
        "Bearer \u{00e9}".as_bytes(),
        b"Bearer sk_\xff\xfe0123456789abcdef0123456789abcd",
    ];
    for value in values {
        let header = HeaderValue::from_bytes(value).expect("obs-text header value");
        let r = app.send(app.get("/v1/sessions").header(AUTHORIZATION, header)).await;
        let detail = r.expect_401();
        assert!(detail.contains(BEARER_FORMAT) || detail == INVALID_KEY, "{value:?}: unexpected detail {detail:?}");
    }
}

#[tokio::test]
async fn absurdly_long_authorization_header_is_401_not_500() {
    let app = spawn_app().await;
    for value in [format!("Bearer {}", "a".repeat(8192)), format!("Bearer sk_{}", "0".repeat(8192))] {
        let r = app.sessions_with_key(&value["Bearer ".len()..]).await;
        assert_eq!(r.expect_401(), INVALID_KEY);
    }
    let r = app.send(app.get("/v1/sessions").header(AUTHORIZATION, "x".repeat(8192))).await;
    assert!(r.expect_401().contains(BEARER_FORMAT));
}

#[tokio::test]
async fn an_authorization_header_sent_twice_is_the_format_401() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let other = app.agent_key().await;
    let bearer = format!("Bearer {key}");
    for second in [bearer.clone(), format!("Bearer {other}"), "Token x".to_owned()] {
        let r = app
            .send(app.get("/v1/sessions").header(AUTHORIZATION, bearer.as_str()).header(AUTHORIZATION, second.as_str()))
            .await;
        let detail = r.expect_401();
        assert!(detail.contains(BEARER_FORMAT), "{second:?}: {detail:?}");
    }
    // Session-token endpoints too.
    let (_, _, token) = app.web_user().await;
    let session = format!("Bearer {token}");
    let r = app
        .send(app.get("/v1/users/me").header(AUTHORIZATION, session.as_str()).header(AUTHORIZATION, session.as_str()))
        .await;
    assert!(r.expect_401().contains("Bearer"), "{r:?}");
    app.send(app.get("/v1/users/me").header(AUTHORIZATION, session.as_str())).await.expect_status(200);
    app.assert_key_works(&key).await;
}

/// A caller without a valid key gets its 401 whatever its body: the body's problems (415,
/// 422, 413) are answered only to a known caller. They were answered first, since the body
/// is read while the key is checked.
#[tokio::test]
async fn a_bad_body_is_not_looked_at_before_the_key() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let unknown = format!("sk_{}", random_hex());
    let bodies: [(&str, &str, u16); 3] = [
        ("text/plain", "hello", 415),
        ("application/json", "{bad", 422),
        ("application/x-www-form-urlencoded", "a=b", 415),
    ];
    for path in ["/v1/chat", "/v1/chat/async", "/v1/attachments/upload-url", "/v1/documents/export", "/v1/templates"] {
        for (content_type, body, status) in bodies {
            let send = |auth: Option<&str>| {
                let req = app.post(path).header("content-type", content_type).body(body);
                app.send(match auth {
                    Some(k) => req.bearer_auth(k),
                    None => req,
                })
            };
            assert_eq!(send(None).await.expect_401(), MISSING_HEADER, "{path} {content_type}");
            send(Some(&unknown)).await.expect_401();
            send(Some(&key)).await.expect_status(status);
        }
    }
    let r = app
        .send(app.client.put(app.url("/v1/documents/s")).header("content-type", "application/json").body("{bad"))
        .await;
    assert_eq!(r.expect_401(), MISSING_HEADER);
}

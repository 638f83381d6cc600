//! The application body cap: 413 JSON of the contract's Errors, Details 7, with and without
//! `Content-Length`; bodies under the cap are read normally.

use bytes::Bytes;
use http_body::Frame;
use serde_json::json;

use crate::helpers::*;

const CAP: usize = 1_048_576;

async fn capped_app() -> TestApp {
    spawn_app_with(&[("REDLINE_MAX_BODY_BYTES", "1048576"), ("REDLINE_CONTACT_EMAIL", "help@redline.example")]).await
}

/// `{"name":"xxx…"}` of exactly `size` bytes.
fn json_of_size(size: usize) -> Vec<u8> {
    let overhead = "{\"name\":\"\"}".len();
    format!("{{\"name\":\"{}\"}}", "x".repeat(size - overhead)).into_bytes()
}

/// A body sent with `Transfer-Encoding: chunked` (no `Content-Length`).
fn chunked(body: Vec<u8>) -> reqwest::Body {
    let frames: Vec<Result<Frame<Bytes>, std::io::Error>> =
        body.chunks(64 * 1024).map(|c| Ok(Frame::data(Bytes::copy_from_slice(c)))).collect();
    reqwest::Body::wrap(http_body_util::StreamBody::new(futures_util::stream::iter(frames)))
}

fn assert_too_large(r: &Reply) {
    r.expect_status(413).expect_json();
    let b = &r.json;
    assert!(b["detail"].as_str().is_some_and(|d| !d.is_empty()), "detail must be a string: {r:?}");
    assert_eq!(b["error_code"], "request_too_large", "{r:?}");
    assert_eq!(b["suggested_action"], "split_request", "{r:?}");
    assert!(b["message_user"].as_str().is_some_and(|s| !s.is_empty()), "{r:?}");
    assert_eq!(b["contact_email"], "help@redline.example", "{r:?}");
    assert!(b["support_event_id"].as_str().is_some_and(|s| !s.is_empty()), "{r:?}");
    let max = b["max_size_mb"].as_f64().unwrap_or_else(|| panic!("max_size_mb must be a number: {r:?}"));
    assert!((max - 1.0).abs() < 0.01, "max_size_mb {max}");
    let size = b["request_size_mb"].as_f64().unwrap_or_else(|| panic!("request_size_mb must be a number: {r:?}"));
    assert!(size > 1.0, "request_size_mb {size}");
    assert!(r.header("x-request-id").is_some(), "{r:?}");
}

#[tokio::test]
async fn oversized_body_with_content_length_is_413_json() {
    let app = capped_app().await;
    let body = json_of_size(2 * CAP);
    let r = app.send(app.post("/v1/agents/signup").header("content-type", "application/json").body(body)).await;
    assert_too_large(&r);
    let size = r.json["request_size_mb"].as_f64().unwrap();
    assert!((size - 2.0).abs() < 0.05, "request_size_mb {size} for a 2 MB body");
    // Other JSON endpoints share the cap.
    let r = app
        .send(app.post("/v1/auth/signup").header("content-type", "application/json").body(json_of_size(2 * CAP)))
        .await;
    assert_too_large(&r);
}

#[tokio::test]
async fn oversized_chunked_body_is_413_json() {
    let app = capped_app().await;
    let r = app
        .send(
            app.post("/v1/agents/signup")
                .header("content-type", "application/json")
                .body(chunked(json_of_size(2 * CAP))),
        )
        .await;
    assert_too_large(&r);
}

/// On an endpoint whose other extractors are still working (here: the session lookup of
/// `WebUser`) when the body is refused, the 413 must still be answered, every time.
/// Repeated because a failure there is intermittent.
#[tokio::test]
async fn oversized_body_on_an_authenticated_endpoint_is_always_413() {
    let app = capped_app().await;
    let (_, _, token) = app.web_user().await;
    for attempt in 0..8 {
        for chunked_body in [false, true] {
            let body = json_of_size(2 * CAP);
            let body = if chunked_body { chunked(body) } else { reqwest::Body::from(body) };
            let sent = app
                .post("/v1/users/me/api-keys")
                .bearer_auth(&token)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await;
            let resp = sent.unwrap_or_else(|e| {
                panic!("attempt {attempt} (chunked: {chunked_body}): no response to an oversized body: {e:?}")
            });
            assert_too_large(&Reply::of(resp).await);
        }
    }
    // Nothing reached the handler, and the server still serves.
    let list = app.list_keys(&token).await;
    assert_eq!(list.json["keys"], json!([]), "{list:?}");
    app.send(app.get("/healthz")).await.expect_status(200);
}

#[tokio::test]
async fn bodies_up_to_the_cap_are_read() {
    let app = capped_app().await;
    // Exactly at the cap: read and validated (the name is too long), not refused as too large.
    let r = app
        .send(app.post("/v1/agents/signup").header("content-type", "application/json").body(json_of_size(CAP)))
        .await;
    r.expect_422_at(&[json!("body"), json!("name")]);
    let r = app
        .send(app.post("/v1/agents/signup").header("content-type", "application/json").body(chunked(json_of_size(CAP))))
        .await;
    r.expect_422_at(&[json!("body"), json!("name")]);
    // Just under the cap, valid (trailing whitespace is JSON too): 201.
    let valid = "{\"name\":\"ok\"}";
    let body = format!("{valid}{}", " ".repeat(CAP - 1 - valid.len())).into_bytes();
    assert_eq!(body.len(), CAP - 1);
    let r = app.send(app.post("/v1/agents/signup").header("content-type", "application/json").body(body.clone())).await;
    r.expect_status(201);
    let r =
        app.send(app.post("/v1/agents/signup").header("content-type", "application/json").body(chunked(body))).await;
    r.expect_status(201);
    // One byte over is refused.
    let r = app
        .send(app.post("/v1/agents/signup").header("content-type", "application/json").body(json_of_size(CAP + 1)))
        .await;
    r.expect_status(413).expect_json();
    assert_eq!(r.json["error_code"], "request_too_large");
}

/// The harness itself: `chunked` really sends no `Content-Length`.
#[tokio::test]
async fn chunked_helper_sends_no_content_length() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.expect("accept");
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while !seen.windows(5).any(|w| w == b"0\r\n\r\n") {
            let n = socket.read(&mut buf).await.expect("read");
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
        }
        socket.write_all(b"HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n").await.expect("write");
        String::from_utf8_lossy(&seen).to_ascii_lowercase()
    });
    let resp = client().post(format!("http://{addr}/")).body(chunked(vec![b'x'; 200_000])).send().await.expect("sent");
    assert_eq!(resp.status().as_u16(), 204);
    let request = server.await.expect("server task");
    let head = &request[..request.find("\r\n\r\n").expect("end of head")];
    assert!(head.contains("transfer-encoding: chunked"), "{head}");
    assert!(!head.contains("content-length"), "{head}");
}

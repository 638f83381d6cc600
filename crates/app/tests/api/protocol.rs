//! HTTP/1.1 on the wire, with raw sockets: pipelined HEAD requests, stalled bodies, WebSocket
//! upgrades and HTTP/1.0 event streams (the `protocol` middleware of crates/http).

use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::helpers::*;

async fn connect(app: &TestApp) -> TcpStream {
    TcpStream::connect(app.base.trim_start_matches("http://")).await.expect("connect")
}

/// Everything the server sends until it closes the connection (at most 30 s).
async fn read_to_close(stream: &mut TcpStream) -> String {
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut out))
        .await
        .expect("the server closes the connection")
        .expect("read");
    String::from_utf8_lossy(&out).into_owned()
}

/// One answer with a `Content-Length` body, read without waiting for the connection to close.
async fn read_answer(stream: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&out).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length: ").map(str::to_owned))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if body.len() >= length {
                return text;
            }
        }
        let n = tokio::time::timeout(Duration::from_secs(30), stream.read(&mut buf))
            .await
            .expect("an answer within 30 s")
            .expect("read");
        assert!(n > 0, "closed before the answer was whole: {text}");
        out.extend_from_slice(&buf[..n]);
    }
}

#[tokio::test]
async fn a_pipelined_head_is_answered_and_so_is_the_request_after_it() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let mut stream = connect(&app).await;
    let requests = format!(
        "HEAD /v1/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n\r\n\
         HEAD /v1/jobs/nope HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n\r\n\
         GET /v1/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(requests.as_bytes()).await.expect("write");
    let answer = read_to_close(&mut stream).await;
    let statuses: Vec<&str> = answer.lines().filter(|l| l.starts_with("HTTP/1.1 ")).collect();
    assert_eq!(statuses, ["HTTP/1.1 200 OK", "HTTP/1.1 404 Not Found", "HTTP/1.1 200 OK"], "{answer}");
    // Only the GET has a body: the sessions list, right after its blank line.
    assert!(answer.ends_with("\r\n\r\n[]"), "{answer:?}");
}

#[tokio::test]
async fn a_stalled_body_is_cut_off_with_408_and_the_connection_closed() {
    let app = spawn_app_with(&[("REDLINE_BODY_IDLE_TIMEOUT_SECS", "1")]).await;
    let key = app.agent_key().await;
    // (path, whether the server can close the connection: a chunked body stalled mid-chunk
    // is drained by actix until the client goes, so that connection stays open after the 408.)
    for (path, closes, head) in [
        ("/v1/documents/slow", true, format!("PUT /v1/documents/slow HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"html\":")),
        ("/v1/agents/signup", false, "POST /v1/agents/signup HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"na".to_owned()),
        ("/v1/attachments/upload", true, format!("POST /v1/attachments/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 1000\r\n\r\n--b\r\nContent-Disposition: form-data; name=\"session_id\"\r\n\r\ns\r\n--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\nsome text")),
    ] {
        let mut stream = connect(&app).await;
        stream.write_all(head.as_bytes()).await.expect("write");
        let answer = read_answer(&mut stream).await;
        assert!(answer.starts_with("HTTP/1.1 408 Request Timeout"), "{path}: {answer}");
        assert!(answer.to_ascii_lowercase().contains("connection: close"), "{path}: {answer}");
        let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
        let body: serde_json::Value = serde_json::from_str(body).unwrap_or_else(|_| panic!("{path}: JSON body in {answer}"));
        assert!(body["detail"].as_str().unwrap_or_default().contains("stopped arriving"), "{path}: {answer}");
        if closes {
            assert_eq!(read_to_close(&mut stream).await, "", "{path}: nothing after the 408");
        }
    }
    app.send(app.get("/v1/documents/slow").bearer_auth(&key)).await.expect_status(404);
    // A body sent slowly but steadily is read.
    let mut stream = connect(&app).await;
    let body = json!({"html": "<p>steady</p>"}).to_string();
    let head = format!(
        "PUT /v1/documents/steady HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.expect("write");
    for part in body.as_bytes().chunks(body.len() / 3 + 1) {
        tokio::time::sleep(Duration::from_millis(400)).await;
        stream.write_all(part).await.expect("write");
    }
    let answer = read_to_close(&mut stream).await;
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
}

#[tokio::test]
async fn a_websocket_upgrade_is_refused_at_once() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let body = r#"{"html":"<p>x</p>"}"#;
    let mut stream = connect(&app).await;
    let request = format!(
        "PUT /v1/documents/up HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.expect("write");
    let answer = read_to_close(&mut stream).await;
    assert!(answer.starts_with("HTTP/1.1 400 Bad Request"), "{answer}");
    assert!(answer.contains("WebSocket"), "{answer}");
    app.send(app.get("/v1/documents/up").bearer_auth(&key)).await.expect_status(404);
}

#[tokio::test]
async fn an_http_1_0_event_stream_is_not_chunked() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let r = app
        .send(app.post("/v1/chat").bearer_auth(&key).json(&json!({"session_id": "h", "message": "what is here?"})))
        .await;
    r.expect_status(200);
    let jobs = app.send(app.get("/v1/jobs").bearer_auth(&key)).await;
    let id = jobs.json["jobs"][0]["job_id"].as_str().expect("a job").to_owned();
    let mut stream = connect(&app).await;
    let request = format!("GET /v1/jobs/{id}/events HTTP/1.0\r\nAuthorization: Bearer {key}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("write");
    let answer = read_to_close(&mut stream).await;
    let (head, body) = answer.split_once("\r\n\r\n").expect("head and body");
    assert!(head.starts_with("HTTP/1.0 200 OK"), "{answer}");
    assert!(!head.to_ascii_lowercase().contains("transfer-encoding"), "{head}");
    assert!(body.starts_with("id: "), "the events themselves, no chunk sizes: {body:?}");
    assert!(body.contains("event: final"), "{body}");
}

/// `REDLINE_KEEP_ALIVE_SECS`: by default an idle connection outlives the 60 s of the usual
/// proxies' idle timeout (here: still usable after actix's own default of 5 s); a short value
/// closes it; 0 closes each connection after its answer.
#[tokio::test]
async fn idle_connections_are_kept_as_configured() {
    let request = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";

    let app = spawn_app().await;
    let mut stream = connect(&app).await;
    stream.write_all(request.as_bytes()).await.expect("write");
    assert!(read_answer(&mut stream).await.starts_with("HTTP/1.1 200 OK"));
    tokio::time::sleep(Duration::from_secs(6)).await;
    stream.write_all(request.as_bytes()).await.expect("write after 6 s idle");
    assert!(read_answer(&mut stream).await.starts_with("HTTP/1.1 200 OK"), "the connection was kept");

    let app = spawn_app_with(&[("REDLINE_KEEP_ALIVE_SECS", "1")]).await;
    let mut stream = connect(&app).await;
    stream.write_all(request.as_bytes()).await.expect("write");
    let answer = read_answer(&mut stream).await;
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    let idle = std::time::Instant::now();
    assert_eq!(read_to_close(&mut stream).await, "", "nothing more, then the close");
    assert!(idle.elapsed() < Duration::from_secs(4), "closed after {:?}, not after 1 s", idle.elapsed());

    let app = spawn_app_with(&[("REDLINE_KEEP_ALIVE_SECS", "0")]).await;
    let mut stream = connect(&app).await;
    stream.write_all(request.as_bytes()).await.expect("write");
    let answer = read_to_close(&mut stream).await;
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    assert!(answer.to_ascii_lowercase().contains("connection: close"), "{answer}");
}

/// A compressed request body is refused with 415 naming its coding, not read as if it were
/// plain (a gzipped JSON body got 422 `json_invalid`; a plain one labelled `br` was taken).
/// `identity` is no coding.
#[tokio::test]
async fn a_content_encoding_is_refused_with_415() {
    let app = spawn_app().await;
    for coding in ["gzip", "br", "deflate, identity"] {
        let r = app
            .send(
                app.post("/v1/agents/signup")
                    .header("content-type", "application/json")
                    .header("content-encoding", coding)
                    .body("{}"),
            )
            .await;
        r.expect_status(415);
        assert!(r.detail().contains(coding), "{coding}: {}", r.detail());
    }
    let r = app
        .send(
            app.post("/v1/agents/signup")
                .header("content-type", "application/json")
                .header("content-encoding", "identity")
                .body("{}"),
        )
        .await;
    r.expect_status(201);
}

/// Answers that carry keys, tokens and documents are not to be cached (`no-store`), errors
/// too; a route that chose its own caching keeps it (event streams say `no-cache`).
#[tokio::test]
async fn answers_are_not_cached() {
    let app = spawn_app().await;
    let signup = app.send(app.post("/v1/agents/signup").json(&json!({}))).await;
    signup.expect_status(201);
    assert_eq!(signup.header("cache-control"), Some("no-store"));
    let key = signup.json["api_key"].as_str().unwrap().to_owned();
    for r in [
        app.send(app.get("/v1/sessions").bearer_auth(&key)).await,
        app.send(app.get("/v1/sessions")).await,
        app.send(app.get("/v1/usage").bearer_auth(&key)).await,
    ] {
        assert_eq!(r.header("cache-control"), Some("no-store"), "{:?}", r.json);
    }
    let (_, _, token) = app.web_user().await;
    let created = app.create_key(&token, "ci").await;
    assert_eq!(created.header("cache-control"), Some("no-store"));
}

/// A request without credentials must send its whole body within a short deadline, however
/// steadily it trickles (docs/api.md, "Errors"): fifty sign-ins sending a byte every 300 ms
/// are all answered 408 and closed, and a request with credentials may take longer.
#[tokio::test]
async fn trickled_bodies_without_credentials_are_cut_off_at_the_deadline() {
    let app = spawn_app_with(&[("REDLINE_ANONYMOUS_BODY_DEADLINE_SECS", "2")]).await;
    let key = app.agent_key().await;
    let trickle = |path: &'static str, auth: Option<String>| {
        let address = app.base.trim_start_matches("http://").to_owned();
        async move {
            let mut stream = TcpStream::connect(address).await.expect("connect");
            let body = if path.starts_with("/v1/documents/") {
                json!({"html": "<p>slow</p>"})
            } else {
                json!({"email": "someone@example.com", "password": "a long enough password"})
            }
            .to_string();
            let auth = auth.map(|k| format!("Authorization: Bearer {k}\r\n")).unwrap_or_default();
            let method = if path.starts_with("/v1/documents/") { "PUT" } else { "POST" };
            let head = format!(
                "{method} {path} HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes()).await.expect("write");
            let started = std::time::Instant::now();
            // One byte every 300 ms: never idle long enough for the idle timeout (30 s); the
            // sign-in's body would take about 20 s whole, the document's about 7 s.
            let sent = async {
                for byte in body.as_bytes() {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    if stream.write_all(&[*byte]).await.is_err() {
                        break;
                    }
                }
            };
            let _ = tokio::time::timeout(
                if auth.is_empty() { Duration::from_secs(6) } else { Duration::from_secs(60) },
                sent,
            )
            .await;
            (read_to_close(&mut stream).await, started.elapsed())
        }
    };
    let mut tasks = Vec::new();
    for _ in 0..50 {
        tasks.push(tokio::spawn(trickle("/v1/auth/login", None)));
    }
    for task in tasks {
        let (answer, took) = task.await.expect("task");
        assert!(answer.starts_with("HTTP/1.1 408 Request Timeout"), "{answer}");
        assert!(answer.contains("took too long to arrive"), "{answer}");
        assert!(took < Duration::from_secs(20), "answered at the deadline, not at the body's end: {took:?}");
    }
    // With credentials the same body is read to its end (the idle timeout still applies).
    let (answer, took) = trickle("/v1/documents/slowly", Some(key.clone())).await;
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    assert!(took > Duration::from_secs(2), "{took:?}");
}

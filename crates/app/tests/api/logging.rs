//! The real binary `redline serve`: secrets never reach the log while requests do; SIGTERM
//! stops it gracefully (in-flight requests drained, exit code 0); a restart runs the turns
//! left in the queue once each.

use std::fs::File;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body::Frame;
use serde_json::json;

use crate::helpers::*;

/// `redline serve` as a child process, its stdout and stderr in one log file. Killed on drop
/// if the test did not stop it.
struct Serve {
    child: Option<Child>,
    base: String,
    log_path: PathBuf,
    _dir: Arc<tempfile::TempDir>,
}

impl Drop for Serve {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
}

impl Serve {
    async fn start() -> Self {
        Self::start_in(Arc::new(tempfile::tempdir().expect("temp dir")), &[]).await
    }

    /// A server on the data folder in `dir` (which may have served before), with `extra`
    /// variables; its log is a new file there.
    async fn start_in(dir: Arc<tempfile::TempDir>, extra: &[(&str, &str)]) -> Self {
        let port = free_port();
        let log_path = dir.path().join(format!("redline-{port}.log"));
        let log = File::create(&log_path).expect("log file");
        let child = Command::new(env!("CARGO_BIN_EXE_redline"))
            .arg("serve")
            .env_clear()
            .env("REDLINE_BIND", format!("127.0.0.1:{port}"))
            .env("REDLINE_DATA_DIR", dir.path().join("data"))
            .env("REDLINE_LOG", "debug")
            .env("REDLINE_SIGNUP_COOLDOWN_SECS", "0")
            .env("REDLINE_HTTP_WORKERS", "2")
            .envs(extra.iter().copied())
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("clone log handle"))
            .stderr(log)
            .spawn()
            .expect("redline serve starts");
        let mut serve = Serve { child: Some(child), base: format!("http://127.0.0.1:{port}"), log_path, _dir: dir };
        serve.wait_until_up().await;
        serve
    }

    fn child(&mut self) -> &mut Child {
        self.child.as_mut().expect("the server was already stopped")
    }

    async fn wait_until_up(&mut self) {
        let client = client();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(r) = client.get(format!("{}/healthz", self.base)).send().await {
                if r.status().is_success() {
                    return;
                }
            }
            if let Some(status) = self.child().try_wait().expect("try_wait") {
                panic!("redline serve exited early with {status}; log:\n{}", self.log());
            }
            assert!(Instant::now() < deadline, "redline serve did not come up; log:\n{}", self.log());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Sends SIGTERM (with the `kill` command, to this child's pid only).
    fn sigterm(&mut self) {
        let pid = self.child().id();
        let kill = Command::new("kill").arg("-TERM").arg(pid.to_string()).status().expect("kill runs");
        assert!(kill.success(), "kill -TERM {pid} failed");
    }

    /// Waits up to `limit` for the process to exit after a signal.
    async fn wait_exit(&mut self, limit: Duration) -> ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child().try_wait().expect("try_wait") {
                self.child = None;
                return status;
            }
            if Instant::now() > deadline {
                panic!("redline did not stop within {limit:?} of SIGTERM; log:\n{}", self.log());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log_path).expect("log readable")
    }
}

async fn send(req: reqwest::RequestBuilder) -> Reply {
    Reply::of(req.send().await.expect("request sent")).await
}

#[tokio::test]
async fn sigterm_stops_the_server_with_exit_code_0() {
    let mut serve = Serve::start().await;
    let client = client();
    send(client.get(format!("{}/healthz", serve.base))).await.expect_status(200);
    send(client.post(format!("{}/v1/agents/signup", serve.base)).json(&json!({}))).await.expect_status(201);
    drop(client);
    serve.sigterm();
    let status = serve.wait_exit(Duration::from_secs(15)).await;
    assert!(status.success(), "redline exited with {status} on SIGTERM; log:\n{}", serve.log());
}

/// A request whose body is still arriving when SIGTERM comes is served to the end.
#[tokio::test]
async fn sigterm_drains_in_flight_requests() {
    let mut serve = Serve::start().await;
    let pieces: Vec<&'static [u8]> = vec![b"{\"name\"", b": ", b"\"slow", b" agent", b"\"", b"}"];
    let stream = futures_util::stream::unfold(pieces.into_iter(), |mut rest| async move {
        let piece = rest.next()?;
        tokio::time::sleep(Duration::from_millis(250)).await;
        Some((Ok::<_, std::io::Error>(Frame::data(Bytes::from_static(piece))), rest))
    });
    let body = reqwest::Body::wrap(http_body_util::StreamBody::new(stream));
    let client = client();
    let request = client
        .post(format!("{}/v1/agents/signup", serve.base))
        .header("content-type", "application/json")
        .body(body)
        .send();
    let in_flight = tokio::spawn(async move { Reply::of(request.await.expect("in-flight request answered")).await });
    tokio::time::sleep(Duration::from_millis(600)).await;
    serve.sigterm();
    let r = in_flight.await.expect("request task");
    r.expect_status(201);
    assert!(r.json["api_key"].as_str().is_some_and(is_user_key), "{r:?}");
    drop(client);
    let status = serve.wait_exit(Duration::from_secs(15)).await;
    assert!(status.success(), "redline exited with {status} on SIGTERM; log:\n{}", serve.log());
}

#[tokio::test]
async fn secrets_never_reach_the_log() {
    let mut serve = Serve::start().await;
    let base = serve.base.clone();
    let client = client();
    let url = |p: &str| format!("{base}{p}");

    // An agent key.
    let r = send(client.post(url("/v1/agents/signup")).json(&json!({"name": "logger"}))).await;
    r.expect_status(201);
    let agent_key = r.json["api_key"].as_str().expect("api_key").to_owned();
    send(client.get(url("/v1/sessions")).bearer_auth(&agent_key)).await.expect_status(200);
    let unknown_key = format!("sk_{}", random_hex());
    send(client.get(url("/v1/sessions")).bearer_auth(&unknown_key)).await.expect_status(401);

    // A web user: password, session token, a created key, an org key.
    let email = unique_email();
    let password = format!("Pw-{}", random_hex());
    let wrong_password = format!("Wrong-{}", random_hex());
    let creds = json!({"email": email, "password": password});
    send(client.post(url("/v1/auth/signup")).json(&creds)).await.expect_status(201);
    send(client.post(url("/v1/auth/login")).json(&json!({"email": email, "password": wrong_password})))
        .await
        .expect_status(401);
    let r = send(client.post(url("/v1/auth/login")).json(&creds)).await;
    r.expect_status(200);
    let session = r.json["token"].as_str().expect("token").to_owned();
    let r = send(client.post(url("/v1/users/me/api-keys")).bearer_auth(&session).json(&json!({"name": "k"}))).await;
    r.expect_status(201);
    let web_key = r.json["api_key"].as_str().expect("api_key").to_owned();
    send(client.get(url("/v1/sessions")).bearer_auth(&web_key)).await.expect_status(200);
    let r =
        send(client.post(url("/v1/users/me/organizations")).bearer_auth(&session).json(&json!({"name": "O"}))).await;
    r.expect_status(201);
    let org_id = r.json["org_id"].as_str().expect("org_id").to_owned();
    let r = send(
        client
            .post(url(&format!("/v1/users/me/organizations/{org_id}/api-keys")))
            .bearer_auth(&session)
            .json(&json!({})),
    )
    .await;
    r.expect_status(201);
    let org_key = r.json["api_key"].as_str().expect("api_key").to_owned();
    send(client.get(url("/v1/sessions")).bearer_auth(&org_key)).await.expect_status(200);
    send(
        client.get(url("/v1/users/me")).header("cookie", format!("redline_session={session}")).header("origin", &base),
    )
    .await;

    // A handoff: link token and code; a wrong code, then the claim with a new password.
    let r = send(client.post(url("/v1/agents/handoff")).bearer_auth(&agent_key)).await;
    r.expect_status(201);
    let handoff_url = r.json["handoff_url"].as_str().expect("handoff_url").to_owned();
    let handoff_token = last_segment(&handoff_url).to_owned();
    let code = r.json["code"].as_str().expect("code").to_owned();
    let claim_path = url(&format!("/v1/agents/handoff/{handoff_token}/claim"));
    send(client.get(url(&format!("/v1/agents/handoff/{handoff_token}")))).await.expect_status(200);
    let wrong = if code.starts_with('1') { "200000" } else { "100000" };
    let claim_password = format!("Claim-{}", random_hex());
    let claim_email = unique_email();
    send(client.post(&claim_path).json(&json!({"code": wrong, "email": claim_email, "password": claim_password})))
        .await
        .expect_status(403);
    send(client.post(&claim_path).json(&json!({"code": code, "email": claim_email, "password": claim_password})))
        .await
        .expect_status(200);

    // Log out (the token is a secret in the request too).
    send(client.post(url("/v1/auth/logout")).bearer_auth(&session)).await;
    drop(client);

    // SIGTERM: a graceful stop with exit code 0 within 15 s, then the whole log is there.
    serve.sigterm();
    let status = serve.wait_exit(Duration::from_secs(15)).await;
    let text = serve.log();
    assert!(status.success(), "redline exited with {status} on SIGTERM; log:\n{text}");

    assert!(text.contains("request finished"), "requests are not logged:\n{text}");
    assert!(text.contains("/v1/agents/signup"), "request paths are not logged:\n{text}");
    let secrets = [
        ("agent API key", agent_key.as_str()),
        ("agent API key secret part", &agent_key[agent_key.len() - 24..]),
        ("unknown presented key", unknown_key.as_str()),
        ("web-created API key", web_key.as_str()),
        ("web-created API key secret part", &web_key[web_key.len() - 24..]),
        ("org API key", org_key.as_str()),
        ("org API key secret part", &org_key[org_key.len() - 24..]),
        ("password", password.as_str()),
        ("wrong password", wrong_password.as_str()),
        ("session token", session.as_str()),
        ("handoff link token", handoff_token.as_str()),
        ("claim password", claim_password.as_str()),
    ];
    let leaked: Vec<&str> = secrets.iter().filter(|(_, s)| text.contains(s)).map(|(what, _)| *what).collect();
    assert!(leaked.is_empty(), "secrets in the log: {leaked:?}\nlog:\n{text}");
}

/// Turns queued when the server stops are each run once by the next start. Its first sweep
/// (every job in progress was left by the process before) used to run after the workers had
/// started: it requeued the jobs they had just taken, and other workers ran them again at the
/// same time (edits applied twice, failed turns that kept their edits).
#[tokio::test]
async fn a_restart_runs_each_queued_turn_once() {
    let dir = Arc::new(tempfile::tempdir().expect("temp dir"));
    let mut first = Serve::start_in(dir.clone(), &[("REDLINE_WORKERS", "0")]).await;
    let client = client();
    let r = send(client.post(format!("{}/v1/agents/signup", first.base)).json(&json!({}))).await;
    r.expect_status(201);
    let key = r.json["api_key"].as_str().expect("api_key").to_owned();
    let mut jobs = Vec::new();
    for i in 0..4 {
        let url = format!("{}/v1/documents/queued-{i}", first.base);
        send(client.put(url).bearer_auth(&key).json(&json!({"html": "<h1>T</h1><p>a foo</p>"})))
            .await
            .expect_status(200);
        let message = json!({"session_id": format!("queued-{i}"), "message": "replace \"foo\" with \"foo-foo\""});
        let r = send(client.post(format!("{}/v1/chat/async", first.base)).bearer_auth(&key).json(&message)).await;
        r.expect_status(202);
        jobs.push(r.json["job_id"].as_str().expect("job_id").to_owned());
    }
    first.sigterm();
    assert!(first.wait_exit(Duration::from_secs(15)).await.success(), "{}", first.log());

    let second = Serve::start_in(dir, &[("REDLINE_WORKERS", "4")]).await;
    let get = |path: String| send(client.get(format!("{}{path}", second.base)).bearer_auth(&key));
    let deadline = Instant::now() + Duration::from_secs(60);
    for job in &jobs {
        loop {
            let r = get(format!("/v1/jobs/{job}")).await;
            let status = r.json["status"].as_str().unwrap_or_default().to_owned();
            if status == "completed" {
                break;
            }
            assert!(["pending", "in_progress"].contains(&status.as_str()), "job {job}: {r:?}\n{}", second.log());
            assert!(Instant::now() < deadline, "job {job} did not complete: {r:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    for i in 0..4 {
        let doc = get(format!("/v1/documents/queued-{i}")).await;
        let html = doc.json["html"].as_str().unwrap_or_default();
        assert!(html.contains("a foo-foo<") && !html.contains("foo-foo-foo"), "edited once: {html}");
        let history = get(format!("/v1/sessions/queued-{i}/history")).await;
        assert_eq!(history.json["messages"].as_array().map(Vec::len), Some(2), "{}", history.text);
    }
    assert_eq!(get("/v1/usage".to_owned()).await.json["monthly_used"], 4, "each turn billed once");
    let log = second.log();
    assert!(!log.contains("requeued jobs whose worker stopped"), "a job was taken from a worker:\n{log}");
    assert_eq!(log.matches("running job").count(), 4, "each job run once:\n{log}");
}

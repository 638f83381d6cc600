//! Faults and scale-out with the real `redline` binary: a SIGKILL while a job runs loses
//! nothing and leaves no job stuck; two replicas on one PostgreSQL database run each job
//! exactly once, and a stream on one replica follows a job the other runs.

use std::fs::File;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::helpers::{client, fleet_env, PgDatabase};

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
}

/// A `redline serve` process of its own; killed on drop.
pub(crate) struct Replica {
    pub(crate) child: Child,
    pub(crate) base: String,
    log: std::path::PathBuf,
}

impl Replica {
    async fn start(data_dir: &std::path::Path, env: &[(&str, String)]) -> Self {
        Self::start_on(data_dir, free_port(), env).await
    }

    /// A replica listening on `port` of loopback, once `/healthz` answers.
    pub(crate) async fn start_on(data_dir: &std::path::Path, port: u16, env: &[(&str, String)]) -> Self {
        std::fs::create_dir_all(data_dir).expect("data dir");
        let log = data_dir.join(format!("server-{port}.log"));
        let out = File::create(&log).expect("log file");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_redline"));
        cmd.arg("serve")
            .env_clear()
            .env("REDLINE_BIND", format!("127.0.0.1:{port}"))
            .env("REDLINE_DATA_DIR", data_dir)
            .env("REDLINE_SIGNUP_COOLDOWN_SECS", "0")
            .env("REDLINE_HTTP_WORKERS", "2")
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("clone"))
            .stderr(out);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().expect("redline serve starts");
        let mut r = Replica { child, base: format!("http://127.0.0.1:{port}"), log };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(resp) = client().get(format!("{}/healthz", r.base)).send().await {
                if resp.status().is_success() {
                    return r;
                }
            }
            if let Some(status) = r.child.try_wait().expect("try_wait") {
                panic!("redline exited early with {status}: {}", r.log_text());
            }
            assert!(Instant::now() < deadline, "redline did not come up: {}", r.log_text());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub(crate) fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub(crate) async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        key: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut req = client().request(method, format!("{}{path}", self.base)).bearer_auth(key);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.expect("request");
        let status = resp.status().as_u16();
        (status, resp.json().await.unwrap_or(Value::Null))
    }

    pub(crate) async fn key(&self) -> String {
        let resp =
            client().post(format!("{}/v1/agents/signup", self.base)).json(&json!({})).send().await.expect("signup");
        let v: Value = resp.json().await.expect("json");
        v["api_key"].as_str().expect("api_key").to_owned()
    }

    async fn wait_for(&self, key: &str, job_id: &str, statuses: &[&str], within: Duration) -> Value {
        let deadline = Instant::now() + within;
        loop {
            let (s, job) = self.call(reqwest::Method::GET, &format!("/v1/jobs/{job_id}"), key, None).await;
            assert_eq!(s, 200, "{job}");
            if statuses.contains(&job["status"].as_str().unwrap_or_default()) {
                return job;
            }
            assert!(Instant::now() < deadline, "job {job_id} stuck at {}: {}", job["status"], self.log_text());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A model that holds every request while `hold` is set, then answers: an edit of the first
/// section the outline names, then a text answer. `seen` counts the requests.
async fn slow_model(hold: Arc<AtomicBool>, seen: Arc<AtomicUsize>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else { return };
            let hold = hold.clone();
            let seen = seen.clone();
            tokio::spawn(async move {
                let Some((_, body)) = crate::helpers::read_request(&mut sock).await else { return };
                seen.fetch_add(1, Ordering::SeqCst);
                while hold.load(Ordering::SeqCst) {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                crate::helpers::answer_with_an_edit(&mut sock, &body, "<p>after the crash</p>").await;
            });
        }
    });
    format!("http://{addr}/v1")
}

#[tokio::test]
async fn a_killed_server_leaves_no_job_stuck_and_no_document_half_written() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (hold, seen) = (Arc::new(AtomicBool::new(true)), Arc::new(AtomicUsize::new(0)));
    let model = slow_model(hold.clone(), seen.clone()).await;
    let env = vec![
        ("REDLINE_LLM_PROVIDER", "openai".to_owned()),
        ("REDLINE_OPENAI_BASE_URL", model),
        ("REDLINE_OPENAI_MODEL", "m".to_owned()),
        // A lease far longer than the test: the job must be taken again because the new
        // process owns the SQLite database, not because the lease ran out.
        ("REDLINE_JOB_LEASE_SECS", "600".to_owned()),
    ];
    let mut first = Replica::start(dir.path(), &env).await;
    let key = first.key().await;
    let put = json!({"html": "<p>before the crash</p><p>second</p>"});
    assert_eq!(first.call(reqwest::Method::PUT, "/v1/documents/k", &key, Some(put)).await.0, 200);
    let (_, before) = first.call(reqwest::Method::GET, "/v1/documents/k", &key, None).await;
    let (s, job) = first
        .call(reqwest::Method::POST, "/v1/chat/async", &key, Some(json!({"session_id": "k", "message": "edit"})))
        .await;
    assert_eq!(s, 202);
    let job_id = job["job_id"].as_str().unwrap().to_owned();
    first.wait_for(&key, &job_id, &["in_progress"], Duration::from_secs(20)).await;
    // Killed while the model is thinking.
    let deadline = Instant::now() + Duration::from_secs(20);
    while seen.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "the model was never called");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    first.kill();

    // The document is exactly as committed before the crash (the model still holds the
    // turn that the new process has taken again).
    let second = Replica::start(dir.path(), &env).await;
    let (_, after_crash) = second.call(reqwest::Method::GET, "/v1/documents/k", &key, None).await;
    assert_eq!(after_crash["version_id"], before["version_id"]);
    assert_eq!(after_crash["html"], before["html"]);
    hold.store(false, Ordering::SeqCst);
    // The job is taken again at once (the killed process cannot be running it), and completes.
    let done = second.wait_for(&key, &job_id, &["completed", "failed"], Duration::from_secs(60)).await;
    assert_eq!(done["status"], "completed", "{done}");
    let (_, now) = second.call(reqwest::Method::GET, "/v1/documents/k", &key, None).await;
    assert!(now["html"].as_str().unwrap().contains("after the crash"), "{now}");
    let (_, usage) = second.call(reqwest::Method::GET, "/v1/usage", &key, None).await;
    assert_eq!(usage["monthly_used"], 1, "charged once");

    // A second server on the same SQLite database is refused while one serves it.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_redline"))
        .arg("serve")
        .env_clear()
        .env("REDLINE_BIND", format!("127.0.0.1:{}", free_port()))
        .env("REDLINE_DATA_DIR", dir.path())
        .output()
        .expect("redline runs");
    assert!(!out.status.success(), "a second server started");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("another redline process is serving this SQLite database"), "{stderr}");
}

#[tokio::test]
async fn two_replicas_share_jobs_and_streams_over_postgres() {
    let Some(db) = PgDatabase::create("redline_replicas").await else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let fleet = |workers: &str| [fleet_env(&db, dir.path()), vec![("REDLINE_WORKERS", workers.to_owned())]].concat();
    // Replica A only serves HTTP; B runs every job.
    let a = Replica::start(&dir.path().join("a"), &fleet("0")).await;
    let b = Replica::start(&dir.path().join("b"), &fleet("4")).await;
    let key = a.key().await;
    assert_eq!(
        a.call(reqwest::Method::PUT, "/v1/documents/r", &key, Some(json!({"html": "<p>alpha</p>"}))).await.0,
        200
    );

    // A stream on A follows a job that B runs, to its final event.
    let resp = client()
        .post(format!("{}/v1/chat/async", a.base))
        .bearer_auth(&key)
        .header("accept", "text/event-stream")
        .json(&json!({"session_id": "r", "message": "replace \"alpha\" with \"omega\""}))
        .send()
        .await
        .expect("stream");
    let body =
        tokio::time::timeout(Duration::from_secs(30), resp.text()).await.expect("the stream ends").expect("body");
    assert!(body.contains("event: intermediate") && body.contains("event: final"), "{body}");
    let final_job: Value =
        serde_json::from_str(body.lines().filter_map(|l| l.strip_prefix("data: ")).next_back().unwrap()).unwrap();
    assert_eq!(final_job["status"], "completed", "{body}");

    // Twenty jobs submitted to both replicas (both running jobs now): each runs exactly once.
    let c = Replica::start(&dir.path().join("c"), &fleet("4")).await;
    let mut ids = Vec::new();
    for i in 0..20 {
        let target = if i % 2 == 0 { &b } else { &c };
        let (s, job) = target
            .call(
                reqwest::Method::POST,
                "/v1/chat/async",
                &key,
                Some(json!({"session_id": format!("m{i}"), "message": format!("append a section: entry {i}")})),
            )
            .await;
        assert_eq!(s, 202, "{job}");
        ids.push(job["job_id"].as_str().unwrap().to_owned());
    }
    for id in &ids {
        let job = a.wait_for(&key, id, &["completed", "failed"], Duration::from_secs(60)).await;
        assert_eq!(job["status"], "completed", "{job}");
        let starts = job["metadata"]["intermediate_responses"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["content"]["message"] == "Reading the document")
            .count();
        assert_eq!(starts, 1, "job {id} ran {starts} times");
    }
    let (_, usage) = a.call(reqwest::Method::GET, "/v1/usage", &key, None).await;
    assert_eq!(usage["monthly_used"], 21);
}

#[tokio::test]
async fn a_replica_on_postgres_without_the_shared_settings_does_not_start() {
    let Some(db) = PgDatabase::create("redline_refuse").await else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let redline = |command: &str, extra: &[(&str, &str)]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_redline"));
        cmd.arg(command)
            .env_clear()
            .env("REDLINE_BIND", format!("127.0.0.1:{}", free_port()))
            .env("REDLINE_DATA_DIR", dir.path())
            .env("REDLINE_DATABASE_URL", &db.url)
            .envs(extra.iter().copied())
            .stdin(Stdio::null());
        cmd.output().expect("redline runs")
    };
    let out = redline("serve", &[]);
    assert!(!out.status.success(), "it started");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("REDLINE_SECRET is unset")
            && stderr.contains("REDLINE_PUBLIC_BASE_URL is unset")
            && stderr.contains("REDLINE_SMTP_URL is unset"),
        "{stderr}"
    );

    // check-config says the same without starting, and shows no secret.
    let out = redline("check-config", &[("REDLINE_SECRET", "do-not-print-me")]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("REDLINE_SECRET=(set, hidden)") && !stdout.contains("do-not-print-me"), "{stdout}");
    assert!(
        stdout.contains("would refuse to start") && stdout.contains("REDLINE_PUBLIC_BASE_URL is unset"),
        "{stdout}"
    );
    assert!(!stdout.contains("REDLINE_SECRET is unset"), "{stdout}");

    let shared = [("REDLINE_SECRET", "s"), ("REDLINE_PUBLIC_BASE_URL", "https://redline.example")];
    let out = redline("check-config", &shared);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("REDLINE_SMTP_URL is unset"), "{out:?}");
    let out = redline("check-config", &[&shared[..], &[("REDLINE_SMTP_URL", "smtp://127.0.0.1:2525")]].concat());
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("would start"), "{out:?}");

    // The explicit opt-out of a deployment of one starts and serves.
    let single = Replica::start(
        &dir.path().join("single"),
        &[("REDLINE_DATABASE_URL", db.url.clone()), ("REDLINE_SINGLE_REPLICA", "true".to_owned())],
    )
    .await;
    drop(single);
}

/// A rolling restart: SIGTERM to the replica running a turn. Its event stream ends with a
/// `reconnect` event, the turn is handed back at once (the lease is far longer than the
/// test), another replica runs it to the end exactly once, and its first event names the
/// events of the run that was cut off; the handing back does not count as a crash.
#[tokio::test]
async fn a_replica_stopped_with_sigterm_hands_its_turn_to_another_at_once() {
    let Some(db) = PgDatabase::create("redline_drain").await else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let (hold, seen) = (Arc::new(AtomicBool::new(true)), Arc::new(AtomicUsize::new(0)));
    let model = slow_model(hold.clone(), seen.clone()).await;
    let env = [
        fleet_env(&db, dir.path()),
        vec![
            ("REDLINE_LLM_PROVIDER", "openai".to_owned()),
            ("REDLINE_OPENAI_BASE_URL", model),
            ("REDLINE_OPENAI_MODEL", "m".to_owned()),
            ("REDLINE_JOB_LEASE_SECS", "600".to_owned()),
            ("REDLINE_SHUTDOWN_TIMEOUT_SECS", "1".to_owned()),
        ],
    ]
    .concat();
    let mut first = Replica::start(&dir.path().join("first"), &env).await;
    let key = first.key().await;
    let put = json!({"html": "<p>before the restart</p><p>second</p>"});
    assert_eq!(first.call(reqwest::Method::PUT, "/v1/documents/d", &key, Some(put)).await.0, 200);
    let (s, job) = first
        .call(reqwest::Method::POST, "/v1/chat/async", &key, Some(json!({"session_id": "d", "message": "edit"})))
        .await;
    assert_eq!(s, 202, "{job}");
    let job_id = job["job_id"].as_str().unwrap().to_owned();
    let deadline = Instant::now() + Duration::from_secs(20);
    while seen.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "the model was never called: {}", first.log_text());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let stream = client()
        .get(format!("{}/v1/jobs/{job_id}/events", first.base))
        .bearer_auth(&key)
        .header("accept", "text/event-stream")
        .send()
        .await
        .expect("stream");
    assert_eq!(stream.status(), 200);
    // The next replica is up before the first stops (a rolling restart).
    let second = Replica::start(&dir.path().join("second"), &env).await;

    let killed = Command::new("kill").args(["-TERM", &first.child.id().to_string()]).status().expect("kill runs");
    assert!(killed.success());
    let terminated = Instant::now();
    let body = tokio::time::timeout(Duration::from_secs(15), stream.text())
        .await
        .expect("the stream ends while the replica drains")
        .expect("body");
    assert!(body.contains("event: reconnect") && body.contains("Last-Event-ID"), "{body}");
    let deadline = Instant::now() + Duration::from_secs(20);
    let exit = loop {
        if let Some(status) = first.child.try_wait().expect("try_wait") {
            break status;
        }
        assert!(Instant::now() < deadline, "the replica did not stop: {}", first.log_text());
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(exit.success(), "{exit}: {}", first.log_text());
    assert!(first.log_text().contains("handed a running job back"), "{}", first.log_text());

    // Taken up by the second replica at once, not after the 600 s lease.
    let deadline = Instant::now() + Duration::from_secs(20);
    while seen.load(Ordering::SeqCst) < 2 {
        assert!(Instant::now() < deadline, "no other replica took the turn up: {}", second.log_text());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    println!("SIGTERM to the turn's model call on the next replica: {:?} (shutdown timeout 1 s)", terminated.elapsed());
    hold.store(false, Ordering::SeqCst);
    let done = second.wait_for(&key, &job_id, &["completed", "failed"], Duration::from_secs(60)).await;
    assert_eq!(done["status"], "completed", "{done}");
    let events = done["metadata"]["intermediate_responses"].as_array().expect("events");
    let starts: Vec<&Value> = events.iter().filter(|e| e["content"]["message"] == "Reading the document").collect();
    assert_eq!(starts.len(), 2, "{events:?}");
    assert_eq!(starts[1]["content"]["attempt"], 1, "a hand-back is not a crash: {:?}", starts[1]);
    let supersedes = &starts[1]["content"]["supersedes"];
    assert_eq!(supersedes["from"], starts[0]["sequence"], "{supersedes}");
    assert!(supersedes["through"].as_i64() < starts[1]["sequence"].as_i64(), "{supersedes}");
    let (_, doc) = second.call(reqwest::Method::GET, "/v1/documents/d", &key, None).await;
    assert!(doc["html"].as_str().unwrap().contains("after the crash"), "{doc}");
    let (_, usage) = second.call(reqwest::Method::GET, "/v1/usage", &key, None).await;
    assert_eq!(usage["monthly_used"], 1, "charged once");
    first.kill();
}

/// A stopping replica goes on serving for its drain grace, the time a load balancer takes to
/// see `/readyz` at 503: a request on a new connection is still answered, and its answer
/// closes the connection, so the balancer's next request goes elsewhere.
#[tokio::test]
async fn a_draining_replica_serves_through_its_grace_and_closes_each_connection() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A grace far longer than the test: it ends with a SIGKILL.
    let mut replica = Replica::start(dir.path(), &[("REDLINE_DRAIN_GRACE_SECS", "600".to_owned())]).await;
    let key = replica.key().await;
    let (before, _) = replica.call(reqwest::Method::GET, "/v1/sessions", &key, None).await;
    assert_eq!(before, 200);
    let killed = Command::new("kill").args(["-TERM", &replica.child.id().to_string()]).status().expect("kill runs");
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let ready = client().get(format!("{}/readyz", replica.base)).send().await.expect("readyz answers");
        if ready.status() == 503 {
            let body: Value = ready.json().await.expect("json");
            assert_eq!(body["status"], "draining", "{body}");
            break;
        }
        assert!(Instant::now() < deadline, "/readyz never said draining: {}", replica.log_text());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let resp = client().get(format!("{}/v1/sessions", replica.base)).bearer_auth(&key).send().await.expect("served");
    assert_eq!(resp.status(), 200);
    let connection = resp.headers().get("connection").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    assert_eq!(connection, "close", "{:?}", resp.headers());
    assert!(replica.child.try_wait().expect("try_wait").is_none(), "the replica stopped within its grace");
    replica.kill();
}

/// A key revoked on one replica stops working on the others when the announcement reaches
/// them (`LISTEN/NOTIFY`), not when their cache's 60 s run out.
#[tokio::test]
async fn a_key_revoked_on_one_replica_is_refused_by_the_others_at_once() {
    let Some(db) = PgDatabase::create("redline_revoke").await else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let env = [fleet_env(&db, dir.path()), vec![("REDLINE_WORKERS", "0".to_owned())]].concat();
    let a = Replica::start(&dir.path().join("a"), &env).await;
    let b = Replica::start(&dir.path().join("b"), &env).await;
    let creds = json!({"email": format!("revoke-{}@example.com", uuid::Uuid::new_v4().simple()), "password": "a long password"});
    let signup = client().post(format!("{}/v1/auth/signup", a.base)).json(&creds).send().await.expect("signup");
    assert_eq!(signup.status(), 201);
    let login: Value = client()
        .post(format!("{}/v1/auth/login", a.base))
        .json(&creds)
        .send()
        .await
        .expect("login")
        .json()
        .await
        .expect("json");
    let token = login["token"].as_str().expect("token").to_owned();
    let (s, created) =
        a.call(reqwest::Method::POST, "/v1/users/me/api-keys", &token, Some(json!({"name": "ci"}))).await;
    assert_eq!(s, 201, "{created}");
    let key = created["api_key"].as_str().expect("api_key").to_owned();
    let key_id = created["key_id"].as_str().expect("key_id").to_owned();
    // B verifies the key and keeps it in its cache.
    assert_eq!(b.call(reqwest::Method::GET, "/v1/sessions", &key, None).await.0, 200);
    assert_eq!(b.call(reqwest::Method::GET, "/v1/sessions", &key, None).await.0, 200);

    let (s, body) = a.call(reqwest::Method::DELETE, &format!("/v1/users/me/api-keys/{key_id}"), &token, None).await;
    assert!(s == 204 || s == 200, "{s} {body}");
    let revoked = Instant::now();
    loop {
        let status = b.call(reqwest::Method::GET, "/v1/sessions", &key, None).await.0;
        if status == 401 {
            break;
        }
        assert_eq!(status, 200);
        assert!(
            revoked.elapsed() < Duration::from_secs(20),
            "replica B still takes the revoked key (cache TTL is 60 s)"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    println!("revocation seen by the other replica after {:?}", revoked.elapsed());
}

/// Replica B keeps the caller's session list; a document saved on replica A shows in B's
/// list right after (A announces the write over `LISTEN/NOTIFY`, B drops its kept list). The
/// deadline is well under the list cache's 1 s TTL, which alone would also refresh B's list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_list_kept_on_one_replica_shows_a_write_on_another_at_once() {
    let Some(db) = PgDatabase::create("redline_lists").await else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let env = [fleet_env(&db, dir.path()), vec![("REDLINE_WORKERS", "0".to_owned())]].concat();
    let a = Replica::start(&dir.path().join("a"), &env).await;
    let b = Replica::start(&dir.path().join("b"), &env).await;
    let key = a.key().await;
    let listed = |v: &Value| -> Vec<(String, String)> {
        v.as_array()
            .expect("a list")
            .iter()
            .map(|s| (s["session_id"].as_str().unwrap_or_default().to_owned(), s["version_id"].to_string()))
            .collect()
    };
    let mut seen = Vec::new();
    for (step, session) in ["first", "second", "first"].into_iter().enumerate() {
        // B reads the list twice: the second answer comes from its cache.
        let before = b.call(reqwest::Method::GET, "/v1/sessions", &key, None).await;
        assert_eq!(before.0, 200, "{}", before.1);
        assert_eq!(b.call(reqwest::Method::GET, "/v1/sessions", &key, None).await.1, before.1);
        let (s, saved) = a
            .call(
                reqwest::Method::PUT,
                &format!("/v1/documents/{session}"),
                &key,
                Some(json!({"html": format!("<p>Step {step}.</p>")})),
            )
            .await;
        assert!(s == 200 || s == 201, "{s} {saved}");
        let version = saved["version_id"].to_string();
        let written = Instant::now();
        loop {
            let (s, list) = b.call(reqwest::Method::GET, "/v1/sessions", &key, None).await;
            assert_eq!(s, 200, "{list}");
            let list = listed(&list);
            if list.first() == Some(&(session.to_owned(), version.clone())) {
                seen.push(written.elapsed());
                break;
            }
            assert!(
                written.elapsed() < Duration::from_millis(600),
                "step {step}: replica B still lists {list:?} after the save of {session} ({version}) on A"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    println!("a save on replica A listed by replica B after {seen:?}");
}

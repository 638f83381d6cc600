//! Three replicas on one PostgreSQL database behind HAProxy running the shipped
//! `deploy/haproxy/redline.cfg` (its addresses replaced by loopback ports): a rolling restart
//! under load fails no idempotent request and keeps no turn waiting for a lease; a replica
//! killed mid-turn has its turn finished by another once the lease runs out.
//!
//! HAProxy comes from Debian (`apt-get install haproxy`, which `scripts/setup-tests.sh` does
//! under CI=true); without it the tests are skipped with a message, and fail under CI=true.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::attachments::multipart;
use crate::helpers::{client, fleet_env, PgDatabase};
use crate::replicas::{free_port, Replica};

/// The shipped configuration, as an operator installs it.
fn shipped() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/haproxy/redline.cfg");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn haproxy_binary() -> Option<PathBuf> {
    let from_path = std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|p| p.join("haproxy")).find(|p| p.is_file()));
    from_path.or_else(|| Some(PathBuf::from("/usr/sbin/haproxy")).filter(|p| p.is_file()))
}

/// The shipped file with its listening address and its three servers on loopback ports.
/// Run by someone other than root, HAProxy cannot switch to the `haproxy` user: those two
/// lines are left out then.
fn render(front: u16, replicas: [u16; 3]) -> String {
    let replace_once = |text: String, from: &str, to: &str| {
        assert_eq!(text.matches(from).count(), 1, "the shipped config names {from:?} once");
        text.replace(from, to)
    };
    let mut text = replace_once(shipped(), "bind :80\n", &format!("bind 127.0.0.1:{front}\n"));
    for (i, port) in replicas.iter().enumerate() {
        text = replace_once(text, &format!(" 10.0.0.1{}:8080\n", i + 1), &format!(" 127.0.0.1:{port}\n"));
    }
    let root = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").expect("/proc/self")) == 0;
    if !root {
        text = replace_once(text, "    user haproxy\n", "");
        text = replace_once(text, "    group haproxy\n", "");
    }
    text
}

/// HAProxy in the foreground (`-db`), its log in a file; stopped on drop.
struct Balancer {
    child: Child,
    base: String,
    log: PathBuf,
}

impl Balancer {
    async fn start(binary: &Path, dir: &Path, replicas: [u16; 3]) -> Self {
        let front = free_port();
        let config = dir.join("haproxy.cfg");
        std::fs::write(&config, render(front, replicas)).expect("write the config");
        let log = dir.join("haproxy.log");
        let out = std::fs::File::create(&log).expect("log file");
        let child = Command::new(binary)
            .arg("-db")
            .arg("-f")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("clone"))
            .stderr(out)
            .spawn()
            .expect("haproxy starts");
        let mut lb = Balancer { child, base: format!("http://127.0.0.1:{front}"), log };
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", front)).is_err() {
            if let Some(status) = lb.child.try_wait().expect("try_wait") {
                panic!("haproxy exited with {status}: {}", lb.log_text());
            }
            assert!(Instant::now() < deadline, "haproxy did not listen: {}", lb.log_text());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        lb
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An OpenAI-wire model for the replicas. Replica `i` calls it under `/r{i}/v1`, so each call
/// is recorded with the replica that made it. Each answer waits `delay_ms`, and longer while
/// `hold` is set. The first call of a turn edits the first section; the call that carries the
/// tool's result answers with text.
#[derive(Clone)]
struct Model {
    base: String,
    hold: Arc<AtomicBool>,
    delay_ms: Arc<AtomicU64>,
    calls: Arc<Mutex<Vec<(String, Instant)>>>,
}

impl Model {
    async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let model = Model {
            base: format!("http://{}", listener.local_addr().expect("addr")),
            hold: Arc::new(AtomicBool::new(false)),
            delay_ms: Arc::new(AtomicU64::new(0)),
            calls: Arc::new(Mutex::new(Vec::new())),
        };
        let shared = model.clone();
        tokio::spawn(async move {
            loop {
                let Ok((mut sock, _)) = listener.accept().await else { return };
                let model = shared.clone();
                tokio::spawn(async move {
                    let Some((path, body)) = crate::helpers::read_request(&mut sock).await else { return };
                    let replica = path.trim_start_matches('/').split('/').next().unwrap_or_default().to_owned();
                    model.calls.lock().unwrap().push((replica, Instant::now()));
                    tokio::time::sleep(Duration::from_millis(model.delay_ms.load(Ordering::SeqCst))).await;
                    while model.hold.load(Ordering::SeqCst) {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    crate::helpers::answer_with_an_edit(&mut sock, &body, "<p>edited by the model</p>").await;
                });
            }
        });
        model
    }

    fn calls(&self) -> Vec<(String, Instant)> {
        self.calls.lock().unwrap().clone()
    }
}

/// Three replicas (each on a port of its own, kept across restarts) and HAProxy before them.
/// Fields drop in order: the processes before their data folder and database.
struct Fleet {
    replicas: Vec<Option<Replica>>,
    lb: Balancer,
    model: Model,
    ports: [u16; 3],
    generation: usize,
    env: Vec<(&'static str, String)>,
    dir: tempfile::TempDir,
    _db: PgDatabase,
}

impl Fleet {
    /// `None` (a skip) without HAProxy or PostgreSQL outside CI.
    async fn start(name: &str, lease_secs: u64) -> Option<Self> {
        let ci = std::env::var("CI").as_deref() == Ok("true");
        let Some(haproxy) = haproxy_binary() else {
            assert!(!ci, "CI=true: haproxy is required for the load-balancer tests (apt-get install haproxy)");
            eprintln!("SKIPPED {name}: haproxy not found (apt-get install haproxy)");
            return None;
        };
        let db = PgDatabase::create(name).await?;
        let dir = tempfile::tempdir().expect("temp dir");
        let model = Model::start().await;
        let ports = [free_port(), free_port(), free_port()];
        let env = [
            fleet_env(&db, dir.path()),
            vec![
                ("REDLINE_DB_CONNECTIONS", "4".to_owned()),
                ("REDLINE_TRUSTED_PROXIES", "127.0.0.1".to_owned()),
                ("REDLINE_LLM_PROVIDER", "openai".to_owned()),
                ("REDLINE_OPENAI_MODEL", "m".to_owned()),
                ("REDLINE_JOB_LEASE_SECS", lease_secs.to_string()),
                ("REDLINE_SHUTDOWN_TIMEOUT_SECS", "1".to_owned()),
                ("REDLINE_LOG_FORMAT", "json".to_owned()),
            ],
        ]
        .concat();
        let lb = Balancer::start(&haproxy, dir.path(), ports).await;
        let replicas = vec![None, None, None];
        let mut fleet = Fleet { replicas, lb, model, ports, generation: 0, env, dir, _db: db };
        for i in 0..3 {
            fleet.restart(i).await;
        }
        Some(fleet)
    }

    async fn spawn(&mut self, i: usize) -> Replica {
        self.generation += 1;
        let mut env = self.env.clone();
        env.push(("REDLINE_OPENAI_BASE_URL", format!("{}/r{i}/v1", self.model.base)));
        let dir = self.dir.path().join(format!("r{i}-{}", self.generation));
        Replica::start_on(&dir, self.ports[i], &env).await
    }

    /// SIGTERM to replica `i`; returns once it has exited 0.
    async fn stop(&mut self, i: usize) {
        let mut replica = self.replicas[i].take().expect("replica running");
        let pid = replica.child.id().to_string();
        assert!(Command::new("kill").args(["-TERM", &pid]).status().expect("kill runs").success());
        let deadline = Instant::now() + Duration::from_secs(30);
        let exit = loop {
            if let Some(status) = replica.child.try_wait().expect("try_wait") {
                break status;
            }
            assert!(Instant::now() < deadline, "replica {i} did not stop: {}", replica.log_text());
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert!(exit.success(), "replica {i} exited with {exit}: {}", replica.log_text());
    }

    /// Starts replica `i` (again) and returns once HAProxy sends it requests: its health
    /// checks (`rise 2`) have seen `/readyz` answer 200 twice.
    async fn restart(&mut self, i: usize) {
        let replica = self.spawn(i).await;
        let deadline = Instant::now() + Duration::from_secs(30);
        while replica
            .log_text()
            .lines()
            .filter(|l| l.contains("\"path\":\"/readyz\"") && l.contains("\"status\":200"))
            .count()
            < 2
        {
            assert!(Instant::now() < deadline, "HAProxy never checked replica {i}: {}", self.lb.log_text());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.replicas[i] = Some(replica);
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.lb.base)
    }

    fn all_logs(&self) -> String {
        let mut text = self.lb.log_text();
        for r in self.replicas.iter().flatten() {
            text.push_str(&r.log_text());
        }
        text
    }
}

/// The outcome of each request of the load: (what, status or 0 for a transport error, detail).
type Outcomes = Arc<Mutex<Vec<(String, u16, String)>>>;

async fn record(outcomes: &Outcomes, what: &str, sent: Result<reqwest::Response, reqwest::Error>) -> Value {
    match sent {
        Ok(resp) => {
            let status = resp.status().as_u16();
            let text = resp.text().await.unwrap_or_default();
            let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            outcomes.lock().unwrap().push((what.to_owned(), status, text));
            body
        }
        Err(e) => {
            outcomes.lock().unwrap().push((what.to_owned(), 0, e.to_string()));
            Value::Null
        }
    }
}

async fn signup(base: &str) -> String {
    let resp = client().post(format!("{base}/v1/agents/signup")).json(&json!({})).send().await.expect("signup");
    assert_eq!(resp.status(), 201);
    let v: Value = resp.json().await.expect("json");
    v["api_key"].as_str().expect("api_key").to_owned()
}

/// The runs of a job: its "Reading the document" events.
fn starts(job: &Value) -> Vec<Value> {
    job["metadata"]["intermediate_responses"]
        .as_array()
        .map(|events| events.iter().filter(|e| e["content"]["message"] == "Reading the document").cloned().collect())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_rolling_restart_behind_haproxy_fails_no_request_and_keeps_no_turn_waiting() {
    // A lease far longer than the test: a turn that waited for one would time out here.
    let Some(mut fleet) = Fleet::start("redline_lb_rolling", 600).await else { return };
    // Each model call takes 1.5 s: a turn outlasts the 1 s drain and is handed back.
    fleet.model.delay_ms.store(1500, Ordering::SeqCst);
    let base = fleet.lb.base.clone();
    let (reader, writer, chatter) = (signup(&base).await, signup(&base).await, signup(&base).await);
    let put = client()
        .put(fleet.url("/v1/documents/shared"))
        .bearer_auth(&reader)
        .json(&json!({"html": "<p>read by all</p>"}))
        .send()
        .await
        .expect("put");
    assert_eq!(put.status(), 200);

    // The client's address reaches the replica through X-Forwarded-For (REDLINE_TRUSTED_PROXIES
    // names HAProxy's 127.0.0.1); a client's own header is not believed.
    let from_elsewhere =
        reqwest::Client::builder().local_address(std::net::IpAddr::from([127, 0, 0, 2])).build().expect("client");
    let request_id = uuid::Uuid::new_v4().simple().to_string();
    let resp = from_elsewhere
        .get(fleet.url("/v1/sessions"))
        .bearer_auth(&reader)
        .header("x-request-id", &request_id)
        .header("x-forwarded-for", "203.0.113.7")
        .send()
        .await
        .expect("request from 127.0.0.2");
    assert_eq!(resp.status(), 200);
    let logs = fleet.all_logs();
    let line = logs.lines().find(|l| l.contains(&request_id) && l.contains("request finished")).expect("logged");
    assert!(line.contains("\"client\":\"127.0.0.2\""), "{line}");

    // A file upload over the service's cap stops at HAProxy, on its Content-Length alone.
    let answer = {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut conn = tokio::net::TcpStream::connect(base.trim_start_matches("http://")).await.expect("connect");
        let head = "POST /v1/documents/upload HTTP/1.1\r\nHost: redline.test\r\n\
                    Content-Type: multipart/form-data; boundary=x\r\nContent-Length: 60000000\r\n\r\n";
        conn.write_all(head.as_bytes()).await.expect("write");
        let mut answer = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(10), async {
            let mut chunk = [0u8; 4096];
            while !answer.ends_with(b"}") {
                match conn.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(k) => answer.extend_from_slice(&chunk[..k]),
                }
            }
        })
        .await;
        assert!(read.is_ok(), "no whole answer to an oversized upload: {:?}", String::from_utf8_lossy(&answer));
        String::from_utf8_lossy(&answer).into_owned()
    };
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    let body: Value = serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap_or_default()).expect("JSON");
    assert_eq!(body["error_code"], "request_too_large", "{answer}");

    // The load: reads, saves and uploads, and chat turns, until the restart is over.
    let stop = Arc::new(AtomicBool::new(false));
    let outcomes: Outcomes = Arc::default();
    let jobs: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut load = Vec::new();
    for _ in 0..2 {
        let (stop, outcomes, base, key) = (stop.clone(), outcomes.clone(), base.clone(), reader.clone());
        load.push(tokio::spawn(async move {
            let c = client();
            while !stop.load(Ordering::SeqCst) {
                let sent = c.get(format!("{base}/v1/sessions")).bearer_auth(&key).send().await;
                record(&outcomes, "GET /v1/sessions", sent).await;
                let sent = c.get(format!("{base}/v1/documents/shared")).bearer_auth(&key).send().await;
                record(&outcomes, "GET /v1/documents/shared", sent).await;
            }
        }));
    }
    {
        let (stop, outcomes, base, key) = (stop.clone(), outcomes.clone(), base.clone(), writer.clone());
        load.push(tokio::spawn(async move {
            let c = client();
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) {
                let html = format!("<p>saved {n}</p>");
                let sent = c
                    .put(format!("{base}/v1/documents/w{}", n % 4))
                    .bearer_auth(&key)
                    .json(&json!({"html": html}))
                    .send()
                    .await;
                record(&outcomes, "PUT /v1/documents", sent).await;
                let text = format!("Uploaded {n}.\n\nA second paragraph.");
                let (content_type, body) =
                    multipart(&[("session_id", &format!("u{}", n % 4))], Some(("note.txt", text.as_bytes())));
                let sent = c
                    .post(format!("{base}/v1/documents/upload"))
                    .bearer_auth(&key)
                    .header("content-type", content_type)
                    .body(body)
                    .send()
                    .await;
                record(&outcomes, "POST /v1/documents/upload", sent).await;
                n += 1;
            }
        }));
    }
    {
        let (stop, outcomes, base, key, jobs) =
            (stop.clone(), outcomes.clone(), base.clone(), chatter.clone(), jobs.clone());
        load.push(tokio::spawn(async move {
            let c = client();
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) {
                let session = format!("c{n}");
                let sent = c
                    .put(format!("{base}/v1/documents/{session}"))
                    .bearer_auth(&key)
                    .json(&json!({"html": "<p>first</p><p>second</p>"}))
                    .send()
                    .await;
                record(&outcomes, "PUT /v1/documents", sent).await;
                let sent = c
                    .post(format!("{base}/v1/chat/async"))
                    .bearer_auth(&key)
                    .json(&json!({"session_id": session, "message": "edit"}))
                    .send()
                    .await;
                let job = record(&outcomes, "POST /v1/chat/async", sent).await;
                if let Some(id) = job["job_id"].as_str() {
                    jobs.lock().unwrap().push(id.to_owned());
                }
                n += 1;
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        }));
    }

    // The rolling restart: each replica in turn drains and exits, starts again and is
    // taken back by HAProxy before the next one stops.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let restart = Instant::now();
    for i in 0..3 {
        fleet.stop(i).await;
        fleet.restart(i).await;
    }
    let restart = restart.elapsed();
    tokio::time::sleep(Duration::from_secs(1)).await;
    stop.store(true, Ordering::SeqCst);
    for task in load {
        task.await.expect("load task");
    }

    let outcomes = outcomes.lock().unwrap().clone();
    let mut tally: HashMap<(String, u16), usize> = HashMap::new();
    for (what, status, _) in &outcomes {
        *tally.entry((what.clone(), *status)).or_default() += 1;
    }
    println!("rolling restart of 3 replicas in {restart:?} under load: {tally:?}");
    let failed: Vec<_> = outcomes.iter().filter(|(_, status, _)| !(200..300).contains(status)).collect();
    // HAProxy's lines of requests that did not end cleanly, then the failures (last, where a
    // cut report keeps them).
    let log = fleet.lb.log_text();
    let unclean: Vec<&str> = log.lines().filter(|l| l.contains(" HTTP/1.1\"") && !l.contains(" 200 ")).collect();
    assert!(failed.is_empty(), "{}\nfailed requests during the rolling restart: {failed:?}", unclean.join("\n"));

    // Every turn completes, each run as a hand-back (attempt 1), none after a lease.
    let jobs = jobs.lock().unwrap().clone();
    assert!(jobs.len() >= 10, "only {} turns", jobs.len());
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut handed_back = 0;
    for id in &jobs {
        let job = loop {
            let resp =
                client().get(fleet.url(&format!("/v1/jobs/{id}"))).bearer_auth(&chatter).send().await.expect("job");
            assert_eq!(resp.status(), 200);
            let job: Value = resp.json().await.expect("json");
            if matches!(job["status"].as_str(), Some("completed" | "failed" | "cancelled")) {
                break job;
            }
            assert!(Instant::now() < deadline, "turn {id} still {} (waiting for a lease?): {job}", job["status"]);
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert_eq!(job["status"], "completed", "{job}");
        let runs = starts(&job);
        assert!(runs.iter().all(|s| s["content"]["attempt"] == 1), "a run counted as a crash: {runs:?}");
        handed_back += runs.len() - 1;
    }
    println!("{} turns, {handed_back} runs handed back to another replica", jobs.len());
    assert!(handed_back > 0, "no turn spanned a restart");
    let usage: Value = client()
        .get(fleet.url("/v1/usage"))
        .bearer_auth(&chatter)
        .send()
        .await
        .expect("usage")
        .json()
        .await
        .expect("json");
    assert_eq!(usage["monthly_used"], jobs.len(), "each turn charged once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_replica_killed_mid_turn_behind_haproxy_has_its_turn_finished_by_another() {
    // A short lease: a killed replica's turn is taken up once it runs out.
    let lease = 3;
    let Some(mut fleet) = Fleet::start("redline_lb_kill", lease).await else { return };
    let key = signup(&fleet.lb.base).await;
    let put = client()
        .put(fleet.url("/v1/documents/k"))
        .bearer_auth(&key)
        .json(&json!({"html": "<p>before</p><p>second</p>"}))
        .send()
        .await
        .expect("put");
    assert_eq!(put.status(), 200);

    // The turn's event stream through HAProxy shows its first events while the model still
    // thinks: nothing is buffered.
    fleet.model.hold.store(true, Ordering::SeqCst);
    let resp = client()
        .post(fleet.url("/v1/chat/async"))
        .bearer_auth(&key)
        .header("accept", "text/event-stream")
        .json(&json!({"session_id": "k", "message": "edit"}))
        .send()
        .await
        .expect("stream");
    assert_eq!(resp.status(), 200);
    let job_id = resp.headers()["x-job-id"].to_str().expect("X-Job-Id").to_owned();
    let mut stream = resp;
    let mut seen = String::new();
    let got_first = tokio::time::timeout(Duration::from_secs(20), async {
        while !seen.contains("event: intermediate") {
            match stream.chunk().await {
                Ok(Some(bytes)) => seen.push_str(&String::from_utf8_lossy(&bytes)),
                _ => break,
            }
        }
    })
    .await;
    assert!(got_first.is_ok() && seen.contains("event: intermediate"), "no event before the turn ended: {seen:?}");

    let deadline = Instant::now() + Duration::from_secs(20);
    let runner = loop {
        if let Some((replica, _)) = fleet.model.calls().first() {
            break replica.trim_start_matches('r').parse::<usize>().expect("replica tag");
        }
        assert!(Instant::now() < deadline, "the model was never called: {}", fleet.all_logs());
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    drop(stream);
    let mut killed = fleet.replicas[runner].take().expect("running");
    killed.kill();
    let kill = Instant::now();
    fleet.model.hold.store(false, Ordering::SeqCst);

    // Taken up by another replica once the lease runs out.
    let deadline = Instant::now() + Duration::from_secs(30);
    let takeover = loop {
        if let Some((replica, at)) =
            fleet.model.calls().into_iter().find(|(r, at)| *r != format!("r{runner}") && *at > kill)
        {
            break (replica, at);
        }
        assert!(Instant::now() < deadline, "no replica took the turn up: {}", fleet.all_logs());
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let taken_after = takeover.1 - kill;
    let deadline = Instant::now() + Duration::from_secs(30);
    let job = loop {
        let resp = client().get(fleet.url(&format!("/v1/jobs/{job_id}"))).bearer_auth(&key).send().await.expect("job");
        assert_eq!(resp.status(), 200);
        let job: Value = resp.json().await.expect("json");
        if matches!(job["status"].as_str(), Some("completed" | "failed")) {
            break job;
        }
        assert!(Instant::now() < deadline, "the turn did not finish: {job}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let done_after = kill.elapsed();
    println!(
        "SIGKILL to the turn's model call on {} after {taken_after:?}, turn completed after {done_after:?} (lease {lease} s)",
        takeover.0
    );
    assert_eq!(job["status"], "completed", "{job}");
    let runs = starts(&job);
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(runs[1]["content"]["attempt"], 2, "a crash counts: {:?}", runs[1]);
    let doc: Value = client()
        .get(fleet.url("/v1/documents/k"))
        .bearer_auth(&key)
        .send()
        .await
        .expect("doc")
        .json()
        .await
        .expect("json");
    assert!(doc["html"].as_str().unwrap_or_default().contains("edited by the model"), "{doc}");
    let usage: Value =
        client().get(fleet.url("/v1/usage")).bearer_auth(&key).send().await.expect("usage").json().await.expect("json");
    assert_eq!(usage["monthly_used"], 1, "charged once");
    // The fleet keeps serving with two replicas.
    let resp = client().get(fleet.url("/v1/sessions")).bearer_auth(&key).send().await.expect("sessions");
    assert_eq!(resp.status(), 200);
    drop(killed);
}

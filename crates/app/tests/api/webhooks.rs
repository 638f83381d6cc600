//! Webhooks (docs/api.md, "Webhooks"): messages of job and usage events reach a receiver that
//! verifies them with the Standard Webhooks reference library (`scripts/webhook-receiver.py`,
//! PyPI `standardwebhooks`), not with our code; failures are retried under the same id; a
//! message queued before a `kill -9` arrives after the restart; two replicas on PostgreSQL
//! deliver each message once.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::chat::seed;
use crate::helpers::*;
use crate::replicas::{free_port, Replica};

/// The Python of the tests' `.venv` (scripts/setup-tests.sh), with `standardwebhooks`; `None`
/// (a skip) outside CI when it is missing.
fn python() -> Option<PathBuf> {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python");
    let ok = venv.is_file()
        && Command::new(&venv).args(["-c", "import standardwebhooks"]).status().is_ok_and(|s| s.success());
    if ok {
        return Some(venv);
    }
    assert!(std::env::var("CI").as_deref() != Ok("true"), "CI=true and .venv has no standardwebhooks");
    eprintln!("SKIPPED: .venv has no standardwebhooks (scripts/setup-tests.sh installs it)");
    None
}

/// `scripts/webhook-receiver.py` on a port of its own; stopped on drop.
struct Receiver {
    child: Option<Child>,
    python: PathBuf,
    port: u16,
    dir: tempfile::TempDir,
    fail_first: usize,
}

impl Receiver {
    fn new(python: PathBuf, fail_first: usize) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        Receiver { child: None, python, port: free_port(), dir, fail_first }
    }

    async fn started(python: PathBuf, fail_first: usize) -> Self {
        let mut r = Self::new(python, fail_first);
        r.start().await;
        r
    }

    async fn start(&mut self) {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/webhook-receiver.py");
        let child = Command::new(&self.python)
            .arg(script)
            .arg(self.port.to_string())
            .arg(self.log_path())
            .arg(self.secrets_path())
            .arg(self.fail_first.to_string())
            .stdin(Stdio::null())
            .spawn()
            .expect("the receiver starts");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "the receiver did not listen");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/hook", self.port)
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("received.jsonl")
    }

    fn secrets_path(&self) -> PathBuf {
        self.dir.path().join("secrets")
    }

    /// The secrets the receiver verifies with, in order.
    fn trust(&self, secrets: &[&str]) {
        std::fs::write(self.secrets_path(), secrets.join("\n")).expect("write the secrets");
    }

    fn received(&self) -> Vec<Value> {
        std::fs::read_to_string(self.log_path())
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect()
    }

    /// Waits until a received line passes `pick`, and answers it.
    async fn wait_for(&self, what: &str, pick: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(line) = self.received().into_iter().find(|l| pick(l)) {
                return line;
            }
            assert!(Instant::now() < deadline, "no {what} arrived; received: {:?}", self.received());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Receiver {
    /// Registers this receiver for `job.completed` on a replica, and trusts its secret.
    async fn register_on(&self, replica: &Replica, key: &str) -> Value {
        let body = json!({"url": self.url(), "events": ["job.completed"]});
        let (s, created) = replica.call(reqwest::Method::POST, "/v1/webhooks", key, Some(body)).await;
        assert_eq!(s, 201, "{created}");
        self.trust(&[created["secret"].as_str().unwrap()]);
        created
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

const ALLOW: (&str, &str) = ("REDLINE_WEBHOOK_ALLOW_PRIVATE", "on");
const FAST_RETRY: (&str, &str) = ("REDLINE_WEBHOOK_FIRST_RETRY_MS", "200");

async fn endpoint(app: &TestApp, key: &str, url: &str, events: &[&str]) -> Value {
    let r = app.send(app.post("/v1/webhooks").bearer_auth(key).json(&json!({"url": url, "events": events}))).await;
    r.expect_status(201);
    assert!(r.json["secret"].as_str().is_some_and(|s| s.starts_with("whsec_")), "{r:?}");
    r.json.clone()
}

/// A chat turn answered at once.
async fn turn(app: &TestApp, key: &str, sid: &str, message: &str) {
    let r = app.send(app.post("/v1/chat").bearer_auth(key).json(&json!({"session_id": sid, "message": message}))).await;
    r.expect_status(200);
}

#[tokio::test]
async fn job_events_arrive_signed_so_the_reference_library_verifies_them() {
    let Some(python) = python() else { return };
    let receiver = Receiver::started(python, 0).await;
    let app = spawn_app_with(&[ALLOW]).await;
    let key = app.agent_key().await;
    let created = endpoint(&app, &key, &receiver.url(), &["job.completed", "job.awaiting_approval"]).await;
    let old_secret = created["secret"].as_str().unwrap().to_owned();
    receiver.trust(&[&old_secret]);
    seed(&app, &key, "w", &["alpha"]).await;

    let job =
        crate::chat::start(&app, &key, json!({"session_id": "w", "message": "replace \"alpha\" with \"beta\""})).await;
    let job_id = job["job_id"].as_str().unwrap().to_owned();
    let line = receiver.wait_for("job.completed", |l| l["data"]["job_id"] == job_id.as_str()).await;
    assert_eq!(line["verified"], true, "{line}");
    assert_eq!(line["type"], "job.completed");
    assert_eq!(line["data"]["session_id"], "w");
    assert_eq!(line["data"]["status"], "completed");

    // The delivery log names it, with its attempt.
    let id = created["id"].as_str().unwrap();
    let log = app.send(app.get(&format!("/v1/webhooks/{id}/deliveries")).bearer_auth(&key)).await;
    log.expect_status(200);
    let delivery = &log.json["deliveries"][0];
    assert_eq!(delivery["id"], line["id"], "{log:?}");
    assert_eq!(delivery["status"], "delivered");
    assert_eq!(delivery["attempt_log"][0]["status_code"], 200);
    assert_eq!(delivery["payload"]["data"]["job_id"], job_id.as_str());

    // After a rotation both secrets sign for a day: a receiver still on the old one verifies.
    let rotated = app.send(app.post(&format!("/v1/webhooks/{id}/rotate-secret")).bearer_auth(&key)).await;
    rotated.expect_status(200);
    let new_secret = rotated.json["secret"].as_str().unwrap().to_owned();
    assert_ne!(new_secret, old_secret);
    assert!(rotated.json["previous_secret_valid_until"].is_string(), "{rotated:?}");
    for (n, trusted) in [&old_secret, &new_secret].into_iter().enumerate() {
        receiver.trust(&[trusted]);
        let sid = format!("r{n}");
        seed(&app, &key, &sid, &["alpha"]).await;
        turn(&app, &key, &sid, "replace \"alpha\" with \"beta\"").await;
        let line = receiver.wait_for("a rotated message", |l| l["data"]["session_id"] == sid.as_str()).await;
        assert_eq!(line["verified"], true, "secret {n}: {line}");
    }

    // An endpoint that asked only for other events gets none of these.
    assert!(receiver.received().iter().all(|l| l["type"] == "job.completed"), "{:?}", receiver.received());
}

#[tokio::test]
async fn a_failing_receiver_gets_the_message_again_under_the_same_id() {
    let Some(python) = python() else { return };
    let receiver = Receiver::started(python, 2).await;
    let app = spawn_app_with(&[ALLOW, FAST_RETRY]).await;
    let key = app.agent_key().await;
    let created = endpoint(&app, &key, &receiver.url(), &["job.completed"]).await;
    receiver.trust(&[created["secret"].as_str().unwrap()]);
    seed(&app, &key, "f", &["alpha"]).await;
    turn(&app, &key, "f", "replace \"alpha\" with \"beta\"").await;
    receiver.wait_for("the third attempt", |l| l["status"] == 200).await;
    let lines = receiver.received();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines.iter().all(|l| l["id"] == lines[0]["id"] && l["verified"] == true), "{lines:?}");
    let statuses: Vec<&Value> = lines.iter().map(|l| &l["status"]).collect();
    assert_eq!(statuses, [&json!(500), &json!(500), &json!(200)]);

    let id = created["id"].as_str().unwrap();
    let log = app.send(app.get(&format!("/v1/webhooks/{id}/deliveries")).bearer_auth(&key)).await;
    let delivery = &log.json["deliveries"][0];
    assert_eq!(delivery["status"], "delivered", "{log:?}");
    assert_eq!((log.json["next_cursor"].clone(), log.header("link")), (Value::Null, None), "one page: {log:?}");
    assert_eq!(delivery["attempts"], 3);
    let codes: Vec<&Value> = delivery["attempt_log"].as_array().unwrap().iter().map(|a| &a["status_code"]).collect();
    assert_eq!(codes, [&json!(500), &json!(500), &json!(200)], "{log:?}");
    let failing = app.send(app.get(&format!("/v1/webhooks/{id}")).bearer_auth(&key)).await;
    assert_eq!(failing.json["failing_since"], Value::Null, "a success clears the failures: {failing:?}");

    // "Send again": once more, under the same id.
    let msg = delivery["id"].as_str().unwrap();
    let again = app.send(app.post(&format!("/v1/webhooks/{id}/deliveries/{msg}/resend")).bearer_auth(&key)).await;
    again.expect_status(202);
    let deadline = Instant::now() + Duration::from_secs(30);
    while receiver.received().len() < 4 {
        assert!(Instant::now() < deadline, "not sent again: {:?}", receiver.received());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(receiver.received()[3]["id"], msg);
    let other = app.agent_key().await;
    let theirs = app.send(app.post(&format!("/v1/webhooks/{id}/deliveries/{msg}/resend")).bearer_auth(&other)).await;
    theirs.expect_status(404);
}

#[tokio::test]
async fn endpoints_are_checked_owned_and_kept_from_private_addresses() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    for url in ["http://127.0.0.1:9/hook", "http://localhost/hook", "http://169.254.169.254/latest", "http://[::1]/"] {
        let r = app
            .send(app.post("/v1/webhooks").bearer_auth(&key).json(&json!({"url": url, "events": ["job.completed"]})))
            .await;
        let item = r.expect_422_at(&[json!("body"), json!("url")]);
        assert!(item["msg"].as_str().unwrap().contains("private"), "{item}");
    }
    let r = app
        .send(app.post("/v1/webhooks").bearer_auth(&key).json(&json!({"url": "ftp://x", "events": ["job.completed"]})))
        .await;
    r.expect_422_at(&[json!("body"), json!("url")]);
    let r = app
        .send(
            app.post("/v1/webhooks")
                .bearer_auth(&key)
                .json(&json!({"url": "https://hooks.example.com/in", "events": ["job.started"]})),
        )
        .await;
    r.expect_422_at(&[json!("body"), json!("events")]);
    let r = app
        .send(
            app.post("/v1/webhooks")
                .bearer_auth(&key)
                .json(&json!({"url": "https://hooks.example.com/in", "events": []})),
        )
        .await;
    r.expect_422_at(&[json!("body"), json!("events")]);

    let created = endpoint(&app, &key, "https://hooks.example.com/in", &["job.failed", "usage.threshold"]).await;
    let id = created["id"].as_str().unwrap();
    let listed = app.send(app.get("/v1/webhooks").bearer_auth(&key)).await;
    listed.expect_status(200);
    assert_eq!(listed.json["endpoints"][0]["id"], id);
    assert!(listed.json["endpoints"][0].get("secret").is_none(), "a listing never shows the secret: {listed:?}");

    // Disabled by its owner, then enabled again.
    let off = app
        .send(
            app.client.patch(app.url(&format!("/v1/webhooks/{id}"))).bearer_auth(&key).json(&json!({"enabled": false})),
        )
        .await;
    off.expect_status(200);
    assert_eq!(off.json["enabled"], false);
    assert_eq!(off.json["disabled_reason"], "disabled by its owner");
    let on = app
        .send(
            app.client
                .patch(app.url(&format!("/v1/webhooks/{id}")))
                .bearer_auth(&key)
                .json(&json!({"enabled": true, "events": ["job.completed"]})),
        )
        .await;
    on.expect_status(200);
    assert_eq!((on.json["enabled"].clone(), on.json["events"].clone()), (json!(true), json!(["job.completed"])));

    // Another owner sees none of it.
    let other = app.agent_key().await;
    for (method, path) in [
        (reqwest::Method::GET, format!("/v1/webhooks/{id}")),
        (reqwest::Method::DELETE, format!("/v1/webhooks/{id}")),
        (reqwest::Method::POST, format!("/v1/webhooks/{id}/rotate-secret")),
        (reqwest::Method::GET, format!("/v1/webhooks/{id}/deliveries")),
    ] {
        let r = app.send(app.client.request(method.clone(), app.url(&path)).bearer_auth(&other)).await;
        r.expect_status(404);
        assert_eq!(r.detail(), "Webhook endpoint not found", "{method} {path}");
    }
    let theirs = app.send(app.get("/v1/webhooks").bearer_auth(&other)).await;
    assert_eq!(theirs.json["endpoints"], json!([]));

    app.send(app.delete(&format!("/v1/webhooks/{id}")).bearer_auth(&key)).await.expect_status(204);
    app.send(app.get(&format!("/v1/webhooks/{id}")).bearer_auth(&key)).await.expect_status(404);
}

/// An organization's webhooks are its owners' and admins': a member acting for it in the web
/// app reads and edits its documents but cannot see or change where its events go.
#[tokio::test]
async fn only_an_organizations_owners_and_admins_manage_its_webhooks() {
    let app = spawn_app().await;
    let (_, _, owner) = app.web_user().await;
    let org = crate::orgs::create_org(&app, &owner, "Hooked").await;
    let (member_email, _, member) = app.web_user().await;
    app.join_org(&owner, &org, &member_email, "member", &member).await;
    let (admin_email, _, admin) = app.web_user().await;
    app.join_org(&owner, &org, &admin_email, "admin", &admin).await;
    let body = json!({"url": "https://hooks.example.com/redline", "events": ["job.completed"]});

    let refused =
        app.send(app.post("/v1/webhooks").bearer_auth(&member).header("Redline-Organization", &org).json(&body)).await;
    refused.expect_status(403);
    assert_eq!(refused.detail(), "Only the organization's owners and admins may call POST /v1/webhooks.");
    let listed = app.send(app.get("/v1/webhooks").bearer_auth(&member).header("Redline-Organization", &org)).await;
    listed.expect_status(403);
    // The member still works on the organization's documents.
    let docs = app.send(app.get("/v1/sessions").bearer_auth(&member).header("Redline-Organization", &org)).await;
    docs.expect_status(200);

    let made =
        app.send(app.post("/v1/webhooks").bearer_auth(&admin).header("Redline-Organization", &org).json(&body)).await;
    made.expect_status(201);
    let seen = app.send(app.get("/v1/webhooks").bearer_auth(&owner).header("Redline-Organization", &org)).await;
    assert_eq!(seen.expect_status(200).json["endpoints"][0]["id"], made.json["id"]);
    // The member's own account is theirs to manage.
    let own = app.send(app.post("/v1/webhooks").bearer_auth(&member).json(&body)).await;
    own.expect_status(201);
    let owners = app.send(app.get("/v1/webhooks").bearer_auth(&owner)).await;
    assert_eq!(owners.json["endpoints"], json!([]), "the owner's own endpoints are not the organization's");
}

#[tokio::test]
async fn a_month_crossing_80_and_100_percent_sends_usage_thresholds() {
    let Some(python) = python() else { return };
    let receiver = Receiver::started(python, 0).await;
    let app = spawn_app_with(&[ALLOW]).await;
    let agent = app.agent_signup().await;
    let key = agent["api_key"].as_str().unwrap().to_owned();
    app.admin(&["set-plan", "--user-id", agent["user_id"].as_str().unwrap(), "--plan", "pro", "--monthly-limit", "5"]);
    let created = endpoint(&app, &key, &receiver.url(), &["usage.threshold"]).await;
    receiver.trust(&[created["secret"].as_str().unwrap()]);
    seed(&app, &key, "u", &["w0"]).await;
    for n in 0..5 {
        turn(&app, &key, "u", &format!("replace \"w{n}\" with \"w{}\"", n + 1)).await;
    }
    let at_80 = receiver.wait_for("80 %", |l| l["data"]["threshold_percent"] == 80).await;
    let at_100 = receiver.wait_for("100 %", |l| l["data"]["threshold_percent"] == 100).await;
    assert_eq!((at_80["data"]["monthly_used"].clone(), at_100["data"]["monthly_used"].clone()), (json!(4), json!(5)));
    assert!(at_80["verified"] == true && at_100["verified"] == true);
    assert_eq!(receiver.received().len(), 2, "{:?}", receiver.received());
}

/// The `redline` binary on SQLite in `dir`, sending webhooks to loopback.
async fn replica(dir: &Path, port: u16) -> Replica {
    Replica::start_on(dir, port, &[(ALLOW.0, ALLOW.1.to_owned()), (FAST_RETRY.0, FAST_RETRY.1.to_owned())]).await
}

#[tokio::test]
async fn a_message_queued_before_a_kill_dash_nine_arrives_after_the_restart() {
    let Some(python) = python() else { return };
    // The receiver is down at first: the message waits in the outbox.
    let mut receiver = Receiver::new(python, 0);
    let dir = tempfile::tempdir().expect("temp dir");
    let port = free_port();
    let mut first = replica(dir.path(), port).await;
    let key = first.key().await;
    let created = receiver.register_on(&first, &key).await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(
        first.call(reqwest::Method::PUT, "/v1/documents/k", &key, Some(json!({"html": "<p>alpha</p>"}))).await.0,
        200
    );
    let (s, answer) = first
        .call(
            reqwest::Method::POST,
            "/v1/chat",
            &key,
            Some(json!({"session_id": "k", "message": "replace \"alpha\" with \"beta\""})),
        )
        .await;
    assert_eq!(s, 200, "{answer}");
    // Tried once, refused (no receiver), owed again.
    let deadline = Instant::now() + Duration::from_secs(30);
    let msg = loop {
        let (_, log) = first.call(reqwest::Method::GET, &format!("/v1/webhooks/{id}/deliveries"), &key, None).await;
        let d = &log["deliveries"][0];
        if d["attempts"].as_i64().unwrap_or(0) >= 1 {
            assert_eq!(d["status"], "pending", "{log}");
            break d["id"].as_str().unwrap().to_owned();
        }
        assert!(Instant::now() < deadline, "never tried: {log}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    first.kill();

    receiver.start().await;
    let second = replica(dir.path(), port).await;
    let line = receiver.wait_for("the message after the restart", |l| l["id"] == msg.as_str()).await;
    assert_eq!(line["verified"], true, "{line}");
    assert_eq!(line["data"]["session_id"], "k");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let times = receiver.received().iter().filter(|l| l["id"] == msg.as_str()).count();
    assert_eq!(times, 1, "{}", second.log_text());
}

#[tokio::test]
async fn two_replicas_on_postgres_deliver_each_message_once() {
    let Some(python) = python() else { return };
    let Some(db) = PgDatabase::create("redline_webhooks").await else { return };
    let receiver = Receiver::started(python, 0).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let env = [fleet_env(&db, dir.path()), vec![(ALLOW.0, ALLOW.1.to_owned())]].concat();
    let a = Replica::start_on(&dir.path().join("a"), free_port(), &env).await;
    let b = Replica::start_on(&dir.path().join("b"), free_port(), &env).await;
    let key = a.key().await;
    receiver.register_on(&a, &key).await;
    let mut jobs = Vec::new();
    for i in 0..12 {
        let target = if i % 2 == 0 { &a } else { &b };
        let sid = format!("p{i}");
        let html = json!({"html": "<p>alpha</p>"});
        assert_eq!(target.call(reqwest::Method::PUT, &format!("/v1/documents/{sid}"), &key, Some(html)).await.0, 200);
        let body = json!({"session_id": sid, "message": "replace \"alpha\" with \"beta\""});
        let (s, job) = target.call(reqwest::Method::POST, "/v1/chat/async", &key, Some(body)).await;
        assert_eq!(s, 202, "{job}");
        jobs.push(job["job_id"].as_str().unwrap().to_owned());
    }
    for job in &jobs {
        receiver.wait_for("every job's message", |l| l["data"]["job_id"] == job.as_str()).await;
    }
    // Both senders had their chance to send any of them twice.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let lines = receiver.received();
    assert_eq!(lines.len(), jobs.len(), "{lines:?}");
    let mut ids: Vec<&str> = lines.iter().map(|l| l["id"].as_str().unwrap()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), jobs.len(), "{lines:?}");
    assert!(lines.iter().all(|l| l["verified"] == true), "{lines:?}");
}

#[tokio::test]
async fn processed_and_failed_attachments_are_told_with_their_ids() {
    let Some(python) = python() else { return };
    let receiver = Receiver::started(python, 0).await;
    let app = spawn_app_with(&[ALLOW]).await;
    let key = app.agent_key().await;
    let created = endpoint(&app, &key, &receiver.url(), &["attachment.processed", "attachment.failed"]).await;
    receiver.trust(&[created["secret"].as_str().unwrap()]);
    seed(&app, &key, "a", &["alpha"]).await;
    let up = crate::attachments::attach(&app, &key, "a", "notes.txt", b"The harvest was early this year.").await;
    up.expect_status(202);
    let attachment_id = up.json["attachment_id"].as_str().unwrap().to_owned();
    let line = receiver.wait_for("attachment.processed", |l| l["type"] == "attachment.processed").await;
    assert_eq!(line["verified"], true, "{line}");
    assert_eq!(line["data"]["attachment_id"], attachment_id.as_str(), "{line}");
    assert_eq!(line["data"]["session_id"], "a");

    // A file that cannot be read: `attachment.failed`, with the job's error.
    let bad = crate::attachments::attach(&app, &key, "a", "report.pdf", b"this is not a PDF at all").await;
    bad.expect_status(202);
    let bad_id = bad.json["attachment_id"].as_str().unwrap().to_owned();
    let failed = receiver.wait_for("attachment.failed", |l| l["type"] == "attachment.failed").await;
    assert_eq!(failed["verified"], true, "{failed}");
    assert_eq!(failed["data"]["attachment_id"], bad_id.as_str(), "{failed}");
    assert_eq!(failed["data"]["status"], "failed", "{failed}");
    let error = failed["data"]["error"].as_str().unwrap_or_else(|| panic!("no error in {failed}"));
    assert!(error.starts_with("Could not extract text from report.pdf:"), "{error}");
}

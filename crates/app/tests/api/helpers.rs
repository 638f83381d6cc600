//! The harness: every test starts its own app (port 0, fresh temp data folder) through the
//! library, talks to it over real HTTP with reqwest, and can run the real `redline` binary's
//! operator CLI on the same database.

use std::collections::HashMap;
use std::process::{Command, Output};
use std::time::Duration;

use redline_app::{Application, Config};
use reqwest::header::HeaderMap;
use reqwest::{RequestBuilder, StatusCode};
use serde_json::{json, Value};

/// The detail of a request without `Authorization` (docs/api.md, "Authentication").
pub const MISSING_HEADER: &str = "Missing Authorization header. Expected 'Authorization: Bearer <API_KEY>'";
/// What the detail of a header that is not `Bearer <key>` must mention.
pub const BEARER_FORMAT: &str = "Bearer <API_KEY>";
/// The detail of an unknown or revoked key.
pub const INVALID_KEY: &str = "Invalid API key";

/// A running app of one test.
pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    /// Kept alive (removed on drop) for the app's database.
    _dir: tempfile::TempDir,
    vars: HashMap<String, String>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.server.abort();
    }
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(120))
        // A client must drop an idle connection before the server does, or it can send on one
        // at the moment the server closes it and get `IncompleteMessage` (a CI run failed so
        // while the server's keep-alive was actix's 5 s; it is REDLINE_KEEP_ALIVE_SECS now).
        .pool_idle_timeout(Duration::from_secs(2))
        .build()
        .expect("reqwest client")
}

/// An app with the test defaults (no signup cooldown).
pub async fn spawn_app() -> TestApp {
    spawn_app_with(&[]).await
}

/// An app with the test defaults overridden by `extra`.
pub async fn spawn_app_with(extra: &[(&str, &str)]) -> TestApp {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut vars: HashMap<String, String> = [
        ("REDLINE_BIND", "127.0.0.1:0"),
        ("REDLINE_SIGNUP_COOLDOWN_SECS", "0"),
        ("REDLINE_HTTP_WORKERS", "2"),
        ("REDLINE_DB_CONNECTIONS", "4"),
        ("REDLINE_SHUTDOWN_TIMEOUT_SECS", "1"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    vars.insert("REDLINE_DATA_DIR".to_owned(), dir.path().display().to_string());
    for (k, v) in extra {
        vars.insert((*k).to_owned(), (*v).to_owned());
    }
    let config = Config::from_vars(&vars).expect("test configuration");
    let app = Application::build(config).await.expect("the app builds");
    let port = app.port();
    let server = tokio::spawn(async move {
        let _ = app.run_until(std::future::pending()).await;
    });
    TestApp { base: format!("http://127.0.0.1:{port}"), client: client(), _dir: dir, vars, server }
}

/// A response, read whole.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub text: String,
    pub json: Value,
}

impl Reply {
    pub async fn of(resp: reqwest::Response) -> Self {
        let status = resp.status();
        let headers = resp.headers().clone();
        let text = resp.text().await.expect("response body");
        let json = serde_json::from_str(&text).unwrap_or(Value::Null);
        Self { status, headers, text, json }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|v| v.to_str().expect("ASCII header value"))
    }

    /// `detail` as a string; panics (showing the reply) when it is not one.
    pub fn detail(&self) -> &str {
        self.json["detail"].as_str().unwrap_or_else(|| panic!("expected a string detail in {self:?}"))
    }

    pub fn expect_status(&self, status: u16) -> &Self {
        assert_eq!(self.status.as_u16(), status, "unexpected status; reply: {self:?}");
        self
    }

    /// A JSON error body.
    pub fn expect_json(&self) -> &Self {
        let ct = self.header("content-type").unwrap_or_default();
        assert!(ct.starts_with("application/json"), "expected JSON, got content-type {ct:?}; reply: {self:?}");
        assert!(!self.json.is_null(), "body is not JSON: {self:?}");
        self
    }

    /// A 401 with `WWW-Authenticate: Bearer` and a string detail.
    pub fn expect_401(&self) -> &str {
        self.expect_status(401).expect_json();
        assert_eq!(self.header("www-authenticate"), Some("Bearer"), "401 without WWW-Authenticate: {self:?}");
        self.detail()
    }

    /// A 422 whose `detail` array has an item at `loc`; returns that item.
    pub fn expect_422_at(&self, loc: &[Value]) -> &Value {
        self.expect_status(422).expect_json();
        let items = self.json["detail"].as_array().unwrap_or_else(|| panic!("422 detail is not an array: {self:?}"));
        for item in items {
            assert!(item["type"].is_string() && item["msg"].is_string() && item["loc"].is_array(), "item {item}");
        }
        items
            .iter()
            .find(|i| i["loc"].as_array().map(Vec::as_slice) == Some(loc))
            .unwrap_or_else(|| panic!("no validation item at {loc:?}: {self:?}"))
    }
}

impl TestApp {
    /// The app's data folder (`REDLINE_DATA_DIR`: blobs, outbox, the database).
    pub fn data_dir(&self) -> std::path::PathBuf {
        std::path::PathBuf::from(&self.vars["REDLINE_DATA_DIR"])
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn get(&self, path: &str) -> RequestBuilder {
        self.client.get(self.url(path))
    }

    pub fn post(&self, path: &str) -> RequestBuilder {
        self.client.post(self.url(path))
    }

    pub fn delete(&self, path: &str) -> RequestBuilder {
        self.client.delete(self.url(path))
    }

    pub fn put(&self, path: &str) -> RequestBuilder {
        self.client.put(self.url(path))
    }

    pub async fn send(&self, req: RequestBuilder) -> Reply {
        Reply::of(req.send().await.expect("request sent")).await
    }

    /// `GET /v1/sessions` with `Authorization: Bearer <key>`.
    pub async fn sessions_with_key(&self, key: &str) -> Reply {
        self.send(self.get("/v1/sessions").bearer_auth(key)).await
    }

    /// Asserts that `key` works: `GET /v1/sessions` answers 200 with a JSON list.
    pub async fn assert_key_works(&self, key: &str) {
        let r = self.sessions_with_key(key).await;
        r.expect_status(200).expect_json();
        assert!(r.json.is_array(), "GET /v1/sessions must answer a bare list: {r:?}");
    }

    /// Asserts that `key` is refused as unknown/revoked.
    pub async fn assert_key_refused(&self, key: &str) {
        let r = self.sessions_with_key(key).await;
        assert_eq!(r.expect_401(), INVALID_KEY);
    }

    /// A new agent account; returns the signup body.
    pub async fn agent_signup(&self) -> Value {
        let r = self.send(self.post("/v1/agents/signup").json(&json!({"name": "test agent"}))).await;
        r.expect_status(201);
        r.json
    }

    /// A new agent's key.
    pub async fn agent_key(&self) -> String {
        self.agent_signup().await["api_key"].as_str().expect("api_key").to_owned()
    }

    pub async fn web_signup(&self, email: &str, password: &str) -> Reply {
        self.send(self.post("/v1/auth/signup").json(&json!({"email": email, "password": password}))).await
    }

    pub async fn login(&self, email: &str, password: &str) -> Reply {
        self.send(self.post("/v1/auth/login").json(&json!({"email": email, "password": password}))).await
    }

    /// Signs in and returns the session token.
    pub async fn login_token(&self, email: &str, password: &str) -> String {
        let r = self.login(email, password).await;
        r.expect_status(200);
        r.json["token"].as_str().unwrap_or_else(|| panic!("no token in {r:?}")).to_owned()
    }

    /// A new web user, signed in: (email, password, session token).
    pub async fn web_user(&self) -> (String, String, String) {
        let email = unique_email();
        let password = format!("pw-{}", uuid::Uuid::new_v4().simple());
        self.web_signup(&email, &password).await.expect_status(201);
        let token = self.login_token(&email, &password).await;
        (email, password, token)
    }

    /// A web user's API key and the user's address, verified, where its e-mailed exports may
    /// go.
    pub async fn mailing_key(&self) -> (String, String) {
        let (email, _, token) = self.web_user().await;
        self.verify_email(&email).await;
        let r = self.create_key(&token, "mailing").await;
        let key = r.json["api_key"].as_str().unwrap_or_else(|| panic!("no api_key in {r:?}")).to_owned();
        (key, email)
    }

    /// Proves `email` with the link mailed to it at sign-up.
    pub async fn verify_email(&self, email: &str) {
        let token = self.mailed_tokens(email, "/verify-email#token=", 1).await.remove(0);
        let r = self.send(self.post("/v1/auth/verify-email").json(&json!({"token": token}))).await;
        r.expect_status(200);
    }

    /// Creates a key through the web app; returns the 201 body.
    pub async fn create_key(&self, token: &str, name: &str) -> Reply {
        self.send(self.post("/v1/users/me/api-keys").bearer_auth(token).json(&json!({"name": name}))).await
    }

    pub async fn list_keys(&self, token: &str) -> Reply {
        self.send(self.get("/v1/users/me/api-keys").bearer_auth(token)).await
    }

    pub async fn revoke_key(&self, token: &str, key_id: &str) -> Reply {
        self.send(self.delete(&format!("/v1/users/me/api-keys/{key_id}")).bearer_auth(token)).await
    }

    /// The tokens of the links mailed to `to` that hold `marker` (`/invitations#token=`,
    /// `/reset-password#token=`), oldest first, waiting up to 10 s for at least `count`.
    pub async fn mailed_tokens(&self, to: &str, marker: &str, count: usize) -> Vec<String> {
        let outbox = self
            .vars
            .get("REDLINE_OUTBOX_DIR")
            .map_or_else(|| self.data_dir().join("outbox"), std::path::PathBuf::from);
        for _ in 0..200 {
            let mut mails: Vec<(std::time::SystemTime, String)> = crate::files::files_under(&outbox)
                .into_iter()
                .filter(|p| p.extension().is_some_and(|e| e == "eml"))
                .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, std::fs::read_to_string(&p).ok()?)))
                // Quoted-printable: soft line breaks undone, `=` decoded.
                .map(|(at, text)| (at, text.replace("=\r\n", "").replace("=\n", "").replace("=3D", "=")))
                .filter(|(_, text)| text.contains(&format!("To: {to}")) && text.contains(marker))
                .collect();
            mails.sort();
            if mails.len() >= count {
                return mails
                    .into_iter()
                    .map(|(_, text)| {
                        let at = text.find(marker).unwrap() + marker.len();
                        text[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-').collect()
                    })
                    .collect();
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        panic!("fewer than {count} mails to {to} with {marker}");
    }

    /// Invites `email` to the organization (as `inviter`) and accepts with the mailed link (as
    /// `invitee`, signed in with that address); returns the membership made.
    pub async fn join_org(&self, inviter: &str, org_id: &str, email: &str, role: &str, invitee: &str) -> Value {
        let invite = self.post(&format!("/v1/users/me/organizations/{org_id}/members")).bearer_auth(inviter);
        let r = self.send(invite.json(&json!({"email": email, "role": role}))).await;
        r.expect_status(201);
        let sent = self.mailed_tokens(email, "/invitations#token=", 1).await;
        let token = sent.last().unwrap();
        let r = self
            .send(self.post("/v1/users/me/invitations/accept").bearer_auth(invitee).json(&json!({"token": token})))
            .await;
        r.expect_status(201);
        r.json
    }

    /// Runs `redline <args>` on this app's database and configuration.
    pub fn cli(&self, args: &[&str]) -> Output {
        self.cli_command().args(args).output().expect("the redline binary runs")
    }

    /// The `redline` binary on this app's database, without arguments.
    pub fn cli_command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_redline"));
        cmd.env_clear();
        for key in ["REDLINE_DATA_DIR", "REDLINE_DATABASE_URL"] {
            if let Some(v) = self.vars.get(key) {
                cmd.env(key, v);
            }
        }
        cmd
    }

    /// Runs an admin command that must succeed; returns the one JSON object it printed.
    pub fn admin(&self, args: &[&str]) -> Value {
        let mut all = vec!["admin"];
        all.extend_from_slice(args);
        let out = self.cli(&all);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "redline {all:?} failed ({}): stdout {stdout:?} stderr {stderr:?}", out.status);
        let value: Value = serde_json::from_str(stdout.trim())
            .unwrap_or_else(|e| panic!("redline {all:?} printed no single JSON object ({e}): {stdout:?}"));
        assert!(value.is_object(), "redline {all:?} printed {value}, not an object");
        assert_eq!(stdout.trim().lines().count(), 1, "one JSON object on one line: {stdout:?}");
        value
    }

    /// Runs an admin command that must fail: non-zero exit, a message on stderr, nothing on
    /// stdout. Returns stderr.
    pub fn admin_fails(&self, args: &[&str]) -> String {
        let mut all = vec!["admin"];
        all.extend_from_slice(args);
        let out = self.cli(&all);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!out.status.success(), "redline {all:?} should have failed; stdout {stdout:?}");
        assert!(stdout.trim().is_empty(), "a failing redline {all:?} printed on stdout: {stdout:?}");
        assert!(!stderr.trim().is_empty(), "a failing redline {all:?} printed no message on stderr");
        stderr
    }
}

pub fn unique_email() -> String {
    format!("user-{}@example.com", uuid::Uuid::new_v4().simple())
}

/// 32 random lowercase hex characters.
pub fn random_hex() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// `sk_` + 32 lowercase hex.
pub fn is_user_key(s: &str) -> bool {
    s.strip_prefix("sk_").is_some_and(is_lower_hex_32)
}

/// `lce_` + 32 lowercase hex.
pub fn is_org_key(s: &str) -> bool {
    s.strip_prefix("lce_").is_some_and(is_lower_hex_32)
}

fn is_lower_hex_32(s: &str) -> bool {
    s.len() == 32 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `^ws_[A-Za-z0-9_-]{43}$`
pub fn is_session_token(s: &str) -> bool {
    s.strip_prefix("ws_")
        .is_some_and(|t| t.len() == 43 && t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'))
}

/// The path segment after the last `/` of a URL.
pub fn last_segment(url: &str) -> &str {
    url.rsplit('/').next().unwrap_or_default()
}

/// What replicas of one PostgreSQL database share, without which a replica refuses to start:
/// the database, the signing secret, the public address, and the outbox folder (`dir/outbox`).
pub fn fleet_env(db: &PgDatabase, dir: &std::path::Path) -> Vec<(&'static str, String)> {
    vec![
        ("REDLINE_DATABASE_URL", db.url.clone()),
        ("REDLINE_SECRET", "shared by the replicas".to_owned()),
        ("REDLINE_PUBLIC_BASE_URL", "http://redline.test".to_owned()),
        ("REDLINE_OUTBOX_DIR", dir.join("outbox").display().to_string()),
    ]
}

/// `env` as [`spawn_app_with`] takes it.
pub fn borrowed<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'a str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// A PostgreSQL database of one test, created fresh and dropped (`WITH (FORCE)`, so that
/// connections still open do not keep it) when the guard goes, also when the test panics:
/// CI runs on a machine whose PostgreSQL outlives the run.
pub struct PgDatabase {
    admin: String,
    name: String,
    /// Its connection URL.
    pub url: String,
}

impl PgDatabase {
    /// A database named `{prefix}_{random}`, or `None` (a skip) when PostgreSQL is not
    /// reachable outside CI (`REDLINE_TEST_PG_URL`, else the local server).
    pub async fn create(prefix: &str) -> Option<Self> {
        let admin = std::env::var("REDLINE_TEST_PG_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
        let (client, connection) = match tokio_postgres::connect(&admin, tokio_postgres::NoTls).await {
            Ok(c) => c,
            Err(e) => {
                assert!(std::env::var("CI").as_deref() != Ok("true"), "CI=true and PostgreSQL is unreachable: {e}");
                eprintln!("SKIPPED: PostgreSQL is unreachable ({e})");
                return None;
            }
        };
        tokio::spawn(connection);
        let name = format!("{prefix}_{}", uuid::Uuid::new_v4().simple());
        client.batch_execute(&format!("CREATE DATABASE {name}")).await.expect("create database");
        let base = admin.rsplit_once('/').map_or_else(|| admin.clone(), |(b, _)| b.to_owned());
        let url = format!("{base}/{name}");
        Some(Self { admin, name, url })
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        // On a thread of its own: the test's runtime may be the one dropping the guard.
        let admin = self.admin.clone();
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        let dropped = std::thread::spawn(move || -> Result<(), String> {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
            rt.block_on(async {
                let (client, connection) =
                    tokio_postgres::connect(&admin, tokio_postgres::NoTls).await.map_err(|e| e.to_string())?;
                tokio::spawn(connection);
                client.batch_execute(&sql).await.map_err(|e| e.to_string())
            })
        })
        .join();
        match dropped {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("warning: test database {} left behind: {e}", self.name),
            Err(_) => eprintln!("warning: test database {} left behind: the drop panicked", self.name),
        }
    }
}

/// Reads one HTTP/1.1 request (its head and the body its `content-length` announces) from a
/// fake server's socket: its path and body, or `None` when the peer closed first.
pub async fn read_request(sock: &mut tokio::net::TcpStream) -> Option<(String, String)> {
    use tokio::io::AsyncReadExt;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 65536];
    loop {
        let k = sock.read(&mut chunk).await.ok()?;
        if k == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..k]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_lowercase();
            let len = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                let path = head.split(' ').nth(1).unwrap_or_default().to_owned();
                return Some((path, String::from_utf8_lossy(&buf[end + 4..end + 4 + len]).into_owned()));
            }
        }
    }
}

/// Answers one chat call of the fake OpenAI-wire models the replica tests run: an edit of the
/// first section the outline in `body` names (its HTML `new_html`), or, once the call carries
/// the tool's result, the text "Edited.".
pub async fn answer_with_an_edit(sock: &mut tokio::net::TcpStream, body: &str, new_html: &str) {
    use tokio::io::AsyncWriteExt;
    let request: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let answered = request["messages"].as_array().is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
    let answer = if answered {
        json!({"choices": [{"message": {"role": "assistant", "content": "Edited."}}]})
    } else {
        let system = request["messages"][0]["content"].as_str().unwrap_or_default();
        let id = system.split("\"first_chunk_id\":\"").nth(1).and_then(|s| s.split('"').next()).unwrap_or("x");
        let arguments = json!({"chunk_id": id, "new_html": new_html, "explanation": "x"}).to_string();
        json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [{
            "id": "call_1", "type": "function", "function": {"name": "edit_section", "arguments": arguments}
        }]}}]})
    };
    let text = answer.to_string();
    let reply = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
        text.len()
    );
    let _ = sock.write_all(reply.as_bytes()).await;
}

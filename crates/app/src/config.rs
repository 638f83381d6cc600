//! Configuration: `REDLINE_*` environment variables, typed once at start-up and passed down
//! (never a global). Defaults are those of README.md, "Configuration".

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, Context};
use redline_core::chat::protocol::EditProtocol;

/// Everything the binary can be told.
#[derive(Debug, Clone)]
pub struct Config {
    pub bind: SocketAddr,
    pub data_dir: PathBuf,
    pub database_url: String,
    /// `REDLINE_PUBLIC_BASE_URL`; when unset, the listening address (see [`Config::public_base_url_for`]).
    pub public_base_url: Option<String>,
    pub max_body_bytes: u64,
    /// Uploads (documents and attachments) above this get 413.
    pub max_attachment_bytes: u64,
    /// The free plan's attachment storage (`REDLINE_FREE_ATTACHMENT_STORAGE_BYTES`).
    pub free_attachment_storage_bytes: u64,
    /// `REDLINE_PRESIGN_TTL_SECS`: how long a pre-signed upload URL works.
    pub presign_ttl: Duration,
    /// `REDLINE_BODY_IDLE_TIMEOUT_SECS`: a request body that sends nothing for this long is cut
    /// off with 408.
    pub body_idle_timeout: Duration,
    /// How long the whole body of a request without credentials may take
    /// (`REDLINE_ANONYMOUS_BODY_DEADLINE_SECS`).
    pub anonymous_body_deadline: Duration,
    /// `REDLINE_HSTS` (on, the default, or off): `Strict-Transport-Security` on every answer
    /// when the public base URL is https.
    pub hsts: bool,
    /// `REDLINE_MAX_STREAMS_PER_KEY`, `REDLINE_MAX_STREAMS_PER_ADDRESS`: event streams open at
    /// once per credential and per client address, on each replica.
    pub max_streams_per_key: usize,
    pub max_streams_per_address: usize,
    /// `REDLINE_KEEP_ALIVE_SECS`: how long an idle keep-alive connection stays open; `None`
    /// (the value 0) closes each connection after its answer.
    pub keep_alive: Option<Duration>,
    pub signup_cooldown: Duration,
    pub handoff_ttl: Duration,
    /// A web session unused for this long has ended (`REDLINE_SESSION_IDLE_SECS`).
    pub session_idle: Duration,
    pub http_workers: usize,
    pub db_connections: usize,
    pub contact_email: String,
    pub shutdown_timeout: Duration,
    /// `REDLINE_DRAIN_GRACE_SECS`: how long a stopping replica goes on serving, with `/readyz`
    /// at 503 and each answer closing its connection, before it stops accepting: the time a
    /// load balancer takes to see it draining. 3 s by default on PostgreSQL (the shipped
    /// HAProxy configuration needs two failed checks a second apart), 0 otherwise.
    pub drain_grace: Duration,
    /// `json` for one JSON object per log line, anything else for readable text.
    pub log_format: String,
    /// The language model: `builtin` (default) or `openai`.
    pub llm: LlmConfig,
    /// `REDLINE_EDIT_PROTOCOL`: how the model edits (docs/api.md, "Edit protocols").
    pub edit_protocol: EditProtocol,
    /// Tunables of chat jobs (README.md, "Configuration").
    pub jobs: JobsConfig,
    /// `REDLINE_WEBHOOK_ALLOW_PRIVATE` (default off), `REDLINE_WEBHOOK_TIMEOUT_SECS` (10),
    /// `REDLINE_WEBHOOK_FIRST_RETRY_MS` (5000): docs/api.md, "Webhooks".
    pub webhooks: redline_core::webhooks::WebhookConfig,
    /// Blob store, mail, signed links and export caps.
    pub outbound: crate::outbound::OutboundConfig,
    /// `REDLINE_SINGLE_REPLICA`: the operator says that only this process will ever serve
    /// this PostgreSQL database, which waives the fleet's required settings
    /// ([`Config::refusals`]).
    pub single_replica: bool,
    /// `REDLINE_TRUSTED_PROXIES`: proxies whose `Forwarded`/`X-Forwarded-For` name the client.
    pub trusted_proxies: redline_http::client_addr::TrustedProxies,
    /// How the text of scanned PDF pages is read.
    pub ocr: OcrConfig,
    /// `REDLINE_FONT_DIRS`: font folders PDF exports fall back to besides `/usr/share/fonts`.
    pub font_dirs: Vec<PathBuf>,
}

/// The OCR of scanned PDF pages: Tesseract's command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OcrConfig {
    /// `REDLINE_OCR_COMMAND` (default `tesseract`, found on the `PATH`); `off` reads no
    /// scanned page (their pictures are still kept).
    pub command: Option<PathBuf>,
    /// `REDLINE_OCR_LANGS` (default `eng`): Tesseract's languages, `+` between them
    /// (`eng+deu`); each needs its `tesseract-ocr-<lang>` package.
    pub languages: String,
    /// `REDLINE_OCR_TIMEOUT_SECS` (default 120): the longest one page may take.
    pub timeout: Duration,
}

/// Which language model answers chat turns.
#[derive(Debug, Clone, PartialEq)]
pub enum LlmConfig {
    Builtin,
    OpenAi {
        base_url: String,
        api_key: Option<String>,
        model: String,
        timeout: Duration,
        /// `REDLINE_OPENAI_TEMPERATURE` and `REDLINE_OPENAI_SEED`: unset, the server's own.
        temperature: Option<f64>,
        seed: Option<u64>,
    },
}

/// Tunables of the job machinery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobsConfig {
    pub retention: Duration,
    pub chat_timeout: Duration,
    pub approval_timeout: Duration,
    /// Jobs run at once on this replica.
    pub workers: usize,
    /// How long a crashed replica's job stays claimed before another takes it.
    pub lease: Duration,
}

fn cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2)
}

impl Config {
    /// The public base URL: the configured one, else `http://` + the address actually
    /// listened on (which differs from `REDLINE_BIND` when it asks for port 0).
    pub fn public_base_url_for(&self, listening: std::net::SocketAddr) -> String {
        self.public_base_url.clone().unwrap_or_else(|| format!("http://{listening}"))
    }

    /// Reads the process environment.
    pub fn from_env() -> anyhow::Result<Self> {
        let vars: HashMap<String, String> =
            std::env::vars().filter(|(k, _)| k.starts_with("REDLINE_") || k.starts_with("AWS_")).collect();
        Self::from_vars(&vars)
    }

    /// Reads a map of variables (tests pass their own).
    pub fn from_vars(vars: &HashMap<String, String>) -> anyhow::Result<Self> {
        let get = |name: &str| vars.get(name).map(|v| v.trim()).filter(|v| !v.is_empty());
        fn num<T: std::str::FromStr>(name: &str, value: Option<&str>, default: T) -> anyhow::Result<T> {
            match value {
                None => Ok(default),
                Some(v) => v.parse().map_err(|_| anyhow!("{name}={v:?} is not a valid number")),
            }
        }
        let bind: SocketAddr = get("REDLINE_BIND")
            .unwrap_or("127.0.0.1:8080")
            .parse()
            .context("REDLINE_BIND must be host:port, e.g. 127.0.0.1:8080")?;
        let data_dir = PathBuf::from(get("REDLINE_DATA_DIR").unwrap_or("./data"));
        let database_url = match get("REDLINE_DATABASE_URL") {
            Some(url) => known_database_url(url)?,
            None => format!("sqlite://{}", data_dir.join("redline.db").display()),
        };
        let public_base_url = get("REDLINE_PUBLIC_BASE_URL").map(|u| u.trim_end_matches('/').to_owned());
        let workers = num("REDLINE_HTTP_WORKERS", get("REDLINE_HTTP_WORKERS"), cores())?;
        let secs = |name: &str, default: u64| -> anyhow::Result<Duration> {
            Ok(Duration::from_secs(num(name, get(name), default)?))
        };
        let llm = match get("REDLINE_LLM_PROVIDER").unwrap_or("builtin") {
            "builtin" => LlmConfig::Builtin,
            "openai" => LlmConfig::OpenAi {
                base_url: get("REDLINE_OPENAI_BASE_URL").unwrap_or("https://api.openai.com/v1").to_owned(),
                api_key: get("REDLINE_OPENAI_API_KEY").map(str::to_owned),
                model: get("REDLINE_OPENAI_MODEL").unwrap_or("gpt-4o-mini").to_owned(),
                timeout: secs("REDLINE_OPENAI_TIMEOUT_SECS", 120)?,
                temperature: match get("REDLINE_OPENAI_TEMPERATURE") {
                    None => None,
                    Some(v) => Some(
                        v.parse::<f64>()
                            .ok()
                            .filter(|t| (0.0..=2.0).contains(t))
                            .ok_or_else(|| anyhow!("REDLINE_OPENAI_TEMPERATURE={v:?} must be a number from 0 to 2"))?,
                    ),
                },
                seed: match get("REDLINE_OPENAI_SEED") {
                    None => None,
                    Some(v) => Some(
                        v.parse::<u64>().map_err(|_| anyhow!("REDLINE_OPENAI_SEED={v:?} must be a whole number"))?,
                    ),
                },
            },
            other => return Err(anyhow!("REDLINE_LLM_PROVIDER={other:?}: expected builtin or openai")),
        };
        let edit_protocol = match get("REDLINE_EDIT_PROTOCOL") {
            None | Some("auto") => match &llm {
                LlmConfig::Builtin => EditProtocol::Tools,
                LlmConfig::OpenAi { model, .. } => EditProtocol::for_model(model),
            },
            Some(v) => EditProtocol::parse(v)
                .ok_or_else(|| anyhow!("REDLINE_EDIT_PROTOCOL={v:?}: expected auto, tools, blocks or rewrite"))?,
        };
        if edit_protocol != EditProtocol::Tools && matches!(llm, LlmConfig::Builtin) {
            return Err(anyhow!(
                "REDLINE_EDIT_PROTOCOL={} needs REDLINE_LLM_PROVIDER=openai: the builtin model edits with tool calls only",
                edit_protocol.as_str()
            ));
        }
        let jobs = JobsConfig {
            retention: secs("REDLINE_JOB_RETENTION_SECS", 3600)?,
            chat_timeout: secs("REDLINE_CHAT_TIMEOUT_SECS", 1800)?,
            approval_timeout: secs("REDLINE_APPROVAL_TIMEOUT_SECS", 86_400)?,
            workers: num("REDLINE_WORKERS", get("REDLINE_WORKERS"), cores().max(4))?,
            lease: secs("REDLINE_JOB_LEASE_SECS", 30)?,
        };
        let webhooks = {
            let mut w = redline_core::webhooks::WebhookConfig {
                allow_private: flag("REDLINE_WEBHOOK_ALLOW_PRIVATE", get("REDLINE_WEBHOOK_ALLOW_PRIVATE"))?,
                timeout: secs("REDLINE_WEBHOOK_TIMEOUT_SECS", 10)?,
                ..Default::default()
            };
            w.retries.first =
                num("REDLINE_WEBHOOK_FIRST_RETRY_MS", get("REDLINE_WEBHOOK_FIRST_RETRY_MS"), 5_000)?.max(1);
            if w.timeout.is_zero() {
                return Err(anyhow!("REDLINE_WEBHOOK_TIMEOUT_SECS must be at least 1"));
            }
            w
        };
        let presign_ttl = secs("REDLINE_PRESIGN_TTL_SECS", 900)?;
        if presign_ttl.is_zero() {
            return Err(anyhow!("REDLINE_PRESIGN_TTL_SECS must be at least 1"));
        }
        let body_idle_timeout = secs("REDLINE_BODY_IDLE_TIMEOUT_SECS", 30)?;
        let anonymous_body_deadline = secs("REDLINE_ANONYMOUS_BODY_DEADLINE_SECS", 10)?;
        if anonymous_body_deadline.is_zero() {
            return Err(anyhow!("REDLINE_ANONYMOUS_BODY_DEADLINE_SECS must be at least 1"));
        }
        if body_idle_timeout.is_zero() {
            return Err(anyhow!("REDLINE_BODY_IDLE_TIMEOUT_SECS must be at least 1"));
        }
        // Longer than the idle timeout of the proxies put in front (AWS's load balancers: 60 s),
        // so a proxy never sends on a connection this server is closing (a 502 for the client).
        let keep_alive = Some(secs("REDLINE_KEEP_ALIVE_SECS", 75)?).filter(|d| !d.is_zero());
        let single_replica = flag("REDLINE_SINGLE_REPLICA", get("REDLINE_SINGLE_REPLICA"))?;
        let replicated = known_is_postgres(&database_url) && !single_replica;
        let drain_grace = secs("REDLINE_DRAIN_GRACE_SECS", if replicated { 3 } else { 0 })?;
        let hsts = match get("REDLINE_HSTS").unwrap_or("on") {
            "on" => true,
            "off" => false,
            other => return Err(anyhow!("REDLINE_HSTS={other:?}: expected on or off")),
        };
        Ok(Self {
            bind,
            database_url,
            presign_ttl,
            body_idle_timeout,
            anonymous_body_deadline,
            hsts,
            max_streams_per_key: num("REDLINE_MAX_STREAMS_PER_KEY", get("REDLINE_MAX_STREAMS_PER_KEY"), 20)?.max(1),
            max_streams_per_address: num(
                "REDLINE_MAX_STREAMS_PER_ADDRESS",
                get("REDLINE_MAX_STREAMS_PER_ADDRESS"),
                100,
            )?
            .max(1),
            keep_alive,
            public_base_url,
            max_body_bytes: num("REDLINE_MAX_BODY_BYTES", get("REDLINE_MAX_BODY_BYTES"), 104_857_600)?,
            max_attachment_bytes: num("REDLINE_MAX_ATTACHMENT_BYTES", get("REDLINE_MAX_ATTACHMENT_BYTES"), 52_428_800)?,
            free_attachment_storage_bytes: num(
                "REDLINE_FREE_ATTACHMENT_STORAGE_BYTES",
                get("REDLINE_FREE_ATTACHMENT_STORAGE_BYTES"),
                104_857_600,
            )?,
            signup_cooldown: Duration::from_secs(num(
                "REDLINE_SIGNUP_COOLDOWN_SECS",
                get("REDLINE_SIGNUP_COOLDOWN_SECS"),
                10,
            )?),
            handoff_ttl: Duration::from_secs(num("REDLINE_HANDOFF_TTL_SECS", get("REDLINE_HANDOFF_TTL_SECS"), 86_400)?),
            session_idle: Duration::from_secs(num(
                "REDLINE_SESSION_IDLE_SECS",
                get("REDLINE_SESSION_IDLE_SECS"),
                7 * 86_400,
            )?),
            http_workers: workers,
            db_connections: num("REDLINE_DB_CONNECTIONS", get("REDLINE_DB_CONNECTIONS"), 16)?,
            contact_email: get("REDLINE_CONTACT_EMAIL").unwrap_or("support@redline.invalid").to_owned(),
            shutdown_timeout: Duration::from_secs(num(
                "REDLINE_SHUTDOWN_TIMEOUT_SECS",
                get("REDLINE_SHUTDOWN_TIMEOUT_SECS"),
                10,
            )?),
            log_format: get("REDLINE_LOG_FORMAT").unwrap_or("text").to_owned(),
            font_dirs: get("REDLINE_FONT_DIRS")
                .unwrap_or("")
                .split(':')
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
                .collect(),
            data_dir,
            llm,
            edit_protocol,
            jobs,
            webhooks,
            outbound: crate::outbound::OutboundConfig::from_vars(vars)?,
            single_replica,
            drain_grace,
            trusted_proxies: redline_http::client_addr::TrustedProxies::parse(
                get("REDLINE_TRUSTED_PROXIES").unwrap_or_default(),
            )
            .map_err(|e| anyhow!("REDLINE_TRUSTED_PROXIES: {e}"))?,
            ocr: OcrConfig {
                command: match get("REDLINE_OCR_COMMAND").unwrap_or("tesseract") {
                    "off" => None,
                    command => Some(PathBuf::from(command)),
                },
                languages: get("REDLINE_OCR_LANGS").unwrap_or("eng").to_owned(),
                timeout: secs("REDLINE_OCR_TIMEOUT_SECS", 120)?,
            },
        })
    }

    /// Whether the database is PostgreSQL, where several replicas may serve the same data.
    pub fn is_postgres(&self) -> bool {
        known_is_postgres(&self.database_url)
    }

    /// What `serve` refuses to start with, one sentence each (empty: it starts). On
    /// PostgreSQL any number of replicas may serve the data, so the settings they must share
    /// cannot be left to each replica's own default, which would break in silence: links
    /// signed on one replica would be refused by the others, picture URLs would carry the
    /// address of whichever replica served the upload, and mail without SMTP would land in the
    /// outbox folder of whichever replica ran the e-mailed export, where no one looks.
    /// `REDLINE_SINGLE_REPLICA=true` waives them for a deployment of one.
    pub fn refusals(&self) -> Vec<String> {
        if !self.is_postgres() || self.single_replica {
            return Vec::new();
        }
        let mut refusals = Vec::new();
        if self.outbound.secret.is_none() {
            refusals.push(
                "REDLINE_SECRET is unset: on PostgreSQL several replicas may serve this database, and each would sign \
                 upload and export links with a key of its own that the others refuse (404). Set REDLINE_SECRET to \
                 the same long random value on every replica (e.g. the output of `openssl rand -hex 32`), or \
                 REDLINE_SINGLE_REPLICA=true if this process alone will ever serve this database."
                    .to_owned(),
            );
        }
        if self.public_base_url.is_none() {
            refusals.push(format!(
                "REDLINE_PUBLIC_BASE_URL is unset: on PostgreSQL several replicas may serve this database, and links \
                 and picture addresses would name this replica ({}) instead of the address clients use. Set it to \
                 the address in front of the replicas (e.g. https://redline.example.com), or \
                 REDLINE_SINGLE_REPLICA=true if this process alone will ever serve this database.",
                self.public_base_url_for(self.bind)
            ));
        }
        if self.outbound.smtp_url.is_none() && self.outbound.outbox_dir.is_none() {
            refusals.push(format!(
                "REDLINE_SMTP_URL is unset: on PostgreSQL several replicas may serve this database, and the e-mailed \
                 exports that this replica runs would be written to its own outbox ({}) while the others write to \
                 theirs. Set REDLINE_SMTP_URL (e.g. smtps://user:pass@smtp.example.com), or REDLINE_OUTBOX_DIR to a \
                 folder that every replica shares (a relay or a person collects the .eml files there), or \
                 REDLINE_SINGLE_REPLICA=true if this process alone will ever serve this database.",
                self.data_dir.join("outbox").display()
            ));
        }
        refusals
    }

    /// The effective configuration, one `(variable, value)` per setting, with secrets masked
    /// (`redline check-config`). Values not set show the default in effect.
    pub fn effective(&self) -> Vec<(String, String)> {
        let set = |v: &Option<String>| v.as_ref().map_or_else(|| "(unset)".to_owned(), |_| "(set, hidden)".to_owned());
        let secs = |d: Duration| d.as_secs().to_string();
        let mut out: Vec<(&'static str, String)> = vec![
            ("REDLINE_BIND", self.bind.to_string()),
            ("REDLINE_DATA_DIR", self.data_dir.display().to_string()),
            ("REDLINE_DATABASE_URL", mask_url_password(&self.database_url)),
            ("REDLINE_DB_CONNECTIONS", self.db_connections.to_string()),
            (
                "REDLINE_STORAGE_URL",
                self.outbound
                    .storage_url
                    .clone()
                    .unwrap_or_else(|| format!("(unset: the folder {})", self.data_dir.join("blobs").display())),
            ),
            (
                "REDLINE_PUBLIC_BASE_URL",
                self.public_base_url
                    .clone()
                    .unwrap_or_else(|| format!("(unset: {})", self.public_base_url_for(self.bind))),
            ),
            (
                "REDLINE_SECRET",
                match &self.outbound.secret {
                    Some(_) => "(set, hidden)".to_owned(),
                    None => {
                        format!("(unset: a key kept in {})", self.data_dir.join(crate::outbound::SECRET_FILE).display())
                    }
                },
            ),
            ("REDLINE_SINGLE_REPLICA", self.single_replica.to_string()),
            (
                "REDLINE_TRUSTED_PROXIES",
                if self.trusted_proxies.is_empty() {
                    "(none: forwarding headers are ignored)".to_owned()
                } else {
                    self.trusted_proxies.to_string()
                },
            ),
        ];
        match &self.llm {
            LlmConfig::Builtin => out.push(("REDLINE_LLM_PROVIDER", "builtin".to_owned())),
            LlmConfig::OpenAi { base_url, api_key, model, timeout, temperature, seed } => out.extend([
                ("REDLINE_LLM_PROVIDER", "openai".to_owned()),
                ("REDLINE_OPENAI_BASE_URL", mask_url_password(base_url)),
                ("REDLINE_OPENAI_API_KEY", set(api_key)),
                ("REDLINE_OPENAI_MODEL", model.clone()),
                ("REDLINE_OPENAI_TIMEOUT_SECS", secs(*timeout)),
                (
                    "REDLINE_OPENAI_TEMPERATURE",
                    temperature.map_or_else(|| "(unset: the server's)".to_owned(), |t| t.to_string()),
                ),
                ("REDLINE_OPENAI_SEED", seed.map_or_else(|| "(unset)".to_owned(), |s| s.to_string())),
            ]),
        }
        out.push(("REDLINE_EDIT_PROTOCOL", self.edit_protocol.as_str().to_owned()));
        out.extend([
            ("REDLINE_WORKERS", self.jobs.workers.to_string()),
            ("REDLINE_CHAT_TIMEOUT_SECS", secs(self.jobs.chat_timeout)),
            ("REDLINE_APPROVAL_TIMEOUT_SECS", secs(self.jobs.approval_timeout)),
            ("REDLINE_JOB_LEASE_SECS", secs(self.jobs.lease)),
            ("REDLINE_JOB_RETENTION_SECS", secs(self.jobs.retention)),
            ("REDLINE_WEBHOOK_ALLOW_PRIVATE", if self.webhooks.allow_private { "on" } else { "off" }.to_owned()),
            ("REDLINE_WEBHOOK_TIMEOUT_SECS", secs(self.webhooks.timeout)),
            ("REDLINE_WEBHOOK_FIRST_RETRY_MS", self.webhooks.retries.first.to_string()),
            ("REDLINE_MAX_BODY_BYTES", self.max_body_bytes.to_string()),
            ("REDLINE_MAX_ATTACHMENT_BYTES", self.max_attachment_bytes.to_string()),
            ("REDLINE_FREE_ATTACHMENT_STORAGE_BYTES", self.free_attachment_storage_bytes.to_string()),
            ("REDLINE_PRESIGN_TTL_SECS", secs(self.presign_ttl)),
            ("REDLINE_BODY_IDLE_TIMEOUT_SECS", secs(self.body_idle_timeout)),
            ("REDLINE_ANONYMOUS_BODY_DEADLINE_SECS", secs(self.anonymous_body_deadline)),
            ("REDLINE_KEEP_ALIVE_SECS", self.keep_alive.map_or(0, |d| d.as_secs()).to_string()),
            ("REDLINE_HSTS", if self.hsts { "on" } else { "off" }.to_owned()),
            ("REDLINE_MAX_STREAMS_PER_KEY", self.max_streams_per_key.to_string()),
            ("REDLINE_MAX_STREAMS_PER_ADDRESS", self.max_streams_per_address.to_string()),
            ("REDLINE_HTTP_WORKERS", self.http_workers.to_string()),
            ("REDLINE_SHUTDOWN_TIMEOUT_SECS", secs(self.shutdown_timeout)),
            ("REDLINE_DRAIN_GRACE_SECS", secs(self.drain_grace)),
            ("REDLINE_SIGNUP_COOLDOWN_SECS", secs(self.signup_cooldown)),
            ("REDLINE_HANDOFF_TTL_SECS", secs(self.handoff_ttl)),
            ("REDLINE_SESSION_IDLE_SECS", secs(self.session_idle)),
            ("REDLINE_CONTACT_EMAIL", self.contact_email.clone()),
            (
                "REDLINE_SMTP_URL",
                self.outbound.smtp_url.as_deref().map_or_else(
                    || format!("(unset: .eml files in {})", self.outbound.outbox(&self.data_dir).display()),
                    mask_url_password,
                ),
            ),
            (
                "REDLINE_OUTBOX_DIR",
                self.outbound.outbox_dir.as_ref().map_or_else(
                    || format!("(unset: {})", self.data_dir.join("outbox").display()),
                    |d| d.display().to_string(),
                ),
            ),
            ("REDLINE_MAIL_FROM", self.outbound.mail_from.clone()),
            ("REDLINE_EXPORT_CAP_BYTES", self.outbound.export_cap_bytes.to_string()),
            ("REDLINE_EXPORT_LINK_TTL_SECS", secs(self.outbound.export_link_ttl)),
            ("REDLINE_EXPORT_MAIL_TO", self.outbound.export_mail_to.as_str().to_owned()),
            ("REDLINE_REQUIRE_VERIFIED_EMAIL", self.outbound.require_verified_email.to_string()),
            ("REDLINE_REVISION_AUTHOR", self.outbound.revision_author.clone()),
            ("REDLINE_LOG_FORMAT", self.log_format.clone()),
            (
                "REDLINE_OCR_COMMAND",
                self.ocr.command.as_ref().map_or_else(|| "off".to_owned(), |c| c.display().to_string()),
            ),
            ("REDLINE_OCR_LANGS", self.ocr.languages.clone()),
            ("REDLINE_OCR_TIMEOUT_SECS", secs(self.ocr.timeout)),
            ("REDLINE_FONT_DIRS", self.font_dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(":")),
        ]);
        let mut out: Vec<(String, String)> = out.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        for (name, value) in &self.outbound.aws_settings {
            let hidden = ["SECRET", "TOKEN", "KEY_ID"].iter().any(|w| name.contains(w));
            out.push((name.clone(), if hidden { "(set, hidden)".to_owned() } else { value.clone() }));
        }
        out
    }
}

/// A flag whose unset value is `default`.
pub(crate) fn flag_or(name: &str, value: Option<&str>, default: bool) -> anyhow::Result<bool> {
    match value {
        None => Ok(default),
        Some(_) => flag(name, value),
    }
}

/// `true`/`1`/`yes`/`on` or `false`/`0`/`no`/`off`; unset is false.
pub(crate) fn flag(name: &str, value: Option<&str>) -> anyhow::Result<bool> {
    match value.map(str::to_ascii_lowercase).as_deref() {
        None | Some("false" | "0" | "no" | "off") => Ok(false),
        Some("true" | "1" | "yes" | "on") => Ok(true),
        Some(other) => Err(anyhow!("{name}={other:?}: expected true or false")),
    }
}

/// A URL with the password of its user part replaced by `***`
/// (`postgres://app:pw@db/redline` → `postgres://app:***@db/redline`).
pub fn mask_url_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let Some((user_info, host)) = authority.rsplit_once('@') else {
        return url.to_owned();
    };
    match user_info.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}{path}"),
        None => url.to_owned(),
    }
}

/// Whether a database URL (as [`known_database_url`] leaves it) names PostgreSQL.
fn known_is_postgres(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

/// `sqlite://…`, `sqlite:…`, `postgres://…`, `postgresql://…` or a bare file path. Any other
/// `scheme://` is a mistake (`postgress://`, `mysql://`), not a file name: taken as a path, it
/// would quietly make a new SQLite database in the working folder.
fn known_database_url(url: &str) -> anyhow::Result<String> {
    if let Some((scheme, _)) = url.split_once("://") {
        let is_scheme = scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        if is_scheme && !["sqlite", "postgres", "postgresql"].contains(&scheme) {
            anyhow::bail!(
                "REDLINE_DATABASE_URL has an unknown scheme '{scheme}://': use sqlite://<path>, postgres://… or a file path"
            );
        }
    }
    Ok(url.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides() {
        let c = Config::from_vars(&HashMap::new()).unwrap();
        assert_eq!(c.bind.to_string(), "127.0.0.1:8080");
        assert_eq!(c.database_url, "sqlite://./data/redline.db");
        assert_eq!(c.public_base_url, None);
        assert_eq!(c.public_base_url_for("127.0.0.1:4000".parse().unwrap()), "http://127.0.0.1:4000");
        assert_eq!(c.max_body_bytes, 104_857_600);
        assert_eq!(c.signup_cooldown, Duration::from_secs(10));
        assert_eq!(c.presign_ttl, Duration::from_secs(900));
        assert_eq!(c.max_attachment_bytes, 52_428_800);
        assert_eq!(c.keep_alive, Some(Duration::from_secs(75)));
        assert_eq!(
            c.ocr,
            OcrConfig {
                command: Some(PathBuf::from("tesseract")),
                languages: "eng".into(),
                timeout: Duration::from_secs(120)
            }
        );

        let vars: HashMap<String, String> = [
            ("REDLINE_BIND", "0.0.0.0:9000"),
            ("REDLINE_DATA_DIR", "/tmp/x"),
            ("REDLINE_MAX_BODY_BYTES", "1048576"),
            ("REDLINE_PUBLIC_BASE_URL", "https://redline.example/"),
            ("REDLINE_KEEP_ALIVE_SECS", "0"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let c = Config::from_vars(&vars).unwrap();
        assert_eq!(c.database_url, "sqlite:///tmp/x/redline.db");
        assert_eq!(c.max_body_bytes, 1_048_576);
        assert_eq!(c.public_base_url.as_deref(), Some("https://redline.example"));
        assert_eq!(c.keep_alive, None);
    }

    #[test]
    fn bad_values_are_reported() {
        let vars: HashMap<String, String> =
            [("REDLINE_MAX_BODY_BYTES".to_owned(), "lots".to_owned())].into_iter().collect();
        let err = Config::from_vars(&vars).unwrap_err().to_string();
        assert!(err.contains("REDLINE_MAX_BODY_BYTES"), "{err}");
    }

    #[test]
    fn a_database_url_of_an_unknown_scheme_is_refused() {
        let with = |url: &str| {
            let vars: HashMap<String, String> =
                [("REDLINE_DATABASE_URL".to_owned(), url.to_owned())].into_iter().collect();
            Config::from_vars(&vars).map(|c| c.database_url).map_err(|e| e.to_string())
        };
        for bad in ["postgress://127.0.0.1/x", "mysql://h/db", "garbage://x", "Postgres://h/db"] {
            let err = with(bad).unwrap_err();
            assert!(err.contains("unknown scheme") && err.contains("REDLINE_DATABASE_URL"), "{bad}: {err}");
        }
        for good in ["sqlite:///tmp/r.db", "sqlite:r.db", "postgres://u@h/db", "postgresql://h/db", "/var/r.db", "r.db"]
        {
            assert_eq!(with(good).unwrap(), good);
        }
    }

    fn config(pairs: &[(&str, &str)]) -> Config {
        let vars: HashMap<String, String> = pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        Config::from_vars(&vars).expect("valid configuration")
    }

    #[test]
    fn postgres_without_the_shared_settings_is_refused_unless_single() {
        assert!(config(&[]).refusals().is_empty(), "SQLite serves one process: nothing to share");

        let pg = [("REDLINE_DATABASE_URL", "postgres://app@db/redline")];
        let refusals = config(&pg).refusals();
        assert_eq!(refusals.len(), 3, "{refusals:?}");
        assert!(
            refusals[0].starts_with("REDLINE_SECRET is unset") && refusals[0].contains("REDLINE_SINGLE_REPLICA=true")
        );
        assert!(refusals[1].starts_with("REDLINE_PUBLIC_BASE_URL is unset") && refusals[1].contains("127.0.0.1:8080"));
        assert!(
            refusals[2].starts_with("REDLINE_SMTP_URL is unset")
                && refusals[2].contains("REDLINE_OUTBOX_DIR")
                && refusals[2].contains("REDLINE_SINGLE_REPLICA=true"),
            "{refusals:?}"
        );

        let mail = ("REDLINE_SMTP_URL", "smtp://127.0.0.1:2525");
        let with_secret = config(&[pg[0], mail, ("REDLINE_SECRET", "s3cr3t")]).refusals();
        assert_eq!(with_secret.len(), 1);
        assert!(with_secret[0].starts_with("REDLINE_PUBLIC_BASE_URL"), "{with_secret:?}");

        let shared = [pg[0], ("REDLINE_SECRET", "s3cr3t"), ("REDLINE_PUBLIC_BASE_URL", "https://r.example")];
        let without_mail = config(&shared).refusals();
        assert_eq!(without_mail.len(), 1, "{without_mail:?}");
        assert!(without_mail[0].starts_with("REDLINE_SMTP_URL is unset"), "{without_mail:?}");
        assert!(config(&[&shared[..], &[mail]].concat()).refusals().is_empty());
        let outbox = config(&[&shared[..], &[("REDLINE_OUTBOX_DIR", "/srv/mail/outbox")]].concat());
        assert!(outbox.refusals().is_empty(), "an outbox chosen on purpose is accepted");
        assert_eq!(outbox.outbound.outbox(&outbox.data_dir), std::path::PathBuf::from("/srv/mail/outbox"));
        assert!(config(&[pg[0], ("REDLINE_SINGLE_REPLICA", "true")]).refusals().is_empty());
        assert!(config(&[("REDLINE_DATABASE_URL", "postgresql://db/x"), ("REDLINE_SINGLE_REPLICA", "1")])
            .refusals()
            .is_empty());

        let err = Config::from_vars(&[("REDLINE_SINGLE_REPLICA".to_owned(), "maybe".to_owned())].into()).unwrap_err();
        assert!(err.to_string().contains("REDLINE_SINGLE_REPLICA"), "{err}");
    }

    #[test]
    fn the_effective_configuration_hides_secrets() {
        let c = config(&[
            ("REDLINE_DATABASE_URL", "postgres://app:pg-password@db:5432/redline"),
            ("REDLINE_SECRET", "signing-secret"),
            ("REDLINE_LLM_PROVIDER", "openai"),
            ("REDLINE_OPENAI_API_KEY", "sk-model-key"),
            ("REDLINE_SMTP_URL", "smtps://mailer:smtp-password@smtp.example.com"),
            ("AWS_SECRET_ACCESS_KEY", "aws-secret"),
            ("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"),
            ("AWS_REGION", "eu-west-1"),
        ]);
        let shown: HashMap<String, String> = c.effective().into_iter().collect();
        let all = format!("{shown:?}");
        for secret in ["pg-password", "signing-secret", "sk-model-key", "smtp-password", "aws-secret", "AKIDEXAMPLE"] {
            assert!(!all.contains(secret), "{secret} is shown: {all}");
        }
        assert_eq!(shown["REDLINE_DATABASE_URL"], "postgres://app:***@db:5432/redline");
        assert_eq!(shown["REDLINE_SMTP_URL"], "smtps://mailer:***@smtp.example.com");
        assert_eq!(shown["REDLINE_SECRET"], "(set, hidden)");
        assert_eq!(shown["REDLINE_OPENAI_API_KEY"], "(set, hidden)");
        assert_eq!(shown["AWS_REGION"], "eu-west-1");
        assert_eq!(shown["REDLINE_WORKERS"], c.jobs.workers.to_string());

        let defaults: HashMap<String, String> = config(&[]).effective().into_iter().collect();
        assert_eq!(defaults["REDLINE_PUBLIC_BASE_URL"], "(unset: http://127.0.0.1:8080)");
        assert!(defaults["REDLINE_SECRET"].starts_with("(unset: a key kept in"), "{defaults:?}");
    }

    /// Every variable of the README's configuration table is shown by `redline check-config`
    /// (`cargo xtask check` checks that the table names every variable the binary reads).
    #[test]
    fn every_variable_of_the_readme_is_shown() {
        // The model's variables are shown with the model that reads them.
        let shown: HashMap<String, String> =
            [config(&[]), config(&[("REDLINE_LLM_PROVIDER", "openai")])].iter().flat_map(Config::effective).collect();
        let readme = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"));
        let names: Vec<&str> =
            readme.lines().filter_map(|l| l.strip_prefix("| `REDLINE_")?.split('`').next()).collect();
        assert!(names.len() > 40, "the README's table was not found: {names:?}");
        // REDLINE_LOG is read by the log filter (`telemetry.rs`) before any configuration.
        for name in names.into_iter().filter(|n| *n != "LOG") {
            let name = format!("REDLINE_{name}");
            assert!(shown.contains_key(&name), "{name} is in README.md but not in Config::effective");
        }
    }

    #[test]
    fn passwords_in_urls_are_masked() {
        assert_eq!(mask_url_password("postgres://u:p@h/db"), "postgres://u:***@h/db");
        assert_eq!(mask_url_password("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(mask_url_password("postgres://h/db?x=a@b"), "postgres://h/db?x=a@b");
        assert_eq!(mask_url_password("sqlite://./data/redline.db"), "sqlite://./data/redline.db");
        assert_eq!(mask_url_password("smtp://u:p:q@h:25"), "smtp://u:***@h:25");
    }
}

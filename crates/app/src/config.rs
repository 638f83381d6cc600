//! Configuration: `REDLINE_*` environment variables, typed once at start-up and passed down
//! (never a global). Defaults are those of README.md, "Configuration".

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, Context};

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
    /// `REDLINE_PRESIGN_TTL_SECS`: how long a pre-signed upload URL works.
    pub presign_ttl: Duration,
    /// `REDLINE_BODY_IDLE_TIMEOUT_SECS`: a request body that sends nothing for this long is cut
    /// off with 408.
    pub body_idle_timeout: Duration,
    /// `REDLINE_KEEP_ALIVE_SECS`: how long an idle keep-alive connection stays open; `None`
    /// (the value 0) closes each connection after its answer.
    pub keep_alive: Option<Duration>,
    pub signup_cooldown: Duration,
    pub handoff_ttl: Duration,
    pub http_workers: usize,
    pub db_connections: usize,
    pub contact_email: String,
    pub shutdown_timeout: Duration,
    /// `json` for one JSON object per log line, anything else for readable text.
    pub log_format: String,
    /// The language model: `builtin` (default) or `openai`.
    pub llm: LlmConfig,
    /// Tunables of chat jobs (README.md, "Configuration").
    pub jobs: JobsConfig,
    /// Blob store, mail, signed links and export caps.
    pub outbound: crate::outbound::OutboundConfig,
    /// `REDLINE_FONT_DIRS`: font folders PDF exports fall back to besides `/usr/share/fonts`.
    pub font_dirs: Vec<PathBuf>,
}

/// Which language model answers chat turns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LlmConfig {
    Builtin,
    OpenAi { base_url: String, api_key: Option<String>, model: String, timeout: Duration },
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
            },
            other => return Err(anyhow!("REDLINE_LLM_PROVIDER={other:?}: expected builtin or openai")),
        };
        let jobs = JobsConfig {
            retention: secs("REDLINE_JOB_RETENTION_SECS", 3600)?,
            chat_timeout: secs("REDLINE_CHAT_TIMEOUT_SECS", 1800)?,
            approval_timeout: secs("REDLINE_APPROVAL_TIMEOUT_SECS", 86_400)?,
            workers: num("REDLINE_WORKERS", get("REDLINE_WORKERS"), cores().max(4))?,
            lease: secs("REDLINE_JOB_LEASE_SECS", 30)?,
        };
        let presign_ttl = secs("REDLINE_PRESIGN_TTL_SECS", 900)?;
        if presign_ttl.is_zero() {
            return Err(anyhow!("REDLINE_PRESIGN_TTL_SECS must be at least 1"));
        }
        let body_idle_timeout = secs("REDLINE_BODY_IDLE_TIMEOUT_SECS", 30)?;
        if body_idle_timeout.is_zero() {
            return Err(anyhow!("REDLINE_BODY_IDLE_TIMEOUT_SECS must be at least 1"));
        }
        // Longer than the idle timeout of the proxies put in front (AWS's load balancers: 60 s),
        // so a proxy never sends on a connection this server is closing (a 502 for the client).
        let keep_alive = Some(secs("REDLINE_KEEP_ALIVE_SECS", 75)?).filter(|d| !d.is_zero());
        Ok(Self {
            bind,
            database_url,
            presign_ttl,
            body_idle_timeout,
            keep_alive,
            public_base_url,
            max_body_bytes: num("REDLINE_MAX_BODY_BYTES", get("REDLINE_MAX_BODY_BYTES"), 104_857_600)?,
            max_attachment_bytes: num("REDLINE_MAX_ATTACHMENT_BYTES", get("REDLINE_MAX_ATTACHMENT_BYTES"), 52_428_800)?,
            signup_cooldown: Duration::from_secs(num(
                "REDLINE_SIGNUP_COOLDOWN_SECS",
                get("REDLINE_SIGNUP_COOLDOWN_SECS"),
                10,
            )?),
            handoff_ttl: Duration::from_secs(num("REDLINE_HANDOFF_TTL_SECS", get("REDLINE_HANDOFF_TTL_SECS"), 86_400)?),
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
            jobs,
            outbound: crate::outbound::OutboundConfig::from_vars(vars)?,
        })
    }
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
}

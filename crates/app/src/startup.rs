//! Start-up as an object: `Application::build(config)` opens the database, wires the use
//! cases and binds the listener; `run_until_stopped` serves until SIGTERM/SIGINT and drains.

use std::net::TcpListener;
use std::sync::Arc;

use anyhow::Context;
use redline_core::documents::Documents;
use redline_core::identity::IdentityConfig;
use redline_core::sessions::Sessions;
use redline_core::usage::Usage;
use redline_core::Identity;
use redline_http::metrics::Metrics;
use redline_http::{AppState, HttpConfig};
use redline_ports::SystemClock;
use redline_storage::{Db, DbConfig};

use crate::config::Config;

/// The services every entry point (server and CLI) works with.
pub struct Services {
    pub db: Arc<Db>,
    pub identity: Arc<Identity>,
    pub sessions: Arc<Sessions>,
    pub usage: Arc<Usage>,
    pub documents: Arc<Documents>,
}

impl Services {
    /// Opens the database and wires the use cases; links are built on `public_base_url`.
    pub async fn open(config: &Config, public_base_url: &str) -> anyhow::Result<Self> {
        let mut db_config = DbConfig::new(config.database_url.clone());
        db_config.max_connections = config.db_connections;
        let db = Arc::new(Db::open(&db_config).await.context("cannot open the database")?);
        let identity_config = IdentityConfig {
            handoff_ttl_ms: millis(config.handoff_ttl),
            signup_cooldown_ms: millis(config.signup_cooldown),
            public_base_url: public_base_url.to_owned(),
            ..IdentityConfig::default()
        };
        let clock = Arc::new(SystemClock);
        let identity = Arc::new(Identity::new(db.clone(), clock.clone(), identity_config));
        let sessions = Arc::new(Sessions::new(db.clone()));
        let usage = Arc::new(Usage::new(db.clone(), db.clone(), clock.clone()));
        let documents = Arc::new(Documents::new(
            db.clone(),
            Arc::new(redline_html::Html5everSections::new()),
            Arc::new(redline_convert::Converters),
            clock,
        ));
        Ok(Self { db, identity, sessions, usage, documents })
    }
}

fn millis(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

pub struct Application {
    port: u16,
    server: actix_web::dev::Server,
}

impl Application {
    pub async fn build(config: Config) -> anyhow::Result<Self> {
        std::fs::create_dir_all(&config.data_dir)
            .with_context(|| format!("cannot create the data folder {}", config.data_dir.display()))?;
        let listener = TcpListener::bind(config.bind).with_context(|| format!("cannot listen on {}", config.bind))?;
        let local = listener.local_addr()?;
        let port = local.port();
        let public_base_url = config.public_base_url_for(local);
        let services = Services::open(&config, &public_base_url).await?;
        let state = Arc::new(AppState {
            identity: services.identity,
            sessions: services.sessions,
            usage: services.usage,
            documents: services.documents,
            health: services.db.clone(),
            metrics: Arc::new(Metrics::default()),
            config: HttpConfig {
                max_body_bytes: config.max_body_bytes,
                contact_email: config.contact_email.clone(),
                public_base_url,
                max_upload_bytes: config.max_attachment_bytes,
            },
        });
        let server = redline_http::server(listener, state, config.http_workers, config.shutdown_timeout)?;
        tracing::info!(
            port,
            database = services.db.backend_name(),
            data_dir = %config.data_dir.display(),
            "redline is listening"
        );
        Ok(Self { port, server })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Serves until a stop signal; in-flight requests are drained.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        self.server.await
    }
}

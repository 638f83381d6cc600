//! Start-up as an object: `Application::build(config)` opens the database, wires the use
//! cases and binds the listener; `run_until_stopped` serves until SIGTERM/SIGINT and drains.

use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use redline_core::attachments::{AttachmentConfig, AttachmentPorts, Attachments, UploadSigner};
use redline_core::documents::{Documents, ImageStorage};
use redline_core::exports::{ExportConfig, ExportPorts, Exports, LinkSigner};
use redline_core::idempotency::Idempotency;
use redline_core::identity::IdentityConfig;
use redline_core::sessions::Sessions;
use redline_core::templates::Templates;
use redline_core::usage::Usage;
use redline_core::webhooks::Webhooks;
use redline_core::Identity;
use redline_http::metrics::Metrics;
use redline_http::{AppState, HttpConfig};
use redline_ports::SystemClock;
use redline_storage::{Db, DbConfig};

use redline_core::chat::{Chat, ChatConfig, ChatPorts};
use redline_core::worker::{Runners, Workers};
use redline_ports::{DocumentConverter, EventBus, LanguageModel};

use crate::config::{Config, LlmConfig};

/// The services every entry point (server and CLI) works with.
pub struct Services {
    pub db: Arc<Db>,
    pub identity: Arc<Identity>,
    pub sessions: Arc<Sessions>,
    pub usage: Arc<Usage>,
    pub documents: Arc<Documents>,
    pub chat: Arc<Chat>,
    pub workers: Arc<Workers>,
    pub exports: Arc<Exports>,
    pub templates: Arc<Templates>,
    pub attachments: Arc<Attachments>,
    pub idempotency: Arc<Idempotency>,
    pub webhooks: Arc<Webhooks>,
    pub bus: Arc<dyn EventBus>,
}

fn language_model(config: &LlmConfig) -> anyhow::Result<Arc<dyn LanguageModel>> {
    Ok(match config {
        LlmConfig::Builtin => Arc::new(redline_llm::builtin::Builtin),
        LlmConfig::OpenAi { base_url, api_key, model, timeout, temperature, seed } => {
            let mut c = redline_llm::openai::OpenAiConfig::new(base_url.clone(), model.clone());
            c.api_key = api_key.clone();
            c.timeout = *timeout;
            c.sampling = redline_llm::openai::Sampling { temperature: *temperature, seed: *seed };
            Arc::new(redline_llm::openai::OpenAiModel::new(c).map_err(|e| anyhow::anyhow!("{e}"))?)
        }
    })
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
            web_session_idle_ms: millis(config.session_idle),
            public_base_url: public_base_url.to_owned(),
            ..IdentityConfig::default()
        };
        let clock = Arc::new(SystemClock);
        let mailer = config.outbound.mailer(&config.data_dir)?;
        let identity = Arc::new(Identity::new(db.clone(), clock.clone(), identity_config).with_mailer(mailer.clone()));
        let sessions = Arc::new(Sessions::new(db.clone()));
        let sender = redline_webhook_sender::HttpSender::new(config.webhooks.allow_private)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let webhooks = Arc::new(Webhooks::new(db.clone(), Arc::new(sender), clock.clone(), config.webhooks));
        let usage = Arc::new(Usage::new(db.clone(), db.clone(), clock.clone()));
        let (blobs, blobs_at) = config.outbound.blob_store(&config.data_dir)?;
        tracing::debug!(blobs = %blobs_at, "blob store opened");
        let attachment_blobs = blobs.clone();
        // Pictures are kept only from the service's own image URLs (see docs/api.md, "Images").
        let sections = Arc::new(redline_html::Html5everSections::with_public_base_url(public_base_url));
        let converter: Arc<dyn DocumentConverter> = match &config.ocr.command {
            Some(command) => Arc::new(redline_convert::Converters::with_ocr(Arc::new(
                redline_convert::TesseractOcr::new(command, &config.ocr.languages, config.ocr.timeout),
            ))),
            None => Arc::new(redline_convert::Converters),
        };
        let documents = Arc::new(Documents::new(
            db.clone(),
            sections.clone(),
            converter.clone(),
            clock.clone(),
            ImageStorage { blobs: blobs.clone(), files: db.clone() },
        ));
        let bus: Arc<dyn EventBus> = if db.backend_name() == "postgres" {
            Arc::new(redline_storage::bus::PgBus::start(&config.database_url))
        } else {
            Arc::new(redline_storage::bus::LocalBus::default())
        };
        let exports = Arc::new(Exports::new(
            ExportPorts {
                documents: db.clone(),
                exporter: Arc::new(
                    redline_export::FileExporter::new().with_font_dirs(
                        std::iter::once(PathBuf::from(redline_export::SYSTEM_FONT_DIR))
                            .chain(config.font_dirs.iter().cloned())
                            .collect(),
                    ),
                ),
                blobs,
                files: db.clone(),
                identity: db.clone(),
                mailer,
                clock: clock.clone(),
                jobs: db.clone(),
                bus: bus.clone(),
            },
            LinkSigner::new(config.outbound.signing_key(&config.data_dir)?),
            ExportConfig {
                default_cap_bytes: config.outbound.export_cap_bytes,
                cap_overrides: config.outbound.export_cap_overrides.clone(),
                link_ttl_ms: millis(config.outbound.export_link_ttl),
                public_base_url: public_base_url.to_owned(),
                lease: config.jobs.lease,
                mail_to: config.outbound.export_mail_to,
                verified_only: config.outbound.require_verified_email,
                revision_author: config.outbound.revision_author.clone(),
            },
        ));
        let templates = Arc::new(
            Templates::new(db.clone(), documents.clone(), sections.as_ref(), clock.clone())
                .map_err(|e| anyhow::anyhow!("cannot prepare the built-in templates: {e}"))?,
        );
        identity.follow_revocations(bus.clone());
        db.follow_session_changes(bus.clone());
        let chat_config = ChatConfig {
            chat_timeout: config.jobs.chat_timeout,
            lease: config.jobs.lease,
            approval_timeout: config.jobs.approval_timeout,
            retention: config.jobs.retention,
            protocol: config.edit_protocol,
            ..ChatConfig::default()
        };
        let chat = Arc::new(Chat::new(
            ChatPorts {
                jobs: db.clone(),
                history: db.clone(),
                sessions: db.clone(),
                store: db.clone(),
                llm: language_model(&config.llm)?,
                bus: bus.clone(),
                clock: clock.clone(),
                attachments: Some(db.clone()),
            },
            documents.clone(),
            usage.clone(),
            chat_config,
        ));
        let attachments = Arc::new(Attachments::new(
            AttachmentPorts {
                plans: db.clone(),
                store: db.clone(),
                search: db.clone(),
                jobs: db.clone(),
                sessions: db.clone(),
                blobs: attachment_blobs,
                converter,
                html: sections.clone(),
                bus: bus.clone(),
                clock: clock.clone(),
            },
            UploadSigner::new(config.outbound.signing_key(&config.data_dir)?),
            AttachmentConfig {
                max_bytes: config.max_attachment_bytes,
                free_storage_bytes: config.free_attachment_storage_bytes,
                presign_ttl: config.presign_ttl,
                lease: config.jobs.lease,
                public_base_url: public_base_url.to_owned(),
            },
        ));
        let runners = Runners { attachments: Some(attachments.clone()), exports: Some(exports.clone()) };
        let idempotency = Arc::new(Idempotency::new(db.clone(), clock.clone()));
        let workers = Workers::new(chat.clone(), runners, db.clone(), clock);
        Ok(Self {
            db,
            identity,
            sessions,
            usage,
            documents,
            chat,
            workers,
            exports,
            templates,
            attachments,
            idempotency,
            webhooks,
            bus,
        })
    }
}

/// Deletes idempotency keys past their day, every ten minutes until the replica drains.
async fn purge_idempotency_keys(idempotency: Arc<Idempotency>, mut draining: tokio::sync::watch::Receiver<bool>) {
    loop {
        match idempotency.purge().await {
            Ok(0) => {}
            Ok(n) => tracing::debug!(n, "idempotency keys past their day deleted"),
            Err(e) => tracing::warn!(error = %e, "could not delete old idempotency keys"),
        }
        tokio::select! {
            () = tokio::time::sleep(std::time::Duration::from_secs(600)) => {}
            _ = draining.wait_for(|d| *d) => return,
        }
    }
}

fn millis(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

pub struct Application {
    port: u16,
    server: actix_web::dev::Server,
    /// Turns true to drain: workers claim nothing more, streams end, `/readyz` says 503.
    draining: tokio::sync::watch::Sender<bool>,
    workers: Vec<tokio::task::JoinHandle<()>>,
    /// How long running jobs and in-flight requests get to finish (`REDLINE_SHUTDOWN_TIMEOUT_SECS`).
    shutdown_timeout: std::time::Duration,
    /// How long it goes on serving once draining, before it stops accepting
    /// (`REDLINE_DRAIN_GRACE_SECS`).
    drain_grace: std::time::Duration,
    /// The embedded database's lock, held while serving (released when the process ends,
    /// however it ends).
    _sqlite_lock: Option<std::fs::File>,
}

/// The file whose lock says that a `redline serve` uses an SQLite database: the database's
/// path with `.serve-lock` added. `None` for PostgreSQL and in-memory databases.
fn sqlite_lock_path(database_url: &str) -> Option<std::path::PathBuf> {
    let path = database_url.strip_prefix("sqlite://")?;
    let path = path.split('?').next().unwrap_or(path);
    if path.is_empty() || path.contains(":memory:") {
        return None;
    }
    Some(std::path::PathBuf::from(format!("{path}.serve-lock")))
}

/// Takes the lock of an SQLite database for this process, or says who holds it. An SQLite
/// database serves one process: two would each keep their own caches (keys, sessions) and
/// requeue each other's running jobs. Holding it, this process knows at startup that every
/// job it finds in progress was left by a process that is gone.
fn lock_sqlite(database_url: &str) -> anyhow::Result<Option<std::fs::File>> {
    let Some(path) = sqlite_lock_path(database_url) else {
        return Ok(None);
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open the lock file {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => anyhow::bail!(
            "another redline process is serving this SQLite database (its lock file {} is held); stop it first, \
             or run replicas on PostgreSQL (REDLINE_DATABASE_URL)",
            path.display()
        ),
        Err(std::fs::TryLockError::Error(e)) => Err(e).with_context(|| format!("cannot lock {}", path.display())),
    }
}

impl Application {
    pub async fn build(config: Config) -> anyhow::Result<Self> {
        let refusals = config.refusals();
        if !refusals.is_empty() {
            anyhow::bail!("refusing to start:\n{}", refusals.join("\n"));
        }
        std::fs::create_dir_all(&config.data_dir)
            .with_context(|| format!("cannot create the data folder {}", config.data_dir.display()))?;
        let sqlite_lock = lock_sqlite(&config.database_url)?;
        let listener = TcpListener::bind(config.bind).with_context(|| format!("cannot listen on {}", config.bind))?;
        let local = listener.local_addr()?;
        let port = local.port();
        let public_base_url = config.public_base_url_for(local);
        let hsts = config.hsts && public_base_url.starts_with("https://");
        let services = Services::open(&config, &public_base_url).await?;
        let (draining, drain_signal) = tokio::sync::watch::channel(false);
        let state = Arc::new(AppState {
            identity: services.identity,
            sessions: services.sessions,
            usage: services.usage,
            documents: services.documents,
            exports: services.exports,
            templates: services.templates,
            chat: services.chat,
            attachments: services.attachments,
            idempotency: services.idempotency.clone(),
            webhooks: services.webhooks.clone(),
            health: services.db.clone(),
            metrics: Arc::new(Metrics::default()),
            config: HttpConfig {
                max_body_bytes: config.max_body_bytes,
                contact_email: config.contact_email.clone(),
                public_base_url,
                max_upload_bytes: config.max_attachment_bytes,
                body_idle_timeout: config.body_idle_timeout,
                anonymous_body_deadline: config.anonymous_body_deadline,
                trusted_proxies: config.trusted_proxies.clone(),
                hsts,
                max_streams_per_key: config.max_streams_per_key,
                max_streams_per_address: config.max_streams_per_address,
            },
            streams: Arc::new(redline_http::streams::StreamSlots::new(
                config.max_streams_per_key,
                config.max_streams_per_address,
            )),
            draining: drain_signal.clone(),
        });
        let server = redline_http::server(
            listener,
            state,
            redline_http::ServerOptions {
                workers: config.http_workers,
                shutdown_timeout: config.shutdown_timeout,
                keep_alive: config.keep_alive,
            },
            redline_web::service(),
        )?;
        let mut workers = services.workers.start(
            config.jobs.workers,
            drain_signal.clone(),
            sqlite_lock.is_some(),
            config.shutdown_timeout,
        );
        workers.push(tokio::spawn(purge_idempotency_keys(services.idempotency, drain_signal.clone())));
        workers.push(tokio::spawn(services.webhooks.clone().run(services.bus.clone(), drain_signal)));
        tracing::info!(
            port,
            database = services.db.backend_name(),
            data_dir = %config.data_dir.display(),
            "redline is listening"
        );
        Ok(Self {
            port,
            server,
            draining,
            workers,
            shutdown_timeout: config.shutdown_timeout,
            drain_grace: config.drain_grace,
            _sqlite_lock: sqlite_lock,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Serves until SIGTERM or SIGINT, then drains (docs/deploy.md, "Rolling restarts").
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        self.run_until(stop_signal()).await
    }

    /// Serves until `stop` resolves, then drains: `/readyz` answers 503, each answer closes
    /// its connection, and event streams end with a `reconnect` event at once; workers claim
    /// nothing more, and the jobs they run get the shutdown timeout to finish before they are
    /// handed back to the queue, for another replica to take up at once. The replica goes on
    /// serving for the drain grace, the time a load balancer takes to see it draining; only
    /// then does it stop accepting, close its idle connections and give in-flight requests
    /// the shutdown timeout. Closing them earlier would race a balancer that is sending a
    /// request on one (a failed POST, which it may not retry).
    pub async fn run_until(self, stop: impl std::future::Future<Output = ()>) -> std::io::Result<()> {
        let handle = self.server.handle();
        let server = self.server;
        tokio::pin!(server);
        let served = tokio::select! {
            served = &mut server => Some(served),
            () = stop => None,
        };
        tracing::info!("stopping: draining requests, event streams and running jobs");
        let _ = self.draining.send(true);
        // Workers need the shutdown timeout, plus the moment a run handed back takes to stop
        // (5 s at most) and the retried writes of the hand-back or of a lease given up.
        let workers = tokio::time::timeout(
            self.shutdown_timeout + std::time::Duration::from_secs(10),
            futures_util::future::join_all(self.workers),
        );
        let served = match served {
            Some(served) => Some(served),
            None => tokio::select! {
                served = &mut server => Some(served),
                () = tokio::time::sleep(self.drain_grace) => None,
            },
        };
        match served {
            Some(served) => {
                let _ = workers.await;
                served
            }
            None => {
                let ((), served, _) = tokio::join!(handle.stop(true), server, workers);
                served
            }
        }
    }
}

/// SIGTERM (what service managers and orchestrators send) or SIGINT (Ctrl-C).
async fn stop_signal() {
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
                return;
            }
            Err(e) => tracing::warn!(error = %e, "cannot listen for SIGTERM; only SIGINT stops the server"),
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_sits_beside_an_sqlite_file_only() {
        assert_eq!(sqlite_lock_path("sqlite:///tmp/x/redline.db"), Some("/tmp/x/redline.db.serve-lock".into()));
        assert_eq!(
            sqlite_lock_path("sqlite://./data/redline.db?mode=rwc"),
            Some("./data/redline.db.serve-lock".into())
        );
        assert_eq!(sqlite_lock_path("sqlite://:memory:"), None);
        assert_eq!(sqlite_lock_path("postgres://postgres@127.0.0.1/test"), None);
    }

    #[test]
    fn one_process_holds_an_sqlite_database() {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}", dir.path().join("redline.db").display());
        let held = lock_sqlite(&url).expect("first lock").expect("a lock file");
        let err = lock_sqlite(&url).expect_err("a second server on the same database is refused");
        assert!(err.to_string().contains("another redline process is serving this SQLite database"), "{err}");
        drop(held);
        assert!(lock_sqlite(&url).expect("free again").is_some());
    }
}

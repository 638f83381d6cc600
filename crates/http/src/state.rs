//! What every handler can reach.

use std::sync::Arc;

use redline_core::attachments::Attachments;
use redline_core::chat::Chat;
use redline_core::documents::Documents;
use redline_core::exports::Exports;
use redline_core::sessions::Sessions;
use redline_core::templates::Templates;
use redline_core::usage::Usage;
use redline_core::Identity;
use redline_ports::HealthCheck;

use crate::metrics::Metrics;

/// Settings of the HTTP shell.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Request bodies above this are answered with the 413 JSON (the contract's Details 7).
    pub max_body_bytes: u64,
    /// Shown in 413 bodies.
    pub contact_email: String,
    /// The public origin of the service (scheme://host[:port]); cookie-authenticated writes
    /// must come from it.
    pub public_base_url: String,
    /// Uploads (documents and attachments) above this are answered with 413.
    pub max_upload_bytes: u64,
    /// A request body from which no byte comes for this long, while it is read, ends the
    /// request with 408 (`REDLINE_BODY_IDLE_TIMEOUT_SECS`).
    pub body_idle_timeout: std::time::Duration,
    /// How long the whole body of a request without credentials may take to arrive.
    pub anonymous_body_deadline: std::time::Duration,
    /// `REDLINE_TRUSTED_PROXIES`: whose forwarding headers name the client's address.
    pub trusted_proxies: crate::client_addr::TrustedProxies,
    /// Every answer carries `Strict-Transport-Security` (the public base URL is https and
    /// `REDLINE_HSTS` is on).
    pub hsts: bool,
    /// Event streams open at once per credential (`REDLINE_MAX_STREAMS_PER_KEY`) and per
    /// client address (`REDLINE_MAX_STREAMS_PER_ADDRESS`), on this replica.
    pub max_streams_per_key: usize,
    pub max_streams_per_address: usize,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            max_body_bytes: 104_857_600,
            contact_email: "support@redline.invalid".to_owned(),
            public_base_url: "http://127.0.0.1:8080".to_owned(),
            max_upload_bytes: 52_428_800,
            body_idle_timeout: std::time::Duration::from_secs(30),
            anonymous_body_deadline: std::time::Duration::from_secs(10),
            trusted_proxies: crate::client_addr::TrustedProxies::default(),
            hsts: false,
            max_streams_per_key: 20,
            max_streams_per_address: 100,
        }
    }
}

/// Shared state of the handlers.
pub struct AppState {
    pub identity: Arc<Identity>,
    pub sessions: Arc<Sessions>,
    pub usage: Arc<Usage>,
    pub documents: Arc<Documents>,
    pub exports: Arc<Exports>,
    pub templates: Arc<Templates>,
    pub chat: Arc<Chat>,
    pub attachments: Arc<Attachments>,
    /// Answers kept for `Idempotency-Key` retries.
    pub idempotency: Arc<redline_core::idempotency::Idempotency>,
    pub webhooks: Arc<redline_core::webhooks::Webhooks>,
    pub health: Arc<dyn HealthCheck>,
    pub metrics: Arc<Metrics>,
    pub config: HttpConfig,
    /// The event streams open on this replica (built from `config`'s caps).
    pub streams: Arc<crate::streams::StreamSlots>,
    /// Turns true when this replica starts shutting down: `/readyz` answers 503 so that load
    /// balancers stop sending it requests, and event streams end with a `reconnect` event.
    pub draining: tokio::sync::watch::Receiver<bool>,
}

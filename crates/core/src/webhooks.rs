//! Webhooks (docs/api.md, "Webhooks"): endpoints an owner registers, and the sender that
//! delivers the outbox's messages, signed per the Standard Webhooks specification, at least
//! once, retried on a schedule with jitter, and gives an endpoint up after days of failure.

use std::sync::Arc;
use std::time::Duration;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use rand::{Rng, RngCore};
use redline_domain::page::{Page, PageRequest};
use redline_domain::time_util::Millis;
use redline_domain::webhook::{self, EventType, RetrySchedule, UrlProblem};
use redline_domain::Owner;
use redline_ports::jobs::Signal;
use redline_ports::{
    AttemptOutcome, ClaimedDelivery, Clock, Delivery, DeliveryAttempt, DeliveryStatus, EndpointChanges, EventBus,
    OutgoingWebhook, SendOutcome, StoreError, WebhookEndpoint, WebhookSender, WebhookStore,
};
use sha2::Sha256;

/// How the sender behaves (`REDLINE_WEBHOOK_*`, README.md "Configuration").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WebhookConfig {
    pub retries: RetrySchedule,
    /// The longest one request may take, connection included.
    pub timeout: Duration,
    /// Whether endpoints may be at loopback, private or link-local addresses.
    pub allow_private: bool,
}

impl Default for WebhookConfig {
    fn default() -> Self {
        Self { retries: RetrySchedule::default(), timeout: Duration::from_secs(10), allow_private: false }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    #[error("Webhook endpoint not found")]
    NotFound,
    #[error("Delivery not found")]
    DeliveryNotFound,
    #[error("url {0}")]
    BadUrl(UrlProblem),
    #[error("An account has at most {} webhook endpoints; delete one first.", webhook::MAX_ENDPOINTS)]
    TooMany,
    #[error(transparent)]
    Store(#[from] StoreError),
}

pub type WebhookResult<T> = Result<T, WebhookError>;

/// What a new endpoint is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEndpoint {
    pub url: String,
    pub description: String,
    pub events: Vec<EventType>,
}

/// How many deliveries one sender takes at a time.
const BATCH: i64 = 16;
/// How long a sender holds the deliveries it took: more than a request's timeout, so a live
/// sender never loses its claim; a dead one's claims are free again this long after.
const LEASE_MS: Millis = 60_000;
/// How often an idle sender looks for due deliveries (it also wakes at every job change).
const IDLE_POLL: Duration = Duration::from_secs(1);
/// How long finished deliveries are kept for the log.
pub const LOG_KEPT_MS: Millis = 30 * 24 * 60 * 60 * 1000;

pub struct Webhooks {
    store: Arc<dyn WebhookStore>,
    sender: Arc<dyn WebhookSender>,
    clock: Arc<dyn Clock>,
    config: WebhookConfig,
}

/// The `webhook-signature` header: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body` under
/// each secret, space-separated. A malformed secret signs nothing.
pub fn signature(secrets: &[&str], id: &str, timestamp_secs: i64, body: &str) -> String {
    secrets
        .iter()
        .filter_map(|secret| {
            let key = webhook::secret_key(secret)?;
            let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&key).ok()?;
            mac.update(format!("{id}.{timestamp_secs}.{body}").as_bytes());
            Some(format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes())))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    webhook::secret_from(&bytes)
}

impl Webhooks {
    pub fn new(
        store: Arc<dyn WebhookStore>,
        sender: Arc<dyn WebhookSender>,
        clock: Arc<dyn Clock>,
        config: WebhookConfig,
    ) -> Self {
        Self { store, sender, clock, config }
    }

    fn check_url(&self, url: &str) -> WebhookResult<()> {
        webhook::check_url(url, self.config.allow_private).map(|_| ()).map_err(WebhookError::BadUrl)
    }

    /// Registers an endpoint with a fresh secret.
    pub async fn create(&self, owner: Owner, new: NewEndpoint) -> WebhookResult<WebhookEndpoint> {
        self.check_url(&new.url)?;
        let now = self.clock.now_ms();
        let endpoint = WebhookEndpoint {
            id: format!("we_{}", uuid::Uuid::new_v4().simple()),
            owner,
            url: new.url,
            description: new.description,
            events: new.events,
            secret: new_secret(),
            previous_secret: None,
            previous_secret_until: None,
            disabled_reason: None,
            failing_since: None,
            created_at: now,
            updated_at: now,
        };
        match self.store.create_webhook_endpoint(&endpoint, webhook::MAX_ENDPOINTS).await {
            Ok(()) => Ok(endpoint),
            Err(StoreError::LimitReached) => Err(WebhookError::TooMany),
            Err(e) => Err(e.into()),
        }
    }

    pub async fn list(&self, owner: Owner) -> WebhookResult<Vec<WebhookEndpoint>> {
        Ok(self.store.webhook_endpoints(owner).await?)
    }

    pub async fn get(&self, owner: Owner, id: &str) -> WebhookResult<WebhookEndpoint> {
        self.store.webhook_endpoint(owner, id).await?.ok_or(WebhookError::NotFound)
    }

    /// Changes an endpoint; `enabled: Some(false)` disables it (its owed deliveries are given
    /// up), `Some(true)` enables it again.
    pub async fn update(
        &self,
        owner: Owner,
        id: &str,
        mut changes: EndpointChanges,
        enabled: Option<bool>,
    ) -> WebhookResult<WebhookEndpoint> {
        if let Some(url) = &changes.url {
            self.check_url(url)?;
        }
        changes.disabled_reason = enabled.map(|on| (!on).then(|| "disabled by its owner".to_owned()));
        let now = self.clock.now_ms();
        self.store.update_webhook_endpoint(owner, id, &changes, now).await?.ok_or(WebhookError::NotFound)
    }

    /// A new secret; the one before keeps signing for a day
    /// ([`webhook::ROTATION_OVERLAP_MS`]), so receivers can switch without losing a message.
    pub async fn rotate(&self, owner: Owner, id: &str) -> WebhookResult<WebhookEndpoint> {
        let now = self.clock.now_ms();
        self.store
            .rotate_webhook_secret(owner, id, &new_secret(), now, now + webhook::ROTATION_OVERLAP_MS)
            .await?
            .ok_or(WebhookError::NotFound)
    }

    pub async fn delete(&self, owner: Owner, id: &str) -> WebhookResult<()> {
        if self.store.delete_webhook_endpoint(owner, id).await? {
            Ok(())
        } else {
            Err(WebhookError::NotFound)
        }
    }

    /// A page of the endpoint's delivery log, newest first, with each delivery's attempts.
    pub async fn deliveries(
        &self,
        owner: Owner,
        id: &str,
        page: &PageRequest,
    ) -> WebhookResult<Page<(Delivery, Vec<DeliveryAttempt>)>> {
        self.get(owner, id).await?;
        Ok(self.store.webhook_deliveries(owner, id, page).await?)
    }

    /// "Send again": the delivery is owed again now, under its own id (a receiver that took
    /// it already can tell).
    pub async fn redeliver(&self, owner: Owner, id: &str, delivery_id: &str) -> WebhookResult<Delivery> {
        self.get(owner, id).await?;
        self.store
            .redeliver_webhook(owner, id, delivery_id, self.clock.now_ms())
            .await?
            .ok_or(WebhookError::DeliveryNotFound)
    }

    /// Sends what is due until `draining` turns true: at once after every job change (whose
    /// transaction queued its messages), else every second.
    pub async fn run(self: Arc<Self>, bus: Arc<dyn EventBus>, mut draining: tokio::sync::watch::Receiver<bool>) {
        let mut signals = bus.subscribe();
        let mut last_purge: Millis = 0;
        loop {
            if *draining.borrow() {
                return;
            }
            let sent = match self.send_due().await {
                Ok(n) => n,
                Err(e) => {
                    tracing::warn!(error = %e, "could not read the webhook outbox");
                    0
                }
            };
            let now = self.clock.now_ms();
            if now - last_purge > 10 * 60 * 1000 {
                last_purge = now;
                if let Err(e) = self.store.purge_webhook_deliveries(now - LOG_KEPT_MS, 1000).await {
                    tracing::warn!(error = %e, "could not delete old webhook deliveries");
                }
            }
            if sent > 0 {
                continue;
            }
            // Waits for a job change (its transaction may have queued messages) or the next
            // look; other signals (a stream's events) do not make it look sooner.
            let next_look = tokio::time::Instant::now() + IDLE_POLL;
            let mut closed = false;
            loop {
                tokio::select! {
                    () = tokio::time::sleep_until(next_look) => break,
                    signal = signals.recv() => match signal {
                        Ok(Signal::Job(_)) => break,
                        Ok(_) => {}
                        // A lagging receiver only missed hints: look now.
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => break,
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                            closed = true;
                            break;
                        }
                    },
                    _ = draining.wait_for(|d| *d) => return,
                }
            }
            // No bus any more (shutting down): look once a second.
            if closed {
                tokio::time::sleep_until(next_look).await;
                signals = bus.subscribe();
            }
        }
    }

    /// Takes the due deliveries and sends them, concurrently; answers how many.
    pub async fn send_due(&self) -> Result<usize, StoreError> {
        let now = self.clock.now_ms();
        let taken = self.store.claim_webhook_deliveries(now, now + LEASE_MS, BATCH).await?;
        let n = taken.len();
        futures_util::future::join_all(taken.into_iter().map(|claimed| self.attempt(claimed))).await;
        Ok(n)
    }

    async fn attempt(&self, claimed: ClaimedDelivery) {
        let ClaimedDelivery { delivery, endpoint, lease_token } = claimed;
        let started = self.clock.now_ms();
        let timestamp = started.div_euclid(1000);
        let secrets = endpoint.signing_secrets(started);
        let headers = vec![
            ("content-type", "application/json".to_owned()),
            ("user-agent", "Redline-Webhooks/1".to_owned()),
            ("webhook-id", delivery.id.clone()),
            ("webhook-timestamp", timestamp.to_string()),
            ("webhook-signature", signature(&secrets, &delivery.id, timestamp, &delivery.payload)),
        ];
        let clock = std::time::Instant::now();
        let sent = self
            .sender
            .send(OutgoingWebhook {
                url: &endpoint.url,
                headers,
                body: &delivery.payload,
                timeout: self.config.timeout,
            })
            .await;
        let latency_ms = i64::try_from(clock.elapsed().as_millis()).unwrap_or(i64::MAX);
        let now = self.clock.now_ms();
        let number = delivery.attempts + 1;
        let (status_code, error) = match &sent {
            SendOutcome::Answered(code) if (200..300).contains(code) => (Some(i32::from(*code)), None),
            SendOutcome::Answered(code) => (Some(i32::from(*code)), Some(format!("the endpoint answered HTTP {code}"))),
            SendOutcome::Failed(why) => (None, Some(why.clone())),
        };
        let attempt = DeliveryAttempt { attempt: number, at: started, status_code, latency_ms, error };
        let outcome = if attempt.error.is_none() {
            AttemptOutcome { attempt, status: DeliveryStatus::Delivered, next_attempt_at: now, disable_endpoint: None }
        } else {
            let jitter: f64 = rand::thread_rng().gen();
            let tries = u32::try_from(number).unwrap_or(u32::MAX);
            let next = self.config.retries.next_attempt(delivery.created_at, tries, now, jitter);
            let failing_since = endpoint.failing_since.unwrap_or(started);
            let disable = (now - failing_since >= self.config.retries.give_up_after).then(|| {
                format!(
                    "Every delivery failed for {} hours (last: {}).",
                    self.config.retries.give_up_after / 3_600_000,
                    attempt.error.as_deref().unwrap_or("no answer")
                )
            });
            match next {
                Some(at) if disable.is_none() => AttemptOutcome {
                    attempt,
                    status: DeliveryStatus::Pending,
                    next_attempt_at: at,
                    disable_endpoint: None,
                },
                _ => AttemptOutcome {
                    attempt,
                    status: DeliveryStatus::Failed,
                    next_attempt_at: now,
                    disable_endpoint: disable,
                },
            }
        };
        match self.store.record_webhook_attempt(&delivery.id, &lease_token, &outcome).await {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!(delivery = %delivery.id, "a webhook delivery's claim was taken over while it was sent")
            }
            Err(e) => tracing::warn!(delivery = %delivery.id, error = %e, "could not record a webhook attempt"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_follow_the_specification() {
        // The example of the Standard Webhooks specification's reference tests.
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
        let body = r#"{"test": 2432232314}"#;
        let sig = signature(&[secret], id, 1614265330, body);
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        let both = signature(&[secret, secret], id, 1614265330, body);
        assert_eq!(both, format!("{sig} {sig}"));
        assert_eq!(signature(&["nope"], id, 1, body), "");
    }
}

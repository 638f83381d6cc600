//! Webhooks: the endpoints an owner registers, the messages owed to them (a durable outbox in
//! the database, written in the transaction of the change they tell of), each delivery's
//! attempts, and the sender that makes the HTTP request.

use std::time::Duration;

use redline_domain::page::{Page, PageRequest};
use redline_domain::time_util::{iso8601, Millis};
use redline_domain::webhook::EventType;
use redline_domain::Owner;
use serde_json::{json, Value};

use crate::error::StoreError;

/// A registered endpoint. Its secret signs every message; after a rotation the one before
/// signs too, until `previous_secret_until`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookEndpoint {
    /// `we_` + 32 hex.
    pub id: String,
    pub owner: Owner,
    pub url: String,
    pub description: String,
    pub events: Vec<EventType>,
    pub secret: String,
    pub previous_secret: Option<String>,
    pub previous_secret_until: Option<Millis>,
    /// Set when the endpoint was switched off, by its owner or after failing for days.
    pub disabled_reason: Option<String>,
    /// Since when every attempt failed (cleared by a success).
    pub failing_since: Option<Millis>,
    pub created_at: Millis,
    pub updated_at: Millis,
}

impl WebhookEndpoint {
    pub fn enabled(&self) -> bool {
        self.disabled_reason.is_none()
    }

    /// The secrets that sign a message sent at `now`: the current one, and the one before
    /// while its overlap lasts.
    pub fn signing_secrets(&self, now: Millis) -> Vec<&str> {
        let mut secrets = vec![self.secret.as_str()];
        if let (Some(previous), Some(until)) = (&self.previous_secret, self.previous_secret_until) {
            if now < until {
                secrets.push(previous);
            }
        }
        secrets
    }
}

/// What an update of an endpoint changes (`None`: unchanged).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndpointChanges {
    pub url: Option<String>,
    pub description: Option<String>,
    pub events: Option<Vec<EventType>>,
    /// `Some(None)` enables it again (and forgets its failures); `Some(Some(reason))` disables it.
    pub disabled_reason: Option<Option<String>>,
}

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryStatus {
    /// Owed: tried at `next_attempt_at`.
    Pending,
    Delivered,
    /// Given up (retries ran out, or the endpoint was disabled).
    Failed,
}

impl DeliveryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(DeliveryStatus::Pending),
            "delivered" => Some(DeliveryStatus::Delivered),
            "failed" => Some(DeliveryStatus::Failed),
            _ => None,
        }
    }
}

/// One message owed to one endpoint. Its id is the `webhook-id` of every attempt, so a
/// receiver that saw it already can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// `msg_` + 32 hex.
    pub id: String,
    pub endpoint_id: String,
    pub owner: Owner,
    pub event: EventType,
    /// The JSON body sent, byte for byte the same on every attempt.
    pub payload: String,
    pub created_at: Millis,
    pub status: DeliveryStatus,
    pub attempts: i32,
    pub next_attempt_at: Millis,
    pub last_status_code: Option<i32>,
    pub last_error: Option<String>,
    pub delivered_at: Option<Millis>,
}

/// One attempt of a delivery, for the delivery log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryAttempt {
    /// 1, 2, 3 …
    pub attempt: i32,
    pub at: Millis,
    pub status_code: Option<i32>,
    pub latency_ms: i64,
    pub error: Option<String>,
}

/// A delivery taken by one sender, with what it needs to send it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedDelivery {
    pub delivery: Delivery,
    pub endpoint: WebhookEndpoint,
    /// Names this sender's claim: only it records the attempt.
    pub lease_token: String,
}

/// What one attempt came to, and what follows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptOutcome {
    pub attempt: DeliveryAttempt,
    /// `Delivered`, `Pending` (retried at `next_attempt_at`) or `Failed` (given up).
    pub status: DeliveryStatus,
    pub next_attempt_at: Millis,
    /// Disables the endpoint with this reason (it failed for too long).
    pub disable_endpoint: Option<String>,
}

/// A message of an event: the body every delivery of it sends (`type`, `timestamp`, `data`,
/// as the Standard Webhooks specification lays it out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookMessage {
    pub owner: Owner,
    pub event: EventType,
    pub payload: String,
}

impl WebhookMessage {
    pub fn new(owner: Owner, event: EventType, at: Millis, data: Value) -> Self {
        let payload = json!({ "type": event.as_str(), "timestamp": iso8601(at), "data": data }).to_string();
        Self { owner, event, payload }
    }
}

#[cfg_attr(feature = "mocks", mockall::automock)]
#[async_trait::async_trait]
pub trait WebhookStore: Send + Sync {
    /// Adds an endpoint, unless the owner has `max` already (then `StoreError::LimitReached`).
    async fn create_webhook_endpoint(&self, endpoint: &WebhookEndpoint, max: usize) -> Result<(), StoreError>;

    /// The owner's endpoints, oldest first.
    async fn webhook_endpoints(&self, owner: Owner) -> Result<Vec<WebhookEndpoint>, StoreError>;

    /// One of the owner's endpoints; `None` for another owner's.
    async fn webhook_endpoint(&self, owner: Owner, id: &str) -> Result<Option<WebhookEndpoint>, StoreError>;

    /// Applies `changes` to one of the owner's endpoints at `now`; answers it changed, `None`
    /// when there is none. Disabling it MUST give up its pending deliveries.
    async fn update_webhook_endpoint(
        &self,
        owner: Owner,
        id: &str,
        changes: &EndpointChanges,
        now: Millis,
    ) -> Result<Option<WebhookEndpoint>, StoreError>;

    /// Replaces the endpoint's secret with `secret`; the one before signs until
    /// `previous_until`. `None` when there is no such endpoint of the owner.
    async fn rotate_webhook_secret(
        &self,
        owner: Owner,
        id: &str,
        secret: &str,
        now: Millis,
        previous_until: Millis,
    ) -> Result<Option<WebhookEndpoint>, StoreError>;

    /// Deletes an endpoint with its deliveries; answers whether it was the owner's.
    async fn delete_webhook_endpoint(&self, owner: Owner, id: &str) -> Result<bool, StoreError>;

    /// Queues `message` for every enabled endpoint of its owner that asked for its event;
    /// answers how many deliveries were queued. (Job changes queue theirs inside the job's
    /// own transaction: [`crate::JobStore::update_job`].)
    async fn enqueue_webhook(&self, message: &WebhookMessage, now: Millis) -> Result<usize, StoreError>;

    /// Takes up to `limit` pending deliveries due at `now` whose claim is free, for one
    /// sender until `lease_until`. A delivery MUST NOT be taken by two senders (of any
    /// replica) while the first one's lease lasts.
    async fn claim_webhook_deliveries(
        &self,
        now: Millis,
        lease_until: Millis,
        limit: i64,
    ) -> Result<Vec<ClaimedDelivery>, StoreError>;

    /// Records an attempt of a claimed delivery and what follows it, if the claim is still
    /// this sender's (answers whether it was); on success clears the endpoint's failures.
    async fn record_webhook_attempt(
        &self,
        delivery_id: &str,
        lease_token: &str,
        outcome: &AttemptOutcome,
    ) -> Result<bool, StoreError>;

    /// A page of the endpoint's deliveries, newest first (by `created_at`, then id), each with
    /// its attempts (oldest first).
    async fn webhook_deliveries(
        &self,
        owner: Owner,
        endpoint_id: &str,
        page: &PageRequest,
    ) -> Result<Page<(Delivery, Vec<DeliveryAttempt>)>, StoreError>;

    /// Owes a delivery of the owner's endpoint again, due at `now` (its id unchanged); `None`
    /// when the endpoint has no such delivery.
    async fn redeliver_webhook(
        &self,
        owner: Owner,
        endpoint_id: &str,
        delivery_id: &str,
        now: Millis,
    ) -> Result<Option<Delivery>, StoreError>;

    /// Deletes finished deliveries (and their attempts) made before `before`, at most
    /// `limit`; answers how many went.
    async fn purge_webhook_deliveries(&self, before: Millis, limit: i64) -> Result<usize, StoreError>;
}

/// What a sender answers for one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendOutcome {
    /// The receiver answered this status (any).
    Answered(u16),
    /// No answer: refused address, connection failure, timeout. The text says which.
    Failed(String),
}

/// One signed HTTP request to an endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingWebhook<'a> {
    pub url: &'a str,
    pub headers: Vec<(&'static str, String)>,
    pub body: &'a str,
    pub timeout: Duration,
}

/// Sends webhook requests: POST, no redirect followed, and (unless the operator allows it)
/// never to a loopback, private or link-local address, whatever the host name resolves to.
#[async_trait::async_trait]
pub trait WebhookSender: Send + Sync {
    async fn send(&self, request: OutgoingWebhook<'_>) -> SendOutcome;
}

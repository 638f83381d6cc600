//! The ports of Redline: what the core needs from the world, as traits. Adapters implement
//! them; `core` depends only on these traits, never on an adapter.
//!
//! Each trait states its contract in its doc comments ("MUST return …"); the storage
//! contract suite in `redline-storage` checks every backend against those sentences.

pub mod attachments;
pub mod blobs;
pub mod clock;
pub mod documents;
pub mod error;
pub mod export;
pub mod files;
pub mod idempotency;
pub mod identity;
pub mod jobs;
pub mod llm;
pub mod mail;
pub mod ocr;
pub mod records;
pub mod sessions;
pub mod templates;
pub mod usage;
pub mod webhooks;

pub use attachments::{AttachmentSearch, AttachmentStore};
pub use blobs::{BlobError, BlobStore};
pub use clock::{Clock, SystemClock};
pub use documents::{DocumentConverter, DocumentStore, HtmlSections};
pub use error::StoreError;
pub use export::{DocumentExporter, ExportError, ImageSource, TrackedChange, TrackedDocument, TrackedPart};
pub use files::FileIndex;
pub use idempotency::{ClaimRef, IdempotencyClaim, IdempotencyStore, StoredAnswer};
pub use identity::IdentityStore;
pub use jobs::{EventBus, HistoryStore, JobStore};
pub use llm::{LanguageModel, LlmError};
pub use mail::{MailError, Mailer};
pub use ocr::{Ocr, OcrError};
pub use sessions::SessionStore;
pub use templates::TemplateStore;
pub use usage::UsageStore;
pub use webhooks::{
    AttemptOutcome, ClaimedDelivery, Delivery, DeliveryAttempt, DeliveryStatus, EndpointChanges, OutgoingWebhook,
    SendOutcome, WebhookEndpoint, WebhookMessage, WebhookSender, WebhookStore,
};

/// Liveness of the backing store, for `/readyz`.
#[cfg_attr(feature = "mocks", mockall::automock)]
#[async_trait::async_trait]
pub trait HealthCheck: Send + Sync {
    /// MUST return `Ok` only when a round trip to the database succeeded just now.
    async fn ping(&self) -> Result<(), StoreError>;
}

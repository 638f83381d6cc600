//! Sessions (one document each), as far as listings need them.

use redline_domain::Owner;

use crate::error::StoreError;
use crate::records::SessionSummary;

#[cfg_attr(feature = "mocks", mockall::automock)]
#[async_trait::async_trait]
pub trait SessionStore: Send + Sync {
    /// The owner's sessions, most recently updated first. MUST never return another owner's.
    async fn list_sessions(&self, owner: Owner) -> Result<Vec<SessionSummary>, StoreError>;
}

//! Sessions (one document each), as far as listings need them.

use redline_domain::Owner;

use crate::error::StoreError;
use crate::records::SessionSummary;

#[cfg_attr(feature = "mocks", mockall::automock)]
#[async_trait::async_trait]
pub trait SessionStore: Send + Sync {
    /// The owner's sessions, most recently updated first. MUST never return another owner's.
    async fn list_sessions(&self, owner: Owner) -> Result<Vec<SessionSummary>, StoreError>;

    /// Creates the session (with an empty document) unless it exists; never changes an
    /// existing one.
    async fn ensure_session(
        &self,
        owner: Owner,
        session: &redline_domain::SessionId,
        now: redline_domain::time_util::Millis,
    ) -> Result<(), StoreError>;
}

//! Sessions (one document each), as far as listings need them.

use redline_domain::page::{Page, PageRequest};
use redline_domain::Owner;

use crate::error::StoreError;
use crate::records::SessionSummary;

#[cfg_attr(feature = "mocks", mockall::automock)]
#[async_trait::async_trait]
pub trait SessionStore: Send + Sync {
    /// One page of the owner's sessions, most recently updated first (ties by session id),
    /// starting after `page.after` (its number an `updated_at`, its id a session id). MUST
    /// never return another owner's; MUST read through an index that starts with the owner.
    async fn list_sessions(&self, owner: Owner, page: &PageRequest) -> Result<Page<SessionSummary>, StoreError>;

    /// Sets the session's title, changing nothing else (not `updated_at`). `None` when the
    /// owner has no such session.
    async fn rename_session(
        &self,
        owner: Owner,
        session: &redline_domain::SessionId,
        title: &str,
    ) -> Result<Option<SessionSummary>, StoreError>;

    /// Creates the session (with an empty document) unless it exists; never changes an
    /// existing one.
    async fn ensure_session(
        &self,
        owner: Owner,
        session: &redline_domain::SessionId,
        now: redline_domain::time_util::Millis,
    ) -> Result<(), StoreError>;
}

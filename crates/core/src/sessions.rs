//! Listing and renaming sessions.

use std::sync::Arc;

use redline_domain::page::{Page, PageRequest};
use redline_domain::{Owner, SessionId};
use redline_ports::records::SessionSummary;
use redline_ports::{SessionStore, StoreError};

pub struct Sessions {
    store: Arc<dyn SessionStore>,
}

impl Sessions {
    pub fn new(store: Arc<dyn SessionStore>) -> Self {
        Self { store }
    }

    /// One page of the owner's sessions, most recently updated first. Consumes no operations.
    pub async fn list(&self, owner: Owner, page: &PageRequest) -> Result<Page<SessionSummary>, StoreError> {
        self.store.list_sessions(owner, page).await
    }

    /// Gives the session the title (already [`redline_domain::title::clean`]); `None` when
    /// the owner has no such session. Consumes no operations.
    pub async fn rename(
        &self,
        owner: Owner,
        session: &SessionId,
        title: &str,
    ) -> Result<Option<SessionSummary>, StoreError> {
        self.store.rename_session(owner, session, title).await
    }
}

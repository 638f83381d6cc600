//! Listing sessions.

use std::sync::Arc;

use redline_domain::page::{Page, PageRequest};
use redline_domain::Owner;
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
}

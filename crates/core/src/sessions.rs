//! Listing sessions.

use std::sync::Arc;

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

    /// The owner's sessions, newest first. Consumes no operations.
    pub async fn list(&self, owner: Owner) -> Result<Vec<SessionSummary>, StoreError> {
        self.store.list_sessions(owner).await
    }
}

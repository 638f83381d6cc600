//! What the AI needs of a session's attachments: their names and a ranked passage search.
//! (The attachments issue builds uploads, processing and the index behind this port.)

use redline_domain::{Owner, SessionId};

use crate::error::StoreError;

/// A passage of an attachment that matched a search.
#[derive(Debug, Clone, PartialEq)]
pub struct Passage {
    pub attachment_id: String,
    pub filename: String,
    pub chunk_index: i64,
    pub text: String,
    /// Higher is better.
    pub score: f64,
}

/// An attachment of a session, as the outline lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttachmentSummary {
    pub attachment_id: String,
    pub filename: String,
}

#[async_trait::async_trait]
pub trait AttachmentSearch: Send + Sync {
    /// The best passages of the session's processed attachments for `query`, best first.
    async fn search_passages(
        &self,
        owner: Owner,
        session: &SessionId,
        query: &str,
        limit: i64,
    ) -> Result<Vec<Passage>, StoreError>;

    /// The session's processed attachments.
    async fn session_attachments(
        &self,
        owner: Owner,
        session: &SessionId,
    ) -> Result<Vec<AttachmentSummary>, StoreError>;
}

//! What is known of the files kept in the blob store for a session: images extracted from
//! uploads and rendered exports. The bytes are in the `BlobStore`; these rows say who owns
//! them, so that deleting a session deletes them.

use redline_domain::time_util::Millis;
use redline_domain::{Owner, SessionId};

use crate::error::StoreError;

/// An image extracted from an uploaded file (blob `images/<image_id>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRecord {
    /// An unguessable capability: whoever has it may read the image.
    pub image_id: String,
    pub owner: Owner,
    pub session_id: SessionId,
    pub content_type: String,
    pub size_bytes: i64,
    pub created_at: Millis,
}

/// A rendered export waiting to be downloaded through a signed link (blob `exports/<export_id>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportFileRecord {
    pub export_id: String,
    pub owner: Owner,
    pub session_id: SessionId,
    /// The API name of the format (`docx`, `pdf`, …).
    pub format: String,
    pub filename: String,
    pub content_type: String,
    pub size_bytes: i64,
    pub created_at: Millis,
    pub expires_at: Millis,
}

/// The files of one session, by id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionFiles {
    pub image_ids: Vec<String>,
    pub export_ids: Vec<String>,
}

#[cfg_attr(feature = "mocks", mockall::automock)]
#[async_trait::async_trait]
pub trait FileIndex: Send + Sync {
    /// Records images of one session in one transaction. MUST return `NotFound` (and record
    /// nothing) when an image's session does not exist for its owner, and `Duplicate` for an
    /// id already recorded. The rows go when their session is deleted.
    async fn insert_images(&self, images: &[ImageRecord]) -> Result<(), StoreError>;

    /// The image with this id, whoever owns it (the id is the capability).
    async fn image(&self, image_id: &str) -> Result<Option<ImageRecord>, StoreError>;

    /// Records a rendered export. Same rules as `insert_images`.
    async fn insert_export(&self, export: &ExportFileRecord) -> Result<(), StoreError>;

    async fn export_file(&self, export_id: &str) -> Result<Option<ExportFileRecord>, StoreError>;

    /// Everything recorded for the session (empty when it does not exist), so that its blobs
    /// can be deleted with it.
    async fn session_files(&self, owner: Owner, session: &SessionId) -> Result<SessionFiles, StoreError>;

    /// Deletes the export rows that expired before `now` and answers their ids (their blobs
    /// are the caller's to delete).
    async fn take_expired_exports(&self, now: Millis) -> Result<Vec<String>, StoreError>;
}

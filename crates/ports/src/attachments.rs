//! Attachments (docs/api.md, "Attachments"): files attached to a session for the AI to search. Their
//! bytes are in the `BlobStore`; their rows, their extracted passages and the full-text index
//! over those passages are in the database (`AttachmentStore`). The AI reads them through
//! `AttachmentSearch`: their names and a ranked passage search.

use redline_domain::page::{Page, PageRequest};
use redline_domain::time_util::Millis;
use redline_domain::{Owner, SessionId};

use crate::error::StoreError;
use crate::jobs::{JobRecord, JobUpdate};

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

/// What [`AttachmentStore::replace_passages`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replaced {
    /// The attachment no longer exists: nothing was written.
    Gone,
    /// A job was given and is no longer in progress (finished, cancelled, or queued again
    /// for another worker): nothing was written.
    NotRunning,
    /// The passages are indexed and the attachment is ready (and the job given, if any, got
    /// its update).
    Ready,
}

/// An attachment of a session, as the outline lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttachmentSummary {
    pub attachment_id: String,
    pub filename: String,
}

#[async_trait::async_trait]
pub trait AttachmentSearch: Send + Sync {
    /// The best passages of the session's processed attachments for `query`, best first, at
    /// most `limit`. Any text is a valid query: words are looked up (any of them may match,
    /// passages with more and rarer ones rank higher) and everything else is ignored, so
    /// quotes, operators or a query with no words MUST never be an error (no words: empty).
    /// MUST never return a passage of another owner's or another session's attachment.
    async fn search_passages(
        &self,
        owner: Owner,
        session: &SessionId,
        query: &str,
        limit: i64,
    ) -> Result<Vec<Passage>, StoreError>;

    /// The session's processed (searchable) attachments, oldest first.
    async fn session_attachments(
        &self,
        owner: Owner,
        session: &SessionId,
    ) -> Result<Vec<AttachmentSummary>, StoreError>;
}

/// Where an attachment is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttachmentState {
    /// A pre-signed upload URL was handed out; no bytes yet.
    AwaitingUpload,
    /// The bytes are stored and a processing job is queued or running.
    Processing,
    /// Text extracted and indexed: its passages are searchable.
    Ready,
    /// Processing failed; `error` says why.
    Failed,
    /// Its processing job was cancelled (copied from the job when the job is deleted).
    Cancelled,
}

impl AttachmentState {
    pub fn as_str(self) -> &'static str {
        match self {
            AttachmentState::AwaitingUpload => "awaiting_upload",
            AttachmentState::Processing => "processing",
            AttachmentState::Ready => "ready",
            AttachmentState::Failed => "failed",
            AttachmentState::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "awaiting_upload" => AttachmentState::AwaitingUpload,
            "processing" => AttachmentState::Processing,
            "ready" => AttachmentState::Ready,
            "failed" => AttachmentState::Failed,
            "cancelled" => AttachmentState::Cancelled,
            _ => return None,
        })
    }
}

/// How the attachment arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttachmentSource {
    /// `POST /v1/attachments/upload`.
    Upload,
    /// A pre-signed `PUT`.
    Presigned,
    /// `POST /v1/documents/upload?index=true`: the uploaded document, indexed as it was loaded.
    Document,
}

impl AttachmentSource {
    pub fn as_str(self) -> &'static str {
        match self {
            AttachmentSource::Upload => "upload",
            AttachmentSource::Presigned => "presigned",
            AttachmentSource::Document => "document",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "upload" => AttachmentSource::Upload,
            "presigned" => AttachmentSource::Presigned,
            "document" => AttachmentSource::Document,
            _ => return None,
        })
    }
}

/// An attachment as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttachmentRecord {
    pub attachment_id: String,
    pub owner: Owner,
    pub session_id: SessionId,
    /// Already neutralised (`redline_domain::attachment::neutralise_filename`).
    pub filename: String,
    pub content_type: String,
    /// Bytes of the file (the size declared for a pre-signed upload until it arrives).
    pub size_bytes: i64,
    pub state: AttachmentState,
    pub source: AttachmentSource,
    /// The processing job (none for awaiting uploads and indexed documents).
    pub job_id: Option<String>,
    /// Why processing failed.
    pub error: Option<String>,
    /// The first characters of the extracted text (empty until ready).
    pub preview: String,
    /// Characters of extracted text.
    pub text_chars: i64,
    pub passage_count: i64,
    pub created_at: Millis,
    pub updated_at: Millis,
    /// Until when a pre-signed upload is accepted.
    pub upload_expires_at: Option<Millis>,
    /// How far processing got, once its job is gone (`Failed` or `Cancelled`); while the job
    /// exists, the job's own progress is the one shown.
    pub progress: i32,
}

/// The extracted text of an attachment, cut into passages for the index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtractedText {
    /// In reading order; a passage's `chunk_index` is its position here.
    pub passages: Vec<String>,
    pub preview: String,
    pub text_chars: i64,
}

#[async_trait::async_trait]
pub trait AttachmentStore: Send + Sync {
    /// Records a new attachment and, when given, its processing job, in one transaction.
    /// MUST return `NotFound` (and record nothing) when the session does not exist for the
    /// attachment's owner, and `Duplicate` for an attachment id already recorded.
    async fn insert_attachment(&self, attachment: &AttachmentRecord, job: Option<&JobRecord>)
        -> Result<(), StoreError>;

    /// The attachment with this id, whoever owns it (the caller checks the owner).
    async fn attachment(&self, attachment_id: &str) -> Result<Option<AttachmentRecord>, StoreError>;

    /// The attachment a processing job works on, whoever owns it.
    async fn attachment_of_job(&self, job_id: &str) -> Result<Option<AttachmentRecord>, StoreError>;

    /// One page of the session's attachments, oldest first (ties by attachment id), without
    /// pre-signed uploads whose window closed before `now`, starting after `page.after` (its
    /// number a `created_at`, its id an attachment id). `None` when the session does not exist
    /// for this owner. MUST read through an index that starts with the owner and the session.
    async fn list_attachments(
        &self,
        owner: Owner,
        session: &SessionId,
        now: Millis,
        page: &PageRequest,
    ) -> Result<Option<Page<AttachmentRecord>>, StoreError>;

    /// A pre-signed upload arrived: in one transaction, when the attachment is awaiting its
    /// upload and its window is open at `now`, MUST record its size, make it `Processing`
    /// with `job` and insert `job`; answers `false` and changes nothing otherwise (expired,
    /// already uploaded, deleted). Two concurrent calls MUST never both succeed.
    async fn start_processing(
        &self,
        attachment_id: &str,
        size_bytes: i64,
        job: &JobRecord,
        now: Millis,
    ) -> Result<bool, StoreError>;

    /// In one transaction: deletes every passage of the attachment, inserts `text.passages`
    /// (with `chunk_index` 0, 1, …) into the full-text index and makes the attachment
    /// `Ready` with the preview and counts; with `job` (a job id and an update), also applies
    /// the update to that job (as `JobStore::update_job` with `from = [InProgress]`), so that
    /// the attachment becomes ready and its processing job completed together or not at all.
    /// Re-running it (a job retried after a crash) MUST leave exactly one copy of each
    /// passage. Writes nothing, and answers [`Replaced::Gone`], when the attachment no longer
    /// exists, or [`Replaced::NotRunning`] when a job was given and is not `InProgress`.
    async fn replace_passages(
        &self,
        attachment_id: &str,
        text: &ExtractedText,
        job: Option<(&str, &JobUpdate)>,
        now: Millis,
    ) -> Result<Replaced, StoreError>;

    /// Makes the attachment `Failed` with `error`, removing any passages. `false` when it no
    /// longer exists.
    async fn mark_failed(&self, attachment_id: &str, error: &str, now: Millis) -> Result<bool, StoreError>;

    /// Deletes the attachment with its passages and their index entries. `false` when it did
    /// not exist. (Its job and blob are the caller's.)
    async fn delete_attachment(&self, attachment_id: &str) -> Result<bool, StoreError>;

    /// The ids of every attachment of the session, in any state, so that their blobs can be
    /// deleted with the session. (The rows, passages and index entries go with the session
    /// row itself.)
    async fn session_attachment_ids(&self, owner: Owner, session: &SessionId) -> Result<Vec<String>, StoreError>;

    /// The bytes of the owner's attachments (their files as uploaded, awaited uploads
    /// counting nothing). MUST read through an index that starts with the owner.
    async fn attachment_bytes(&self, owner: Owner) -> Result<u64, StoreError>;

    /// Deletes the owner's pre-signed uploads whose window closed before `now` and that never
    /// received their bytes; answers how many.
    async fn delete_expired_uploads(&self, owner: Owner, now: Millis) -> Result<u64, StoreError>;

    /// Whether the session exists for this owner.
    async fn session_exists(&self, owner: Owner, session: &SessionId) -> Result<bool, StoreError>;
}

//! Attachments (docs/api.md, "Attachments"): files attached to a session for the AI to search.
//!
//! An upload is streamed to the blob store under the size cap (never whole in memory), then
//! recorded with a queued `attachment_processing` job in one transaction. A worker runs the
//! job (`process.rs`): the file's text is extracted with the document converters, cut into
//! passages and written to the full-text index in one transaction that first removes what a
//! crashed earlier attempt may have written. Searches, listings and deletes check the owner;
//! pre-signed uploads (`presign.rs`) let a client `PUT` the bytes without its key.
//! Attachment processing is not billable.

mod presign;
mod process;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::BoxStream;
use rand::RngCore;
use redline_domain::attachment::{neutralise_filename, split_passages, PassageRules, TextBlock};
use redline_domain::formats::{SourceFormat, UnsupportedExtension};
use redline_domain::job::{JobStatus, JobType};
use redline_domain::page::{Page, PageRequest};
use redline_domain::time_util::Millis;
use redline_domain::{KeyId, Owner, Plan, SessionId};
use redline_ports::attachments::{
    AttachmentRecord, AttachmentSource, AttachmentState, ExtractedText, Passage, Replaced,
};
use redline_ports::jobs::{JobRecord, JobUpdate, Signal};
use redline_ports::{
    AttachmentSearch, AttachmentStore, BlobError, BlobStore, Clock, DocumentConverter, EventBus, HtmlSections,
    JobStore, SessionStore, StoreError,
};
use serde_json::json;

pub use presign::{SignedUpload, UploadSigner, UPLOAD_PATH};

/// Characters of extracted text kept as an attachment's preview.
pub const PREVIEW_CHARS: usize = 1000;

/// Tunables (README.md, "Configuration").
#[derive(Debug, Clone)]
pub struct AttachmentConfig {
    /// `REDLINE_MAX_ATTACHMENT_BYTES`: uploads above this are refused (413).
    pub max_bytes: u64,
    /// `REDLINE_PRESIGN_TTL_SECS`: how long a pre-signed upload URL works.
    pub presign_ttl: Duration,
    /// How long a worker's claim on a processing job lasts without renewal.
    pub lease: Duration,
    /// scheme://host[:port] of the service, for upload URLs.
    pub public_base_url: String,
    /// `REDLINE_FREE_ATTACHMENT_STORAGE_BYTES`: the free plan's attachment storage (the other
    /// plans' are `Plan::attachment_storage_bytes`).
    pub free_storage_bytes: u64,
}

impl Default for AttachmentConfig {
    fn default() -> Self {
        Self {
            max_bytes: 52_428_800,
            free_storage_bytes: Plan::Free.attachment_storage_bytes().unwrap_or(u64::MAX),
            presign_ttl: Duration::from_secs(900),
            lease: Duration::from_secs(30),
            public_base_url: "http://127.0.0.1:8080".to_owned(),
        }
    }
}

/// The ports attachments use.
pub struct AttachmentPorts {
    pub store: Arc<dyn AttachmentStore>,
    pub search: Arc<dyn AttachmentSearch>,
    pub jobs: Arc<dyn JobStore>,
    pub sessions: Arc<dyn SessionStore>,
    pub blobs: Arc<dyn BlobStore>,
    pub converter: Arc<dyn DocumentConverter>,
    pub html: Arc<dyn HtmlSections>,
    pub bus: Arc<dyn EventBus>,
    pub clock: Arc<dyn Clock>,
    /// The owners' plans (their attachment storage limits).
    pub plans: Arc<dyn redline_ports::IdentityStore>,
}

#[derive(Debug, thiserror::Error)]
pub enum AttachmentError {
    /// No attachment with this id (404).
    #[error("attachment not found")]
    NotFound,
    /// No attachment-processing job with this id (404).
    #[error("attachment processing job not found")]
    JobNotFound,
    /// The session does not exist for this owner (404).
    #[error("session not found")]
    SessionNotFound,
    /// The attachment (or job) belongs to another owner (403).
    #[error("this attachment belongs to another account")]
    Forbidden,
    /// 415 naming the extension and the supported ones.
    #[error(transparent)]
    Unsupported(#[from] UnsupportedExtension),
    /// Over the size cap (413). `size` when it is known (a declared size).
    #[error("the file is larger than {limit} bytes")]
    TooLarge { limit: u64, size: Option<u64> },
    /// The owner's attachments would pass the plan's storage limit (413).
    #[error("attachment storage full: {used} of {limit} bytes used, {adding} more asked")]
    StorageFull { used: u64, limit: u64, adding: u64 },
    /// A file with no bytes (422).
    #[error("the file is empty")]
    Empty,
    /// An unknown, forged or expired pre-signed upload URL (404).
    #[error("upload URL not found or expired")]
    UploadNotFound,
    /// The pre-signed upload already received its file (409); the attachment's id.
    #[error("this upload URL was already used")]
    AlreadyUploaded(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Blob(BlobError),
    #[error("worker failed: {0}")]
    Worker(String),
}

impl From<BlobError> for AttachmentError {
    fn from(e: BlobError) -> Self {
        match e {
            BlobError::TooLarge { limit } => AttachmentError::TooLarge { limit, size: None },
            other => AttachmentError::Blob(other),
        }
    }
}

pub type AttachmentResult<T> = Result<T, AttachmentError>;

/// A file streamed to the blob store, not yet recorded (see [`Attachments::receive`]).
#[derive(Debug)]
pub struct Received {
    pub attachment_id: String,
    pub filename: String,
    pub content_type: String,
    pub size_bytes: u64,
    blob_key: String,
}

/// A recorded attachment and its queued processing job (the 202 of an upload).
#[derive(Debug, Clone)]
pub struct Submitted {
    pub attachment: AttachmentRecord,
    pub job: JobRecord,
}

/// A pre-signed upload URL handed out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadTicket {
    pub attachment_id: String,
    pub upload_url: String,
    pub expires_at: Millis,
    /// The most bytes the `PUT` may carry (the declared size).
    pub max_bytes: u64,
}

/// A verified pre-signed upload that may receive its bytes now.
#[derive(Debug, Clone)]
pub struct UploadSlot {
    attachment: AttachmentRecord,
    /// The most bytes accepted: the declared size.
    pub max_bytes: u64,
}

/// An attachment as the API shows it: the row, and where its processing stands in the
/// vocabulary of jobs (`pending`, `in_progress`, `completed`, `failed`, `cancelled`, or
/// `awaiting_upload` before a pre-signed upload arrives).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttachmentView {
    pub record: AttachmentRecord,
    pub status: String,
    pub progress: i32,
    pub error: Option<String>,
}

/// Where a processing job stands (`GET /v1/attachments/status/{job_id}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessingStatus {
    pub job_id: String,
    pub attachment_id: String,
    pub status: String,
    pub progress: i32,
    pub error: Option<String>,
}

/// What is said of an attachment whose job is gone before it finished, when the job's end was
/// not copied onto it (the sweeper copies a failed or cancelled job's end before deleting it).
const STOPPED: &str = "Processing stopped before it finished; upload the file again.";

/// The view of an attachment given its job (when the job still exists). While the job decides
/// the status, its changes (progress, a cancel) count for `updated_at` too.
pub fn view(mut record: AttachmentRecord, job: Option<&JobRecord>) -> AttachmentView {
    let (status, progress, error) = match record.state {
        AttachmentState::AwaitingUpload => ("awaiting_upload".to_owned(), 0, None),
        AttachmentState::Ready => (JobStatus::Completed.as_str().to_owned(), 100, None),
        AttachmentState::Failed => {
            (JobStatus::Failed.as_str().to_owned(), job.map_or(record.progress, |j| j.progress), record.error.clone())
        }
        AttachmentState::Cancelled => (
            JobStatus::Cancelled.as_str().to_owned(),
            job.map_or(record.progress, |j| j.progress),
            record.error.clone(),
        ),
        AttachmentState::Processing => match job {
            Some(j) => {
                record.updated_at = record.updated_at.max(j.updated_at);
                let error =
                    matches!(j.status, JobStatus::Failed | JobStatus::Cancelled).then(|| j.error.clone()).flatten();
                (j.status.as_str().to_owned(), j.progress, error)
            }
            None => (JobStatus::Failed.as_str().to_owned(), 0, Some(STOPPED.to_owned())),
        },
    };
    AttachmentView { record, status, progress, error }
}

/// A fresh attachment id: `att_` + 32 hex characters (128 random bits).
pub fn new_attachment_id() -> String {
    let mut bytes = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("att_{}", hex::encode(bytes))
}

/// Whether `s` has the shape of an attachment id (anything else is not looked up).
pub fn is_attachment_id(s: &str) -> bool {
    s.strip_prefix("att_").is_some_and(|h| h.len() == 32 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Everything stored for an attachment lives under this blob prefix.
pub fn blob_prefix(attachment_id: &str) -> String {
    format!("attachments/{attachment_id}/")
}

/// A blob key of its own for each received upload: two `PUT`s racing on one pre-signed URL
/// never write (or clean up) each other's bytes.
fn new_blob_key(attachment_id: &str) -> String {
    let mut bytes = [0u8; 8];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("{}{}", blob_prefix(attachment_id), hex::encode(bytes))
}

/// The file name (neutralised) and its format; 415 for an extension not accepted.
fn checked_name(raw: &str) -> AttachmentResult<(String, SourceFormat)> {
    let filename = neutralise_filename(raw);
    let format = SourceFormat::from_filename(&filename)?;
    Ok((filename, format))
}

/// Text blocks cut into passages, with the preview and the character count.
pub fn extracted_text(blocks: &[TextBlock]) -> ExtractedText {
    let passages = split_passages(blocks, PassageRules::default());
    let text_chars = blocks.iter().map(|b| b.text.chars().count()).sum::<usize>();
    let mut preview = String::new();
    for block in blocks {
        if preview.chars().count() >= PREVIEW_CHARS {
            break;
        }
        if !preview.is_empty() {
            preview.push('\n');
        }
        preview.push_str(block.text.trim());
    }
    let preview: String = preview.chars().take(PREVIEW_CHARS).collect();
    ExtractedText { passages, preview, text_chars: i64::try_from(text_chars).unwrap_or(i64::MAX) }
}

pub struct Attachments {
    ports: AttachmentPorts,
    signer: UploadSigner,
    config: AttachmentConfig,
}

fn ms(d: Duration) -> Millis {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

fn size_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Attachments {
    pub fn new(ports: AttachmentPorts, signer: UploadSigner, config: AttachmentConfig) -> Self {
        Self { ports, signer, config }
    }

    pub fn config(&self) -> &AttachmentConfig {
        &self.config
    }

    fn now(&self) -> Millis {
        self.ports.clock.now_ms()
    }

    /// The owner's attachment bytes and the plan's limit (`None`: unlimited).
    pub async fn storage(&self, owner: Owner) -> AttachmentResult<(u64, Option<u64>)> {
        let plan = self.ports.plans.plan_of(owner).await?.plan;
        let limit = match plan {
            Plan::Free => Some(self.config.free_storage_bytes),
            plan => plan.attachment_storage_bytes(),
        };
        Ok((self.ports.store.attachment_bytes(owner).await?, limit))
    }

    /// Refuses `adding` more bytes of attachments past the owner's plan limit. Checked when a
    /// file is recorded: uploads that finish at the same moment may each pass, so the limit
    /// can be passed by the files in flight, never by a later one.
    async fn check_storage(&self, owner: Owner, adding: u64) -> AttachmentResult<()> {
        let (used, limit) = self.storage(owner).await?;
        match limit {
            Some(limit) if used.saturating_add(adding) > limit => {
                Err(AttachmentError::StorageFull { used, limit, adding })
            }
            _ => Ok(()),
        }
    }

    /// Checks an upload's file name (415 before any byte is read) and streams `chunks` to the
    /// blob store under the size cap (`TooLarge` beyond it, nothing left behind). The file is
    /// not recorded yet: [`submit`](Self::submit) or [`discard`](Self::discard) it.
    pub async fn receive(
        &self,
        raw_filename: &str,
        chunks: BoxStream<'_, Result<Bytes, std::io::Error>>,
    ) -> AttachmentResult<Received> {
        let (filename, format) = checked_name(raw_filename)?;
        let attachment_id = new_attachment_id();
        let blob_key = new_blob_key(&attachment_id);
        let size = self.ports.blobs.put_stream(&blob_key, chunks, self.config.max_bytes).await?;
        let received = Received {
            attachment_id,
            filename,
            content_type: format.content_type().to_owned(),
            size_bytes: size,
            blob_key,
        };
        if size == 0 {
            self.discard(received).await;
            return Err(AttachmentError::Empty);
        }
        Ok(received)
    }

    /// Removes a received file that will not be recorded (the request was refused).
    pub async fn discard(&self, received: Received) {
        if let Err(e) = self.ports.blobs.delete(&received.blob_key).await {
            tracing::warn!(attachment_id = %received.attachment_id, error = %e, "could not remove a refused upload");
        }
    }

    /// The processing job of an attachment, queued.
    fn processing_job(&self, owner: Owner, session: &SessionId, a: &AttachmentRecord, blob_key: &str) -> JobRecord {
        let now = self.now();
        JobRecord {
            // Time-ordered, as chat jobs' ids: listings break ties of `created_at` by the id.
            job_id: uuid::Uuid::now_v7().to_string(),
            owner,
            session_id: session.clone(),
            job_type: JobType::AttachmentProcessing,
            status: JobStatus::Pending,
            progress: 0,
            attempts: 0,
            request: json!({"attachment_id": a.attachment_id, "blob_key": blob_key}),
            result: None,
            error: None,
            metadata: json!({
                "filename": a.filename,
                "file_size": a.size_bytes,
                "content_type": a.content_type,
                "attachment_id": a.attachment_id,
            }),
            state: json!({}),
            created_at: now,
            updated_at: now,
            finished_at: None,
            lease_until: None,
        }
    }

    /// Records a received file as an attachment of the session (created on first use) with
    /// its queued processing job, in one transaction, and wakes a worker. On failure the file
    /// is removed.
    pub async fn submit(&self, owner: Owner, session: &SessionId, received: Received) -> AttachmentResult<Submitted> {
        let now = self.now();
        let mut attachment = AttachmentRecord {
            attachment_id: received.attachment_id.clone(),
            owner,
            session_id: session.clone(),
            filename: received.filename.clone(),
            content_type: received.content_type.clone(),
            size_bytes: size_i64(received.size_bytes),
            state: AttachmentState::Processing,
            source: AttachmentSource::Upload,
            job_id: None,
            error: None,
            preview: String::new(),
            text_chars: 0,
            passage_count: 0,
            created_at: now,
            updated_at: now,
            upload_expires_at: None,
            progress: 0,
        };
        let job = self.processing_job(owner, session, &attachment, &received.blob_key);
        attachment.job_id = Some(job.job_id.clone());
        if let Err(e) = self.check_storage(owner, received.size_bytes).await {
            self.discard(received).await;
            return Err(e);
        }
        let recorded = async {
            self.ports.sessions.ensure_session(owner, session, now).await?;
            self.ports.store.insert_attachment(&attachment, Some(&job)).await
        }
        .await;
        if let Err(e) = recorded {
            self.discard(received).await;
            return Err(e.into());
        }
        self.ports.bus.publish(Signal::Queued).await;
        Ok(Submitted { attachment, job })
    }

    /// An attachment of the owner (403 for another owner's, 404 for none).
    async fn owned(&self, owner: Owner, attachment_id: &str) -> AttachmentResult<AttachmentRecord> {
        if !is_attachment_id(attachment_id) {
            return Err(AttachmentError::NotFound);
        }
        let record = self.ports.store.attachment(attachment_id).await?.ok_or(AttachmentError::NotFound)?;
        if record.owner != owner {
            return Err(AttachmentError::Forbidden);
        }
        if record.state == AttachmentState::AwaitingUpload && record.upload_expires_at.is_some_and(|t| t < self.now()) {
            // An expired pre-signed upload that never came is gone (the contract's Errors 404).
            return Err(AttachmentError::NotFound);
        }
        Ok(record)
    }

    async fn view_of(&self, record: AttachmentRecord) -> AttachmentResult<AttachmentView> {
        let job = match (&record.state, &record.job_id) {
            (AttachmentState::Processing | AttachmentState::Failed | AttachmentState::Cancelled, Some(job_id)) => {
                self.ports.jobs.job(job_id).await?
            }
            _ => None,
        };
        Ok(view(record, job.as_ref()))
    }

    /// One attachment with its processing status.
    pub async fn get(&self, owner: Owner, attachment_id: &str) -> AttachmentResult<AttachmentView> {
        let record = self.owned(owner, attachment_id).await?;
        self.view_of(record).await
    }

    /// One page of the session's attachments, oldest first (404 when the session does not
    /// exist).
    pub async fn list(
        &self,
        owner: Owner,
        session: &SessionId,
        page: &PageRequest,
    ) -> AttachmentResult<Page<AttachmentView>> {
        let records = self
            .ports
            .store
            .list_attachments(owner, session, self.now(), page)
            .await?
            .ok_or(AttachmentError::SessionNotFound)?;
        let mut items = Vec::with_capacity(records.items.len());
        for record in records.items {
            items.push(self.view_of(record).await?);
        }
        Ok(Page { items, next: records.next })
    }

    /// Where a processing job stands. The job is looked up first; once it is deleted (an hour
    /// after it finished) the attachment it processed still answers.
    pub async fn status(&self, owner: Owner, job_id: &str) -> AttachmentResult<ProcessingStatus> {
        let job = self.ports.jobs.job(job_id).await?;
        if let Some(job) = &job {
            if job.job_type != JobType::AttachmentProcessing {
                return Err(AttachmentError::JobNotFound);
            }
            if job.owner != owner {
                return Err(AttachmentError::Forbidden);
            }
        }
        let attachment = self.ports.store.attachment_of_job(job_id).await?;
        match (job, attachment) {
            (_, Some(a)) if a.owner != owner => Err(AttachmentError::Forbidden),
            (job, Some(a)) => {
                let v = view(a, job.as_ref());
                Ok(ProcessingStatus {
                    job_id: job_id.to_owned(),
                    attachment_id: v.record.attachment_id,
                    status: v.status,
                    progress: v.progress,
                    error: v.error,
                })
            }
            (Some(job), None) => {
                let error =
                    matches!(job.status, JobStatus::Failed | JobStatus::Cancelled).then_some(job.error).flatten();
                Ok(ProcessingStatus {
                    job_id: job.job_id,
                    attachment_id: job.request["attachment_id"].as_str().unwrap_or_default().to_owned(),
                    status: job.status.as_str().to_owned(),
                    progress: job.progress,
                    error,
                })
            }
            (None, None) => Err(AttachmentError::JobNotFound),
        }
    }

    /// Deletes an attachment: its processing stops, its file and its passages go.
    pub async fn delete(&self, owner: Owner, attachment_id: &str) -> AttachmentResult<()> {
        let record = self.owned(owner, attachment_id).await?;
        if let Some(job_id) = &record.job_id {
            let update = JobUpdate {
                status: Some(JobStatus::Cancelled),
                error: Some("The attachment was deleted.".to_owned()),
                ..Default::default()
            };
            let from = [JobStatus::Pending, JobStatus::InProgress];
            if self.ports.jobs.update_job(job_id, &from, &update, self.now()).await?.is_some() {
                self.ports.bus.publish(Signal::Job(job_id.clone())).await;
            }
        }
        // The file first: a failure leaves the row, so the delete can be tried again.
        self.ports.blobs.delete_prefix(&blob_prefix(attachment_id)).await?;
        if !self.ports.store.delete_attachment(attachment_id).await? {
            // A delete at the same moment removed the row first, and answers for it.
            return Err(AttachmentError::NotFound);
        }
        Ok(())
    }

    /// Deletes the files of every attachment of the session (its rows, passages and index
    /// entries go with the session row).
    pub async fn delete_session_files(&self, owner: Owner, session: &SessionId) -> AttachmentResult<()> {
        for id in self.ports.store.session_attachment_ids(owner, session).await? {
            self.ports.blobs.delete_prefix(&blob_prefix(&id)).await?;
        }
        Ok(())
    }

    /// Ranked passages of the session's attachments (404 when the session does not exist).
    /// The same search as the AI's `search_attachments` tool.
    pub async fn search(
        &self,
        owner: Owner,
        session: &SessionId,
        query: &str,
        limit: i64,
    ) -> AttachmentResult<Vec<Passage>> {
        if !self.ports.store.session_exists(owner, session).await? {
            return Err(AttachmentError::SessionNotFound);
        }
        Ok(self.ports.search.search_passages(owner, session, query, limit).await?)
    }

    /// Hands out a pre-signed upload URL for a file of `file_size` bytes, valid for the
    /// configured time (docs/api.md, "Attachments"). The session is created on first use.
    pub async fn create_upload_url(
        &self,
        owner: Owner,
        session: &SessionId,
        raw_filename: &str,
        file_size: u64,
        key: Option<KeyId>,
    ) -> AttachmentResult<UploadTicket> {
        let (filename, format) = checked_name(raw_filename)?;
        if file_size > self.config.max_bytes {
            return Err(AttachmentError::TooLarge { limit: self.config.max_bytes, size: Some(file_size) });
        }
        if file_size == 0 {
            return Err(AttachmentError::Empty);
        }
        self.check_storage(owner, file_size).await?;
        let now = self.now();
        let expires_at = now.saturating_add(ms(self.config.presign_ttl));
        let attachment = AttachmentRecord {
            attachment_id: new_attachment_id(),
            owner,
            session_id: session.clone(),
            filename,
            content_type: format.content_type().to_owned(),
            size_bytes: size_i64(file_size),
            state: AttachmentState::AwaitingUpload,
            source: AttachmentSource::Presigned,
            job_id: None,
            error: None,
            preview: String::new(),
            text_chars: 0,
            passage_count: 0,
            created_at: now,
            updated_at: now,
            upload_expires_at: Some(expires_at),
            progress: 0,
        };
        self.ports.sessions.ensure_session(owner, session, now).await?;
        // Tidy the owner's uploads that never came while we are here.
        self.ports.store.delete_expired_uploads(owner, now).await?;
        self.ports.store.insert_attachment(&attachment, None).await?;
        Ok(UploadTicket {
            upload_url: self.signer.url(&self.config.public_base_url, &attachment.attachment_id, expires_at, key),
            attachment_id: attachment.attachment_id,
            expires_at,
            max_bytes: file_size,
        })
    }

    /// Checks a pre-signed upload token: 404 when it is forged, unknown or expired, 409 when
    /// its file already arrived.
    pub async fn upload_slot(&self, token: &str) -> AttachmentResult<UploadSlot> {
        let signed = self.signer.verify(token).ok_or(AttachmentError::UploadNotFound)?;
        let now = self.now();
        if signed.expires_at < now {
            return Err(AttachmentError::UploadNotFound);
        }
        // The URL dies with the key that asked for it.
        if let Some(key) = signed.key_id {
            if !self.ports.plans.key_is_live(key, now).await? {
                return Err(AttachmentError::UploadNotFound);
            }
        }
        let attachment =
            self.ports.store.attachment(&signed.attachment_id).await?.ok_or(AttachmentError::UploadNotFound)?;
        if attachment.upload_expires_at != Some(signed.expires_at) {
            return Err(AttachmentError::UploadNotFound);
        }
        if attachment.state != AttachmentState::AwaitingUpload {
            return Err(AttachmentError::AlreadyUploaded(attachment.attachment_id));
        }
        let max_bytes = u64::try_from(attachment.size_bytes).unwrap_or(0).min(self.config.max_bytes);
        Ok(UploadSlot { attachment, max_bytes })
    }

    /// Receives the bytes of a pre-signed upload (at most the declared size) and queues its
    /// processing. Of two uploads racing on one URL, one wins; the other's bytes are removed.
    pub async fn receive_upload(
        &self,
        slot: UploadSlot,
        chunks: BoxStream<'_, Result<Bytes, std::io::Error>>,
    ) -> AttachmentResult<Submitted> {
        let mut attachment = slot.attachment;
        let blob_key = new_blob_key(&attachment.attachment_id);
        let size = self.ports.blobs.put_stream(&blob_key, chunks, slot.max_bytes).await?;
        let discard = |key: String| async move {
            if let Err(e) = self.ports.blobs.delete(&key).await {
                tracing::warn!(key, error = %e, "could not remove a refused upload");
            }
        };
        if size == 0 {
            discard(blob_key).await;
            return Err(AttachmentError::Empty);
        }
        attachment.size_bytes = size_i64(size);
        if let Err(e) = self.check_storage(attachment.owner, size).await {
            discard(blob_key).await;
            return Err(e);
        }
        let session = attachment.session_id.clone();
        let job = self.processing_job(attachment.owner, &session, &attachment, &blob_key);
        let now = self.now();
        match self.ports.store.start_processing(&attachment.attachment_id, attachment.size_bytes, &job, now).await {
            Ok(true) => {}
            Ok(false) => {
                discard(blob_key).await;
                let now_state = self.ports.store.attachment(&attachment.attachment_id).await?;
                return Err(match now_state {
                    Some(a) if a.state != AttachmentState::AwaitingUpload => {
                        AttachmentError::AlreadyUploaded(a.attachment_id)
                    }
                    _ => AttachmentError::UploadNotFound,
                });
            }
            Err(e) => {
                discard(blob_key).await;
                return Err(e.into());
            }
        }
        attachment.state = AttachmentState::Processing;
        attachment.job_id = Some(job.job_id.clone());
        attachment.updated_at = now;
        self.ports.bus.publish(Signal::Queued).await;
        Ok(Submitted { attachment, job })
    }

    /// Indexes an uploaded document for search as it is loaded (`POST /v1/documents/upload
    /// ?index=true`): its text blocks become the passages of an attachment of the session,
    /// ready at once. The document's own file is not kept a second time.
    pub async fn index_document(
        &self,
        owner: Owner,
        session: &SessionId,
        raw_filename: &str,
        size_bytes: u64,
        blocks: Vec<TextBlock>,
    ) -> AttachmentResult<AttachmentRecord> {
        let (filename, format) = checked_name(raw_filename)?;
        let now = self.now();
        let attachment = AttachmentRecord {
            attachment_id: new_attachment_id(),
            owner,
            session_id: session.clone(),
            filename,
            content_type: format.content_type().to_owned(),
            size_bytes: size_i64(size_bytes),
            state: AttachmentState::Processing,
            source: AttachmentSource::Document,
            job_id: None,
            error: None,
            preview: String::new(),
            text_chars: 0,
            passage_count: 0,
            created_at: now,
            updated_at: now,
            upload_expires_at: None,
            progress: 0,
        };
        let text = tokio::task::spawn_blocking(move || extracted_text(&blocks))
            .await
            .map_err(|e| AttachmentError::Worker(e.to_string()))?;
        self.ports.store.insert_attachment(&attachment, None).await?;
        if self.ports.store.replace_passages(&attachment.attachment_id, &text, None, now).await? != Replaced::Ready {
            return Err(AttachmentError::NotFound);
        }
        self.ports.store.attachment(&attachment.attachment_id).await?.ok_or(AttachmentError::NotFound)
    }
}

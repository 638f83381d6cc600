//! The e-mailed export as a job of the database queue (`JobType::EmailedExport`, internal:
//! no listing shows it and `GET /v1/jobs/{id}` does not find it). Any replica's worker claims
//! it; a worker that dies lets its lease run out and the sweep queues it again, at most
//! `MAX_ATTEMPTS` times, after which the recipient gets the failure mail.
//!
//! - The request pins what to render: the document's version when it was asked for (a later
//!   edit, a chat turn's commit, does not change the file the caller asked for), and the
//!   format, recipient and export id (the job's id too).
//! - A run stores the file, records it, then mails the link. A run after a crash that finds
//!   the file recorded mails the link without rendering again. The mail goes out only while
//!   the job is still this worker's; the job completes after it, so a crash between the two
//!   sends the link again (at least once, never lost).
//! - A file that cannot be rendered fails the job and mails the recipient so. A passing
//!   outage (database, blob store, mail transport) leaves the job to its lease: it is retried
//!   like a job whose worker died.

use redline_domain::export::ExportFormat;
use redline_domain::job::{JobStatus, JobType};
use redline_domain::{Email, Owner, SessionId};
use redline_ports::jobs::{JobRecord, JobUpdate, Signal};
use redline_ports::mail::MailError;
use redline_ports::{BlobError, StoreError};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::sync::watch;

use super::{export_key, ready_mail, ExportFailure, Exports, ReadyFile};
use crate::worker::{keep_lease, JobRunner, Stop};

/// The format of the stored request this build writes; a reader refuses a newer one rather
/// than misread it (jobs outlive a deploy).
pub const FORMAT: u32 = 1;

/// What an e-mailed export renders and whom it mails (`JobRecord::request`). Never changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmailedExport {
    /// `exp_` + 32 hex: the request id answered, the job's id, the file's blob key.
    pub export_id: String,
    pub owner: Owner,
    pub session: SessionId,
    pub format: ExportFormat,
    pub to: Email,
    /// The document's version when the export was asked for; `None` when the session had no
    /// version then (its current document is rendered).
    pub version_id: Option<String>,
}

/// [`EmailedExport`] as stored.
#[derive(Debug, Serialize, Deserialize)]
struct Stored {
    format: u32,
    export_id: String,
    owner: String,
    session_id: String,
    export_format: String,
    to: String,
    version_id: Option<String>,
}

fn corrupt(what: impl std::fmt::Display) -> StoreError {
    StoreError::Other(format!("corrupt e-mailed export job request: {what}"))
}

impl EmailedExport {
    pub fn to_value(&self) -> Value {
        let stored = Stored {
            format: FORMAT,
            export_id: self.export_id.clone(),
            owner: self.owner.to_string(),
            session_id: self.session.as_str().to_owned(),
            export_format: self.format.as_str().to_owned(),
            to: self.to.as_str().to_owned(),
            version_id: self.version_id.clone(),
        };
        // Strings and an integer only: serialisation cannot fail.
        serde_json::to_value(stored).unwrap_or(Value::Null)
    }

    pub fn read(v: &Value) -> Result<Self, StoreError> {
        let s: Stored = serde_json::from_value(v.clone()).map_err(corrupt)?;
        if s.format > FORMAT {
            return Err(StoreError::Other(format!(
                "e-mailed export job request of format {} was written by a newer build (this one reads up to {FORMAT})",
                s.format
            )));
        }
        Ok(Self {
            owner: Owner::parse(&s.owner).ok_or_else(|| corrupt(format!("owner {:?}", s.owner)))?,
            session: SessionId::parse(&s.session_id).map_err(|_| corrupt(format!("session {:?}", s.session_id)))?,
            format: ExportFormat::parse(&s.export_format)
                .map(|r| r.format)
                .ok_or_else(|| corrupt(format!("format {:?}", s.export_format)))?,
            to: Email::parse(&s.to).map_err(|_| corrupt(format!("recipient {:?}", s.to)))?,
            export_id: s.export_id,
            version_id: s.version_id,
        })
    }

    /// The pending job that runs it, created at `now`.
    pub fn job(&self, now: i64) -> JobRecord {
        JobRecord {
            job_id: self.export_id.clone(),
            owner: self.owner,
            session_id: self.session.clone(),
            job_type: JobType::EmailedExport,
            status: JobStatus::Pending,
            progress: 0,
            attempts: 0,
            request: self.to_value(),
            result: None,
            error: None,
            metadata: json!({}),
            state: json!({}),
            created_at: now,
            updated_at: now,
            finished_at: None,
            lease_until: None,
        }
    }
}

impl From<BlobError> for Stop {
    fn from(e: BlobError) -> Self {
        Stop::Retry(e.to_string())
    }
}

impl From<ExportFailure> for Stop {
    fn from(e: ExportFailure) -> Self {
        match e {
            ExportFailure::Store(e) => e.into(),
            ExportFailure::Blob(e) => e.into(),
            other => Stop::Fail(other.to_string()),
        }
    }
}

impl From<MailError> for Stop {
    fn from(e: MailError) -> Self {
        match e {
            MailError::Rejected(why) => Stop::Fail(format!("the mail was refused: {why}")),
            MailError::Unavailable(why) => Stop::Retry(why),
        }
    }
}

#[async_trait::async_trait]
impl JobRunner for Exports {
    async fn run(&self, job: JobRecord) {
        let request = match EmailedExport::read(&job.request) {
            Ok(request) => request,
            Err(e) => {
                // No recipient to tell: the job fails for the log.
                tracing::error!(job_id = %job.job_id, error = %e, "an e-mailed export job could not be read");
                self.end(&job.job_id, JobStatus::Failed, Some(e.to_string()), None).await;
                return;
            }
        };
        let (stopped, renewer) =
            keep_lease((&self.ports.jobs, &self.ports.bus, &self.ports.clock), &job.job_id, self.config.lease);
        self.purge_expired().await;
        let outcome = self.deliver(&request, &stopped).await;
        renewer.end();
        let id = &request.export_id;
        let format = request.format;
        match outcome {
            Ok(()) => tracing::info!(export_id = %id, %format, attempt = job.attempts, "export e-mailed"),
            Err(Stop::Fail(error)) => {
                tracing::error!(export_id = %id, %format, %error, "e-mailed export failed");
                if self.end(id, JobStatus::Failed, Some(error), None).await {
                    self.tell_failure(&request).await;
                }
            }
            Err(Stop::Retry(cause)) => {
                tracing::warn!(export_id = %id, %format, %cause, attempt = job.attempts, "e-mailed export will be retried");
            }
            Err(Stop::Abandon) => {
                tracing::info!(export_id = %id, "e-mailed export stopped: the job is no longer this worker's");
            }
        }
    }

    async fn given_up(&self, job: JobRecord) {
        if job.job_type != JobType::EmailedExport || job.status != JobStatus::Failed {
            return;
        }
        match EmailedExport::read(&job.request) {
            Ok(request) => {
                tracing::error!(export_id = %request.export_id, "e-mailed export given up after its workers stopped");
                self.tell_failure(&request).await;
            }
            Err(e) => tracing::error!(job_id = %job.job_id, error = %e, "a given-up export job could not be read"),
        }
    }
}

impl Exports {
    /// Ends the job with `status` if it is still in progress; answers whether it did.
    async fn end(&self, job_id: &str, status: JobStatus, error: Option<String>, result: Option<Value>) -> bool {
        let progress = (status == JobStatus::Completed).then_some(100);
        let update = JobUpdate { status: Some(status), error, result, progress, ..Default::default() };
        let now = self.ports.clock.now_ms();
        match self.ports.jobs.update_job(job_id, &[JobStatus::InProgress], &update, now).await {
            Ok(ended) => {
                self.ports.bus.publish(Signal::Job(job_id.to_owned())).await;
                ended.is_some()
            }
            Err(e) => {
                tracing::warn!(job_id, error = %e, "could not end an e-mailed export job");
                false
            }
        }
    }

    async fn tell_failure(&self, request: &EmailedExport) {
        if let Err(e) = self.mail_failure(&request.session, request.format, &request.to).await {
            tracing::error!(export_id = %request.export_id, error = %e, "could not tell the recipient the export failed");
        }
    }

    /// Renders (unless a run before this one stored the file), stores, records and mails.
    async fn deliver(&self, request: &EmailedExport, stopped: &watch::Receiver<bool>) -> Result<(), Stop> {
        let still_ours = || if *stopped.borrow() { Err(Stop::Abandon) } else { Ok(()) };
        let id = &request.export_id;
        let ready = match self.ports.files.export_file(id).await? {
            Some(record) => ReadyFile::of_record(&record)
                .ok_or_else(|| Stop::Fail(format!("stored export with unknown format {:?}", record.format)))?,
            None => {
                let gone = || Stop::Fail("the session was deleted before its export was rendered".to_owned());
                let document =
                    self.ports.documents.document(request.owner, &request.session).await?.ok_or_else(gone)?;
                let html = match &request.version_id {
                    Some(v) => {
                        self.ports.documents.version(request.owner, &request.session, v).await?.ok_or_else(gone)?.html
                    }
                    None => document.html,
                };
                let file = self.render_html(&html, &request.session, document.title.as_deref(), request.format).await?;
                still_ours()?;
                self.store_file(request, &file).await?
            }
        };
        still_ours()?;
        // The mail goes out only while the job is this worker's (a replica shutting down may
        // have handed it back meanwhile, and then the one that takes it mails).
        let now = self.ports.clock.now_ms();
        let mailing = JobUpdate { progress: Some(90), ..Default::default() };
        if self.ports.jobs.update_job(id, &[JobStatus::InProgress], &mailing, now).await?.is_none() {
            return Err(Stop::Abandon);
        }
        let link = self.signer.link(&self.config.public_base_url, id, ready.expires_at);
        let mail = ready_mail(&request.to, &request.session, &ready, &link, self.config.link_ttl_ms);
        self.ports.mailer.send(&mail).await?;
        if !self.end(id, JobStatus::Completed, None, Some(json!({"export_id": id}))).await {
            tracing::warn!(export_id = %id, "the export was mailed but its job was no longer this worker's");
        }
        Ok(())
    }

    /// Keeps the file in the blob store and records it; nothing is kept when recording fails.
    pub(super) async fn store_file(
        &self,
        request: &EmailedExport,
        file: &super::ExportedFile,
    ) -> Result<ReadyFile, ExportFailure> {
        let id = &request.export_id;
        let now = self.ports.clock.now_ms();
        let expires_at = now.saturating_add(self.config.link_ttl_ms);
        self.ports.blobs.put(&export_key(id), file.bytes.clone()).await?;
        let record = redline_ports::files::ExportFileRecord {
            export_id: id.clone(),
            owner: request.owner,
            session_id: request.session.clone(),
            format: request.format.as_str().to_owned(),
            filename: file.filename.clone(),
            content_type: file.content_type.clone(),
            size_bytes: i64::try_from(file.bytes.len()).unwrap_or(i64::MAX),
            created_at: now,
            expires_at,
        };
        if let Err(e) = self.ports.files.insert_export(&record).await {
            // The session was deleted meanwhile (or the database failed): keep nothing.
            if let Err(blob) = self.ports.blobs.delete(&export_key(id)).await {
                tracing::warn!(export_id = %id, error = %blob, "could not remove the file of a failed export");
            }
            return Err(e.into());
        }
        Ok(ReadyFile {
            filename: file.filename.clone(),
            format: request.format,
            size_bytes: file.bytes.len(),
            expires_at,
        })
    }
}

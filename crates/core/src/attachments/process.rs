//! The `attachment_processing` job: read the file from the blob store, extract its text with
//! the document converters (on the blocking pool), cut it into passages and index them.
//!
//! - Progress (and a `status` intermediate event) is reported at each step.
//! - The worker's lease is renewed while the job runs; when the job stops being in progress
//!   (cancelled, or taken back by recovery) the work stops and writes nothing more.
//! - A file that cannot be read or converted fails the job with a clear `error`, also kept on
//!   the attachment. A passing outage (database or blob store unavailable) leaves the job to
//!   its lease: it is retried (at most `MAX_ATTEMPTS` times) like a job whose worker died.
//! - Indexing replaces the attachment's passages in one transaction, so a retry after a
//!   crash never indexes twice.

use redline_domain::attachment::TextBlock;
use redline_domain::formats::SourceFormat;
use redline_domain::job::JobStatus;
use redline_ports::attachments::Replaced;
use redline_ports::blobs::BlobError;
use redline_ports::jobs::{JobRecord, JobUpdate, Signal};
use serde_json::{json, Value};
use tokio::sync::watch;

use super::{extracted_text, Attachments};
use crate::worker::{keep_lease, JobRunner, Stop};

#[async_trait::async_trait]
impl JobRunner for Attachments {
    async fn run(&self, job: JobRecord) {
        let (stopped, renewer) =
            keep_lease((&self.ports.jobs, &self.ports.bus, &self.ports.clock), &job.job_id, self.config.lease);
        let outcome = self.process(&job, &stopped).await;
        renewer.end();
        match outcome {
            Ok(()) => {}
            Err(Stop::Fail(error)) => self.fail(&job, error).await,
            Err(Stop::Retry(cause)) => {
                tracing::warn!(job_id = %job.job_id, %cause, attempt = job.attempts, "attachment processing will be retried");
            }
            Err(Stop::Abandon) => {
                tracing::info!(job_id = %job.job_id, "attachment processing stopped: the job is no longer this worker's, or its attachment is gone");
            }
        }
    }
}

fn attachment_id_of(job: &JobRecord) -> Option<&str> {
    job.request.get("attachment_id").and_then(Value::as_str)
}

impl Attachments {
    async fn step(&self, job: &JobRecord, progress: i32, message: String) {
        let now = self.now();
        let update = JobUpdate { progress: Some(progress), ..Default::default() };
        if let Err(e) = self.ports.jobs.update_job(&job.job_id, &[JobStatus::InProgress], &update, now).await {
            tracing::warn!(job_id = %job.job_id, error = %e, "could not record progress");
        }
        match self.ports.jobs.append_event(&job.job_id, "status", &json!({"message": message}), now).await {
            Ok(_) => self.ports.bus.publish(Signal::Events(job.job_id.clone())).await,
            Err(e) => tracing::warn!(job_id = %job.job_id, error = %e, "could not record a job event"),
        }
    }

    /// Fails the job and its attachment with `error`.
    async fn fail(&self, job: &JobRecord, error: String) {
        tracing::warn!(job_id = %job.job_id, %error, "attachment processing failed");
        let now = self.now();
        if let Some(id) = attachment_id_of(job) {
            if let Err(e) = self.ports.store.mark_failed(id, &error, now).await {
                tracing::warn!(job_id = %job.job_id, error = %e, "could not record the failure on the attachment");
            }
        }
        let update = JobUpdate { status: Some(JobStatus::Failed), error: Some(error), ..Default::default() };
        if let Err(e) = self.ports.jobs.update_job(&job.job_id, &[JobStatus::InProgress], &update, now).await {
            tracing::warn!(job_id = %job.job_id, error = %e, "could not fail the job");
        }
        self.ports.bus.publish(Signal::Job(job.job_id.clone())).await;
    }

    async fn process(&self, job: &JobRecord, stopped: &watch::Receiver<bool>) -> Result<(), Stop> {
        let still_ours = || if *stopped.borrow() { Err(Stop::Abandon) } else { Ok(()) };
        let attachment_id = attachment_id_of(job).ok_or_else(|| Stop::Fail("The job names no attachment.".into()))?;
        let blob_key = job.request.get("blob_key").and_then(Value::as_str).unwrap_or_default();
        let Some(attachment) = self.ports.store.attachment(attachment_id).await? else {
            return Err(Stop::Fail("The attachment was deleted before it was processed.".into()));
        };
        let filename = attachment.filename.clone();

        self.step(job, 10, format!("Reading {filename}")).await;
        let bytes = match self.ports.blobs.get(blob_key).await {
            Ok(b) => b,
            Err(BlobError::NotFound) => {
                return Err(Stop::Fail(format!("The file {filename} is missing from storage; upload it again.")))
            }
            Err(e) => return Err(Stop::Retry(e.to_string())),
        };
        let format = SourceFormat::from_filename(&filename).map_err(|e| Stop::Fail(e.to_string()))?;
        still_ours()?;

        self.step(job, 25, format!("Extracting the text of {filename}")).await;
        let converter = self.ports.converter.clone();
        let converted = tokio::task::spawn_blocking(move || converter.convert(format, &bytes))
            .await
            .map_err(|e| Stop::Fail(format!("Text extraction stopped unexpectedly: {e}.")))?
            .map_err(|e| Stop::Fail(format!("Could not extract text from {filename}: {e}.")))?;
        still_ours()?;

        let html = self.ports.html.clone();
        // Only the sections' text is kept, block by block (an attachment has no section limit:
        // its text goes into passages, not into a document).
        let sections = tokio::task::spawn_blocking(move || {
            let mut blocks = Vec::new();
            html.sectionize_each(&converted.html, &mut crate::documents::new_chunk_id, &mut |s| {
                blocks.extend(TextBlock::of_section(s));
                Ok(())
            })
            .map(|()| blocks)
        })
        .await
        .map_err(|e| Stop::Fail(format!("Text extraction stopped unexpectedly: {e}.")))?
        .map_err(|e| Stop::Fail(format!("Could not extract text from {filename}: {e}.")))?;
        let text = tokio::task::spawn_blocking(move || extracted_text(&sections))
            .await
            .map_err(|e| Stop::Fail(format!("Splitting the text stopped unexpectedly: {e}.")))?;
        if text.passages.is_empty() {
            return Err(Stop::Fail(format!(
                "Could not extract text from {filename}: it holds no text (an image-only or empty file)."
            )));
        }
        still_ours()?;

        self.step(job, 70, format!("Indexing {} passages of {filename}", text.passages.len())).await;
        let update = JobUpdate {
            status: Some(JobStatus::Completed),
            progress: Some(100),
            result: Some(json!({
                "attachment_id": attachment_id,
                "passages": text.passages.len(),
                "characters": text.text_chars,
            })),
            lease_until: Some(None),
            ..Default::default()
        };
        // The passages and the job's completion commit together, or (the job is no longer
        // this worker's) nothing does.
        let replaced =
            self.ports.store.replace_passages(attachment_id, &text, Some((&job.job_id, &update)), self.now()).await?;
        match replaced {
            Replaced::Ready => {}
            Replaced::Gone | Replaced::NotRunning => return Err(Stop::Abandon),
        }
        self.ports.bus.publish(Signal::Job(job.job_id.clone())).await;
        Ok(())
    }
}

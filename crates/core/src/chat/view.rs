//! A job as callers see it ([`JobView`]): the columns of its record and its JSON parts read
//! into their types, for chat turns and attachment processing jobs alike. The shapes of the
//! answers built from it belong to `redline-http`.

use redline_domain::job::{JobStatus, JobType};
use redline_domain::time_util::Millis;
use redline_domain::{Owner, SessionId};
use redline_ports::jobs::{JobEvent, JobRecord};
use redline_ports::StoreError;
use serde::Deserialize;
use serde_json::Value;

use super::record::{Failure, PublicChange, TurnMetadata, TurnResult, TurnState};

/// A job as callers see it.
#[derive(Debug, Clone, PartialEq)]
pub struct JobView {
    pub job_id: String,
    pub owner: Owner,
    pub session_id: SessionId,
    pub status: JobStatus,
    /// 0 to 100.
    pub progress: i32,
    pub error: Option<String>,
    pub created_at: Millis,
    pub updated_at: Millis,
    pub finished_at: Option<Millis>,
    pub kind: JobKind,
    /// Its intermediate events, oldest first (empty when they were not asked for).
    pub events: Vec<JobEvent>,
}

/// What is particular to each type of job.
#[derive(Debug, Clone, PartialEq)]
pub enum JobKind {
    Chat(Box<TurnView>),
    Attachment(AttachmentJobView),
}

/// What a chat job shows.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnView {
    pub metadata: TurnMetadata,
    /// Once completed.
    pub result: Option<TurnResult>,
    /// While it awaits approval: the model's answer with the proposal.
    pub proposal_response: Option<String>,
    /// While it awaits approval: the version the changes were proposed on.
    pub proposal_version: Option<String>,
    /// Why it failed, when that is not a failure of the model.
    pub failure: Option<Failure>,
}

impl TurnView {
    /// The proposed changes, while the turn awaits approval.
    pub fn pending_changes(&self) -> Option<&[PublicChange]> {
        self.metadata.pending_changes.as_deref()
    }
}

/// What an attachment processing job shows.
#[derive(Debug, Clone, PartialEq)]
pub struct AttachmentJobView {
    pub metadata: AttachmentJobMetadata,
    /// Once completed.
    pub result: Option<AttachmentJobResult>,
}

/// The public metadata of an attachment processing job, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct AttachmentJobMetadata {
    pub filename: String,
    pub file_size: i64,
    pub content_type: String,
    pub attachment_id: String,
}

/// What a completed attachment processing job answers, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct AttachmentJobResult {
    pub attachment_id: String,
    /// Passages indexed.
    pub passages: i64,
    /// Characters of text extracted.
    pub characters: i64,
}

fn attachment_part<T: for<'de> Deserialize<'de>>(what: &str, v: &Value) -> Result<T, StoreError> {
    serde_json::from_value(v.clone()).map_err(|e| StoreError::Other(format!("corrupt attachment job {what}: {e}")))
}

impl JobView {
    /// Reads a job's record (and the events given) into a view.
    pub fn read(job: &JobRecord, events: Vec<JobEvent>) -> Result<Self, StoreError> {
        let kind = match job.job_type {
            JobType::Chat => {
                let state = TurnState::read(&job.state)?;
                JobKind::Chat(Box::new(TurnView {
                    metadata: TurnMetadata::read(&job.metadata)?,
                    result: job.result.as_ref().map(TurnResult::read).transpose()?,
                    proposal_response: state.response,
                    proposal_version: state.base_version,
                    failure: state.failure,
                }))
            }
            JobType::AttachmentProcessing => JobKind::Attachment(AttachmentJobView {
                metadata: attachment_part("metadata", &job.metadata)?,
                result: job.result.as_ref().map(|r| attachment_part("result", r)).transpose()?,
            }),
            // Never reached: the store lists no internal job and `Chat::job` finds none.
            JobType::EmailedExport => {
                return Err(StoreError::Other(format!("job {} is internal and has no public view", job.job_id)))
            }
        };
        Ok(Self {
            job_id: job.job_id.clone(),
            owner: job.owner,
            session_id: job.session_id.clone(),
            status: job.status,
            progress: job.progress,
            error: job.error.clone(),
            created_at: job.created_at,
            updated_at: job.updated_at,
            finished_at: job.finished_at,
            kind,
            events,
        })
    }

    pub fn job_type(&self) -> JobType {
        match self.kind {
            JobKind::Chat(_) => JobType::Chat,
            JobKind::Attachment(_) => JobType::AttachmentProcessing,
        }
    }
}

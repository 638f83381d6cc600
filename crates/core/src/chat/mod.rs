//! Chat turns as jobs (docs/api.md, "Chat and jobs").
//!
//! - `jobs`: queueing a turn (with usage admission), waiting for it, reading jobs as views.
//! - `turn`: the editing loop a worker runs; `edit`: its tool calls on the working copy;
//!   `commit`: its end (proposed, or committed, rebased, charged and completed; or failed).
//! - `approval`: the reviewer's answer to proposed changes.
//! - `lifecycle`: cancellation, deleted sessions and the sweep.
//! - `history`: a session's chat history and revert.
//! - `record`: what a chat job stores, as types; `view`: a job as callers see it.
//! - `finished`: the rendered views of finished jobs, kept for polling.

mod approval;
mod authorship;
mod blocks;
mod commit;
mod decide;
mod edit;
mod finished;
mod focus;
mod history;
mod jobs;
mod lifecycle;
mod notes;
mod prompt;
pub mod protocol;
pub mod record;
mod rewrite;
mod takeover;
#[cfg(test)]
mod test_support;
pub use takeover::RUN_START;
pub mod revisions;
pub mod settle;
mod textcalls;
pub mod tools;
pub mod tracked;
mod turn;
pub mod view;

use std::sync::Arc;
use std::time::Duration;

use redline_domain::time_util::Millis;
use redline_domain::SessionId;
use redline_ports::jobs::{JobRecord, Signal};
use redline_ports::{
    AttachmentSearch, Clock, DocumentStore, EventBus, HistoryStore, JobStore, LanguageModel, SessionStore, StoreError,
};

use crate::documents::{DocumentError, Documents};
use crate::usage::{Admission, Usage, UsageError};

use finished::FinishedViews;
pub use history::History;
pub use record::ResponseMode;
use record::TurnRequest;

/// Tunables of the chat machinery (README.md, "Configuration").
#[derive(Debug, Clone)]
pub struct ChatConfig {
    /// Wall-clock cap of a turn (and of a synchronous wait).
    pub chat_timeout: Duration,
    /// Model calls in one turn before it is given up.
    pub max_rounds: usize,
    /// How long a worker's claim on a job lasts without renewal.
    pub lease: Duration,
    pub approval_timeout: Duration,
    pub retention: Duration,
    /// Earlier history messages given to the model.
    pub history_messages: usize,
    /// `REDLINE_EDIT_PROTOCOL`: how the model edits.
    pub protocol: protocol::EditProtocol,
}

impl Default for ChatConfig {
    fn default() -> Self {
        Self {
            chat_timeout: Duration::from_secs(1800),
            max_rounds: 12,
            lease: Duration::from_secs(30),
            approval_timeout: Duration::from_secs(86_400),
            retention: Duration::from_secs(3600),
            history_messages: 10,
            protocol: protocol::EditProtocol::default(),
        }
    }
}

/// A chat request (docs/api.md, "Chat and jobs").
#[derive(Debug, Clone)]
pub struct ChatRequest {
    pub session_id: SessionId,
    pub message: String,
    pub document_html: Option<String>,
    pub require_approval: bool,
    pub response_mode: ResponseMode,
}

#[derive(Debug, thiserror::Error)]
pub enum ChatError {
    #[error("Message cannot be empty")]
    EmptyMessage,
    #[error("job not found")]
    JobNotFound,
    #[error("session not found")]
    SessionNotFound,
    /// The job (or session) belongs to another owner (403).
    #[error("this job belongs to another account")]
    Forbidden,
    /// 409 with this detail.
    #[error("{0}")]
    Conflict(String),
    /// Approval names changes that do not exist (422).
    #[error("{0}")]
    UnknownChanges(String),
    /// A reviewer's correction of a change that cannot be applied (422 at
    /// `[body, edits, change_id]`).
    #[error("{detail}")]
    BadCorrection { change_id: String, detail: String },
    /// Approval of changes whose sections moved on (409 naming them).
    #[error("{detail}")]
    StaleChanges { detail: String, change_ids: Vec<String> },
    /// Revert to a message that has no version snapshot (422).
    #[error("{0}")]
    NoSnapshot(String),
    #[error("message not found in the active history")]
    MessageNotFound,
    /// A synchronous wait ran out (504).
    #[error("timeout")]
    Timeout { job_id: String },
    #[error(transparent)]
    Usage(#[from] UsageError),
    #[error(transparent)]
    Document(#[from] DocumentError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

pub type ChatResult<T> = Result<T, ChatError>;

/// The ports the chat machinery uses.
pub struct ChatPorts {
    pub jobs: Arc<dyn JobStore>,
    pub history: Arc<dyn HistoryStore>,
    pub sessions: Arc<dyn SessionStore>,
    pub store: Arc<dyn DocumentStore>,
    pub llm: Arc<dyn LanguageModel>,
    pub bus: Arc<dyn EventBus>,
    pub clock: Arc<dyn Clock>,
    pub attachments: Option<Arc<dyn AttachmentSearch>>,
}

pub struct Chat {
    ports: ChatPorts,
    documents: Arc<Documents>,
    usage: Arc<Usage>,
    config: ChatConfig,
    finished: Arc<FinishedViews>,
    telemetry: Arc<crate::telemetry::Telemetry>,
}

fn ms(d: Duration) -> Millis {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// A fresh id with a prefix and 16 random hex characters.
pub(crate) fn short_id(prefix: &str) -> String {
    let u = uuid::Uuid::new_v4().simple().to_string();
    format!("{prefix}{}", &u[..16])
}

/// The admission of a chat job: its usage hold is keyed by the job id. `None` (logged) when
/// its request cannot be read.
fn admission_of(job: &JobRecord) -> Option<Admission> {
    match TurnRequest::read(&job.request) {
        Ok(request) => Some(Admission { owner: job.owner, request_id: job.job_id.clone(), cycle: request.cycle }),
        Err(e) => {
            tracing::error!(job_id = %job.job_id, error = %e, "a chat job's request could not be read");
            None
        }
    }
}

impl Chat {
    /// Must be called within a tokio runtime (a task keeps the finished-job cache in step
    /// with deletions on every replica).
    pub fn new(ports: ChatPorts, documents: Arc<Documents>, usage: Arc<Usage>, config: ChatConfig) -> Self {
        let finished = Arc::new(FinishedViews::default());
        let mut signals = ports.bus.subscribe();
        let cache = Arc::downgrade(&finished);
        tokio::spawn(async move {
            loop {
                match signals.recv().await {
                    Ok(Signal::Job(id)) => match cache.upgrade() {
                        Some(c) => c.evict(&id),
                        None => return,
                    },
                    Ok(
                        Signal::Events(_)
                        | Signal::Queued
                        | Signal::KeyRevoked(_)
                        | Signal::SessionsChanged(_)
                        | Signal::Reconnected,
                    )
                    | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
            }
        });
        Self { ports, documents, usage, config, finished, telemetry: Arc::default() }
    }

    /// The job and model figures of this replica (`/metrics`).
    pub fn telemetry(&self) -> &Arc<crate::telemetry::Telemetry> {
        &self.telemetry
    }

    /// Unfinished jobs of every replica, by type and status (`/metrics`).
    pub async fn queue_depth(
        &self,
    ) -> ChatResult<Vec<(redline_domain::job::JobType, redline_domain::job::JobStatus, i64)>> {
        Ok(self.ports.jobs.job_counts().await?)
    }

    pub fn config(&self) -> &ChatConfig {
        &self.config
    }

    pub fn bus(&self) -> &Arc<dyn EventBus> {
        &self.ports.bus
    }

    fn now(&self) -> Millis {
        self.ports.clock.now_ms()
    }
}

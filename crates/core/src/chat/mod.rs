//! Chat turns as jobs (decisions.md §5, §9): submitting (with usage admission), the editing
//! loop run by workers, approval of proposed changes, cancellation, listings, history and
//! revert.

mod prompt;
pub mod record;
pub mod tools;
mod turn;
pub mod view;

use std::sync::Arc;
use std::time::Duration;

use redline_domain::job::{ApprovalError, ApprovalRequest, Change, JobStatus, JobType};
use redline_domain::time_util::Millis;
use redline_domain::{Owner, SessionId};
use redline_ports::jobs::{HistoryMessage, JobFilter, JobRecord, JobUpdate, Signal};
use redline_ports::{
    AttachmentSearch, Clock, DocumentStore, EventBus, HistoryStore, JobStore, LanguageModel, SessionStore, StoreError,
};

use crate::documents::{DocumentError, Documents};
use crate::usage::{Admission, Usage, UsageError};

pub use record::ResponseMode;
use record::{Turn, TurnMetadata, TurnRequest, TurnState, FORMAT};
use view::JobView;

/// Tunables of the chat machinery (decisions.md §10).
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
        }
    }
}

/// A chat request (decisions.md §5).
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
}

/// The JSON of finished jobs, which never change: polling a finished job costs no query of
/// its events and no serialisation. Entries leave at retention, on deletion (a `Job` signal,
/// from any replica) and oldest first beyond the capacity.
#[derive(Default)]
struct FinishedViews {
    entries: std::sync::Mutex<(std::collections::HashMap<String, FinishedView>, std::collections::VecDeque<String>)>,
}

struct FinishedView {
    owner: Owner,
    session: SessionId,
    finished_at: Millis,
    json: bytes::Bytes,
}

const FINISHED_VIEWS: usize = 4096;

impl FinishedViews {
    fn get(&self, job_id: &str, fresh_after: Millis) -> Option<(Owner, bytes::Bytes)> {
        let guard = self.entries.lock().ok()?;
        let e = guard.0.get(job_id)?;
        (e.finished_at > fresh_after).then(|| (e.owner, e.json.clone()))
    }

    fn put(&self, job: &JobView, json: bytes::Bytes) {
        let (Some(finished_at), Ok(mut guard)) = (job.finished_at, self.entries.lock()) else {
            return;
        };
        let (map, order) = &mut *guard;
        if map
            .insert(
                job.job_id.clone(),
                FinishedView { owner: job.owner, session: job.session_id.clone(), finished_at, json },
            )
            .is_none()
        {
            order.push_back(job.job_id.clone());
        }
        while order.len() > FINISHED_VIEWS {
            if let Some(old) = order.pop_front() {
                map.remove(&old);
            }
        }
    }

    fn evict(&self, job_id: &str) {
        if let Ok(mut guard) = self.entries.lock() {
            guard.0.remove(job_id);
        }
    }

    fn evict_session(&self, owner: Owner, session: &SessionId) {
        if let Ok(mut guard) = self.entries.lock() {
            guard.0.retain(|_, e| !(e.owner == owner && &e.session == session));
        }
    }
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

/// A job's history messages.
pub struct History {
    pub session_id: SessionId,
    pub messages: Vec<HistoryMessage>,
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
                    Ok(Signal::Events(_) | Signal::Queued)
                    | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
            }
        });
        Self { ports, documents, usage, config, finished }
    }

    /// `GET /v1/jobs/{id}`: the job with its events as `render` writes it (403 for another
    /// owner's job, 404 for none). A finished job's rendering is kept and served again without
    /// a query of its events.
    pub async fn job_rendered(
        &self,
        owner: Owner,
        job_id: &str,
        render: impl FnOnce(&JobView) -> bytes::Bytes,
    ) -> ChatResult<bytes::Bytes> {
        let fresh_after = self.now() - ms(self.config.retention);
        if let Some((job_owner, json)) = self.finished.get(job_id, fresh_after) {
            if job_owner != owner {
                return Err(ChatError::Forbidden);
            }
            return Ok(json);
        }
        let job = self.job(owner, job_id).await?;
        let view = self.job_view(&job, true).await?;
        let json = render(&view);
        if view.status.is_finished() {
            self.finished.put(&view, json.clone());
        }
        Ok(json)
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

    /// Queues a chat turn: admits it against the quota (429 when nothing is left), creates
    /// the session on first use and stores the pending job.
    pub async fn submit(&self, owner: Owner, mut req: ChatRequest) -> ChatResult<JobRecord> {
        if req.message.trim().is_empty() {
            return Err(ChatError::EmptyMessage);
        }
        // An editor copy that could never be a document (too many sections, nested too
        // deeply) is refused before anything is admitted or stored, as a save would be.
        if let Some(html) = req.document_html.take() {
            req.document_html = Some(self.documents.check(html).await?);
        }
        let job_id = uuid::Uuid::new_v4().to_string();
        let admission = self.usage.admit(owner, &job_id).await?;
        let now = self.now();
        let queued = async {
            self.ports.sessions.ensure_session(owner, &req.session_id, now).await?;
            let job = JobRecord {
                job_id: job_id.clone(),
                owner,
                session_id: req.session_id.clone(),
                job_type: JobType::Chat,
                status: JobStatus::Pending,
                progress: 0,
                attempts: 0,
                request: TurnRequest {
                    format: FORMAT,
                    message: req.message.clone(),
                    document_html: req.document_html.clone(),
                    require_approval: req.require_approval,
                    response_mode: req.response_mode,
                    cycle: admission.cycle.clone(),
                }
                .to_value(),
                result: None,
                error: None,
                metadata: TurnMetadata {
                    message: req.message.clone(),
                    document_html_provided: req.document_html.is_some(),
                    require_approval: req.require_approval,
                    response_mode: req.response_mode,
                    pending_changes: None,
                }
                .to_value(),
                state: TurnState::new().to_value(),
                created_at: now,
                updated_at: now,
                finished_at: None,
                lease_until: None,
            };
            self.ports.jobs.insert_job(&job).await?;
            Ok::<_, StoreError>(job)
        }
        .await;
        match queued {
            Ok(job) => {
                self.ports.bus.publish(Signal::Queued).await;
                Ok(job)
            }
            Err(e) => {
                let _ = self.usage.release(&admission).await;
                Err(e.into())
            }
        }
    }

    /// Waits until the job is finished or awaiting approval, at most until `timeout` after
    /// the job was created (the turn's own time limit).
    pub async fn wait_settled(&self, job: &JobRecord, timeout: Duration) -> ChatResult<JobRecord> {
        let job_id = job.job_id.as_str();
        let mut signals = self.ports.bus.subscribe();
        // The turn's own time limit counts from the job's creation (`turn.rs`), and a turn
        // that reaches it still completes, with a "time limit" answer. The wait ends at the
        // same moment, and a job seen settled only after it is a timeout too: otherwise the
        // turn's completion and this wait's timeout race, and the caller sometimes gets the
        // 200 of the time-limit answer instead of the 504 it is owed.
        let limit_ms = i64::try_from(timeout.as_millis()).unwrap_or(i64::MAX / 2);
        let deadline_ms = job.created_at.saturating_add(limit_ms);
        let left = |now: Millis| Duration::from_millis(u64::try_from(deadline_ms - now).unwrap_or(0));
        let deadline = tokio::time::Instant::now() + left(self.now()).min(timeout);
        let timed_out = || ChatError::Timeout { job_id: job_id.to_owned() };
        loop {
            // The status alone on each signal (a turn sends several); the whole job once settled.
            let status = self.ports.jobs.job_status(job_id).await?.ok_or(ChatError::JobNotFound)?;
            if status.is_finished() || status == JobStatus::AwaitingApproval {
                if self.now() >= deadline_ms {
                    return Err(timed_out());
                }
                return self.ports.jobs.job(job_id).await?.ok_or(ChatError::JobNotFound);
            }
            let wake = async {
                loop {
                    match signals.recv().await {
                        Ok(Signal::Job(id)) if id == job_id => return,
                        Ok(_) => {}
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => return,
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                            tokio::time::sleep(Duration::from_millis(250)).await;
                            return;
                        }
                    }
                }
            };
            tokio::select! {
                _ = wake => {}
                _ = tokio::time::sleep(Duration::from_millis(500)) => {}
                _ = tokio::time::sleep_until(deadline) => {
                    return Err(timed_out());
                }
            }
        }
    }

    /// A job of the owner (403 for another owner's, 404 for none).
    pub async fn job(&self, owner: Owner, job_id: &str) -> ChatResult<JobRecord> {
        let job = self.ports.jobs.job(job_id).await?.ok_or(ChatError::JobNotFound)?;
        if job.owner != owner {
            return Err(ChatError::Forbidden);
        }
        Ok(job)
    }

    /// A job without an ownership check (for streams that checked it when they started),
    /// with its events when `with_events`.
    pub async fn peek_view(&self, job_id: &str, with_events: bool) -> ChatResult<Option<JobView>> {
        match self.ports.jobs.job(job_id).await? {
            Some(job) => Ok(Some(self.job_view(&job, with_events).await?)),
            None => Ok(None),
        }
    }

    /// A job's status alone (`None` once it is gone), without the owner check: for streams
    /// that checked the owner when they opened.
    pub async fn peek_status(&self, job_id: &str) -> ChatResult<Option<JobStatus>> {
        Ok(self.ports.jobs.job_status(job_id).await?)
    }

    /// A job as callers see it, with its intermediate events when `with_events`.
    pub async fn job_view(&self, job: &JobRecord, with_events: bool) -> ChatResult<JobView> {
        let events = if with_events { self.ports.jobs.events(&job.job_id, 0).await? } else { Vec::new() };
        Ok(JobView::read(job, events)?)
    }

    /// The owner's jobs, newest first; with their events unless `compact`.
    pub async fn list(&self, owner: Owner, filter: &JobFilter, compact: bool) -> ChatResult<Vec<JobView>> {
        let jobs = self.ports.jobs.list_jobs(owner, filter).await?;
        let mut out = Vec::with_capacity(jobs.len());
        for j in &jobs {
            out.push(self.job_view(j, !compact).await?);
        }
        Ok(out)
    }

    /// Events of a job after a sequence number (for streams).
    pub async fn events_after(&self, job_id: &str, after: i64) -> ChatResult<Vec<redline_ports::jobs::JobEvent>> {
        Ok(self.ports.jobs.events(job_id, after).await?)
    }

    /// Cancels a job that has not finished (409 once it has); nothing is applied or billed.
    pub async fn cancel(&self, owner: Owner, job_id: &str) -> ChatResult<JobRecord> {
        let job = self.job(owner, job_id).await?;
        let update = JobUpdate {
            status: Some(JobStatus::Cancelled),
            error: Some("The job was cancelled.".to_owned()),
            ..Default::default()
        };
        let from = JobStatus::sources_of(JobStatus::Cancelled);
        match self.ports.jobs.update_job(job_id, &from, &update, self.now()).await? {
            Some(cancelled) => {
                if job.job_type == JobType::Chat {
                    if let Some(admission) = admission_of(&cancelled) {
                        let _ = self.usage.release(&admission).await;
                    }
                    self.record_interrupted_turn(&cancelled).await;
                }
                self.ports.bus.publish(Signal::Job(job_id.to_owned())).await;
                Ok(cancelled)
            }
            None => {
                let now = self.ports.jobs.job(job_id).await?.ok_or(ChatError::JobNotFound)?;
                if now.status.is_finished() {
                    Err(ChatError::Conflict(format!("Job {job_id} has already finished (status: {}).", now.status)))
                } else {
                    // It committed its document and is completing.
                    Err(ChatError::Conflict(format!(
                        "Job {job_id} has already applied its changes and is finishing; it can no longer be cancelled."
                    )))
                }
            }
        }
    }

    /// A chat turn that ended cancelled or failed after a reviewer had approved some of its
    /// changes (a partial approval with feedback, then a cancel, an approval timeout or a
    /// failure of the next round): those changes stay in the document, as the reviewer
    /// accepted them, so the turn goes into the history with the versions they span and a
    /// revert to it undoes them. The turn is not billed (decisions.md §7). Nothing is written
    /// for a turn that applied nothing.
    async fn record_interrupted_turn(&self, job: &JobRecord) {
        let turn = match Turn::read(job) {
            Ok(turn) => turn,
            Err(e) => {
                tracing::error!(job_id = %job.job_id, error = %e, "an interrupted chat job could not be read");
                return;
            }
        };
        let applied = &turn.state.applied;
        if applied.is_empty() || !job.status.is_finished() || job.status == JobStatus::Completed {
            return;
        }
        let sections = turn.state.applied_sections;
        let (how, reason) = match job.status {
            JobStatus::Cancelled => ("was cancelled", String::new()),
            _ => ("failed", format!(" {}", job.error.as_deref().unwrap_or_default())),
        };
        let content = format!(
            "This turn {how} after the reviewer had approved {} change{} ({sections} section{} edited); \
             they stay in the document and the turn was not charged.{}",
            applied.len(),
            if applied.len() == 1 { "" } else { "s" },
            if sections == 1 { "" } else { "s" },
            reason.trim_end(),
        );
        let version_before = turn.state.turn_version_before.clone();
        let version_after = turn.state.turn_version_after.clone();
        let now = self.now();
        let message = turn.request.message;
        let entry = |role: &str, content: String| HistoryMessage {
            message_id: short_id("msg_"),
            role: role.to_owned(),
            content,
            job_id: Some(job.job_id.clone()),
            version_before: version_before.clone(),
            version_after: version_after.clone(),
            created_at: now,
        };
        let messages = [entry("user", message), entry("assistant", content)];
        if let Err(e) = self.ports.history.add_messages(job.owner, &job.session_id, &messages).await {
            tracing::warn!(job_id = %job.job_id, error = %e, "could not record the interrupted turn in the history");
        }
    }

    /// Answers a job's pending changes (decisions.md §5).
    pub async fn approve(
        &self,
        owner: Owner,
        session: &SessionId,
        job_id: &str,
        req: &ApprovalRequest,
        feedback: Option<String>,
    ) -> ChatResult<JobRecord> {
        let job = self.job(owner, job_id).await?;
        if job.session_id != *session {
            return Err(ChatError::Conflict(format!(
                "No job awaiting approval in session {}: job {job_id} is a job of session {}.",
                session.as_str(),
                job.session_id.as_str()
            )));
        }
        if job.status != JobStatus::AwaitingApproval {
            return Err(ChatError::Conflict(format!("No job awaiting approval: job {job_id} is {}.", job.status)));
        }
        let turn = Turn::read(&job)?;
        let pending = turn.state.pending_changes()?;
        let approved = redline_domain::job::select_approved(&pending, req).map_err(|e| match e {
            ApprovalError::UnknownChanges(ids) => {
                ChatError::UnknownChanges(format!("Unknown change_id: {}", ids.join(", ")))
            }
            other => ChatError::UnknownChanges(other.to_string()),
        })?;
        let approved: Vec<Change> = approved.into_iter().cloned().collect();
        self.finish_approval(turn, approved, &pending, feedback).await
    }

    /// The session's active chat history (404 when the session does not exist).
    pub async fn history(&self, owner: Owner, session: &SessionId) -> ChatResult<History> {
        if self.ports.store.document(owner, session).await?.is_none() {
            return Err(ChatError::SessionNotFound);
        }
        let messages = self.ports.history.active_history(owner, session).await?;
        Ok(History { session_id: session.clone(), messages })
    }

    /// Restores the document to the version before `message_id` and drops that message and
    /// the later ones from the active history.
    pub async fn revert(
        &self,
        owner: Owner,
        session: &SessionId,
        message_id: &str,
    ) -> ChatResult<redline_ports::documents::DocumentRecord> {
        let history = self.history(owner, session).await?;
        let message = history.messages.iter().find(|m| m.message_id == message_id).ok_or(ChatError::MessageNotFound)?;
        if self.ports.jobs.has_active_chat(owner, session).await? {
            return Err(ChatError::Conflict(
                "A chat job is running on this session; wait for it to finish or cancel it, then revert.".to_owned(),
            ));
        }
        let Some(target) = message.version_before.clone() else {
            return Err(ChatError::NoSnapshot(
                "This message predates revert: it has no version snapshot to restore.".to_owned(),
            ));
        };
        let version = self
            .ports
            .store
            .version(owner, session, &target)
            .await?
            .ok_or_else(|| ChatError::NoSnapshot("The version before this message no longer exists.".to_owned()))?;
        let new = redline_ports::documents::NewVersion {
            version_id: crate::documents::new_version_id(),
            html: version.html,
            section_count: version.section_count,
            source: "revert".to_owned(),
            title: None,
            now: self.now(),
        };
        let record = match self.ports.store.commit_version(owner, session, None, &new).await? {
            redline_ports::documents::CommitOutcome::Committed(r) => r,
            redline_ports::documents::CommitOutcome::Stale { .. } => {
                return Err(ChatError::Conflict("The document changed during the revert; try again.".to_owned()))
            }
        };
        self.ports.history.truncate_history(owner, session, message_id).await?;
        Ok(record)
    }

    /// Deletes the session's jobs (with the session). A turn that had not finished is not
    /// billable: its held operation is given back, as a cancel would (a turn that completed
    /// meanwhile keeps its charge: a charged row is not released). The jobs given back are the
    /// ones the store deleted, so a turn queued while the session is deleted is either among
    /// them or left to run.
    pub async fn delete_session_jobs(&self, owner: Owner, session: &SessionId) -> ChatResult<()> {
        let doomed = self.ports.jobs.delete_session_jobs(owner, session).await?;
        self.finished.evict_session(owner, session);
        for j in doomed {
            if j.job_type == JobType::Chat && !j.status.is_finished() {
                if let Some(admission) = admission_of(&j) {
                    if let Err(e) = self.usage.release(&admission).await {
                        tracing::warn!(job_id = %j.job_id, error = %e, "the deleted session's turn kept its held operation");
                    }
                }
            }
            self.ports.bus.publish(Signal::Job(j.job_id)).await;
        }
        Ok(())
    }

    /// One sweep: requeue jobs of dead workers, cancel unanswered approvals, delete old jobs.
    /// Requeues the jobs of dead workers (those whose lease ran out, or, with
    /// `every_lease_ended`, every job in progress: at the start of the only process that runs
    /// jobs on this database), cancels unanswered approvals and deletes old finished jobs.
    pub async fn sweep(&self, every_lease_ended: bool) -> ChatResult<()> {
        let now = self.now();
        let rules = redline_ports::jobs::SweepRules {
            now,
            delete_finished_before: now - ms(self.config.retention),
            cancel_awaiting_before: now - ms(self.config.approval_timeout),
            max_attempts: redline_domain::job::MAX_ATTEMPTS,
            requeue_leases_before: if every_lease_ended { Millis::MAX } else { now },
        };
        let sweep = self.ports.jobs.sweep_jobs(&rules).await?;
        for id in sweep.cancelled.iter().chain(&sweep.failed) {
            if let Some(job) = self.ports.jobs.job(id).await? {
                if job.job_type == JobType::Chat {
                    if let Some(admission) = admission_of(&job) {
                        let _ = self.usage.release(&admission).await;
                    }
                    self.record_interrupted_turn(&job).await;
                }
            }
            self.ports.bus.publish(Signal::Job(id.clone())).await;
        }
        if !sweep.requeued.is_empty() {
            tracing::warn!(jobs = ?sweep.requeued, "requeued jobs whose worker stopped");
            self.ports.bus.publish(Signal::Queued).await;
        }
        Ok(())
    }
}

//! Jobs (chat turns, attachment processing and the internal e-mailed exports), their
//! intermediate events, the chat history of a session, and the signals that wake workers and
//! event streams.

use redline_domain::job::{JobStatus, JobType};
use redline_domain::page::{Page, PageRequest};
use redline_domain::time_util::Millis;
use redline_domain::{Owner, SessionId};
use serde_json::Value;

use crate::error::StoreError;

/// A job as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRecord {
    pub job_id: String,
    pub owner: Owner,
    pub session_id: SessionId,
    pub job_type: JobType,
    pub status: JobStatus,
    /// 0 to 100.
    pub progress: i32,
    /// How many times its worker stopped with it unfinished: a lease that ran out (a crash)
    /// counts, a job handed back by a replica shutting down ([`JobStore::release_job`]) or
    /// taken up again after an approval round does not.
    pub attempts: i32,
    /// What was asked (the chat request, the attachment to process). Never changes.
    pub request: Value,
    /// The public `result` (present once completed).
    pub result: Option<Value>,
    pub error: Option<String>,
    /// The public `metadata` object (without `intermediate_responses`, which are events).
    pub metadata: Value,
    /// Internal working state (pending changes in full, the base version, ...).
    pub state: Value,
    pub created_at: Millis,
    pub updated_at: Millis,
    pub finished_at: Option<Millis>,
    /// While in progress: the worker's lease; an expired lease means the worker died.
    pub lease_until: Option<Millis>,
}

/// A change to a job, applied only when its status is one of the expected ones.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobUpdate {
    pub status: Option<JobStatus>,
    pub progress: Option<i32>,
    pub result: Option<Value>,
    pub error: Option<String>,
    pub metadata: Option<Value>,
    pub state: Option<Value>,
    /// `Some(None)` clears the lease.
    pub lease_until: Option<Option<Millis>>,
}

/// Which jobs a listing shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobFilter {
    pub session_id: Option<SessionId>,
    pub status: Option<JobStatus>,
    pub job_type: Option<JobType>,
}

/// One intermediate event of a job (the contract's JobMetadata.intermediate_responses).
#[derive(Debug, Clone, PartialEq)]
pub struct JobEvent {
    /// 1, 2, 3, ... per job.
    pub sequence: i64,
    /// `status`, `tool_call`, `tool_result`, `text_delta`, `change`.
    pub kind: String,
    pub content: Value,
    pub at: Millis,
}

/// What a sweep of the job table did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sweep {
    /// Jobs whose worker's lease ran out, put back to pending.
    pub requeued: Vec<String>,
    /// Jobs whose worker died too often, failed.
    pub failed: Vec<String>,
    /// Awaiting-approval jobs not answered in time, cancelled.
    pub cancelled: Vec<String>,
    /// Finished jobs past retention, deleted.
    pub deleted: u64,
}

/// Settings of a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepRules {
    pub now: Millis,
    /// Finished before this → deleted.
    pub delete_finished_before: Millis,
    /// Awaiting approval since before this → cancelled.
    pub cancel_awaiting_before: Millis,
    /// Interrupted this many times (counting the lease that just ran out) → failed
    /// instead of requeued.
    pub max_attempts: i32,
    /// In-progress jobs whose lease ends before this are requeued (or failed): `now`, or
    /// later when this process alone runs jobs on the database and knows at its start that
    /// every lease it finds belongs to a worker that is gone.
    pub requeue_leases_before: Millis,
}

#[async_trait::async_trait]
pub trait JobStore: Send + Sync {
    async fn insert_job(&self, job: &JobRecord) -> Result<(), StoreError>;

    async fn job(&self, job_id: &str) -> Result<Option<JobRecord>, StoreError>;

    /// Only the job's status (what watchers of a running job read on each of its signals,
    /// without the row's JSON). `None` when there is no such job.
    async fn job_status(&self, job_id: &str) -> Result<Option<JobStatus>, StoreError> {
        Ok(self.job(job_id).await?.map(|j| j.status))
    }

    /// One page of the owner's jobs that pass `filter`, newest first (ties by job id,
    /// descending), starting after `page.after` (its number a `created_at`, its id a job id).
    /// MUST read through an index that starts with the owner, whatever the filter, and MUST
    /// NOT answer a job of an internal type (`JobType::is_public`), whatever the filter.
    async fn list_jobs(
        &self,
        owner: Owner,
        filter: &JobFilter,
        page: &PageRequest,
    ) -> Result<Page<JobRecord>, StoreError>;

    /// Takes the oldest pending job for this worker: in one transaction MUST move it to
    /// `in_progress` and set the lease (attempts are counted by the sweep, not here). Two workers (or replicas) MUST
    /// never take the same job (PostgreSQL `FOR UPDATE SKIP LOCKED`).
    async fn claim_job(&self, now: Millis, lease_until: Millis) -> Result<Option<JobRecord>, StoreError>;

    /// Applies `update` when the job's status is one of `from` (compare-and-set), setting
    /// `updated_at = now` and, when the new status is final, `finished_at = now`. Answers the
    /// updated job, or `None` (nothing changed) when the status was not one of `from` or
    /// the job does not exist.
    async fn update_job(
        &self,
        job_id: &str,
        from: &[JobStatus],
        update: &JobUpdate,
        now: Millis,
    ) -> Result<Option<JobRecord>, StoreError>;

    /// Appends an event and answers its sequence number (one more than the last).
    async fn append_event(&self, job_id: &str, kind: &str, content: &Value, at: Millis) -> Result<i64, StoreError>;

    /// Appends events in one transaction, numbered on from the last; answers the last
    /// sequence number (0 when `events` is empty and the job has none).
    async fn append_events(&self, job_id: &str, events: &[(String, Value)], at: Millis) -> Result<i64, StoreError>;

    /// The job's events with a sequence above `after`, in order.
    async fn events(&self, job_id: &str, after: i64) -> Result<Vec<JobEvent>, StoreError>;

    /// All the events of several jobs, by job id (a job without events is left out): what a
    /// listing shows, read in a few queries rather than a few per job. The default reads
    /// them one by one.
    async fn events_of(
        &self,
        job_ids: &[String],
    ) -> Result<std::collections::HashMap<String, Vec<JobEvent>>, StoreError> {
        let mut out = std::collections::HashMap::with_capacity(job_ids.len());
        for id in job_ids {
            let events = self.events(id, 0).await?;
            if !events.is_empty() {
                out.insert(id.clone(), events);
            }
        }
        Ok(out)
    }

    /// Hands a job this worker cannot finish back to the queue at once (a replica shutting
    /// down): an `in_progress` job that has not committed its document becomes `pending`,
    /// lease cleared, attempts unchanged. Answers whether it did; a committed job is left to
    /// finish (or to the sweep).
    async fn release_job(&self, job_id: &str, now: Millis) -> Result<bool, StoreError>;

    /// Requeues jobs whose lease expired, adding one attempt (or fails them when that makes
    /// `max_attempts`), cancels
    /// awaiting-approval jobs past their time and deletes finished jobs past retention
    /// (with their events).
    async fn sweep_jobs(&self, rules: &SweepRules) -> Result<Sweep, StoreError>;

    /// How many jobs of each type are pending, in progress or awaiting approval (finished
    /// ones are not counted); pairs with no job may be left out.
    async fn job_counts(&self) -> Result<Vec<(JobType, JobStatus, i64)>, StoreError>;

    /// Whether a chat job of this session is pending, in progress or awaiting approval.
    async fn has_active_chat(&self, owner: Owner, session: &SessionId) -> Result<bool, StoreError>;

    /// Deletes every job of the session (and their events) in one transaction; gives back
    /// the jobs it deleted, as they were.
    async fn delete_session_jobs(&self, owner: Owner, session: &SessionId) -> Result<Vec<JobRecord>, StoreError>;
}

/// A message of a session's chat history (docs/api.md, "Documents").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryMessage {
    pub message_id: String,
    /// `user` or `assistant`.
    pub role: String,
    pub content: String,
    pub job_id: Option<String>,
    pub version_before: Option<String>,
    pub version_after: Option<String>,
    pub created_at: Millis,
}

#[async_trait::async_trait]
pub trait HistoryStore: Send + Sync {
    /// Adds messages to the session's active history, in their order, after every message
    /// created at or before the first one's `created_at` and before any created later: a
    /// chat turn's messages carry the time of its commit, so the history follows the order in
    /// which turns changed the document even when they finish in another order.
    async fn add_messages(
        &self,
        owner: Owner,
        session: &SessionId,
        messages: &[HistoryMessage],
    ) -> Result<(), StoreError>;

    /// One page of the active history, oldest first (by position in the history, ties by
    /// message id), starting after `page.after` (its number a position, its id a message id).
    /// MUST read through an index that starts with the owner and the session.
    async fn active_history(
        &self,
        owner: Owner,
        session: &SessionId,
        page: &PageRequest,
    ) -> Result<Page<HistoryMessage>, StoreError>;

    /// The last `limit` messages of the active history, oldest first (what a chat turn gives
    /// the model; a long conversation is not read whole on every turn).
    async fn recent_history(
        &self,
        owner: Owner,
        session: &SessionId,
        limit: usize,
    ) -> Result<Vec<HistoryMessage>, StoreError>;

    /// The message of the active history with this id, if it is there.
    async fn active_message(
        &self,
        owner: Owner,
        session: &SessionId,
        message_id: &str,
    ) -> Result<Option<HistoryMessage>, StoreError>;

    /// Drops `message_id` and every later message from the active history. `false` when
    /// the message is not in the active history.
    async fn truncate_history(&self, owner: Owner, session: &SessionId, message_id: &str) -> Result<bool, StoreError>;
}

/// Something that happened to jobs, for whoever waits on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signal {
    /// The job changed: its status, its result, or anything else in its row (it may also
    /// have new events).
    Job(String),
    /// The job has new events and nothing else changed that a waiter on its status needs
    /// (progress at most): streams read the events, status watchers need not wake.
    Events(String),
    /// A job was queued: idle workers should look.
    Queued,
    /// An API key was revoked (its id): every replica forgets what it has cached of it.
    KeyRevoked(String),
    /// A write changed the owner's `sessions` rows (its `Owner` as text): every replica
    /// drops its kept session list of that owner.
    SessionsChanged(String),
    /// This replica's link to the others' signals was (re)established: signals sent while it
    /// was down are lost, so whatever is cached of other replicas' writes is forgotten.
    /// Never sent to other replicas.
    Reconnected,
}

/// Carries signals between the parts of one replica and, on PostgreSQL, between replicas
/// (`LISTEN/NOTIFY`). Signals are hints: a lost one only delays a waiter until its next poll.
#[async_trait::async_trait]
pub trait EventBus: Send + Sync {
    async fn publish(&self, signal: Signal);
    fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Signal>;
}

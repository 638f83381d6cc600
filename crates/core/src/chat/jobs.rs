//! Chat jobs from the caller's side: queueing a turn (with usage admission), waiting for it
//! to settle, and reading jobs and their events as views.

use std::collections::HashMap;
use std::time::Duration;

use redline_domain::job::{JobStatus, JobType};
use redline_domain::page::{Page, PageRequest};
use redline_domain::time_util::Millis;
use redline_domain::{Owner, SessionId};
use redline_ports::jobs::{JobEvent, JobFilter, JobRecord, Signal};
use redline_ports::StoreError;

use super::record::{TurnMetadata, TurnRequest, TurnState, FORMAT};
use super::view::{JobKind, JobView};
use super::{ms, Chat, ChatError, ChatRequest, ChatResult};

/// What a chat turn would be admitted as and could cost, worked out without running it
/// (`POST /v1/chat/estimate`).
#[derive(Debug, Clone)]
pub struct Estimate {
    /// The sections of the document the turn would edit: the editor copy sent, else the
    /// session's document (0 for a session not made yet).
    pub sections: u64,
    /// Admission holds this many operations (the least a turn costs).
    pub held_ops: u64,
    /// The most the turn can be charged: every section edited.
    pub max_ops: u64,
    /// Whether the quota lets the turn in now.
    pub admitted: bool,
    /// The owner's usage now.
    pub usage: crate::usage::UsageInfo,
}

impl Chat {
    /// Works out what [`Chat::submit`] would admit `req` as and what it could cost, without
    /// admitting, storing or running anything.
    pub async fn estimate(&self, owner: Owner, req: ChatRequest) -> ChatResult<Estimate> {
        if req.message.trim().is_empty() {
            return Err(ChatError::EmptyMessage);
        }
        let sections = match req.document_html {
            Some(html) => self.documents.count_sections(html).await?,
            None => match self.ports.store.document(owner, &req.session_id).await? {
                Some(doc) => usize::try_from(doc.section_count).unwrap_or(0),
                None => 0,
            },
        };
        let sections = u64::try_from(sections).unwrap_or(u64::MAX);
        let usage = self.usage.current(owner).await?;
        Ok(Estimate {
            sections,
            held_ops: 1,
            max_ops: redline_domain::usage::ops_for_sections(sections),
            admitted: !usage.quota_exhausted,
            usage,
        })
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
        // Time-ordered (UUIDv7): jobs created in the same millisecond list in creation order,
        // since listings break ties of `created_at` by the id.
        let job_id = uuid::Uuid::now_v7().to_string();
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
                    origin: None,
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
        // An internal job (an e-mailed export) is no caller's job, whoever asked for it.
        if !job.job_type.is_public() {
            return Err(ChatError::JobNotFound);
        }
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
        let mut view = JobView::read(job, events)?;
        if let Some(version_id) = document_to_read(&view) {
            let version = self.ports.store.version(job.owner, &job.session_id, &version_id).await?;
            fill_document(&mut view, version.map(|v| v.html).unwrap_or_default());
        }
        Ok(view)
    }
    /// One page of the owner's jobs, newest first; with their events unless `compact`. The
    /// events and documents of the whole page are read together, not job by job.
    pub async fn list(
        &self,
        owner: Owner,
        filter: &JobFilter,
        page: &PageRequest,
        compact: bool,
    ) -> ChatResult<Page<JobView>> {
        let jobs = self.ports.jobs.list_jobs(owner, filter, page).await?;
        let mut events = if compact {
            HashMap::new()
        } else {
            let ids: Vec<String> = jobs.items.iter().map(|j| j.job_id.clone()).collect();
            self.ports.jobs.events_of(&ids).await?
        };
        let mut items = Vec::with_capacity(jobs.items.len());
        for j in &jobs.items {
            items.push(JobView::read(j, events.remove(&j.job_id).unwrap_or_default())?);
        }
        let wanted: Vec<(SessionId, String)> =
            items.iter().filter_map(|v| Some((v.session_id.clone(), document_to_read(v)?))).collect();
        if !wanted.is_empty() {
            let documents = self.ports.store.versions_html(owner, &wanted).await?;
            for view in &mut items {
                if let Some(version_id) = document_to_read(view) {
                    fill_document(view, documents.get(&version_id).cloned().unwrap_or_default());
                }
            }
        }
        Ok(Page { items, next: jobs.next })
    }
    /// Events of a job after a sequence number (for streams).
    pub async fn events_after(&self, job_id: &str, after: i64) -> ChatResult<Vec<JobEvent>> {
        Ok(self.ports.jobs.events(job_id, after).await?)
    }
}

/// The version whose HTML a completed turn's view shows: a turn's result names its version
/// rather than holding a copy of the document.
fn document_to_read(view: &JobView) -> Option<String> {
    match &view.kind {
        JobKind::Chat(turn) => {
            let result = turn.result.as_ref()?;
            result.document_changes.document_to_read(turn.metadata.response_mode).map(str::to_owned)
        }
        _ => None,
    }
}

/// Puts the document read for [`document_to_read`] into the view.
fn fill_document(view: &mut JobView, html: String) {
    if let JobKind::Chat(turn) = &mut view.kind {
        if let Some(result) = &mut turn.result {
            result.document_changes.updated_html = Some(html);
        }
    }
}

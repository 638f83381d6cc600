//! The ends of jobs that their turn does not reach itself: cancellation, the deletion of a
//! session's jobs, and the sweep (dead workers, unanswered approvals, retention). A chat turn
//! ended this way gives back its held operation, and one whose reviewer had approved some
//! changes goes into the history with them.

use redline_domain::job::{JobStatus, JobType};
use redline_domain::time_util::Millis;
use redline_domain::{Owner, SessionId};
use redline_ports::jobs::{JobRecord, JobUpdate, Signal};

use super::record::Turn;
use super::{admission_of, ms, Chat, ChatError, ChatResult};

impl Chat {
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
    /// revert to it undoes them. The turn is not billed (docs/api.md, "Usage and billing"). Nothing is written
    /// for a turn that applied nothing.
    pub(super) async fn record_interrupted_turn(&self, job: &JobRecord) {
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
        let entry = super::commit::history_entry(&job.job_id, version_before, version_after, now);
        let messages = [entry("user", message), entry("assistant", content)];
        if let Err(e) = self.ports.history.add_messages(job.owner, &job.session_id, &messages).await {
            tracing::warn!(job_id = %job.job_id, error = %e, "could not record the interrupted turn in the history");
        }
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
    /// Answers the jobs of other types that it failed or cancelled, as they are now, for
    /// their runners (an e-mailed export tells its recipient).
    pub async fn sweep(&self, every_lease_ended: bool) -> ChatResult<Vec<JobRecord>> {
        let now = self.now();
        let rules = redline_ports::jobs::SweepRules {
            now,
            delete_finished_before: now - ms(self.config.retention),
            cancel_awaiting_before: now - ms(self.config.approval_timeout),
            max_attempts: redline_domain::job::MAX_ATTEMPTS,
            requeue_leases_before: if every_lease_ended { Millis::MAX } else { now },
        };
        let sweep = self.ports.jobs.sweep_jobs(&rules).await?;
        for id in &sweep.failed {
            tracing::warn!(job_id = %id, "gave up a job: the servers running it stopped too often, or it had committed");
        }
        let mut others = Vec::new();
        for id in sweep.cancelled.iter().chain(&sweep.failed) {
            if let Some(job) = self.ports.jobs.job(id).await? {
                if job.job_type == JobType::Chat {
                    if let Some(admission) = admission_of(&job) {
                        let _ = self.usage.release(&admission).await;
                    }
                    self.record_interrupted_turn(&job).await;
                } else {
                    others.push(job);
                }
            }
            self.ports.bus.publish(Signal::Job(id.clone())).await;
        }
        if !sweep.requeued.is_empty() {
            tracing::warn!(jobs = ?sweep.requeued, "requeued jobs whose worker stopped");
            self.ports.bus.publish(Signal::Queued).await;
        }
        Ok(others)
    }
}

//! Approval of a turn's proposed changes (docs/api.md, "Chat and jobs"): the approved ones are applied
//! onto the document as it is now, the turn completes, or with the reviewer's feedback on
//! rejected ones it is queued again for another round.

use redline_domain::document::{Document, MAX_SECTIONS};
use redline_domain::job::{sections_edited, ApprovalError, ApprovalRequest, Change, ChangeOp, JobStatus};
use redline_domain::{Owner, SessionId};
use redline_ports::jobs::{JobRecord, JobUpdate, Signal};
use serde_json::json;

use super::commit::Commit;
use super::record::{Continuation, PublicChange, ReviewRound, StoredChange, Turn, TurnMetadata, TurnState};
use super::{Chat, ChatError, ChatResult};
use crate::documents::new_chunk_id;

impl Chat {
    /// Answers a job's pending changes (docs/api.md, "Chat and jobs").
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
        if let Some((unknown, _)) = req.edits.iter().find(|(id, _)| !pending.iter().any(|c| &c.change_id == id)) {
            return Err(ChatError::BadCorrection {
                change_id: unknown.clone(),
                detail: format!("Unknown change_id: {unknown}"),
            });
        }
        let approved = redline_domain::job::select_approved(&pending, req).map_err(|e| match e {
            ApprovalError::UnknownChanges(ids) => {
                ChatError::UnknownChanges(format!("Unknown change_id: {}", ids.join(", ")))
            }
            other => ChatError::UnknownChanges(other.to_string()),
        })?;
        let mut approved: Vec<Change> = approved.into_iter().cloned().collect();
        if !req.edits.is_empty() {
            let (_, doc) = self.documents.current(owner, session).await?;
            for change in &mut approved {
                if let Some(html) = req.edit_of(&change.change_id) {
                    self.correct(change, html, &doc).await?;
                }
            }
        }
        self.finish_approval(turn, approved, &pending, feedback).await
    }
    /// Puts the reviewer's corrected HTML in place of the AI's proposal (docs/api.md,
    /// "Approval"): sanitized and made into sections as the AI's is, the first keeping the
    /// change's section id. The same HTML as proposed is no correction.
    async fn correct(&self, change: &mut Change, html: &str, doc: &Document) -> ChatResult<()> {
        let id = change.change_id.clone();
        let bad = |detail: String| ChatError::BadCorrection { change_id: id.clone(), detail };
        if change.op == ChangeOp::Delete {
            return Err(bad(format!(
                "Change {id} deletes its section: there is no text to correct. Approve or reject it."
            )));
        }
        let mut sections = self
            .documents
            .sectionize(html.to_owned())
            .await
            .map_err(|e| bad(format!("The corrected HTML of change {id} was refused: {e}.")))?;
        // Blank sections (`<p> </p>`) are no text either; a picture is content.
        if sections.iter().all(|s| s.text.trim().is_empty() && !s.html.contains("<img")) {
            return Err(bad(format!("The corrected HTML of change {id} has no text. To drop the change, reject it.")));
        }
        let after = doc.len().saturating_sub(usize::from(change.op == ChangeOp::Edit)).saturating_add(sections.len());
        if after > MAX_SECTIONS && after > doc.len() {
            return Err(bad(format!(
                "The corrected HTML of change {id} would make the document longer than {MAX_SECTIONS} sections."
            )));
        }
        doc.settle_ids(&mut sections, Some(&change.chunk_id), &mut new_chunk_id);
        let same = sections.len() == change.new_sections.len()
            && sections.iter().zip(&change.new_sections).all(|(a, b)| a.html == b.html);
        if !same {
            change.new_sections = sections;
            change.edited = true;
        }
        Ok(())
    }
    /// Applies the approved changes of a job awaiting approval and completes it.
    /// `pending`: the changes proposed, of which `approved` are approved.
    pub(super) async fn finish_approval(
        &self,
        turn: Turn,
        approved: Vec<Change>,
        pending: &[Change],
        feedback: Option<String>,
    ) -> ChatResult<JobRecord> {
        let now = self.now();
        let take = JobUpdate { status: Some(JobStatus::InProgress), ..Default::default() };
        let Some(job) =
            self.ports.jobs.update_job(&turn.job.job_id, &[JobStatus::AwaitingApproval], &take, now).await?
        else {
            return Err(ChatError::Conflict(format!("Job {} is no longer awaiting approval.", turn.job.job_id)));
        };
        // Taking the job changed its status alone.
        let turn = Turn { job, ..turn };
        let job = &turn.job;
        let proposed = pending.len();
        let back = JobUpdate { status: Some(JobStatus::AwaitingApproval), ..Default::default() };
        let (record, doc) = self.documents.current(job.owner, &job.session_id).await?;
        let refs: Vec<&Change> = approved.iter().collect();
        let next = match redline_domain::job::apply_approved(&doc, &refs) {
            Ok(next) => next,
            Err(e) => {
                self.ports.jobs.update_job(&job.job_id, &[JobStatus::InProgress], &back, self.now()).await?;
                let ids = match &e {
                    redline_domain::job::ApprovalError::Stale(ids) => ids.clone(),
                    _ => Vec::new(),
                };
                return Err(ChatError::StaleChanges {
                    detail: format!(
                        "These changes were proposed against sections that have changed since: {}. Nothing was applied; reject them or ask again.",
                        ids.join(", ")
                    ),
                    change_ids: ids,
                });
            }
        };
        let version_before = record.as_ref().and_then(|r| r.version_id.clone());
        let doc_record = if approved.is_empty() {
            record
        } else {
            // A version with the reviewer's corrections says so (`review`), the others are
            // the AI's (`chat`).
            let source = if approved.iter().any(|c| c.edited) { "review" } else { "chat" };
            match self.commit(job, version_before.clone(), &next, source).await? {
                Commit::Done(r) => Some(r),
                Commit::JobNotRunning => {
                    return Err(ChatError::Conflict(format!("Job {} was cancelled during the approval.", job.job_id)))
                }
                Commit::Stale => {
                    self.ports.jobs.update_job(&job.job_id, &[JobStatus::InProgress], &back, self.now()).await?;
                    return Err(ChatError::Conflict("The document changed during the approval; try again.".to_owned()));
                }
            }
        };
        let mut response = turn.state.response.clone().unwrap_or_default();
        let corrected = approved.iter().filter(|c| c.edited).count();
        response.push_str(&format!(
            "\n\n{} of {proposed} proposed change{} applied after review{}.",
            approved.len(),
            if proposed == 1 { "" } else { "s" },
            match corrected {
                0 => String::new(),
                n => format!(" ({n} corrected by the reviewer)"),
            }
        ));
        let rejected: Vec<PublicChange> = pending
            .iter()
            .filter(|c| !approved.iter().any(|a| a.change_id == c.change_id))
            .map(PublicChange::from)
            .collect();
        // Notes go back to the AI, which did not propose an upload's tracked changes.
        if let Some(f) = feedback.filter(|f| !f.trim().is_empty() && !turn.request.from_upload()) {
            if !rejected.is_empty() {
                // The reviewer's feedback goes back to the AI, which may propose again in this
                // job: the job is queued again with what happened so far.
                let mut applied = turn.state.applied.clone();
                applied.extend(StoredChange::list(&approved));
                // The versions the turn's approved rounds span, for its history entry however
                // it ends (completed, or cancelled and failed after this round: `Chat::record_interrupted_turn`).
                let (first_before, last_after) = if approved.is_empty() {
                    (turn.state.turn_version_before.clone(), turn.state.turn_version_after.clone())
                } else {
                    (
                        turn.state.turn_version_before.clone().or_else(|| version_before.clone()),
                        doc_record.as_ref().and_then(|r| r.version_id.clone()),
                    )
                };
                let mut rounds = turn.state.rounds.clone();
                rounds.push(ReviewRound { response: response.clone(), feedback: f.clone() });
                let state = TurnState {
                    rounds,
                    turn_version_before: first_before,
                    turn_version_after: last_after,
                    continuation: Some(Continuation {
                        feedback: f.clone(),
                        previous_response: turn.state.response.clone(),
                        approved: approved.iter().map(|c| c.change_id.clone()).collect(),
                        rejected,
                    }),
                    applied_sections: turn.state.applied_sections + sections_edited(&approved),
                    applied,
                    ..TurnState::new()
                };
                let metadata = TurnMetadata { pending_changes: None, ..turn.metadata.clone() };
                let requeue = JobUpdate {
                    status: Some(JobStatus::Pending),
                    progress: Some(50),
                    metadata: Some(metadata.to_value()),
                    state: Some(state.to_value()),
                    lease_until: Some(None),
                    ..Default::default()
                };
                self.ports.jobs.update_job(&job.job_id, &[JobStatus::InProgress], &requeue, self.now()).await?;
                self.emit(&job.job_id, "status", json!({"message": "Reviewer feedback sent to the AI", "feedback": f}))
                    .await;
                self.ports.bus.publish(Signal::Job(job.job_id.clone())).await;
                self.ports.bus.publish(Signal::Queued).await;
                return self.ports.jobs.job(&job.job_id).await?.ok_or(ChatError::JobNotFound);
            }
        }
        self.complete(&turn, doc_record, version_before, &approved, response).await?;
        self.ports.jobs.job(&job.job_id).await?.ok_or(ChatError::JobNotFound)
    }
}

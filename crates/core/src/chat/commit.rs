//! The end of a turn: its changes proposed for approval, or committed in one transaction
//! (re-applied onto the document when other writers committed first, as long as each section
//! is as the AI saw it), charged, recorded in the history and completed; or the turn failed.

use redline_domain::document::Document;
use redline_domain::job::{sections_edited, Change, ChangeOp, JobStatus};
use redline_ports::documents::{CommitOutcome, DocumentRecord, NewVersion};
use redline_ports::jobs::{HistoryMessage, JobRecord, JobUpdate, Signal};
use serde_json::json;

use super::record::{
    DocumentChanges, Failure, PublicChange, ResponseMode, StoredChange, Turn, TurnMetadata, TurnResult, TurnState,
    UsageRecord, FORMAT,
};
use super::tools::Workspace;
use super::{short_id, Chat, ChatError, ChatResult};
use crate::documents::new_version_id;

/// Times a turn re-applies its changes onto a document that other writers changed first.
const REBASE_ATTEMPTS: usize = 20;

/// What committing a turn's document did.
pub(super) enum Commit {
    Done(DocumentRecord),
    /// The document moved on since the turn read it; nothing written.
    Stale,
    /// The job is no longer in progress (cancelled); nothing written.
    JobNotRunning,
}

/// A human-readable summary of changes.
pub(super) fn summary(changes: &[Change]) -> String {
    if changes.is_empty() {
        return "No changes to the document.".to_owned();
    }
    let count = |op| changes.iter().filter(|c| c.op == op).count();
    let mut parts = Vec::new();
    for (op, word) in [(ChangeOp::Edit, "edited"), (ChangeOp::Create, "created"), (ChangeOp::Delete, "deleted")] {
        let n = count(op);
        if n > 0 {
            parts.push(format!("{n} section{} {word}", if n == 1 { "" } else { "s" }));
        }
    }
    format!("{}.", parts.join(", "))
}

/// A maker of one turn's history messages: each of `role` with `content`, all of the job, the
/// versions and the time given.
pub(super) fn history_entry(
    job_id: &str,
    version_before: Option<String>,
    version_after: Option<String>,
    created_at: redline_domain::time_util::Millis,
) -> impl Fn(&str, String) -> HistoryMessage + '_ {
    move |role, content| HistoryMessage {
        message_id: short_id("msg_"),
        role: role.to_owned(),
        content,
        job_id: Some(job_id.to_owned()),
        version_before: version_before.clone(),
        version_after: version_after.clone(),
        created_at,
    }
}

/// How the history opens the reviewer's notes on a round it sent back to the AI.
pub const REVIEW_NOTES_PREFIX: &str = "My notes on the changes I rejected:";

impl Chat {
    /// Ends a turn as failed (nothing written, nothing charged).
    pub(super) async fn fail(&self, turn: &Turn, error: String) {
        self.fail_with(turn, error, None).await;
    }
    /// Ends a turn as failed because other writers changed the sections it edited: its state
    /// says [`Failure::Conflict`], which `POST /v1/chat` answers with 409, not as a failure
    /// of the AI model (502).
    pub(super) async fn fail_conflict(&self, turn: &Turn, error: String) {
        self.fail_with(turn, error, Some(Failure::Conflict)).await;
    }
    pub(super) async fn fail_with(&self, turn: &Turn, error: String, failure: Option<Failure>) {
        let job = &turn.job;
        tracing::warn!(job_id = %job.job_id, %error, "chat job failed");
        // What this round did not write, the rounds approved before it did.
        let error = match turn.state.applied.len() {
            0 => error,
            n => format!(
                "{} The {n} change{} approved earlier in this turn stay{} in the document.",
                error
                    .replace("; nothing was changed.", ".")
                    .replace(" Nothing was changed.", "")
                    .replace("; nothing was applied.", "; nothing more was applied."),
                if n == 1 { "" } else { "s" },
                if n == 1 { "s" } else { "" },
            ),
        };
        let state = failure.map(|failure| TurnState { failure: Some(failure), ..turn.state.clone() }.to_value());
        let update = JobUpdate { status: Some(JobStatus::Failed), error: Some(error), state, ..Default::default() };
        if let Ok(Some(failed)) =
            self.ports.jobs.update_job(&job.job_id, &[JobStatus::InProgress], &update, self.now()).await
        {
            let _ = self.usage.release(&turn.admission()).await;
            self.record_interrupted_turn(&failed).await;
        }
        self.ports.bus.publish(Signal::Job(job.job_id.clone())).await;
    }
    /// The end of a turn: propose the changes, or apply them, charge and complete.
    pub(super) async fn finish(
        &self,
        turn: &Turn,
        record: Option<DocumentRecord>,
        base_version: Option<String>,
        ws: Workspace,
        response: String,
        require_approval: bool,
    ) -> ChatResult<()> {
        let job = &turn.job;
        if require_approval && !ws.changes().is_empty() {
            let metadata =
                TurnMetadata { pending_changes: Some(PublicChange::list(ws.changes())), ..turn.metadata.clone() };
            let state = TurnState {
                pending: Some(StoredChange::list(ws.changes())),
                base_version,
                response: Some(response),
                applied: turn.state.applied.clone(),
                applied_sections: turn.state.applied_sections,
                turn_version_before: turn.state.turn_version_before.clone(),
                turn_version_after: turn.state.turn_version_after.clone(),
                rounds: turn.state.rounds.clone(),
                ..TurnState::new()
            };
            let update = JobUpdate {
                status: Some(JobStatus::AwaitingApproval),
                progress: Some(90),
                metadata: Some(metadata.to_value()),
                state: Some(state.to_value()),
                lease_until: Some(None),
                ..Default::default()
            };
            self.ports.jobs.update_job(&job.job_id, &[JobStatus::InProgress], &update, self.now()).await?;
            self.emit(
                &job.job_id,
                "status",
                json!({"message": super::takeover::ROUND_END, "pending": ws.changes().len()}),
            )
            .await;
            self.ports.bus.publish(Signal::Job(job.job_id.clone())).await;
            return Ok(());
        }
        if self.job_status(&job.job_id).await? != JobStatus::InProgress {
            return Ok(());
        }
        let owner = job.owner;
        // `version_before`: the version the turn's edits were written onto (a revert to the
        // turn undoes them and keeps what other writers committed before them).
        let (doc_record, applied, version_before) = if ws.changes().is_empty() {
            (record, Vec::new(), base_version)
        } else {
            match self.commit(job, base_version.clone(), &ws.working, "chat").await? {
                Commit::Done(r) => (Some(r), ws.changes().to_vec(), base_version),
                // Cancelled meanwhile: the cancel won, nothing is written.
                Commit::JobNotRunning => return Ok(()),
                Commit::Stale => {
                    // The document moved during the turn: apply the changes onto it if each
                    // section is as the AI saw it (retrying while other writers commit first),
                    // else give up without writing.
                    let mut committed = None;
                    for _ in 0..REBASE_ATTEMPTS {
                        let (now_record, now_doc) = self.documents.current(owner, &job.session_id).await?;
                        let refs: Vec<&Change> = ws.changes().iter().collect();
                        let Ok(rebased) = redline_domain::job::apply_approved(&now_doc, &refs) else {
                            self.fail_conflict(turn, "The document was changed by someone else while the AI edited the same sections; nothing was applied. Try again.".to_owned()).await;
                            return Ok(());
                        };
                        let expected = now_record.as_ref().and_then(|r| r.version_id.clone());
                        match self.commit(job, expected.clone(), &rebased, "chat").await? {
                            Commit::Done(r) => {
                                committed = Some((r, expected));
                                break;
                            }
                            Commit::JobNotRunning => return Ok(()),
                            Commit::Stale => {}
                        }
                    }
                    match committed {
                        Some((r, onto)) => (Some(r), ws.changes().to_vec(), onto),
                        None => {
                            self.fail_conflict(
                                turn,
                                "The document kept changing while the AI edited it; nothing was applied. Try again."
                                    .to_owned(),
                            )
                            .await;
                            return Ok(());
                        }
                    }
                }
            }
        };
        self.complete(turn, doc_record, version_before, &applied, response).await
    }
    pub(super) async fn job_status(&self, job_id: &str) -> ChatResult<JobStatus> {
        let job = self.ports.jobs.job(job_id).await?.ok_or(ChatError::JobNotFound)?;
        Ok(job.status)
    }
    /// Commits `doc` over `expected` for the job; from then on the job cannot be cancelled.
    pub(super) async fn commit(
        &self,
        job: &JobRecord,
        expected: Option<String>,
        doc: &Document,
        source: &str,
    ) -> ChatResult<Commit> {
        let version = NewVersion {
            version_id: new_version_id(),
            html: doc.to_html(),
            section_count: doc.len() as i64,
            source: source.to_owned(),
            title: None,
            now: self.now(),
        };
        let store = &self.ports.store;
        Ok(match store.commit_job_version(&job.job_id, job.owner, &job.session_id, Some(expected), &version).await? {
            Some(CommitOutcome::Committed(r)) => Commit::Done(r),
            Some(CommitOutcome::Stale { .. }) => Commit::Stale,
            None => Commit::JobNotRunning,
        })
    }
    /// Charges the turn, records it in the history and completes the job with its result.
    pub(super) async fn complete(
        &self,
        turn: &Turn,
        doc_record: Option<DocumentRecord>,
        version_before: Option<String>,
        applied: &[Change],
        response: String,
    ) -> ChatResult<()> {
        let job = &turn.job;
        // `applied`, this round's changes, were committed with `doc_record`.
        let committed = !applied.is_empty();
        let sections = sections_edited(applied) + turn.state.applied_sections;
        // A turn in rounds is undone whole: its history starts at the version before its first
        // approved round.
        let version_before = turn.state.turn_version_before.clone().or(version_before);
        // The result describes what the whole turn applied: the rounds approved before the
        // reviewer's feedback, then this one.
        let mut all = turn.state.prior_changes()?;
        all.extend_from_slice(applied);
        let applied = all.as_slice();
        let charged = if turn.request.from_upload() {
            // No model ran: an upload's tracked changes cost nothing.
            self.usage.current(job.owner).await
        } else {
            self.usage.charge(&turn.admission(), sections).await
        };
        let usage = match charged {
            Ok(u) => u,
            Err(e) => {
                tracing::warn!(job_id = %job.job_id, error = %e, "could not charge a completed turn");
                let mut u = self.usage.current(job.owner).await?;
                u.was_billable = true;
                u
            }
        };
        let version_after = doc_record.as_ref().and_then(|r| r.version_id.clone());
        // The history follows the order of commits: a turn that committed is recorded at its
        // commit's time (another turn committing after it may finish first); one that changed
        // nothing, after the document's last change.
        let last_change = doc_record.as_ref().map_or(0, |r| r.updated_at);
        let now = if committed { last_change } else { self.now().max(last_change) };
        // The request, each round the reviewer sent back (the AI's answer, then the notes), and
        // the last answer: one turn, undone whole from its first message.
        let said = history_entry(&job.job_id, version_before.clone(), version_after.clone(), now);
        let mut messages = vec![said("user", turn.request.message.clone())];
        for round in &turn.state.rounds {
            messages.push(said("assistant", round.response.clone()));
            messages.push(said("user", format!("{REVIEW_NOTES_PREFIX}\n{}", round.feedback)));
        }
        messages.push(said("assistant", response.clone()));
        self.ports.history.add_messages(job.owner, &job.session_id, &messages).await?;
        let compact = turn.request.response_mode == ResponseMode::Compact;
        let html = doc_record.as_ref().map(|r| r.html.clone()).unwrap_or_default();
        let changes = PublicChange::list(applied);
        let result = TurnResult {
            format: FORMAT,
            response,
            session_id: job.session_id.as_str().to_owned(),
            document_changes: DocumentChanges {
                updated_html: (!compact).then_some(html),
                version_id: version_after,
                changes_summary: summary(applied),
                requires_approval: false,
                pending_changes: None,
                chunk_diffs: compact.then(|| changes.clone()),
                changes,
            }
            .stored(),
            usage: UsageRecord::from(&usage),
        };
        let update = JobUpdate {
            status: Some(JobStatus::Completed),
            progress: Some(100),
            result: Some(result.to_value()),
            ..Default::default()
        };
        let from = [JobStatus::InProgress];
        if self.ports.jobs.update_job(&job.job_id, &from, &update, self.now()).await?.is_none() {
            tracing::warn!(job_id = %job.job_id, "the job was cancelled while its turn was being completed");
        }
        self.ports.bus.publish(Signal::Job(job.job_id.clone())).await;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use redline_domain::document::{ChunkId, Section};

    use super::*;

    #[test]
    fn changes_survive_the_job_state() {
        let s = Section {
            id: ChunkId::parse("c1").unwrap(),
            tag: "p".into(),
            html: "<p data-chunk-id=\"c1\">x</p>".into(),
            text: "x".into(),
        };
        let changes = vec![
            Change {
                change_id: "chg_1".into(),
                op: ChangeOp::Create,
                chunk_id: s.id.clone(),
                after: None,
                old_html: None,
                new_sections: vec![s.clone()],
                explanation: Some("why".into()),
                edited: false,
            },
            Change {
                change_id: "chg_2".into(),
                op: ChangeOp::Delete,
                chunk_id: ChunkId::parse("c2").unwrap(),
                after: None,
                old_html: Some("<p data-chunk-id=\"c2\">y</p>".into()),
                new_sections: vec![],
                explanation: None,
                edited: false,
            },
        ];
        let state = TurnState { pending: Some(StoredChange::list(&changes)), ..TurnState::new() };
        assert_eq!(TurnState::read(&state.to_value()).unwrap().pending_changes().unwrap(), changes);
        assert!(TurnState::read(&json!({"pending": {"nope": 1}})).is_err());
        assert_eq!(summary(&changes), "1 section created, 1 section deleted.");
    }
}

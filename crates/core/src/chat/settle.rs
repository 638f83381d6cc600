//! The Word round trip's way back (docs/api.md, "The Word round trip"): the tracked export of a
//! turn awaiting approval, reviewed in Word or LibreOffice and uploaded back into its session,
//! settles that turn. What the reviewer accepted is approved (with their corrections, when they
//! changed a proposal before accepting it), what they rejected is rejected, and what the file
//! still holds as tracked changes — proposals left undecided, revisions of the reviewer's own —
//! and any other edit of theirs becomes a new turn awaiting approval (`track_changes=review`),
//! or is taken or dropped with the file's other tracked changes (`accept`, `reject`).

use redline_domain::job::{Change, ChangeOp, JobStatus, JobType};
use redline_domain::{Owner, SessionId};
use redline_ports::jobs::JobRecord;

use super::authorship::explain;
use super::decide::{decide, Decision};
use super::record::Turn;
use super::revisions::{content, revision_changes};
use super::{Chat, ChatError, ChatResult};
use crate::documents::{new_chunk_id, Readings, TrackedChoice};

/// What a returned file did.
#[derive(Debug)]
pub struct Settled {
    /// The turn it settled.
    pub job: JobRecord,
    /// The turn proposing what the file still changes (`track_changes=review`).
    pub review: Option<JobRecord>,
    /// What happened, in one sentence for the upload's warnings.
    pub said: String,
}

/// How many of a turn's changes each decision got.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Tally {
    accepted: usize,
    corrected: usize,
    rejected: usize,
    undecided: usize,
}

impl Tally {
    fn describe(&self) -> String {
        let mut parts = vec![format!("{} accepted", self.accepted + self.corrected)];
        if self.corrected > 0 {
            parts[0].push_str(&format!(" ({} with the reviewer's corrections)", self.corrected));
        }
        parts.push(format!("{} rejected", self.rejected));
        if self.undecided > 0 {
            parts.push(format!("{} left undecided", self.undecided));
        }
        parts.join(", ")
    }
}

impl Chat {
    /// Whether `job_id` names a chat turn of `session` awaiting approval: the turn a file
    /// exported from it settles when it comes back.
    pub async fn awaits_review(&self, owner: Owner, session: &SessionId, job_id: &str) -> ChatResult<bool> {
        match self.job(owner, job_id).await {
            Ok(job) => Ok(job.session_id == *session
                && job.job_type == JobType::Chat
                && job.status == JobStatus::AwaitingApproval),
            // Another owner's turn is none of this caller's, as one that does not exist.
            Err(ChatError::JobNotFound | ChatError::Forbidden) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Settles the turn `job_id` from the reviewed file `file` (both its readings), taking
    /// its remaining tracked changes as `choice` says.
    pub async fn settle_from_file(
        &self,
        owner: Owner,
        session: &SessionId,
        job_id: &str,
        readings: &Readings,
        choice: TrackedChoice,
        file: &str,
    ) -> ChatResult<Settled> {
        let job = self.job(owner, job_id).await?;
        if job.session_id != *session || job.status != JobStatus::AwaitingApproval {
            return Err(ChatError::Conflict(format!("Job {job_id} is no longer awaiting approval.")));
        }
        let mut turn = Turn::read(&job)?;
        let pending = turn.state.pending_changes()?;
        let (record, doc) = self.documents.current(owner, session).await?;
        // Taken or dropped as a whole, the file would undo edits made since the turn
        // proposed its changes: refused (a review shows them instead).
        let version = record.and_then(|r| r.version_id);
        if choice != TrackedChoice::Review && turn.state.base_version.is_some() && version != turn.state.base_version {
            return Err(ChatError::Conflict(format!(
                "The document changed since job {job_id} proposed its changes: upload the file with track_changes=review to see what it changes, or export it again."
            )));
        }
        // Taken or dropped as a whole, a file with nothing left in it would empty the
        // document: refused, as a save with no content is.
        let target = if choice == TrackedChoice::Reject { &readings.original } else { &readings.accepted };
        if choice != TrackedChoice::Review
            && doc.has_content()
            && !target.iter().any(redline_domain::document::Section::shows_content)
        {
            return Err(ChatError::Document(crate::documents::DocumentError::WouldEmpty));
        }
        // What the reviewer decided is the file with its remaining tracked changes rejected
        // (or accepted, when they are to be taken).
        let decided = if choice == TrackedChoice::Accept { &readings.accepted } else { &readings.original };
        let (decided, accepted, changes) = (decided.clone(), readings.accepted.clone(), pending.clone());
        let review = choice == TrackedChoice::Review;
        let current = doc.clone();
        // Matching two long documents is CPU work: on the blocking pool.
        let (decisions, still) = tokio::task::spawn_blocking(move || {
            let doc = current;
            let decisions = decide(&doc, &changes, &decided);
            let still = if review { decide(&doc, &changes, &accepted) } else { vec![Decision::Left; changes.len()] };
            (decisions, still)
        })
        .await
        .map_err(|e| ChatError::Store(redline_ports::StoreError::Other(e.to_string())))?;
        let mut tally = Tally::default();
        let mut approved = Vec::new();
        let mut undecided: Vec<&Change> = Vec::new();
        for ((change, decision), later) in pending.iter().zip(&decisions).zip(&still) {
            match decision {
                Decision::Taken => {
                    tally.accepted += 1;
                    approved.push(change.clone());
                }
                Decision::Edited(sections) => {
                    tally.corrected += 1;
                    let mut corrected = change.clone();
                    let mut sections = sections.clone();
                    doc.settle_ids(&mut sections, Some(&change.chunk_id), &mut new_chunk_id);
                    corrected.new_sections = sections;
                    corrected.edited = true;
                    approved.push(corrected);
                }
                Decision::Left if *later != Decision::Left => {
                    tally.undecided += 1;
                    undecided.push(change);
                }
                Decision::Left => tally.rejected += 1,
            }
        }
        let note = format!("Settled by the reviewed file {file}: {}.", tally.describe());
        let response = turn.state.response.take().unwrap_or_default();
        turn.state.response = Some(if response.is_empty() { note.clone() } else { format!("{response}\n\n{note}") });
        // The file's new pictures are stored before a version can show them: those of the
        // readings in use (under review both: the decided one and the one with its tracked
        // changes, which the next review proposes).
        let used: &[&[redline_domain::document::Section]] = match choice {
            TrackedChoice::Review => &[&readings.original, &readings.accepted],
            _ => &[target],
        };
        self.documents.keep_images(owner, session, readings, used).await?;
        let job = self.finish_approval(turn, approved, &pending, None).await?;
        // What the file still changes, against the document as the turn left it.
        let (record, doc) = self.documents.current(owner, session).await?;
        let summary = readings.summary.as_deref().unwrap_or("no tracked changes left");
        let lead = format!("A change of the reviewed file {file}");
        let fallback = format!("{lead} ({summary}).");
        let (target, who) = (target.clone(), readings.who.clone());
        let base = doc.clone();
        let mut rest = tokio::task::spawn_blocking(move || {
            let mut rest = revision_changes(&base, target, &fallback, &mut new_chunk_id);
            explain(&mut rest, &base, &who, &lead, &fallback);
            rest
        })
        .await
        .map_err(|e| ChatError::Store(redline_ports::StoreError::Other(e.to_string())))?;
        // A proposal left undecided keeps its explanation.
        for change in &mut rest {
            if let Some(u) = undecided.iter().find(|u| same_place(u, change)) {
                change.explanation.clone_from(&u.explanation);
            }
        }
        let mut said =
            format!("This file is the tracked export of job {job_id}, which it settled: {}.", tally.describe());
        if rest.is_empty() {
            return Ok(Settled { job, review: None, said });
        }
        let n = rest.len();
        let plural = if n == 1 { "" } else { "s" };
        if review {
            let message = format!("Review the changes of the reviewed file {file}");
            let response = format!(
                "{file} came back from review with {n} change{plural} of its own or left undecided; they await your review."
            );
            let version = record.and_then(|r| r.version_id);
            let next = self.insert_review(owner, session, version, rest, message, response).await?;
            said.push_str(&format!(
                " The file's {n} other change{plural} await{} your review in job {}.",
                if n == 1 { "s" } else { "" },
                next.job_id
            ));
            return Ok(Settled { job, review: Some(next), said });
        }
        // The turn is settled: what goes wrong from here is said, not answered as a failure
        // of the upload (whose decisions stand).
        let refs: Vec<&Change> = rest.iter().collect();
        let version = record.and_then(|r| r.version_id);
        // The document moving on meanwhile is said; an outage of the store is an error (the
        // decisions stand: the file can be uploaded again).
        let why = match redline_domain::job::apply_approved(&doc, &refs) {
            Ok(next) => match self.documents.commit_over(owner, session, &next, version, "upload").await {
                Ok(_) => None,
                Err(crate::documents::DocumentError::Stale { .. }) => Some("the document changed meanwhile".to_owned()),
                Err(e) => return Err(e.into()),
            },
            Err(e) => Some(e.to_string()),
        };
        if let Some(why) = why {
            tracing::warn!(reason = %why, job_id, "a reviewed file's other changes could not be applied");
            said.push_str(&format!(
                " The file's {n} other change{plural} could not be applied ({why}): upload it again with track_changes=review to review them."
            ));
            return Ok(Settled { job, review: None, said });
        }
        said.push_str(&format!(
            " The file's {n} other change{plural} {} {}.",
            if n == 1 { "was" } else { "were" },
            if choice == TrackedChoice::Accept {
                "taken with its tracked changes accepted"
            } else {
                "taken with its tracked changes rejected"
            }
        ));
        Ok(Settled { job, review: None, said })
    }
}

/// Whether `change` (of what the file still changes) stands where the undecided proposal `u`
/// did: the same section edited or deleted, or the same sections created.
fn same_place(u: &Change, change: &Change) -> bool {
    match (u.op, change.op) {
        (ChangeOp::Create, ChangeOp::Create) => {
            u.new_sections.len() == change.new_sections.len()
                && u.new_sections.iter().zip(&change.new_sections).all(|(a, b)| content(a) == content(b))
        }
        (ChangeOp::Create, _) | (_, ChangeOp::Create) => false,
        _ => u.chunk_id == change.chunk_id,
    }
}

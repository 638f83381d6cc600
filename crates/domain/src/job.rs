//! Jobs and their state machine (docs/api.md, "Chat and jobs"), and the proposed changes a chat turn
//! makes to a document (the contract's PendingChange).

use std::fmt;

use crate::document::{ChunkId, Document, DocumentError, Section};

/// What a job does. `Chat` and `AttachmentProcessing` are the contract's job types, which
/// callers see and list; `EmailedExport` is internal: it runs in the same queue (any replica
/// claims it, a crash retries it) but no caller ever sees it as a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobType {
    Chat,
    AttachmentProcessing,
    /// An export rendered in the background and e-mailed as a download link.
    EmailedExport,
}

impl JobType {
    /// Every type, the public ones first.
    pub const ALL: [JobType; 3] = [JobType::Chat, JobType::AttachmentProcessing, JobType::EmailedExport];

    pub fn as_str(self) -> &'static str {
        match self {
            JobType::Chat => "chat",
            JobType::AttachmentProcessing => "attachment_processing",
            JobType::EmailedExport => "emailed_export",
        }
    }

    /// Any stored type, internal ones included (what the job store reads).
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// A type callers may name (the `job_type` filter): the public ones only.
    pub fn parse_public(s: &str) -> Option<Self> {
        Self::parse(s).filter(|t| t.is_public())
    }

    /// Whether callers see jobs of this type (listings, `GET /v1/jobs/{id}`, events, cancel).
    pub fn is_public(self) -> bool {
        match self {
            JobType::Chat | JobType::AttachmentProcessing => true,
            JobType::EmailedExport => false,
        }
    }
}

/// A job's status (the contract's States).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobStatus {
    Pending,
    InProgress,
    AwaitingApproval,
    Completed,
    Failed,
    Cancelled,
}

/// A transition the state machine does not allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a job cannot go from {from} to {to}")]
pub struct IllegalTransition {
    pub from: JobStatus,
    pub to: JobStatus,
}

impl JobStatus {
    pub const ALL: [JobStatus; 6] = [
        JobStatus::Pending,
        JobStatus::InProgress,
        JobStatus::AwaitingApproval,
        JobStatus::Completed,
        JobStatus::Failed,
        JobStatus::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Pending => "pending",
            JobStatus::InProgress => "in_progress",
            JobStatus::AwaitingApproval => "awaiting_approval",
            JobStatus::Completed => "completed",
            JobStatus::Failed => "failed",
            JobStatus::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        JobStatus::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// Completed, failed and cancelled are final: nothing leaves them.
    pub fn is_finished(self) -> bool {
        matches!(self, JobStatus::Completed | JobStatus::Failed | JobStatus::Cancelled)
    }

    /// The transitions of docs/api.md, "Chat and jobs", plus in_progress → pending, which only crash
    /// recovery takes (a worker died holding the job).
    pub fn can_become(self, to: JobStatus) -> bool {
        use JobStatus::*;
        matches!(
            (self, to),
            (Pending, InProgress)
                | (Pending, Cancelled)
                | (InProgress, Completed)
                | (InProgress, Failed)
                | (InProgress, Cancelled)
                | (InProgress, AwaitingApproval)
                | (InProgress, Pending)
                | (AwaitingApproval, InProgress)
                | (AwaitingApproval, Cancelled)
        )
    }

    /// `to` if the transition is legal.
    pub fn transition(self, to: JobStatus) -> Result<JobStatus, IllegalTransition> {
        if self.can_become(to) {
            Ok(to)
        } else {
            Err(IllegalTransition { from: self, to })
        }
    }

    /// The statuses from which `to` may be reached (for compare-and-set updates).
    pub fn sources_of(to: JobStatus) -> Vec<JobStatus> {
        JobStatus::ALL.into_iter().filter(|from| from.can_become(to)).collect()
    }
}

impl fmt::Display for JobStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How many times a job is started before a crash-looping job is failed.
pub const MAX_ATTEMPTS: i32 = 3;

/// What a proposed change does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeOp {
    Edit,
    Create,
    Delete,
}

impl ChangeOp {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeOp::Edit => "edit",
            ChangeOp::Create => "create",
            ChangeOp::Delete => "delete",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "edit" => Some(ChangeOp::Edit),
            "create" => Some(ChangeOp::Create),
            "delete" => Some(ChangeOp::Delete),
            _ => None,
        }
    }
}

/// One change proposed by the AI. It remembers the section it was proposed against
/// (`old_html` for edits and deletes, the anchor for creates), so applying it later can tell
/// whether the document moved under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub change_id: String,
    pub op: ChangeOp,
    /// The section edited or deleted, or the new section's id for creates.
    pub chunk_id: ChunkId,
    /// Creates: the section it goes after (`None` = at the start).
    pub after: Option<ChunkId>,
    pub old_html: Option<String>,
    /// The new section(s) for edits and creates (sanitized, sectioned, with ids).
    pub new_sections: Vec<Section>,
    pub explanation: Option<String>,
    /// The reviewer corrected the proposal before approving it: `new_sections` are theirs.
    pub edited: bool,
}

impl Change {
    /// The HTML of the new section(s).
    pub fn new_html(&self) -> Option<String> {
        (self.op != ChangeOp::Delete).then(|| self.new_sections.iter().map(|s| s.html.as_str()).collect())
    }

    /// Whether `doc` still has what this change was proposed against.
    pub fn is_current(&self, doc: &Document) -> bool {
        match self.op {
            ChangeOp::Edit | ChangeOp::Delete => {
                doc.get(&self.chunk_id).is_some_and(|s| Some(&s.html) == self.old_html.as_ref())
            }
            ChangeOp::Create => {
                self.after.as_ref().is_none_or(|a| doc.get(a).is_some()) && doc.get(&self.chunk_id).is_none()
            }
        }
    }

    /// Applies the change to `doc`.
    pub fn apply(&self, doc: &mut Document) -> Result<(), DocumentError> {
        match self.op {
            ChangeOp::Edit => doc.replace(&self.chunk_id, self.new_sections.clone()).map(|_| ()),
            ChangeOp::Delete => doc.delete(&self.chunk_id).map(|_| ()),
            ChangeOp::Create => doc.insert_after(self.after.as_ref(), self.new_sections.clone()),
        }
    }
}

/// Sections a set of changes touches: what a turn is charged for (docs/api.md, "Usage and billing").
pub fn sections_edited(changes: &[Change]) -> u64 {
    let mut ids: Vec<&str> = changes.iter().map(|c| c.chunk_id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    ids.len() as u64
}

/// A caller's answer to pending changes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApprovalRequest {
    pub approve: Vec<String>,
    pub reject: Vec<String>,
    pub approve_all: bool,
    /// Changes approved with the reviewer's corrected HTML in place of the AI's: (change id,
    /// HTML). A change corrected is approved, whether or not `approve` names it.
    pub edits: Vec<(String, String)>,
}

impl ApprovalRequest {
    /// The reviewer's HTML for a change, when they corrected it.
    pub fn edit_of(&self, change_id: &str) -> Option<&str> {
        self.edits.iter().find(|(id, _)| id == change_id).map(|(_, html)| html.as_str())
    }
}

/// Why an approval cannot be carried out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApprovalError {
    /// Change ids that are not among the pending ones (422).
    #[error("unknown change ids: {}", .0.join(", "))]
    UnknownChanges(Vec<String>),
    /// A change both approved and rejected (422).
    #[error("changes both approved and rejected: {}", .0.join(", "))]
    Contradictory(Vec<String>),
    /// Approved changes whose sections changed since they were proposed (409).
    #[error("the document changed since these changes were proposed: {}", .0.join(", "))]
    Stale(Vec<String>),
}

/// The changes to apply, in proposal order, for an approval request. Changes neither
/// approved nor rejected are rejected (an approval closes the review).
pub fn select_approved<'a>(pending: &'a [Change], req: &ApprovalRequest) -> Result<Vec<&'a Change>, ApprovalError> {
    let known = |id: &String| pending.iter().any(|c| &c.change_id == id);
    let edited: Vec<&String> = req.edits.iter().map(|(id, _)| id).collect();
    let unknown: Vec<String> =
        req.approve.iter().chain(&req.reject).chain(edited.iter().copied()).filter(|id| !known(id)).cloned().collect();
    if !unknown.is_empty() {
        return Err(ApprovalError::UnknownChanges(unknown));
    }
    let both: Vec<String> =
        req.approve.iter().chain(edited.iter().copied()).filter(|id| req.reject.contains(id)).cloned().collect();
    if !both.is_empty() {
        return Err(ApprovalError::Contradictory(both));
    }
    Ok(pending
        .iter()
        .filter(|c| {
            !req.reject.contains(&c.change_id)
                && (req.approve_all || req.approve.contains(&c.change_id) || edited.contains(&&c.change_id))
        })
        .collect())
}

/// Applies approved changes to `doc` as one step: if any is no longer current, nothing is
/// applied and the stale ids are named.
pub fn apply_approved(doc: &Document, approved: &[&Change]) -> Result<Document, ApprovalError> {
    let stale: Vec<String> = approved.iter().filter(|c| !c.is_current(doc)).map(|c| c.change_id.clone()).collect();
    if !stale.is_empty() {
        return Err(ApprovalError::Stale(stale));
    }
    let mut next = doc.clone();
    for c in approved {
        if c.apply(&mut next).is_err() {
            return Err(ApprovalError::Stale(vec![c.change_id.clone()]));
        }
    }
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sec(id: &str, text: &str) -> Section {
        Section {
            id: ChunkId::parse(id).unwrap(),
            tag: "p".into(),
            html: format!("<p data-chunk-id=\"{id}\">{text}</p>"),
            text: text.into(),
        }
    }

    #[test]
    fn internal_job_types_are_stored_but_never_named_by_callers() {
        for t in JobType::ALL {
            assert_eq!(JobType::parse(t.as_str()), Some(t));
            assert_eq!(JobType::parse_public(t.as_str()).is_some(), t.is_public());
        }
        assert_eq!(JobType::parse_public("emailed_export"), None);
        assert_eq!(JobType::parse_public("chat"), Some(JobType::Chat));
        assert_eq!(JobType::parse("Chat"), None);
    }

    fn doc() -> Document {
        Document::new(vec![sec("a", "alpha"), sec("b", "beta"), sec("c", "gamma")]).unwrap()
    }

    fn edit(id: &str, chunk: &str, old: &Document, text: &str) -> Change {
        let cid = ChunkId::parse(chunk).unwrap();
        Change {
            change_id: id.into(),
            op: ChangeOp::Edit,
            old_html: old.get(&cid).map(|s| s.html.clone()),
            chunk_id: cid,
            after: None,
            new_sections: vec![sec(chunk, text)],
            explanation: None,
            edited: false,
        }
    }

    fn status() -> impl Strategy<Value = JobStatus> {
        proptest::sample::select(JobStatus::ALL.to_vec())
    }

    proptest! {
        #[test]
        fn nothing_leaves_a_finished_state(from in status(), to in status()) {
            if from.is_finished() {
                prop_assert!(from.transition(to).is_err());
            }
        }

        #[test]
        fn any_walk_of_legal_steps_stays_in_the_machine(steps in proptest::collection::vec(status(), 0..20)) {
            let mut current = JobStatus::Pending;
            for to in steps {
                match current.transition(to) {
                    Ok(next) => {
                        prop_assert!(JobStatus::sources_of(to).contains(&current));
                        current = next;
                    }
                    Err(e) => prop_assert_eq!(e, IllegalTransition { from: current, to }),
                }
            }
        }

        #[test]
        fn status_names_round_trip(s in status()) {
            prop_assert_eq!(JobStatus::parse(s.as_str()), Some(s));
        }
    }

    #[test]
    fn the_transitions_of_the_decisions() {
        use JobStatus::*;
        assert!(Pending.can_become(InProgress));
        assert!(InProgress.can_become(AwaitingApproval));
        assert!(AwaitingApproval.can_become(InProgress));
        assert!(AwaitingApproval.can_become(Cancelled));
        assert!(!AwaitingApproval.can_become(Completed));
        assert!(!Pending.can_become(Completed));
        assert!(!Completed.can_become(Cancelled));
        assert_eq!(Cancelled.transition(InProgress), Err(IllegalTransition { from: Cancelled, to: InProgress }));
    }

    #[test]
    fn approving_a_subset_applies_only_it() {
        let d = doc();
        let pending = vec![edit("x", "a", &d, "ALPHA"), edit("y", "b", &d, "BETA")];
        let req = ApprovalRequest { approve: vec!["y".into()], reject: vec!["x".into()], ..Default::default() };
        let chosen = select_approved(&pending, &req).unwrap();
        let next = apply_approved(&d, &chosen).unwrap();
        let texts: Vec<_> = next.sections().iter().map(|s| s.text.as_str()).collect();
        assert_eq!(texts, ["alpha", "BETA", "gamma"]);
    }

    #[test]
    fn approve_all_and_unknown_ids() {
        let d = doc();
        let pending = vec![edit("x", "a", &d, "ALPHA"), edit("y", "b", &d, "BETA")];
        let all = ApprovalRequest { approve_all: true, ..Default::default() };
        assert_eq!(select_approved(&pending, &all).unwrap().len(), 2);
        let bad = ApprovalRequest { approve: vec!["nope".into()], ..Default::default() };
        assert_eq!(select_approved(&pending, &bad), Err(ApprovalError::UnknownChanges(vec!["nope".into()])));
        let both = ApprovalRequest { approve: vec!["x".into()], reject: vec!["x".into()], ..Default::default() };
        assert!(matches!(select_approved(&pending, &both), Err(ApprovalError::Contradictory(_))));
    }

    #[test]
    fn a_corrected_change_is_approved_and_cannot_be_rejected_too() {
        let d = doc();
        let pending = vec![edit("x", "a", &d, "ALPHA"), edit("y", "b", &d, "BETA")];
        let corrected = ApprovalRequest { edits: vec![("y".into(), "<p>Beta</p>".into())], ..Default::default() };
        let chosen: Vec<_> = select_approved(&pending, &corrected).unwrap().into_iter().map(|c| &c.change_id).collect();
        assert_eq!(chosen, ["y"], "a correction approves, and what is not named is rejected");
        assert_eq!(corrected.edit_of("y"), Some("<p>Beta</p>"));
        assert_eq!(corrected.edit_of("x"), None);
        let unknown = ApprovalRequest { edits: vec![("z".into(), String::new())], ..Default::default() };
        assert_eq!(select_approved(&pending, &unknown), Err(ApprovalError::UnknownChanges(vec!["z".into()])));
        let both = ApprovalRequest { reject: vec!["y".into()], ..corrected };
        assert_eq!(select_approved(&pending, &both), Err(ApprovalError::Contradictory(vec!["y".into()])));
    }

    #[test]
    fn a_stale_change_applies_nothing() {
        let d = doc();
        let pending = vec![edit("x", "a", &d, "ALPHA"), edit("y", "b", &d, "BETA")];
        let mut moved = d.clone();
        moved.replace(&ChunkId::parse("a").unwrap(), vec![sec("a", "alpha, edited by a person")]).unwrap();
        let all = ApprovalRequest { approve_all: true, ..Default::default() };
        let chosen = select_approved(&pending, &all).unwrap();
        assert_eq!(apply_approved(&moved, &chosen), Err(ApprovalError::Stale(vec!["x".into()])));
    }

    #[test]
    fn creates_and_deletes() {
        let d = doc();
        let create = Change {
            change_id: "n".into(),
            op: ChangeOp::Create,
            chunk_id: ChunkId::parse("n1").unwrap(),
            after: Some(ChunkId::parse("c").unwrap()),
            old_html: None,
            new_sections: vec![sec("n1", "new")],
            explanation: None,
            edited: false,
        };
        let delete = Change {
            change_id: "d".into(),
            op: ChangeOp::Delete,
            chunk_id: ChunkId::parse("a").unwrap(),
            after: None,
            old_html: Some(d.sections()[0].html.clone()),
            new_sections: vec![],
            explanation: None,
            edited: false,
        };
        assert_eq!(sections_edited(&[create.clone(), delete.clone()]), 2);
        let next = apply_approved(&d, &[&create, &delete]).unwrap();
        let texts: Vec<_> = next.sections().iter().map(|s| s.text.as_str()).collect();
        assert_eq!(texts, ["beta", "gamma", "new"]);
        assert_eq!(delete.new_html(), None);
    }
}

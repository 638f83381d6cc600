//! What a chat job stores: its request, its working state, its result and its public
//! metadata, as types. The job store keeps them as opaque JSON (attachment processing jobs
//! share the columns); these types are read from and written to that JSON at the boundary of
//! the chat use cases and nowhere else, so no code reads a job by string key.
//!
//! The stored JSON is a format of its own: jobs outlive a deploy (a turn can wait a day for
//! approval), so a build must read what the one before it wrote. Request, state and result
//! carry `format` ([`FORMAT`]); jobs stored before the field existed have none and are
//! format 1. A reader refuses a format newer than its own rather than misread it. A change to
//! these shapes that an older reader would misread bumps [`FORMAT`] and keeps reading the old
//! one (fixtures in `fixtures/turn_v1/` hold format 1 as written).
//!
//! Format 2: a completed turn's result in the `full` response mode stores no `updated_html`
//! when it has a `version_id`; the whole document is that version, read back when the job is
//! shown ([`DocumentChanges::stored`]). A format 1 result carries it and is shown as stored.

use redline_domain::document::{ChunkId, Section};
use redline_domain::job::{Change, ChangeOp};
use redline_domain::time_util::iso8601;
use redline_ports::jobs::JobRecord;
use redline_ports::StoreError;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::usage::{Admission, UsageInfo};

/// The format this build writes.
pub const FORMAT: u32 = 2;

fn format_1() -> u32 {
    1
}

/// Reads a stored object into its type; `what` names it in the error.
fn read<T: DeserializeOwned + Formatted>(what: &str, v: &Value) -> Result<T, StoreError> {
    let t: T =
        serde_json::from_value(v.clone()).map_err(|e| StoreError::Other(format!("corrupt chat job {what}: {e}")))?;
    if t.format() > FORMAT {
        return Err(StoreError::Other(format!(
            "chat job {what} of format {} was written by a newer build (this one reads up to {FORMAT})",
            t.format()
        )));
    }
    Ok(t)
}

fn write<T: Serialize>(t: &T) -> Value {
    // These types hold strings, numbers, booleans and lists only: serialisation cannot fail.
    serde_json::to_value(t).unwrap_or(Value::Null)
}

/// A [`ChangeOp`] as its name (`edit`, `create`, `delete`).
mod op {
    use redline_domain::job::ChangeOp;
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(op: &ChangeOp, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(op.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ChangeOp, D::Error> {
        let name = String::deserialize(d)?;
        ChangeOp::parse(&name).ok_or_else(|| D::Error::custom(format!("unknown change operation {name:?}")))
    }
}

trait Formatted {
    fn format(&self) -> u32;
}

/// How the result shows the document (docs/api.md, "Chat and jobs").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResponseMode {
    /// `updated_html` carries the whole document.
    Full,
    /// `updated_html` is null; `chunk_diffs` carries the changed sections.
    Compact,
}

impl ResponseMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ResponseMode::Full => "full",
            ResponseMode::Compact => "compact",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "full" => Some(ResponseMode::Full),
            "compact" => Some(ResponseMode::Compact),
            _ => None,
        }
    }
}

/// What a chat turn was asked (`JobRecord::request`). Never changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnRequest {
    #[serde(default = "format_1")]
    pub format: u32,
    pub message: String,
    /// The editor's copy of the document, when the caller sent one.
    pub document_html: Option<String>,
    pub require_approval: bool,
    pub response_mode: ResponseMode,
    /// The usage cycle its operation is held in.
    pub cycle: String,
    /// Where the request came from when not from a person asking the AI:
    /// [`super::revisions::FROM_UPLOAD`], the tracked changes of an upload (no model runs,
    /// nothing is billed, notes on rejected changes go nowhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

impl TurnRequest {
    /// The turn proposes an upload's tracked changes rather than the AI's.
    pub fn from_upload(&self) -> bool {
        self.origin.as_deref() == Some(super::revisions::FROM_UPLOAD)
    }
}

impl Formatted for TurnRequest {
    fn format(&self) -> u32 {
        self.format
    }
}

impl TurnRequest {
    pub fn read(v: &Value) -> Result<Self, StoreError> {
        read("request", v)
    }

    pub fn to_value(&self) -> Value {
        write(&Self { format: FORMAT, ..self.clone() })
    }
}

/// Why a turn failed, when the caller answers it otherwise than as a failure of the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Failure {
    /// Other writers changed the sections the AI edited (409, not 502).
    Conflict,
}

/// The working state of a turn (`JobRecord::state`). Every field is optional in the stored
/// JSON: a turn's state grows as it goes (empty when queued; the proposal while it awaits
/// approval; the reviewer's answer while it runs again), and an absent field reads as its
/// default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnState {
    #[serde(default = "format_1")]
    pub format: u32,
    /// The changes proposed to the reviewer, in full.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Vec<StoredChange>>,
    /// The version the proposal was made on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_version: Option<String>,
    /// The model's answer with the proposal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<String>,
    /// The changes of the rounds the reviewer approved before giving feedback, in full.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied: Vec<StoredChange>,
    /// The sections those rounds edited (what the turn is charged for them).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub applied_sections: u64,
    /// The version before the turn's first approved round: a revert of the turn starts there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_version_before: Option<String>,
    /// The version its last approved round committed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_version_after: Option<String>,
    /// The reviewer's feedback, for the next round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continuation: Option<Continuation>,
    /// The rounds the reviewer answered with notes, oldest first: the chat history shows each
    /// as the AI's answer and the reviewer's notes, before the turn's last answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<ReviewRound>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Formatted for TurnState {
    fn format(&self) -> u32 {
        self.format
    }
}

impl TurnState {
    /// The state of a queued turn.
    pub fn new() -> Self {
        Self { format: FORMAT, ..Self::default() }
    }

    pub fn read(v: &Value) -> Result<Self, StoreError> {
        read("state", v)
    }

    pub fn to_value(&self) -> Value {
        write(&Self { format: FORMAT, ..self.clone() })
    }

    /// The proposed changes.
    pub fn pending_changes(&self) -> Result<Vec<Change>, StoreError> {
        changes(self.pending.as_deref().unwrap_or_default())
    }

    /// The changes applied in the turn's earlier rounds (approved before the reviewer's
    /// feedback).
    pub fn prior_changes(&self) -> Result<Vec<Change>, StoreError> {
        changes(&self.applied)
    }
}

/// One round of a turn that the reviewer sent back with notes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewRound {
    /// The AI's answer with the proposal, and what the review applied of it.
    pub response: String,
    /// The reviewer's notes on the changes rejected.
    pub feedback: String,
}

/// The reviewer's answer to a proposal that the AI gets in the turn's next round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Continuation {
    pub feedback: String,
    /// The model's answer with the proposal.
    pub previous_response: Option<String>,
    /// Ids of the changes approved.
    pub approved: Vec<String>,
    /// The changes rejected.
    pub rejected: Vec<PublicChange>,
}

/// A section as a stored change carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredSection {
    pub id: String,
    pub tag: String,
    pub html: String,
    pub text: String,
}

/// A change in full (with its new sections), as the state keeps pending and applied ones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredChange {
    pub change_id: String,
    #[serde(with = "op")]
    pub op: ChangeOp,
    pub chunk_id: String,
    pub after: Option<String>,
    pub old_html: Option<String>,
    pub new_sections: Vec<StoredSection>,
    pub explanation: Option<String>,
    /// The reviewer corrected it before approving it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub edited: bool,
}

impl From<&Change> for StoredChange {
    fn from(c: &Change) -> Self {
        Self {
            change_id: c.change_id.clone(),
            op: c.op,
            chunk_id: c.chunk_id.as_str().to_owned(),
            after: c.after.as_ref().map(|a| a.as_str().to_owned()),
            old_html: c.old_html.clone(),
            new_sections: c
                .new_sections
                .iter()
                .map(|s| StoredSection {
                    id: s.id.as_str().to_owned(),
                    tag: s.tag.clone(),
                    html: s.html.clone(),
                    text: s.text.clone(),
                })
                .collect(),
            explanation: c.explanation.clone(),
            edited: c.edited,
        }
    }
}

impl StoredChange {
    pub fn list(changes: &[Change]) -> Vec<Self> {
        changes.iter().map(Self::from).collect()
    }

    fn to_change(&self) -> Result<Change, StoreError> {
        let id = |s: &str| {
            ChunkId::parse(s).ok_or_else(|| StoreError::Other(format!("corrupt chat job state: section id {s:?}")))
        };
        Ok(Change {
            change_id: self.change_id.clone(),
            op: self.op,
            chunk_id: id(&self.chunk_id)?,
            after: self.after.as_deref().map(id).transpose()?,
            old_html: self.old_html.clone(),
            new_sections: self
                .new_sections
                .iter()
                .map(|s| Ok(Section { id: id(&s.id)?, tag: s.tag.clone(), html: s.html.clone(), text: s.text.clone() }))
                .collect::<Result<_, StoreError>>()?,
            explanation: self.explanation.clone(),
            edited: self.edited,
        })
    }
}

fn changes(stored: &[StoredChange]) -> Result<Vec<Change>, StoreError> {
    stored.iter().map(StoredChange::to_change).collect()
}

/// A change as the job shows it to callers (the contract's PendingChange): in its metadata
/// while it awaits approval, in the result once applied, in the reviewer's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublicChange {
    pub change_id: String,
    #[serde(with = "op")]
    pub operation: ChangeOp,
    pub chunk_id: String,
    /// Always null: a session has one document.
    pub document_id: Option<String>,
    pub old_html: Option<String>,
    pub new_html: Option<String>,
    pub ai_explanation: Option<String>,
    pub after_chunk_id: Option<String>,
    /// The reviewer corrected the proposal before approving it (`new_html` is theirs).
    #[serde(default, skip_serializing_if = "is_false")]
    pub edited_by_reviewer: bool,
}

impl From<&Change> for PublicChange {
    fn from(c: &Change) -> Self {
        Self {
            change_id: c.change_id.clone(),
            operation: c.op,
            chunk_id: c.chunk_id.as_str().to_owned(),
            document_id: None,
            old_html: c.old_html.clone(),
            new_html: c.new_html(),
            ai_explanation: c.explanation.clone(),
            after_chunk_id: c.after.as_ref().map(|a| a.as_str().to_owned()),
            edited_by_reviewer: c.edited,
        }
    }
}

impl PublicChange {
    pub fn list(changes: &[Change]) -> Vec<Self> {
        changes.iter().map(Self::from).collect()
    }
}

/// The public metadata of a chat job (`JobRecord::metadata`), shown as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnMetadata {
    pub message: String,
    pub document_html_provided: bool,
    pub require_approval: bool,
    pub response_mode: ResponseMode,
    /// The proposed changes, while the turn awaits approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_changes: Option<Vec<PublicChange>>,
}

impl TurnMetadata {
    pub fn read(v: &Value) -> Result<Self, StoreError> {
        serde_json::from_value(v.clone()).map_err(|e| StoreError::Other(format!("corrupt chat job metadata: {e}")))
    }

    pub fn to_value(&self) -> Value {
        write(self)
    }
}

/// What a completed turn answers (`JobRecord::result`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnResult {
    #[serde(default = "format_1")]
    pub format: u32,
    pub response: String,
    pub session_id: String,
    pub document_changes: DocumentChanges,
    pub usage: UsageRecord,
}

impl Formatted for TurnResult {
    fn format(&self) -> u32 {
        self.format
    }
}

impl TurnResult {
    pub fn read(v: &Value) -> Result<Self, StoreError> {
        read("result", v)
    }

    pub fn to_value(&self) -> Value {
        write(&Self { format: FORMAT, ..self.clone() })
    }
}

/// the contract's DocumentChanges of a completed turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentChanges {
    /// The whole document (response mode `full`), else null.
    pub updated_html: Option<String>,
    pub version_id: Option<String>,
    pub changes_summary: String,
    pub requires_approval: bool,
    /// Always null once completed.
    pub pending_changes: Option<Vec<PublicChange>>,
    pub changes: Vec<PublicChange>,
    /// The changes again in response mode `compact`, else null.
    pub chunk_diffs: Option<Vec<PublicChange>>,
}

impl DocumentChanges {
    /// The changes as stored (format 2): without the whole document when it is a version the
    /// store keeps, since a job is shown with that version's HTML put back
    /// ([`Self::document_to_read`]). A turn stores kilobytes, not its document again.
    pub fn stored(mut self) -> Self {
        if self.version_id.is_some() {
            self.updated_html = None;
        }
        self
    }

    /// The version whose HTML a stored result in `mode` leaves out, to be read back into
    /// `updated_html`.
    pub fn document_to_read(&self, mode: ResponseMode) -> Option<&str> {
        match (mode, &self.updated_html) {
            (ResponseMode::Full, None) => self.version_id.as_deref(),
            _ => None,
        }
    }
}

/// The usage a completed turn reported (the contract's UsageInfo), as it was then.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageRecord {
    pub monthly_used: i64,
    pub monthly_limit: i64,
    pub monthly_remaining: i64,
    pub was_billable: bool,
    pub ops_charged: i64,
    pub quota_exhausted: bool,
    pub subscription_tier: String,
    pub bucket_used: Option<String>,
    pub redemption_id: Option<String>,
    pub promotions: Vec<PromotionRecord>,
}

/// the contract's ActivePromotionInfo, as a completed turn reported it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromotionRecord {
    pub redemption_id: String,
    pub name: String,
    pub ops_remaining: i64,
    pub ops_granted: i64,
    /// ISO 8601.
    pub expires_at: Option<String>,
}

impl From<&UsageInfo> for UsageRecord {
    fn from(u: &UsageInfo) -> Self {
        Self {
            monthly_used: u.monthly_used,
            monthly_limit: u.monthly_limit,
            monthly_remaining: u.monthly_remaining,
            was_billable: u.was_billable,
            ops_charged: u.ops_charged,
            quota_exhausted: u.quota_exhausted,
            subscription_tier: u.subscription_tier.as_str().to_owned(),
            bucket_used: u.bucket_used.map(|b| b.as_str().to_owned()),
            redemption_id: u.redemption_id.clone(),
            promotions: u
                .promotions
                .iter()
                .map(|p| PromotionRecord {
                    redemption_id: p.redemption_id.clone(),
                    name: p.name.clone(),
                    ops_remaining: p.ops_remaining,
                    ops_granted: p.ops_granted,
                    expires_at: p.expires_at.map(iso8601),
                })
                .collect(),
        }
    }
}

/// A chat job with its request, state and metadata read into their types. Its record's JSON
/// columns are read only through these.
#[derive(Debug, Clone)]
pub(crate) struct Turn {
    pub job: JobRecord,
    pub request: TurnRequest,
    pub state: TurnState,
    pub metadata: TurnMetadata,
}

impl Turn {
    pub fn read(job: &JobRecord) -> Result<Self, StoreError> {
        Ok(Self {
            request: TurnRequest::read(&job.request)?,
            state: TurnState::read(&job.state)?,
            metadata: TurnMetadata::read(&job.metadata)?,
            job: job.clone(),
        })
    }

    /// The admission of the turn: its usage hold is keyed by the job id.
    pub fn admission(&self) -> Admission {
        Admission { owner: self.job.owner, request_id: self.job.job_id.clone(), cycle: self.request.cycle.clone() }
    }
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;

//! The JSON bodies of jobs and of what they carry (the contract's Job, DocumentChanges,
//! PendingChange, UsageInfo), mapped from `core`'s [`JobView`].
//!
//! These bodies list their keys in alphabetical order at every level, as the service has
//! always sent them; [`render`] keeps that order whatever the fields' order in the structs
//! (which is the order of the contract (docs/api.md), and of the OpenAPI document).

use actix_web::web::Bytes;
use redline_core::chat::record::{DocumentChanges, PromotionRecord, PublicChange, TurnResult, UsageRecord};
use redline_core::chat::view::{AttachmentJobMetadata, AttachmentJobResult, JobKind, JobView, TurnView};
use redline_domain::job::JobStatus;
use redline_domain::time_util::iso8601;
use redline_ports::jobs::JobEvent;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::routes::usage::{ActivePromotionInfo, UsageBody};

/// A body as JSON text with its object keys in alphabetical order and the pictures of its
/// HTML under the public base URL `base` ([`crate::public_html`]).
pub fn render<T: Serialize>(body: &T, base: &str) -> Bytes {
    // `serde_json::Value` keeps its objects' keys sorted.
    Bytes::from(serde_json::to_vec(&value(body, base)).unwrap_or_default())
}

/// A body as a JSON value (its object keys sorted, its HTML's pictures under `base`), for
/// bodies inside server-sent events.
pub fn value<T: Serialize>(body: &T, base: &str) -> Value {
    let mut value = serde_json::to_value(body).unwrap_or(Value::Null);
    crate::public_html::in_value(&mut value, base);
    value
}

/// the contract's Job.
#[derive(Serialize, ToSchema)]
pub struct JobBody {
    pub job_id: String,
    pub organization_id: Option<String>,
    pub user_id: Option<String>,
    pub session_id: String,
    /// `chat` or `attachment_processing`.
    pub job_type: String,
    /// `pending`, `in_progress`, `awaiting_approval`, `completed`, `failed` or `cancelled`.
    pub status: String,
    pub created_at: String,
    pub updated_at: String,
    /// 0 to 100.
    pub progress: i32,
    /// Once completed (null in compact listings).
    pub result: Option<JobResultBody>,
    /// Once failed or cancelled.
    pub error: Option<String>,
    pub metadata: JobMetadataBody,
}

/// What a completed job answers: a chat turn's result, or an attachment's processing.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum JobResultBody {
    Chat(Box<ChatResultBody>),
    Attachment(AttachmentResultBody),
}

/// The metadata of a job of each type.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum JobMetadataBody {
    Chat(ChatMetadataBody),
    Attachment(AttachmentMetadataBody),
}

/// the contract's JobMetadata of a chat turn.
#[derive(Serialize, ToSchema)]
pub struct ChatMetadataBody {
    pub message: String,
    pub document_html_provided: bool,
    pub require_approval: bool,
    /// `full` or `compact`.
    pub response_mode: String,
    /// The proposed changes, while the turn awaits approval (absent otherwise and in compact
    /// listings).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_changes: Option<Vec<ChangeBody>>,
    /// The job's events (absent in compact listings).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intermediate_responses: Option<Vec<EventBody>>,
}

/// The metadata of an attachment processing job.
#[derive(Serialize, ToSchema)]
pub struct AttachmentMetadataBody {
    pub filename: String,
    pub file_size: i64,
    pub content_type: String,
    pub attachment_id: String,
    /// The job's events (absent in compact listings).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intermediate_responses: Option<Vec<EventBody>>,
}

/// What a completed chat turn answers.
#[derive(Serialize, ToSchema)]
pub struct ChatResultBody {
    pub response: String,
    pub session_id: String,
    pub document_changes: DocumentChangesBody,
    pub usage: UsageBody,
}

/// What a completed attachment processing job answers.
#[derive(Serialize, ToSchema)]
pub struct AttachmentResultBody {
    pub attachment_id: String,
    /// Passages indexed for search.
    pub passages: i64,
    /// Characters of text extracted.
    pub characters: i64,
}

/// the contract's DocumentChanges.
#[derive(Serialize, ToSchema)]
pub struct DocumentChangesBody {
    /// The whole document (response mode `full`); null in `compact` and while changes await
    /// approval.
    pub updated_html: Option<String>,
    pub version_id: Option<String>,
    pub changes_summary: String,
    pub requires_approval: bool,
    /// The proposed changes while they await approval, else null.
    pub pending_changes: Option<Vec<ChangeBody>>,
    /// The changes applied.
    pub changes: Vec<ChangeBody>,
    /// The changes applied again, in response mode `compact`; else null.
    pub chunk_diffs: Option<Vec<ChangeBody>>,
}

/// the contract's PendingChange.
#[derive(Clone, Serialize, ToSchema)]
pub struct ChangeBody {
    pub change_id: String,
    /// `edit`, `create` or `delete`.
    pub operation: String,
    pub chunk_id: String,
    /// Always null: a session has one document.
    pub document_id: Option<String>,
    pub old_html: Option<String>,
    /// Null for deletions.
    pub new_html: Option<String>,
    pub ai_explanation: Option<String>,
    /// Creations: the section it goes after (null: at the start).
    pub after_chunk_id: Option<String>,
    /// Present (true) on an applied change the reviewer corrected before approving it (the
    /// approval's `edits`): `new_html` is the reviewer's, `ai_explanation` still the AI's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edited_by_reviewer: Option<bool>,
}

/// One item of a job's `intermediate_responses` (and the data of an `intermediate` event).
#[derive(Serialize, ToSchema)]
pub struct EventBody {
    /// `status`, `tool_call`, `tool_result`, `text_delta` or `change`.
    #[serde(rename = "type")]
    pub kind: String,
    /// What happened; its fields depend on the type.
    #[schema(value_type = Object)]
    pub content: Value,
    /// 1, 2, 3, … per job.
    pub sequence: i64,
    pub timestamp: String,
}

/// `GET /v1/jobs` and `GET /v1/sessions/{session_id}/jobs` (the contract's JobListResponse).
#[derive(Serialize, ToSchema)]
pub struct JobListBody {
    /// One page of jobs, newest first.
    pub jobs: Vec<JobBody>,
    /// How many jobs this page holds.
    pub total: usize,
    /// Where the next page starts (pass it as `cursor`; the `Link` header carries the whole
    /// address); null on the last page.
    pub next_cursor: Option<String>,
}

impl From<&JobEvent> for EventBody {
    fn from(e: &JobEvent) -> Self {
        Self { kind: e.kind.clone(), content: e.content.clone(), sequence: e.sequence, timestamp: iso8601(e.at) }
    }
}

impl From<&PublicChange> for ChangeBody {
    fn from(c: &PublicChange) -> Self {
        Self {
            change_id: c.change_id.clone(),
            operation: c.operation.as_str().to_owned(),
            chunk_id: c.chunk_id.clone(),
            document_id: c.document_id.clone(),
            old_html: c.old_html.clone(),
            new_html: c.new_html.clone(),
            ai_explanation: c.ai_explanation.clone(),
            after_chunk_id: c.after_chunk_id.clone(),
            edited_by_reviewer: c.edited_by_reviewer.then_some(true),
        }
    }
}

/// The bodies of a list of changes.
pub fn changes(list: &[PublicChange]) -> Vec<ChangeBody> {
    list.iter().map(ChangeBody::from).collect()
}

impl From<&DocumentChanges> for DocumentChangesBody {
    fn from(d: &DocumentChanges) -> Self {
        Self {
            updated_html: d.updated_html.clone(),
            version_id: d.version_id.clone(),
            changes_summary: d.changes_summary.clone(),
            requires_approval: d.requires_approval,
            pending_changes: d.pending_changes.as_deref().map(changes),
            changes: changes(&d.changes),
            chunk_diffs: d.chunk_diffs.as_deref().map(changes),
        }
    }
}

impl From<&UsageRecord> for UsageBody {
    fn from(u: &UsageRecord) -> Self {
        Self {
            monthly_used: u.monthly_used,
            monthly_limit: u.monthly_limit,
            monthly_remaining: u.monthly_remaining,
            was_billable: u.was_billable,
            ops_charged: u.ops_charged,
            quota_exhausted: u.quota_exhausted,
            subscription_tier: u.subscription_tier.clone(),
            bucket_used: u.bucket_used.clone(),
            redemption_id: u.redemption_id.clone(),
            promotions: u.promotions.iter().map(ActivePromotionInfo::from).collect(),
            resets_at: None,
            attachment_storage: None,
        }
    }
}

impl From<&PromotionRecord> for ActivePromotionInfo {
    fn from(p: &PromotionRecord) -> Self {
        Self {
            redemption_id: p.redemption_id.clone(),
            name: p.name.clone(),
            ops_remaining: p.ops_remaining,
            ops_granted: p.ops_granted,
            expires_at: p.expires_at.clone(),
        }
    }
}

impl From<&TurnResult> for ChatResultBody {
    fn from(r: &TurnResult) -> Self {
        Self {
            response: r.response.clone(),
            session_id: r.session_id.clone(),
            document_changes: DocumentChangesBody::from(&r.document_changes),
            usage: UsageBody::from(&r.usage),
        }
    }
}

impl From<&AttachmentJobResult> for AttachmentResultBody {
    fn from(r: &AttachmentJobResult) -> Self {
        Self { attachment_id: r.attachment_id.clone(), passages: r.passages, characters: r.characters }
    }
}

fn chat_metadata(t: &TurnView, events: Option<Vec<EventBody>>, pending: bool) -> ChatMetadataBody {
    let m = &t.metadata;
    ChatMetadataBody {
        message: m.message.clone(),
        document_html_provided: m.document_html_provided,
        require_approval: m.require_approval,
        response_mode: m.response_mode.as_str().to_owned(),
        pending_changes: if pending { m.pending_changes.as_deref().map(changes) } else { None },
        intermediate_responses: events,
    }
}

fn attachment_metadata(m: &AttachmentJobMetadata, events: Option<Vec<EventBody>>) -> AttachmentMetadataBody {
    AttachmentMetadataBody {
        filename: m.filename.clone(),
        file_size: m.file_size,
        content_type: m.content_type.clone(),
        attachment_id: m.attachment_id.clone(),
        intermediate_responses: events,
    }
}

impl JobBody {
    /// The Job. Compact: status, progress, ids and timestamps only (no result, no events, no
    /// pending changes). The result shows once completed, the error once failed or
    /// cancelled, the pending changes while awaiting approval.
    pub fn new(job: &JobView, compact: bool) -> Self {
        let events = (!compact).then(|| job.events.iter().map(EventBody::from).collect());
        let pending = !compact && job.status == JobStatus::AwaitingApproval;
        let completed = job.status == JobStatus::Completed && !compact;
        let (metadata, result) = match &job.kind {
            JobKind::Chat(t) => (
                JobMetadataBody::Chat(chat_metadata(t, events, pending)),
                t.result.as_ref().filter(|_| completed).map(|r| JobResultBody::Chat(Box::new(r.into()))),
            ),
            JobKind::Attachment(a) => (
                JobMetadataBody::Attachment(attachment_metadata(&a.metadata, events)),
                a.result.as_ref().filter(|_| completed).map(|r| JobResultBody::Attachment(r.into())),
            ),
        };
        let error = matches!(job.status, JobStatus::Failed | JobStatus::Cancelled).then(|| job.error.clone()).flatten();
        Self {
            job_id: job.job_id.clone(),
            organization_id: job.owner.org_id().map(|o| o.to_string()),
            user_id: job.owner.user_id().map(|u| u.to_string()),
            session_id: job.session_id.as_str().to_owned(),
            job_type: job.job_type().as_str().to_owned(),
            status: job.status.as_str().to_owned(),
            created_at: iso8601(job.created_at),
            updated_at: iso8601(job.updated_at),
            progress: job.progress,
            result,
            error,
            metadata,
        }
    }
}

#[cfg(test)]
#[path = "job_body_tests.rs"]
mod tests;

//! The attachment row and the job row inserted with it, and their conversions from and to
//! the port's records.

use diesel::prelude::*;
use redline_domain::SessionId;
use redline_ports::attachments::{AttachmentRecord, AttachmentSource, AttachmentState};
use redline_ports::jobs::JobRecord;
use redline_ports::StoreError;
use serde_json::Value;

use super::corrupt;
use crate::rows::owner;
use crate::schema::{attachments, jobs};

#[derive(Queryable, Selectable, Insertable, Debug)]
#[diesel(table_name = attachments)]
pub(super) struct AttachmentRow {
    attachment_id: String,
    owner: String,
    session_id: String,
    filename: String,
    content_type: String,
    size_bytes: i64,
    state: String,
    source: String,
    job_id: Option<String>,
    error: Option<String>,
    preview: String,
    text_chars: i64,
    passage_count: i64,
    created_at: i64,
    updated_at: i64,
    upload_expires_at: Option<i64>,
    progress: i32,
}

impl From<&AttachmentRecord> for AttachmentRow {
    fn from(a: &AttachmentRecord) -> Self {
        Self {
            attachment_id: a.attachment_id.clone(),
            owner: a.owner.to_string(),
            session_id: a.session_id.as_str().to_owned(),
            filename: a.filename.clone(),
            content_type: a.content_type.clone(),
            size_bytes: a.size_bytes,
            state: a.state.as_str().to_owned(),
            source: a.source.as_str().to_owned(),
            job_id: a.job_id.clone(),
            error: a.error.clone(),
            preview: a.preview.clone(),
            text_chars: a.text_chars,
            passage_count: a.passage_count,
            created_at: a.created_at,
            updated_at: a.updated_at,
            upload_expires_at: a.upload_expires_at,
            progress: a.progress,
        }
    }
}

impl TryFrom<AttachmentRow> for AttachmentRecord {
    type Error = StoreError;

    fn try_from(r: AttachmentRow) -> Result<Self, StoreError> {
        Ok(AttachmentRecord {
            owner: owner(&r.owner)?,
            session_id: SessionId::parse(&r.session_id).map_err(|_| corrupt("session id", &r.session_id))?,
            state: AttachmentState::parse(&r.state).ok_or_else(|| corrupt("attachment state", &r.state))?,
            source: AttachmentSource::parse(&r.source).ok_or_else(|| corrupt("attachment source", &r.source))?,
            attachment_id: r.attachment_id,
            filename: r.filename,
            content_type: r.content_type,
            size_bytes: r.size_bytes,
            job_id: r.job_id,
            error: r.error,
            preview: r.preview,
            text_chars: r.text_chars,
            passage_count: r.passage_count,
            created_at: r.created_at,
            updated_at: r.updated_at,
            upload_expires_at: r.upload_expires_at,
            progress: r.progress,
        })
    }
}

/// A job row to insert in the same transaction as its attachment.
#[derive(Insertable)]
#[diesel(table_name = jobs)]
pub(super) struct JobInsert {
    pub(super) job_id: String,
    owner: String,
    session_id: String,
    job_type: String,
    status: String,
    progress: i32,
    attempts: i32,
    request: String,
    result: Option<String>,
    error: Option<String>,
    metadata: String,
    state: String,
    created_at: i64,
    updated_at: i64,
    finished_at: Option<i64>,
    lease_until: Option<i64>,
}

impl From<&JobRecord> for JobInsert {
    fn from(j: &JobRecord) -> Self {
        Self {
            job_id: j.job_id.clone(),
            owner: j.owner.to_string(),
            session_id: j.session_id.as_str().to_owned(),
            job_type: j.job_type.as_str().to_owned(),
            status: j.status.as_str().to_owned(),
            progress: j.progress,
            attempts: j.attempts,
            request: j.request.to_string(),
            result: j.result.as_ref().map(Value::to_string),
            error: j.error.clone(),
            metadata: j.metadata.to_string(),
            state: j.state.to_string(),
            created_at: j.created_at,
            updated_at: j.updated_at,
            finished_at: j.finished_at,
            lease_until: j.lease_until,
        }
    }
}

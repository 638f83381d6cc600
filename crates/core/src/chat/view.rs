//! The public JSON of jobs, changes and usage (interface.md Job, DocumentChanges,
//! PendingChange, UsageInfo).

use redline_domain::job::{Change, JobStatus};
use redline_domain::time_util::iso8601;
use redline_ports::jobs::{JobEvent, JobRecord};
use serde_json::{json, Map, Value};

use crate::usage::UsageInfo;

/// A change as interface.md's PendingChange shows it.
pub fn change_json(c: &Change) -> Value {
    json!({
        "change_id": c.change_id,
        "operation": c.op.as_str(),
        "chunk_id": c.chunk_id.as_str(),
        "document_id": Value::Null,
        "old_html": c.old_html,
        "new_html": c.new_html(),
        "ai_explanation": c.explanation,
        "after_chunk_id": c.after.as_ref().map(|a| a.as_str()),
    })
}

/// interface.md UsageInfo.
pub fn usage_json(u: &UsageInfo) -> Value {
    json!({
        "monthly_used": u.monthly_used,
        "monthly_limit": u.monthly_limit,
        "monthly_remaining": u.monthly_remaining,
        "was_billable": u.was_billable,
        "ops_charged": u.ops_charged,
        "quota_exhausted": u.quota_exhausted,
        "subscription_tier": u.subscription_tier.as_str(),
        "bucket_used": u.bucket_used.map(|b| b.as_str()),
        "redemption_id": u.redemption_id,
        "promotions": u.promotions.iter().map(|p| json!({
            "redemption_id": p.redemption_id,
            "name": p.name,
            "ops_remaining": p.ops_remaining,
            "ops_granted": p.ops_granted,
            "expires_at": p.expires_at.map(iso8601),
        })).collect::<Vec<_>>(),
    })
}

/// One intermediate_responses item.
pub fn event_json(e: &JobEvent) -> Value {
    json!({
        "type": e.kind,
        "content": e.content,
        "sequence": e.sequence,
        "timestamp": iso8601(e.at),
    })
}

/// The Job of interface.md. `events` are its intermediate responses (ignored when compact).
/// Compact: status, progress, ids and timestamps only (no result, no events).
pub fn job_json(job: &JobRecord, events: &[JobEvent], compact: bool) -> Value {
    let mut metadata = match &job.metadata {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    if compact {
        metadata.remove("pending_changes");
        metadata.remove("intermediate_responses");
    } else {
        metadata.insert("intermediate_responses".into(), Value::Array(events.iter().map(event_json).collect()));
    }
    if job.status != JobStatus::AwaitingApproval {
        metadata.remove("pending_changes");
    }
    let result = if job.status == JobStatus::Completed && !compact { job.result.clone() } else { None };
    let error =
        if job.status == JobStatus::Failed || job.status == JobStatus::Cancelled { job.error.clone() } else { None };
    json!({
        "job_id": job.job_id,
        "organization_id": job.owner.org_id().map(|o| o.to_string()),
        "user_id": job.owner.user_id().map(|u| u.to_string()),
        "session_id": job.session_id.as_str(),
        "job_type": job.job_type.as_str(),
        "status": job.status.as_str(),
        "created_at": iso8601(job.created_at),
        "updated_at": iso8601(job.updated_at),
        "progress": job.progress,
        "result": result,
        "error": error,
        "metadata": Value::Object(metadata),
    })
}

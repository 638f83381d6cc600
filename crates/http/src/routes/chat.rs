//! Chat (docs/api.md, "Chat and jobs"): `POST /v1/chat` (waits), `POST /v1/chat/async` (202 Job, or the
//! job's event stream), approval of proposed changes, and a session's history and revert.

use super::Routes;
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::{web, HttpRequest, HttpResponse, HttpResponseBuilder};
use redline_core::chat::record::Failure;
use redline_core::chat::view::JobKind;
use redline_core::chat::{ChatRequest, ResponseMode};
use redline_domain::job::{ApprovalRequest, JobStatus};
use redline_domain::page::Cursor;
use redline_domain::time_util::iso8601;
use serde::Serialize;
use serde_json::{json, Value};
use utoipa::ToSchema;

use crate::auth::ApiPrincipal;
use crate::body::BodyOf;
use crate::error::{ApiError, ApiResult};
use crate::paging::{page_of, paged};
use crate::routes::documents::path_session;
use crate::routes::job_body::{self, render, ChatResultBody, DocumentChangesBody, JobBody, JobResultBody};
use crate::routes::jobs::{event_stream, stream_slot};
use crate::routes::usage::UsageBody;
use crate::state::AppState;
use crate::validation::{Fields, ValidationItem};

/// The answer of `POST /v1/chat`: the turn's result, or its proposal while it awaits approval.
#[derive(Serialize, ToSchema)]
pub struct ChatResponseBody {
    pub job_id: String,
    pub response: Option<String>,
    pub session_id: String,
    pub document_changes: DocumentChangesBody,
    pub usage: UsageBody,
}

/// One message of a session's chat history.
#[derive(Serialize, ToSchema)]
pub struct HistoryMessageBody {
    pub message_id: String,
    /// `user` or `assistant`.
    pub role: String,
    pub content: String,
    pub created_at: String,
    /// The chat job the message belongs to.
    pub job_id: Option<String>,
    /// The document's version before the turn (what a revert to this message restores).
    pub version_before: Option<String>,
    pub version_after: Option<String>,
}

/// `GET /v1/sessions/{session_id}/history`.
#[derive(Serialize, ToSchema)]
pub struct HistoryBody {
    pub session_id: String,
    /// One page of the active history, oldest first.
    pub messages: Vec<HistoryMessageBody>,
    /// Where the next page starts (pass it as `cursor`; the `Link` header carries the whole
    /// address); null on the last page.
    pub next_cursor: Option<String>,
}

/// `POST /v1/sessions/{session_id}/revert`: the document as restored.
#[derive(Serialize, ToSchema)]
pub struct RevertBody {
    pub session_id: String,
    pub version_id: Option<String>,
    pub html: String,
    pub section_count: i64,
    pub reverted_message_id: String,
}

pub fn configure(routes: &mut Routes<'_>) {
    routes
        .post("/v1/chat", chat)
        .post("/v1/chat/async", chat_async)
        .post("/v1/chat/estimate", estimate)
        .post("/v1/chat/{session_id}/approve", approve)
        .get("/v1/sessions/{session_id}/history", history)
        .post("/v1/sessions/{session_id}/revert", revert);
}

// The request bodies as the OpenAPI document shows them. The handlers read the JSON through
// `Fields` (for the contract's exact 422 items), so these types only describe it.

/// The body of `POST /v1/chat` and `POST /v1/chat/async`.
#[derive(ToSchema)]
#[allow(dead_code, reason = "a schema of the OpenAPI document; the handler reads the body through Fields")]
pub struct ChatRequestBody {
    /// The session (created on first use).
    #[schema(schema_with = crate::openapi::session_id_schema)]
    session_id: String,
    /// The instruction or question; an empty or blank one is answered 400.
    #[schema(min_length = 1, pattern = "\\S")]
    message: String,
    /// The document to edit, replacing the session's; absent: the stored one.
    document_html: Option<String>,
    /// Propose the changes for approval instead of applying them.
    require_approval: Option<bool>,
    /// `full` (default) or `compact`.
    #[schema(pattern = "^(full|compact)$")]
    response_mode: Option<String>,
}

/// The body of `POST /v1/chat/{session_id}/approve`.
#[derive(ToSchema)]
#[allow(dead_code, reason = "a schema of the OpenAPI document; the handler reads the body through Fields")]
pub struct ApproveRequestBody {
    /// The job awaiting approval.
    job_id: String,
    /// Change ids to apply.
    approve: Option<Vec<String>>,
    /// Change ids to drop.
    reject: Option<Vec<String>>,
    /// Apply every pending change.
    approve_all: Option<bool>,
    /// A note for the AI: the job runs again with it, keeping what was approved.
    feedback: Option<String>,
    /// Changes approved with the reviewer's corrected HTML in place of the AI's, by change
    /// id (edits and creations; a correction approves its change). Sanitized like a save;
    /// the applied change shows `edited_by_reviewer: true` and its version has source
    /// `review`.
    edits: Option<std::collections::HashMap<String, String>>,
}

/// The body of `POST /v1/sessions/{session_id}/revert`.
#[derive(ToSchema)]
#[allow(dead_code, reason = "a schema of the OpenAPI document; the handler reads the body through Fields")]
pub struct RevertRequestBody {
    /// The user message of the history to undo, with every later one.
    message_id: String,
}

fn chat_request(body: &Value) -> ApiResult<ChatRequest> {
    let mut f = Fields::body(body)?;
    let session = f.session_id("session_id");
    let message = f.required_str("message");
    let document_html = f.optional_str("document_html");
    let require_approval = f.optional_bool("require_approval");
    let mode = f.optional_literal("response_mode", &["full", "compact"]);
    f.finish()?;
    let (Some(session_id), Some(message)) = (session, message) else {
        return Err(ApiError::Internal("validated fields missing".to_owned()));
    };
    Ok(ChatRequest {
        session_id,
        message: message.to_owned(),
        document_html: document_html.map(str::to_owned),
        require_approval: require_approval.unwrap_or(false),
        response_mode: mode.and_then(ResponseMode::parse).unwrap_or(ResponseMode::Full),
    })
}

/// `X-Usage-*` from a usage body.
fn usage_headers(response: &mut HttpResponse, usage: &UsageBody) {
    for (name, value) in [
        ("x-usage-limit", usage.monthly_limit),
        ("x-usage-used", usage.monthly_used),
        ("x-usage-remaining", usage.monthly_remaining),
    ] {
        if let Ok(v) = HeaderValue::from_str(&value.to_string()) {
            response.headers_mut().insert(HeaderName::from_static(name), v);
        }
    }
}

/// A JSON answer, with the `X-Usage-*` headers of `usage` when there is one.
fn json_answer<T: Serialize>(
    state: &AppState,
    mut builder: HttpResponseBuilder,
    body: &T,
    usage: Option<&UsageBody>,
) -> HttpResponse {
    let mut response = builder.content_type("application/json").body(render(body, &state.config.public_base_url));
    if let Some(usage) = usage {
        usage_headers(&mut response, usage);
    }
    response
}

/// Runs a chat turn and waits for it (at most `REDLINE_CHAT_TIMEOUT_SECS`, then 504 while
/// the turn goes on as a job).
#[utoipa::path(post, path = "/v1/chat", tag = "chat", security(("bearer" = ["edit"])),
    request_body(content = ChatRequestBody),
    responses(
        (status = 200, description = "The turn's result, or its proposed changes when they await approval", body = ChatResponseBody),
        (status = 400, description = "Empty message", body = crate::openapi::ErrorBody),
        (status = 401, body = crate::openapi::ErrorBody),
        (status = 413, description = "Body above the cap"),
        (status = 422, body = crate::openapi::ValidationErrorBody),
        (status = 429, description = "Monthly operations used up", body = crate::openapi::ErrorBody),
        (status = 409, description = "Other writers changed the sections the AI edited; nothing was applied", body = crate::openapi::ErrorBody),
        (status = 502, description = "The AI model failed", body = crate::openapi::ErrorBody),
        (status = 504, description = "The turn took longer than the cap; use /v1/chat/async", body = crate::openapi::ErrorBody),
    ))]
pub async fn chat(state: web::Data<AppState>, principal: ApiPrincipal, body: BodyOf) -> ApiResult<HttpResponse> {
    let body = body.checked()?;
    let request = chat_request(&body.0)?;
    let job = state.chat.submit(principal.0.owner, request).await?;
    let timeout = state.chat.config().chat_timeout;
    let job = state.chat.wait_settled(&job, timeout).await?;
    let job = state.chat.job_view(&job, false).await?;
    let JobKind::Chat(turn) = &job.kind else {
        return Err(ApiError::Internal(format!("job {} is not a chat turn", job.job_id)));
    };
    match job.status {
        JobStatus::Completed => {
            let Some(result) = &turn.result else {
                return Err(ApiError::Internal(format!("completed job {} has no result", job.job_id)));
            };
            let result = ChatResultBody::from(result);
            let body = ChatResponseBody {
                job_id: job.job_id.clone(),
                response: Some(result.response),
                session_id: job.session_id.as_str().to_owned(),
                document_changes: result.document_changes,
                usage: result.usage,
            };
            Ok(json_answer(&state, HttpResponse::Ok(), &body, Some(&body.usage)))
        }
        JobStatus::AwaitingApproval => {
            let body = ChatResponseBody {
                job_id: job.job_id.clone(),
                response: turn.proposal_response.clone(),
                session_id: job.session_id.as_str().to_owned(),
                document_changes: DocumentChangesBody {
                    updated_html: None,
                    version_id: turn.proposal_version.clone(),
                    changes_summary:
                        "Changes proposed; approve or reject them with POST /v1/chat/{session_id}/approve.".to_owned(),
                    requires_approval: true,
                    pending_changes: turn.pending_changes().map(job_body::changes),
                    changes: Vec::new(),
                    chunk_diffs: None,
                },
                usage: UsageBody::from(state.usage.current(principal.0.owner).await?),
            };
            Ok(json_answer(&state, HttpResponse::Ok(), &body, Some(&body.usage)))
        }
        JobStatus::Failed => {
            let error = job.error.clone().unwrap_or_else(|| "The chat turn failed.".to_owned());
            // Other writers changed the sections the AI edited: the caller's to resolve, not
            // a failure of the AI model.
            match turn.failure {
                Some(Failure::Conflict) => Err(ApiError::Conflict(error)),
                None => Err(ApiError::BadGateway(error)),
            }
        }
        _ => Err(ApiError::Conflict(format!("Job {} was cancelled.", job.job_id))),
    }
}

/// Whether `Accept` names `text/event-stream` as a media range with a quality above 0
/// (`text/event-stream;q=0` refuses it; `*/*` alone keeps the JSON answer).
fn wants_event_stream(req: &HttpRequest) -> bool {
    req.headers()
        .get_all(actix_web::http::header::ACCEPT)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(accepts_event_stream)
}

fn accepts_event_stream(range: &str) -> bool {
    let mut parts = range.split(';');
    let media = parts.next().unwrap_or_default().trim();
    if !media.eq_ignore_ascii_case("text/event-stream") {
        return false;
    }
    parts
        .filter_map(|p| p.split_once('='))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("q"))
        .is_none_or(|(_, q)| q.trim().parse::<f32>().is_ok_and(|q| q > 0.0))
}

/// Queues a chat turn: 202 with the Job; with `Accept: text/event-stream` the job's event
/// stream instead.
#[utoipa::path(post, path = "/v1/chat/async", tag = "chat", security(("bearer" = ["edit"])),
    request_body(content = ChatRequestBody),
    responses(
        (status = 202, description = "The queued Job", body = JobBody),
        (status = 200, description = "With `Accept: text/event-stream`: the job's events (`intermediate`, `approval_required`, `final`)", content_type = "text/event-stream"),
        (status = 400, body = crate::openapi::ErrorBody),
        (status = 401, body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody),
        (status = 429, body = crate::openapi::ErrorBody),
    ))]
pub async fn chat_async(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    req: HttpRequest,
    body: BodyOf,
) -> ApiResult<HttpResponse> {
    let body = body.checked()?;
    let request = chat_request(&body.0)?;
    let owner = principal.0.owner;
    // A stream's place is taken before the turn is queued: a refused stream queues nothing.
    let slot = if wants_event_stream(&req) { Some(stream_slot(&state, &principal, &req)?) } else { None };
    let job = state.chat.submit(owner, request).await?;
    // A billable answer carries the `X-Usage-*` headers (docs/api.md, "Usage and billing"): the turn's
    // operation is held from now on, so it counts as used.
    let usage = UsageBody::from(state.usage.current(owner).await?);
    if let Some(slot) = slot {
        let mut response = event_stream(state.into_inner(), job.job_id, 0, slot);
        usage_headers(&mut response, &usage);
        return Ok(response);
    }
    let view = state.chat.job_view(&job, true).await?;
    Ok(json_answer(&state, HttpResponse::Accepted(), &JobBody::new(&view, false), Some(&usage)))
}

/// What a chat turn would be admitted as and could cost (`POST /v1/chat/estimate`).
#[derive(Serialize, ToSchema)]
pub struct EstimateBody {
    pub session_id: String,
    /// The sections the turn would work on: the editor copy sent, else the session's document
    /// (0 for a session not made yet).
    pub sections: u64,
    /// Operations admission holds while the turn runs (the least a turn costs).
    pub held_ops: u64,
    /// The most the turn can be charged: `max(1, ceil(sections / 25))`, every section edited.
    pub max_ops_charged: u64,
    /// Whether the quota lets a turn in now (tier operations left, or a live promotion grant).
    pub admitted: bool,
    /// The owner's usage now.
    pub usage: UsageBody,
}

/// What `POST /v1/chat` or `/v1/chat/async` with this body would be admitted as and could
/// cost at most, and whether the quota allows it now, without admitting, charging or running
/// anything. Takes the chat body; not billable.
#[utoipa::path(post, path = "/v1/chat/estimate", tag = "chat", security(("bearer" = ["read"])),
    request_body(content = ChatRequestBody),
    responses(
        (status = 200, description = "The estimate", body = EstimateBody),
        (status = 400, description = "Empty message", body = crate::openapi::ErrorBody),
        (status = 401, body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody),
    ))]
pub async fn estimate(state: web::Data<AppState>, principal: ApiPrincipal, body: BodyOf) -> ApiResult<HttpResponse> {
    let body = body.checked()?;
    let request = chat_request(&body.0)?;
    let session_id = request.session_id.as_str().to_owned();
    let estimate = state.chat.estimate(principal.0.owner, request).await?;
    Ok(HttpResponse::Ok().json(EstimateBody {
        session_id,
        sections: estimate.sections,
        held_ops: estimate.held_ops,
        max_ops_charged: estimate.max_ops,
        admitted: estimate.admitted,
        usage: UsageBody::from(estimate.usage),
    }))
}

fn string_list(f: &mut Fields<'_>, field: &str) -> Vec<String> {
    match f.raw(field) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
            items.iter().filter_map(Value::as_str).map(str::to_owned).collect()
        }
        Some(other) => {
            f.problem(field, "list_type", "Input should be a valid list of strings", other.clone());
            Vec::new()
        }
    }
}

/// An object of strings (`edits`: change id → corrected HTML), in the body's order.
fn string_map(f: &mut Fields<'_>, field: &str) -> Vec<(String, String)> {
    match f.raw(field) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for (key, value) in items {
                match value.as_str() {
                    Some(html) => out.push((key.clone(), html.to_owned())),
                    None => f.problem_in(field, key, "string_type", "Input should be a valid string", value.clone()),
                }
            }
            out
        }
        Some(other) => {
            f.problem(field, "dict_type", "Input should be a valid dictionary", other.clone());
            Vec::new()
        }
    }
}

/// Approves or rejects a job's pending changes (docs/api.md, "Chat and jobs").
#[utoipa::path(post, path = "/v1/chat/{session_id}/approve", tag = "chat", security(("bearer" = ["edit"])),
    params(("session_id" = String, Path)),
    request_body(content = ApproveRequestBody),
    responses(
        (status = 200, description = "The Job, completed with what was applied (or queued again with the reviewer's feedback)", body = JobBody),
        (status = 401, body = crate::openapi::ErrorBody),
        (status = 403, body = crate::openapi::ErrorBody),
        (status = 404, body = crate::openapi::ErrorBody),
        (status = 409, description = "No job awaiting approval, or changes whose sections changed since (named)", body = crate::openapi::ErrorBody),
        (status = 422, description = "Unknown change ids, or a correction that cannot be applied (at `[body, edits, change_id]`)", body = crate::openapi::ValidationErrorBody),
    ))]
pub async fn approve(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    path: web::Path<String>,
    body: BodyOf,
) -> ApiResult<HttpResponse> {
    let body = body.checked()?;
    let session = path_session(&path)?;
    let mut f = Fields::body(&body.0)?;
    let job_id = f.required_str("job_id");
    let approve = string_list(&mut f, "approve");
    let reject = string_list(&mut f, "reject");
    let approve_all = f.optional_bool("approve_all").unwrap_or(false);
    let feedback = f.optional_str("feedback").map(str::to_owned);
    let edits = string_map(&mut f, "edits");
    f.finish()?;
    let Some(job_id) = job_id else {
        return Err(ApiError::Validation(vec![ValidationItem::new(
            "missing",
            vec![json!("body"), json!("job_id")],
            "Field required",
            Value::Null,
        )]));
    };
    let request = ApprovalRequest { approve, reject, approve_all, edits };
    let job = state.chat.approve(principal.0.owner, &session, job_id, &request, feedback).await?;
    let body = JobBody::new(&state.chat.job_view(&job, true).await?, false);
    let usage = match &body.result {
        Some(JobResultBody::Chat(result)) => Some(&result.usage),
        _ => None,
    };
    Ok(json_answer(&state, HttpResponse::Ok(), &body, usage))
}

/// The session's active chat history, oldest first, a page at a time.
#[utoipa::path(get, path = "/v1/sessions/{session_id}/history", tag = "sessions", security(("bearer" = ["read"])),
    params(("session_id" = String, Path),
        crate::paging::PageParams),
    responses(
        (status = 200, description = "The active history, oldest first", body = HistoryBody,
            headers(("Link" = String, description = "`<url>; rel=\"next\"` when another page follows"))),
        (status = 401, body = crate::openapi::ErrorBody),
        (status = 404, body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody),
    ))]
pub async fn history(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    path: web::Path<String>,
    req: HttpRequest,
) -> ApiResult<HttpResponse> {
    let session = path_session(&path)?;
    let h = state.chat.history(principal.0.owner, &session, &page_of(&req)?).await?;
    let body = HistoryBody {
        next_cursor: h.next.as_ref().map(Cursor::encode),
        session_id: h.session_id.as_str().to_owned(),
        messages: h
            .messages
            .into_iter()
            .map(|m| HistoryMessageBody {
                message_id: m.message_id,
                role: m.role,
                content: m.content,
                created_at: iso8601(m.created_at),
                job_id: m.job_id,
                version_before: m.version_before,
                version_after: m.version_after,
            })
            .collect(),
    };
    let base = &state.config.public_base_url;
    Ok(paged(&req, base, h.next.as_ref(), render(&body, base)))
}

/// Restores the document to the version before a message and drops that message and the
/// later ones from the active history.
#[utoipa::path(post, path = "/v1/sessions/{session_id}/revert", tag = "sessions", security(("bearer" = ["edit"])),
    params(("session_id" = String, Path)),
    request_body(content = RevertRequestBody),
    responses(
        (status = 200, description = "The document as restored", body = RevertBody),
        (status = 401, body = crate::openapi::ErrorBody),
        (status = 404, description = "Session or message not in the active history", body = crate::openapi::ErrorBody),
        (status = 409, description = "A chat job runs on the session", body = crate::openapi::ErrorBody),
        (status = 422, description = "The message predates revert", body = crate::openapi::ValidationErrorBody),
    ))]
pub async fn revert(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    path: web::Path<String>,
    body: BodyOf,
) -> ApiResult<HttpResponse> {
    let body = body.checked()?;
    let session = path_session(&path)?;
    let mut f = Fields::body(&body.0)?;
    let message_id = f.required_str("message_id");
    f.finish()?;
    let message_id = message_id.unwrap_or_default();
    let d = state.chat.revert(principal.0.owner, &session, message_id).await?;
    let body = RevertBody {
        session_id: d.session_id.as_str().to_owned(),
        version_id: d.version_id,
        html: d.html,
        section_count: d.section_count,
        reverted_message_id: message_id.to_owned(),
    };
    Ok(json_answer(&state, HttpResponse::Ok(), &body, None))
}

#[cfg(test)]
mod tests {
    use super::accepts_event_stream;

    #[test]
    fn accept_names_the_event_stream_with_a_quality_above_zero() {
        for yes in
            ["text/event-stream", " Text/Event-Stream ", "text/event-stream;q=0.5", "text/event-stream; charset=utf-8"]
        {
            assert!(accepts_event_stream(yes), "{yes:?}");
        }
        for no in [
            "application/json",
            "*/*",
            "text/*",
            "text/event-stream;q=0",
            "text/event-stream; q=0.0",
            "text/event-streamx",
            "application/text/event-stream",
        ] {
            assert!(!accepts_event_stream(no), "{no:?}");
        }
    }
}

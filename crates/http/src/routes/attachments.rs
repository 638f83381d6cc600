//! Attachments (docs/api.md, "Attachments"): streamed uploads (202 with the processing job), the
//! processing status, listing, reading and deleting attachments, the passage search the AI
//! uses, and pre-signed uploads (`POST /v1/attachments/upload-url`, then a `PUT` with no
//! Authorization).

use super::Routes;
use actix_web::{web, HttpRequest, HttpResponse};
use redline_core::attachments::{AttachmentError, AttachmentView, ProcessingStatus, Submitted};
use redline_domain::time_util::iso8601;
use redline_ports::attachments::Passage;
use serde::Serialize;
use serde_json::{json, Value};
use utoipa::ToSchema;

use crate::auth::ApiPrincipal;
use crate::body::BodyOf;
use crate::error::{ApiError, ApiResult};
use crate::multipart::{content_length, pump, stream_form, too_large, FormRefused};
use crate::paging::paged_json;
use crate::query::{Query, DEFAULT_PAGE, MAX_PAGE};
use crate::state::AppState;
use crate::validation::{session_id_at, Fields, ValidationItem};

pub fn configure(routes: &mut Routes<'_>) {
    // Fixed paths before `/v1/attachments/{attachment_id}`, which would take them.
    routes
        .post("/v1/attachments/upload", upload)
        .post("/v1/attachments/upload-url", upload_url)
        .put("/v1/attachments/upload/{token}", put_upload)
        .get("/v1/attachments/search", search)
        .get("/v1/attachments/status/{job_id}", status)
        .get("/v1/attachments", list)
        .get("/v1/attachments/{attachment_id}", get_attachment)
        .delete("/v1/attachments/{attachment_id}", delete_attachment);
}

/// Passages a search answers by default, and at most.
const DEFAULT_LIMIT: i64 = 10;
const MAX_LIMIT: i64 = 50;

/// The 202 of an upload: the attachment and its queued processing job.
#[derive(Serialize, ToSchema)]
pub struct UploadAccepted {
    pub job_id: String,
    pub attachment_id: String,
    /// The job's status (`pending` at first).
    pub status: String,
    /// The file name as stored: folders, control characters and excess length removed.
    pub filename: String,
    pub file_size: i64,
    /// The MIME type of the file's format (from its extension).
    pub content_type: String,
    pub session_id: String,
    pub created_at: String,
}

/// An attachment.
#[derive(Serialize, ToSchema)]
pub struct AttachmentBody {
    pub attachment_id: String,
    pub session_id: String,
    pub filename: String,
    pub content_type: String,
    pub file_size: i64,
    /// `pending`, `in_progress`, `completed`, `failed`, `cancelled`, or `awaiting_upload`
    /// (a pre-signed upload whose bytes have not arrived).
    pub status: String,
    pub progress: i32,
    pub error: Option<String>,
    /// The processing job (kept for an hour after it finishes).
    pub job_id: Option<String>,
    /// `upload`, `presigned` or `document` (a document upload with `?index=true`).
    pub source: String,
    /// Passages in the search index.
    pub passage_count: i64,
    /// Characters of extracted text.
    pub text_chars: i64,
    pub created_at: String,
    pub updated_at: String,
    /// Until when a pre-signed upload is accepted (awaiting uploads only).
    pub upload_expires_at: Option<String>,
    /// The first 1,000 characters of the extracted text (`GET /v1/attachments/{id}` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct AttachmentList {
    pub session_id: String,
    /// One page of the attachments, oldest first.
    pub attachments: Vec<AttachmentBody>,
    /// How many attachments this page holds.
    pub total: usize,
    /// Where the next page starts (pass it as `cursor`; the `Link` header carries the whole
    /// address); null on the last page.
    pub next_cursor: Option<String>,
}

/// Where a processing job stands.
#[derive(Serialize, ToSchema)]
pub struct StatusBody {
    pub job_id: String,
    pub attachment_id: String,
    pub status: String,
    pub progress: i32,
    pub error: Option<String>,
}

/// A passage that matched a search.
#[derive(Serialize, ToSchema)]
pub struct PassageBody {
    pub attachment_id: String,
    pub filename: String,
    /// Position of the passage in its attachment (0, 1, …).
    pub chunk_index: i64,
    pub text: String,
    /// Relevance; higher is better (BM25 on SQLite, `ts_rank` on PostgreSQL: compare scores
    /// within one answer only).
    pub score: f64,
}

#[derive(Serialize, ToSchema)]
pub struct SearchBody {
    pub session_id: String,
    pub query: String,
    /// Best first.
    pub passages: Vec<PassageBody>,
    pub total: usize,
}

/// A pre-signed upload URL.
#[derive(Serialize, ToSchema)]
pub struct UploadUrlBody {
    pub attachment_id: String,
    /// `PUT` the file's bytes here, without Authorization, before `expires_at`.
    pub upload_url: String,
    pub method: String,
    pub expires_at: String,
    /// The `PUT` may carry at most this many bytes (the declared `file_size`).
    pub max_bytes: u64,
}

/// The multipart form of `POST /v1/attachments/upload`.
#[derive(ToSchema)]
#[expect(dead_code, reason = "describes the multipart form in the OpenAPI document only")]
pub struct AttachmentUploadForm {
    #[schema(schema_with = crate::openapi::session_id_schema)]
    session_id: String,
    /// The file: `.pdf`, `.docx`, `.txt`, `.rtf`, `.md`, `.html` or `.htm`; its name's
    /// extension says which.
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
}

/// The body of `POST /v1/attachments/upload-url`.
#[derive(ToSchema)]
#[expect(dead_code, reason = "describes the request body in the OpenAPI document only")]
pub struct UploadUrlRequest {
    #[schema(schema_with = crate::openapi::session_id_schema)]
    session_id: String,
    /// The file's name; its extension says its format.
    filename: String,
    /// The file's size in bytes: the `PUT` may carry no more.
    #[schema(minimum = 1)]
    file_size: u64,
}

/// A JSON number without a fractional part (`57` or `57.0`, as pydantic reads an `int`).
fn whole_number(v: &Value) -> Option<i128> {
    if let Some(n) = v.as_i64() {
        return Some(n.into());
    }
    if let Some(n) = v.as_u64() {
        return Some(n.into());
    }
    // Beyond 2^53 a float is whole anyway; the cast saturates, and such a size is over any cap.
    v.as_f64().filter(|f| f.is_finite() && f.fract() == 0.0).map(|f| f as i128)
}

/// An attachment failure as a response; a size over the cap is the 413 JSON of the contract (docs/api.md).
fn attachment_error(e: AttachmentError, req: &HttpRequest, state: &AppState, seen: Option<u64>) -> ApiError {
    match e {
        AttachmentError::TooLarge { limit, size } => {
            let seen = size.or(seen.filter(|s| *s > limit)).or(content_length(req)).unwrap_or(limit + 1);
            too_large(req, state, seen, limit)
        }
        other => other.into(),
    }
}

fn accepted(s: &Submitted) -> UploadAccepted {
    UploadAccepted {
        job_id: s.job.job_id.clone(),
        attachment_id: s.attachment.attachment_id.clone(),
        status: s.job.status.as_str().to_owned(),
        filename: s.attachment.filename.clone(),
        file_size: s.attachment.size_bytes,
        content_type: s.attachment.content_type.clone(),
        session_id: s.attachment.session_id.to_string(),
        created_at: iso8601(s.attachment.created_at),
    }
}

fn attachment_body(v: AttachmentView, with_preview: bool) -> AttachmentBody {
    let r = v.record;
    AttachmentBody {
        attachment_id: r.attachment_id,
        session_id: r.session_id.to_string(),
        filename: r.filename,
        content_type: r.content_type,
        file_size: r.size_bytes,
        status: v.status,
        progress: v.progress,
        error: v.error,
        job_id: r.job_id,
        source: r.source.as_str().to_owned(),
        passage_count: r.passage_count,
        text_chars: r.text_chars,
        created_at: iso8601(r.created_at),
        updated_at: iso8601(r.updated_at),
        upload_expires_at: r.upload_expires_at.map(iso8601),
        preview: with_preview.then_some(r.preview),
    }
}

fn passage_body(p: Passage) -> PassageBody {
    PassageBody {
        attachment_id: p.attachment_id,
        filename: p.filename,
        chunk_index: p.chunk_index,
        text: p.text,
        score: p.score,
    }
}

fn status_body(s: ProcessingStatus) -> StatusBody {
    StatusBody {
        job_id: s.job_id,
        attachment_id: s.attachment_id,
        status: s.status,
        progress: s.progress,
        error: s.error,
    }
}

/// Uploads a file to a session for the AI to search (multipart: `session_id`, `file`). The
/// file is streamed to storage; text extraction and indexing run as an
/// `attachment_processing` job. Costs 0 operations, the upload and its processing alike
/// (not billable).
#[utoipa::path(post, path = "/v1/attachments/upload", tag = "attachments", security(("bearer" = ["edit"])),
    operation_id = "upload_attachment",
    request_body(content_type = "multipart/form-data", content = AttachmentUploadForm),
    responses(
        (status = 202, body = UploadAccepted),
        (status = 401, body = crate::openapi::ErrorBody),
        (status = 413, description = "File above `REDLINE_MAX_ATTACHMENT_BYTES`", body = crate::openapi::RequestTooLargeBody),
        (status = 415, description = "Unsupported extension (named, with the supported ones)", body = crate::openapi::ErrorBody),
        (status = 422, description = "Missing fields, an invalid session_id, an empty file", body = crate::openapi::ValidationErrorBody),
    ))]
pub async fn upload(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    req: HttpRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let max = state.attachments.config().max_bytes;
    let (r, st) = (&req, state.get_ref());
    let form = match stream_form(&req, payload.into_inner(), &state, "file", max, |start, chunks| async move {
        st.attachments.receive(&start.filename, chunks).await.map_err(|e| attachment_error(e, r, st, None))
    })
    .await
    {
        Ok(form) => form,
        Err(FormRefused { error, file }) => {
            // Refused after the file was stored (a later field's problem): nothing stays behind.
            if let Some(received) = file {
                state.attachments.discard(received).await;
            }
            return Err(error);
        }
    };
    let mut errors = Vec::new();
    let session = match form.text("session_id") {
        None => {
            errors.push(ValidationItem::new(
                "missing",
                vec![json!("body"), json!("session_id")],
                "Field required",
                Value::Null,
            ));
            None
        }
        Some(raw) => match session_id_at(raw, vec![json!("body"), json!("session_id")]) {
            Ok(s) => Some(s),
            Err(item) => {
                errors.push(*item);
                None
            }
        },
    };
    if form.file.is_none() {
        errors.push(ValidationItem::new("missing", vec![json!("body"), json!("file")], "Field required", Value::Null));
    }
    match (session, form.file, errors.is_empty()) {
        (Some(session), Some(received), true) => {
            let submitted = state.attachments.submit(principal.0.owner, &session, received).await?;
            Ok(HttpResponse::Accepted().json(accepted(&submitted)))
        }
        (_, received, _) => {
            // Refused: nothing stays behind.
            if let Some(received) = received {
                state.attachments.discard(received).await;
            }
            Err(ApiError::Validation(errors))
        }
    }
}

/// Where an attachment's processing job stands.
#[utoipa::path(get, path = "/v1/attachments/status/{job_id}", tag = "attachments", security(("bearer" = ["read"])),
    operation_id = "attachment_status",
    params(("job_id" = String, Path, description = "The `job_id` of the upload's 202")),
    responses((status = 200, body = StatusBody), (status = 401, body = crate::openapi::ErrorBody),
        (status = 403, body = crate::openapi::ErrorBody), (status = 404, body = crate::openapi::ErrorBody)))]
pub async fn status(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let s = state.attachments.status(principal.0.owner, &path).await?;
    Ok(HttpResponse::Ok().json(status_body(s)))
}

/// The required `session_id` of a query string (422 at `["query", "session_id"]`).
fn query_session(q: &mut Query) -> Option<redline_domain::SessionId> {
    match q.get("session_id").map(str::to_owned) {
        None => {
            q.problem("session_id", "missing", "Field required", "");
            None
        }
        Some(raw) => match session_id_at(&raw, vec![json!("query"), json!("session_id")]) {
            Ok(s) => Some(s),
            Err(item) => {
                q.problem("session_id", &item.kind, &item.msg, &raw);
                None
            }
        },
    }
}

/// The session's attachments, oldest first, a page at a time.
#[utoipa::path(get, path = "/v1/attachments", tag = "attachments", security(("bearer" = ["read"])),
    operation_id = "list_attachments",
    params(("session_id" = String, Query),
        crate::paging::PageParams),
    responses((status = 200, description = "The attachments, oldest first", body = AttachmentList,
            headers(("Link" = String, description = "`<url>; rel=\"next\"` when another page follows"))),
        (status = 401, body = crate::openapi::ErrorBody),
        (status = 404, description = "No such session", body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody)))]
pub async fn list(state: web::Data<AppState>, principal: ApiPrincipal, req: HttpRequest) -> ApiResult<HttpResponse> {
    let mut q = Query::parse(&req);
    let session = query_session(&mut q);
    let page = q.page(DEFAULT_PAGE, MAX_PAGE);
    q.finish()?;
    let Some(session) = session else {
        return Err(ApiError::Internal("validated session_id missing".to_owned()));
    };
    let page = state.attachments.list(principal.0.owner, &session, &page).await?.map(|v| attachment_body(v, false));
    Ok(paged_json(&req, &state.config.public_base_url, page, |attachments, next_cursor| AttachmentList {
        session_id: session.to_string(),
        total: attachments.len(),
        attachments,
        next_cursor,
    }))
}

/// One attachment: its metadata, processing status and a preview of its text.
#[utoipa::path(get, path = "/v1/attachments/{attachment_id}", tag = "attachments", security(("bearer" = ["read"])),
    params(("attachment_id" = String, Path)),
    responses((status = 200, body = AttachmentBody), (status = 401, body = crate::openapi::ErrorBody),
        (status = 403, body = crate::openapi::ErrorBody), (status = 404, body = crate::openapi::ErrorBody)))]
pub async fn get_attachment(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let v = state.attachments.get(principal.0.owner, &path).await?;
    Ok(HttpResponse::Ok().json(attachment_body(v, true)))
}

/// Deletes an attachment: its processing stops, its file and its passages are removed.
#[utoipa::path(delete, path = "/v1/attachments/{attachment_id}", tag = "attachments", security(("bearer" = ["edit"])),
    params(("attachment_id" = String, Path)),
    responses((status = 204, description = "Deleted"), (status = 401, body = crate::openapi::ErrorBody),
        (status = 403, body = crate::openapi::ErrorBody), (status = 404, body = crate::openapi::ErrorBody)))]
pub async fn delete_attachment(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    state.attachments.delete(principal.0.owner, &path).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Ranked passages of the session's attachments: the search the AI's `search_attachments`
/// tool makes. Any text is a valid query (its words are looked up; quotes and operators are
/// ignored); a query without words finds nothing.
#[utoipa::path(get, path = "/v1/attachments/search", tag = "attachments", security(("bearer" = ["read"])),
    operation_id = "search_attachments",
    params(("session_id" = String, Query), ("q" = String, Query),
        ("limit" = Option<i64>, Query, minimum = 1, description = "Most passages returned (default 10; more than 50 counts as 50)")),
    responses((status = 200, body = SearchBody), (status = 401, body = crate::openapi::ErrorBody),
        (status = 404, description = "No such session", body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody)))]
pub async fn search(state: web::Data<AppState>, principal: ApiPrincipal, req: HttpRequest) -> ApiResult<HttpResponse> {
    let mut q = Query::parse(&req);
    let session = query_session(&mut q);
    let query = q.get("q").map(str::to_owned);
    if query.is_none() {
        q.problem("q", "missing", "Field required", "");
    }
    let limit = q.int("limit", DEFAULT_LIMIT, 1, MAX_LIMIT);
    q.finish()?;
    let (Some(session), Some(query)) = (session, query) else {
        return Err(ApiError::Internal("validated query missing".to_owned()));
    };
    let passages: Vec<PassageBody> = state
        .attachments
        .search(principal.0.owner, &session, &query, limit)
        .await?
        .into_iter()
        .map(passage_body)
        .collect();
    let total = passages.len();
    Ok(HttpResponse::Ok().json(SearchBody { session_id: session.to_string(), query, passages, total }))
}

/// A pre-signed upload URL (`{session_id, filename, file_size}`): `PUT` the file there,
/// without Authorization, within `REDLINE_PRESIGN_TTL_SECS` (15 minutes); afterwards → 404.
#[utoipa::path(post, path = "/v1/attachments/upload-url", tag = "attachments", security(("bearer" = ["edit"])),
    request_body(content = UploadUrlRequest),
    responses((status = 201, body = UploadUrlBody), (status = 401, body = crate::openapi::ErrorBody),
        (status = 413, description = "`file_size` above the cap", body = crate::openapi::RequestTooLargeBody),
        (status = 415, description = "Unsupported extension", body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody)))]
pub async fn upload_url(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    req: HttpRequest,
    body: BodyOf,
) -> ApiResult<HttpResponse> {
    let body = body.checked()?;
    let mut f = Fields::body(&body.0)?;
    let session = f.session_id("session_id");
    let filename = f.required_str("filename");
    let file_size = match f.raw("file_size") {
        None => {
            f.problem("file_size", "missing", "Field required", Value::Null);
            None
        }
        Some(v) => match whole_number(v) {
            Some(n) if n >= 1 => Some(u64::try_from(n).unwrap_or(u64::MAX)),
            Some(_) => {
                f.problem("file_size", "greater_than_equal", "Input should be greater than or equal to 1", v.clone());
                None
            }
            _ => {
                f.problem("file_size", "int_type", "Input should be a valid integer", v.clone());
                None
            }
        },
    };
    f.finish()?;
    let (Some(session), Some(filename), Some(file_size)) = (session, filename, file_size) else {
        return Err(ApiError::Internal("validated fields missing".to_owned()));
    };
    let ticket = state
        .attachments
        .create_upload_url(principal.0.owner, &session, filename, file_size, principal.0.key_id)
        .await
        .map_err(|e| attachment_error(e, &req, &state, None))?;
    Ok(HttpResponse::Created().json(UploadUrlBody {
        attachment_id: ticket.attachment_id,
        upload_url: ticket.upload_url,
        method: "PUT".to_owned(),
        expires_at: iso8601(ticket.expires_at),
        max_bytes: ticket.max_bytes,
    }))
}

/// The `PUT` of a pre-signed upload: the raw bytes of the file, no Authorization (the URL is
/// signed). 404 once the URL expired or when it is not one we made; 409 when it was used.
#[utoipa::path(put, path = "/v1/attachments/upload/{token}", tag = "attachments",
    params(("token" = String, Path, description = "From `upload_url`")),
    request_body(content_type = "application/octet-stream", content = Vec<u8>, description = "The file"),
    responses((status = 202, body = UploadAccepted),
        (status = 404, description = "Unknown or expired upload URL", body = crate::openapi::ErrorBody),
        (status = 409, description = "The URL was already used", body = crate::openapi::ErrorBody),
        (status = 413, description = "More bytes than the declared file_size", body = crate::openapi::RequestTooLargeBody),
        (status = 422, description = "An empty body", body = crate::openapi::ValidationErrorBody)))]
pub async fn put_upload(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let slot = state.attachments.upload_slot(&path).await.map_err(|e| attachment_error(e, &req, &state, None))?;
    let max = slot.max_bytes;
    if let Some(len) = content_length(&req).filter(|l| *l > max) {
        return Err(too_large(&req, &state, len, max));
    }
    let (out, pumped) = pump(payload.into_inner(), |chunks| state.attachments.receive_upload(slot, chunks)).await;
    if let Some(cause) = pumped.client_error {
        return Err(ApiError::BadRequest(format!("Could not read the upload: {cause}")));
    }
    let submitted = out.map_err(|e| attachment_error(e, &req, &state, Some(pumped.bytes)))?;
    Ok(HttpResponse::Accepted().json(accepted(&submitted)))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::whole_number;

    #[test]
    fn whole_numbers_are_read_as_pydantic_reads_an_int() {
        assert_eq!(whole_number(&json!(57)), Some(57));
        assert_eq!(whole_number(&json!(57.0)), Some(57));
        assert_eq!(whole_number(&json!(-3)), Some(-3));
        assert_eq!(whole_number(&json!(u64::MAX)), Some(u64::MAX.into()));
        for not_whole in [json!(57.5), json!("57"), json!(true), json!(null)] {
            assert_eq!(whole_number(&not_whole), None, "{not_whole}");
        }
    }
}

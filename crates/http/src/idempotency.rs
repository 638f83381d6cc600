//! `Idempotency-Key` on the operations that start work or send something (docs/api.md,
//! "Idempotent retries"). [`HONOURED`] is the one list: the routes register this middleware
//! on them ([`crate::routes`]) and the OpenAPI document describes the header on them
//! ([`crate::openapi`]).
//!
//! A request with a key is fingerprinted (method, path, query and body; a JSON body by its
//! content, so the order of its fields does not matter) and claimed under its owner
//! ([`redline_core::idempotency`]). Everything after the key's check runs as a task of its
//! own, so a caller that hangs up (the usual reason to retry) does not leave the key claimed
//! and unanswered. The answer of a request that ran ([`kept`]) is kept a day and replayed,
//! with `Idempotent-Replayed: true`, to every retry; a refusal before any work frees the key.

use actix_web::body::{to_bytes, EitherBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::middleware::Next;
use actix_web::web::{Bytes, Data};
use actix_web::{Error, FromRequest, HttpMessage, HttpResponse};
use futures_util::StreamExt;
use redline_core::idempotency::{key_is_valid, Begin};
use redline_ports::StoredAnswer;
use serde_json::{json, Value};

use crate::auth::ApiPrincipal;
use crate::error::ApiError;
use crate::state::AppState;
use crate::validation::ValidationItem;

/// The operations that honour `Idempotency-Key`: `(method, route pattern)`.
pub const HONOURED: &[(Method, &str)] = &[
    (Method::POST, "/v1/chat"),
    (Method::POST, "/v1/chat/async"),
    (Method::POST, "/v1/chat/{session_id}/approve"),
    (Method::POST, "/v1/documents/export"),
    (Method::POST, "/v1/documents/export/email-request"),
    (Method::POST, "/v1/documents/upload"),
    (Method::POST, "/v1/attachments/upload"),
];

pub const HEADER: &str = "idempotency-key";

/// Room for an upload form's fields and part headers beside its file, when it is buffered.
const MULTIPART_FIELDS_BYTES: u64 = 1024 * 1024;
pub const REPLAYED_HEADER: &str = "idempotent-replayed";

/// Whether `method` on `pattern` honours the header.
pub fn honoured(method: &Method, pattern: &str) -> bool {
    HONOURED.iter().any(|(m, p)| m == method && *p == pattern)
}

fn answer(error: ApiError) -> HttpResponse {
    actix_web::ResponseError::error_response(&error)
}

/// A key that is not one value of 1 to 255 visible ASCII characters.
struct BadKey;

/// The key sent, `Ok(None)` when none was; an `sf-string` may come quoted.
fn key_of(req: &ServiceRequest) -> Result<Option<String>, BadKey> {
    let mut values = req.headers().get_all(HEADER);
    let Some(first) = values.next() else { return Ok(None) };
    if values.next().is_some() {
        return Err(BadKey);
    }
    let text = first.to_str().map_err(|_| BadKey)?.trim();
    let text = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')).unwrap_or(text);
    if !key_is_valid(text) {
        return Err(BadKey);
    }
    Ok(Some(text.to_owned()))
}

/// A JSON value written with every object's fields in order: the same content, the same bytes.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut fields: Vec<(&String, &Value)> = map.iter().collect();
            fields.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (name, v)) in fields.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(name.clone()).to_string());
                out.push(':');
                canonical(v, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The boundary of a `multipart/form-data` body, from its `Content-Type`.
fn boundary(req: &ServiceRequest) -> Option<String> {
    let content_type = req.headers().get(header::CONTENT_TYPE)?.to_str().ok()?;
    if !content_type.trim_start().to_ascii_lowercase().starts_with("multipart/") {
        return None;
    }
    content_type.split(';').find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim().eq_ignore_ascii_case("boundary").then(|| value.trim().trim_matches('"').to_owned())
    })
}

/// What identifies a request: its method, path and query, and its body — a JSON body by its
/// content (the order of its fields does not matter), a multipart body without its boundary
/// (which a client draws anew for each try), any other byte for byte.
fn fingerprint(req: &ServiceRequest, body: &[u8]) -> String {
    let mut head = format!("{} {}?{}\n", req.method(), req.path(), req.query_string());
    let digest = if let Some(boundary) = boundary(req).filter(|b| !b.is_empty()) {
        let mut parts: Vec<&[u8]> = vec![head.as_bytes()];
        let mut start = 0;
        for at in memchr::memmem::find_iter(body, boundary.as_bytes()) {
            parts.push(&body[start..at]);
            start = at + boundary.len();
        }
        parts.push(&body[start..]);
        redline_core::secrets::sha256_of_parts(parts)
    } else if let Ok(value) = serde_json::from_slice::<Value>(body) {
        canonical(&value, &mut head);
        redline_core::secrets::sha256(head.as_bytes())
    } else {
        redline_core::secrets::sha256_of_parts([head.as_bytes(), body])
    };
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Reads the body whole, up to `cap` bytes. Over it, the request goes on with its body put
/// back as it came (the handler answers the 413), and `None` is answered.
async fn buffer(req: &mut ServiceRequest, cap: u64) -> Option<Bytes> {
    let mut payload = req.take_payload();
    let mut chunks: Vec<Bytes> = Vec::new();
    let mut size = 0u64;
    while let Some(chunk) = payload.next().await {
        let chunk = match chunk {
            Ok(chunk) => chunk,
            // The handler meets the failure where it would have (a stalled body's 408).
            Err(e) => {
                let read = futures_util::stream::iter(chunks.into_iter().map(Ok));
                let failed = futures_util::stream::once(async move { Err(e) });
                req.set_payload(Payload::Stream { payload: Box::pin(read.chain(failed)) });
                return None;
            }
        };
        size += chunk.len() as u64;
        chunks.push(chunk);
        if size > cap {
            let read = futures_util::stream::iter(chunks.into_iter().map(Ok));
            req.set_payload(Payload::Stream { payload: Box::pin(read.chain(payload)) });
            return None;
        }
    }
    let body: Bytes = chunks.concat().into();
    req.set_payload(Payload::from(body.clone()));
    Some(body)
}

/// Answers of these statuses are kept: the request ran (2xx), or may have (500), or ran and
/// failed (502), or goes on as a job (504, whose detail names it). Every other status is a
/// refusal before any work (400, 401, 403, 404, 409, 413, 415, 422, 429, 503 …) and frees the
/// key for the corrected request.
fn kept(status: StatusCode) -> bool {
    status.is_success() || matches!(status.as_u16(), 500 | 502 | 504)
}

/// Headers that belong to one delivery, not to the answer.
const NOT_KEPT: [&str; 6] = ["date", "content-length", "transfer-encoding", "connection", "x-request-id", "set-cookie"];

/// The most bytes of an answer kept for an operation that changes nothing (an export): a
/// larger one frees the key, and a retry renders it again at no cost.
const MAX_KEPT_READ_BYTES: usize = 8 * 1024 * 1024;

fn replay(answer: StoredAnswer) -> HttpResponse {
    let mut res = HttpResponse::build(StatusCode::from_u16(answer.status).unwrap_or(StatusCode::OK));
    for (name, value) in answer.headers {
        res.append_header((name, value));
    }
    res.insert_header((REPLAYED_HEADER, "true"));
    res.body(answer.body)
}

/// The middleware of the operations in [`HONOURED`].
pub async fn middleware<B: MessageBody + 'static>(
    req: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<EitherBody<B>>, Error> {
    // Only the operations of HONOURED come here: their resources are guarded by method.
    let here = req.match_pattern().unwrap_or_default();
    let key = match key_of(&req) {
        Ok(Some(key)) => key,
        Ok(None) => return next.call(req).await.map(ServiceResponse::map_into_left_body),
        Err(BadKey) => {
            let res = answer(ApiError::BadRequest(
                "Idempotency-Key must be sent once, as 1 to 255 visible ASCII characters (a UUID, say).".to_owned(),
            ));
            return Ok(req.into_response(res).map_into_right_body());
        }
    };
    let Some(state) = req.app_data::<Data<AppState>>().cloned() else {
        return next.call(req).await.map(ServiceResponse::map_into_left_body);
    };
    let changes_nothing = crate::scopes::needed(req.method(), &here) == Some(redline_domain::Scope::Read);
    let run = actix_web::rt::spawn(run(req, next, state, key, changes_nothing));
    run.await.map_err(|e| crate::error::ApiError::Internal(format!("task failed: {e}")))?
}

/// A request with a valid key, from its credential's check to its answer kept.
async fn run<B: MessageBody + 'static>(
    mut req: ServiceRequest,
    next: Next<B>,
    state: Data<AppState>,
    key: String,
    changes_nothing: bool,
) -> Result<ServiceResponse<EitherBody<B>>, Error> {
    // The owner the key is kept under. A credential refused gets the answer the handler would
    // give first (it checks the caller before the body); one admitted is handed on, so the
    // handler does not check it again.
    let (http_req, payload) = req.parts_mut();
    let principal = match ApiPrincipal::from_request(http_req, payload).await {
        Ok(ApiPrincipal(principal)) => principal,
        Err(e) => return Ok(req.into_response(answer(e)).map_into_right_body()),
    };
    req.extensions_mut().insert(principal.clone());
    // An upload may be as large as the upload cap (and its form's few fields besides).
    let cap = match boundary(&req) {
        Some(_) => state.config.max_upload_bytes.saturating_add(MULTIPART_FIELDS_BYTES),
        None => state.config.max_body_bytes,
    };
    let Some(body) = buffer(&mut req, cap).await else {
        return next.call(req).await.map(ServiceResponse::map_into_left_body);
    };
    let print = fingerprint(&req, &body);
    let claim = match state.idempotency.begin(principal.owner, &key, &print).await {
        Ok(Begin::Run(claim)) => claim,
        Ok(Begin::Replay(answer)) => return Ok(req.into_response(replay(answer)).map_into_right_body()),
        Ok(Begin::Mismatch) => {
            let res = answer(ApiError::Validation(vec![ValidationItem::new(
                "idempotency_key_reused",
                vec![json!("header"), json!("Idempotency-Key")],
                "This Idempotency-Key was already used with a different request (another path or body). Send a new key with a new request.",
                json!(key),
            )]));
            return Ok(req.into_response(res).map_into_right_body());
        }
        Ok(Begin::StillRunning) => {
            let res = answer(ApiError::Conflict(
                "The first request with this Idempotency-Key is still running. Retry later to get its answer."
                    .to_owned(),
            ));
            return Ok(req.into_response(res).map_into_right_body());
        }
        Err(e) => return Ok(req.into_response(answer(e.into())).map_into_right_body()),
    };
    let res = match state.idempotency.holding(&claim, next.call(req)).await {
        Ok(res) => res,
        Err(e) => {
            free(&state, claim).await;
            return Err(e);
        }
    };
    let status = res.status();
    let streamed = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/event-stream"));
    if !kept(status) || streamed {
        free(&state, claim).await;
        return Ok(res.map_into_left_body());
    }
    let headers: Vec<(String, String)> = res
        .headers()
        .iter()
        .filter(|(name, _)| !NOT_KEPT.contains(&name.as_str()))
        .filter_map(|(name, value)| Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned())))
        .collect();
    let (http_req, res) = res.into_parts();
    let (head, body) = res.into_parts();
    let Ok(bytes) = to_bytes(body).await else {
        free(&state, claim).await;
        let failed = answer(ApiError::Internal("an answer's body could not be read".to_owned()));
        return Ok(ServiceResponse::new(http_req, failed).map_into_right_body());
    };
    if changes_nothing && bytes.len() > MAX_KEPT_READ_BYTES {
        free(&state, claim).await;
    } else {
        let stored = StoredAnswer { status: status.as_u16(), headers, body: bytes.to_vec() };
        if let Err(e) = state.idempotency.finish(claim, Some(stored)).await {
            tracing::warn!(error = %e, "could not keep the answer of an idempotency key");
        }
    }
    let mut res = head.set_body(bytes).map_into_boxed_body();
    res.headers_mut().insert(header::HeaderName::from_static(REPLAYED_HEADER), HeaderValue::from_static("false"));
    Ok(ServiceResponse::new(http_req, res).map_into_right_body())
}

/// Frees a claim whose request changed nothing (or whose answer cannot be kept).
async fn free(state: &AppState, claim: redline_core::idempotency::Claim) {
    if let Err(e) = state.idempotency.finish(claim, None).await {
        tracing::warn!(error = %e, "could not free an idempotency key");
    }
}

//! Jobs (docs/api.md, "Chat and jobs"): listings, polling, cancelling, and the server-sent event stream
//! of a job (`intermediate`, `approval_required`, `final`; `Last-Event-ID` / `?after=N`
//! resume; a comment heartbeat every 15 s).

use std::sync::Arc;
use std::time::Duration;

use super::Routes;
use actix_web::web::Bytes;
use actix_web::{web, HttpRequest, HttpResponse};
use redline_core::chat::view::{JobKind, JobView};
use redline_domain::job::{JobStatus, JobType};
use redline_domain::page::{Cursor, Page, PageRequest};
use redline_ports::jobs::{JobFilter, Signal};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::auth::ApiPrincipal;
use crate::error::{ApiError, ApiResult};
use crate::paging::paged;
use crate::query::Query;
use crate::routes::documents::path_session;
use crate::routes::job_body::{self, render, EventBody, JobBody, JobListBody};
use crate::state::AppState;
use crate::streams::{Full, Slot};

pub fn configure(routes: &mut Routes<'_>) {
    routes
        .get("/v1/jobs", list_jobs)
        .get("/v1/jobs/{job_id}", get_job)
        .post("/v1/jobs/{job_id}/cancel", cancel_job)
        .get("/v1/jobs/{job_id}/events", job_events)
        .get("/v1/sessions/{session_id}/jobs", session_jobs);
}

/// The heartbeat period of event streams.
const HEARTBEAT: Duration = Duration::from_secs(15);
/// Streams re-read the job at least this often (signals usually come first).
const POLL: Duration = Duration::from_secs(5);
/// Jobs a page holds when the caller does not say (the contract (docs/api.md)).
const DEFAULT_LIMIT: usize = 20;
/// Most jobs a page holds.
const MAX_LIMIT: usize = 100;
/// The JSON a page of full jobs may hold, about: a page of jobs on large documents stops
/// before it would pass this (keeping at least one job), and its cursor goes on from there.
pub(crate) const FULL_PAGE_BYTES: usize = 1 << 20;

/// A page of jobs as the body of `JobListResponse` (keys sorted, as [`render`] writes them),
/// and the cursor of the page after it. Full jobs are added while the body stays within
/// `budget` bytes.
pub(crate) fn page_body(page: Page<JobView>, compact: bool, budget: usize, base: &str) -> (Bytes, Option<Cursor>) {
    let mut rendered: Vec<Bytes> = Vec::with_capacity(page.items.len());
    let mut size = 0;
    let mut next = page.next;
    for (i, view) in page.items.iter().enumerate() {
        let job = render(&JobBody::new(view, compact), base);
        if i > 0 && size + job.len() > budget {
            let last = &page.items[i - 1];
            next = Some(Cursor::new(last.created_at, last.job_id.clone()));
            break;
        }
        size += job.len() + 1;
        rendered.push(job);
    }
    let mut out = Vec::with_capacity(size + 64);
    out.extend_from_slice(b"{\"jobs\":[");
    for (i, job) in rendered.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(job);
    }
    out.extend_from_slice(b"],\"next_cursor\":");
    let cursor = next.as_ref().map(Cursor::encode);
    out.extend_from_slice(&serde_json::to_vec(&cursor).unwrap_or_default());
    out.extend_from_slice(format!(",\"total\":{}}}", rendered.len()).as_bytes());
    (Bytes::from(out), next)
}

/// The `limit`, `cursor` and `compact` of the two job listings: the OpenAPI document's one
/// description of them (`params(JobPageParams)`).
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[expect(dead_code, reason = "describes the query in the OpenAPI document only; the handlers read it")]
pub struct JobPageParams {
    /// Most jobs returned (default 20; above 100 counts as 100)
    #[param(minimum = 1)]
    limit: Option<i64>,
    /// Where the page starts: `next_cursor` of the page before (the cursor of the `Link`
    /// header's address)
    #[param(pattern = "^[A-Za-z0-9_-]*$", max_length = 1024)]
    cursor: Option<String>,
    /// Omit results and intermediate events
    compact: Option<bool>,
}

/// A listing's page of jobs and whether it is compact, from its query; the query's other
/// fields are left to `read`, which may add problems before the query is finished.
fn job_page(req: &HttpRequest, read: impl FnOnce(&mut Query)) -> ApiResult<(PageRequest, bool)> {
    let mut q = Query::parse(req);
    let page = q.page(DEFAULT_LIMIT, MAX_LIMIT);
    let compact = q.boolean("compact");
    read(&mut q);
    q.finish()?;
    Ok((page, compact))
}

fn listing(req: &HttpRequest, state: &AppState, page: Page<JobView>, compact: bool) -> HttpResponse {
    let (body, next) = page_body(page, compact, FULL_PAGE_BYTES, &state.config.public_base_url);
    paged(req, &state.config.public_base_url, next.as_ref(), body)
}

/// The caller's jobs, newest first, a page at a time (`limit`, `cursor`, `status`,
/// `job_type`, `compact`).
#[utoipa::path(get, path = "/v1/jobs", tag = "jobs", security(("bearer" = ["read"])),
    params(
        JobPageParams,
        ("status" = Option<String>, Query, pattern = "^(pending|in_progress|awaiting_approval|completed|failed|cancelled)?$"),
        ("job_type" = Option<String>, Query, pattern = "^(chat|attachment_processing)?$"),
    ),
    responses((status = 200, description = "The jobs, newest first", body = JobListBody,
            headers(("Link" = String, description = "`<url>; rel=\"next\"` when another page follows"))),
        (status = 401, body = crate::openapi::ErrorBody), (status = 422, body = crate::openapi::ValidationErrorBody)))]
pub async fn list_jobs(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    req: HttpRequest,
) -> ApiResult<HttpResponse> {
    let mut filter = JobFilter { session_id: None, status: None, job_type: None };
    let (page, compact) = job_page(&req, |q| {
        filter.status = q.literal(
            "status",
            JobStatus::parse,
            "Input should be 'pending', 'in_progress', 'awaiting_approval', 'completed', 'failed' or 'cancelled'",
        );
        filter.job_type =
            q.literal("job_type", JobType::parse_public, "Input should be 'chat' or 'attachment_processing'");
    })?;
    Ok(listing(&req, &state, state.chat.list(principal.0.owner, &filter, &page, compact).await?, compact))
}

/// The jobs of one session, most recent first (`limit` default 20, `compact`).
#[utoipa::path(get, path = "/v1/sessions/{session_id}/jobs", tag = "jobs", security(("bearer" = ["read"])),
    params(("session_id" = String, Path), JobPageParams),
    responses((status = 200, description = "The jobs, newest first", body = JobListBody,
            headers(("Link" = String, description = "`<url>; rel=\"next\"` when another page follows"))),
        (status = 401, body = crate::openapi::ErrorBody), (status = 422, body = crate::openapi::ValidationErrorBody)))]
pub async fn session_jobs(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    req: HttpRequest,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let session = path_session(&path)?;
    let (page, compact) = job_page(&req, |_| {})?;
    let filter = JobFilter { session_id: Some(session), status: None, job_type: None };
    Ok(listing(&req, &state, state.chat.list(principal.0.owner, &filter, &page, compact).await?, compact))
}

/// Polls a job.
#[utoipa::path(get, path = "/v1/jobs/{job_id}", tag = "jobs", security(("bearer" = ["read"])),
    params(("job_id" = String, Path)),
    responses((status = 200, description = "The Job", body = JobBody), (status = 401, body = crate::openapi::ErrorBody),
        (status = 403, body = crate::openapi::ErrorBody), (status = 404, body = crate::openapi::ErrorBody)))]
pub async fn get_job(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let json = state
        .chat
        .job_rendered(principal.0.owner, &path, |view| {
            render(&JobBody::new(view, false), &state.config.public_base_url)
        })
        .await?;
    Ok(HttpResponse::Ok().content_type("application/json").body(json))
}

/// Cancels a job that has not finished (409 once it has).
#[utoipa::path(post, path = "/v1/jobs/{job_id}/cancel", tag = "jobs", security(("bearer" = ["edit"])),
    params(("job_id" = String, Path)),
    responses((status = 200, description = "The cancelled Job", body = JobBody), (status = 401, body = crate::openapi::ErrorBody),
        (status = 403, body = crate::openapi::ErrorBody), (status = 404, body = crate::openapi::ErrorBody),
        (status = 409, description = "Already finished", body = crate::openapi::ErrorBody)))]
pub async fn cancel_job(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let job = state.chat.cancel(principal.0.owner, &path).await?;
    let body = JobBody::new(&state.chat.job_view(&job, true).await?, false);
    Ok(HttpResponse::Ok().content_type("application/json").body(render(&body, &state.config.public_base_url)))
}

/// The job's events as server-sent events.
#[utoipa::path(get, path = "/v1/jobs/{job_id}/events", tag = "jobs", security(("bearer" = ["read"])),
    params(("job_id" = String, Path), ("after" = Option<i64>, Query, minimum = 0, description = "Replay events after this sequence"),
        ("Last-Event-ID" = Option<String>, Header)),
    responses((status = 200, description = "`intermediate` (id = sequence), `approval_required`, `final` (the Job), then the end", content_type = "text/event-stream"),
        (status = 401, body = crate::openapi::ErrorBody), (status = 403, body = crate::openapi::ErrorBody),
        (status = 404, body = crate::openapi::ErrorBody),
        (status = 422, description = "`after` is not a whole number of at least 0", body = crate::openapi::ValidationErrorBody),
        (status = 429, description = "Too many event streams open for this key or from this address", body = crate::openapi::ErrorBody)))]
pub async fn job_events(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    req: HttpRequest,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let job = state.chat.job(principal.0.owner, &path).await?;
    let mut q = Query::parse(&req);
    let mut after = q.int("after", 0, 0, i64::MAX);
    q.finish()?;
    let slot = stream_slot(&state, &principal, &req)?;
    if let Some(last) =
        req.headers().get("last-event-id").and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<i64>().ok())
    {
        after = after.max(last);
    }
    Ok(event_stream(state.into_inner(), job.job_id, after, slot))
}

/// A place for one more event stream of this caller, or the 429 that says which cap is full
/// (docs/api.md, "Event streams").
pub fn stream_slot(state: &AppState, principal: &ApiPrincipal, req: &HttpRequest) -> ApiResult<Slot> {
    let credential = match &principal.0.key_id {
        Some(key) => format!("key {key}"),
        None => format!("web {:?}", principal.0.owner),
    };
    let address = crate::client_addr::of(req, &state.config.trusted_proxies);
    state.streams.take(&credential, &address).map_err(|full| {
        let (whose, n) = match full {
            Full::Credential(n) => ("for this key", n),
            Full::Address(n) => ("from this address", n),
        };
        ApiError::TooManyRequests {
            detail: format!(
                "Too many event streams are open {whose} (at most {n} at once). Close one, or poll GET /v1/jobs/{{job_id}} instead."
            ),
            retry_after_secs: 5,
        }
    })
}

fn frame(event: &str, id: Option<i64>, data: &Value) -> Bytes {
    let mut s = String::new();
    if let Some(id) = id {
        s.push_str(&format!("id: {id}\n"));
    }
    s.push_str(&format!("event: {event}\ndata: {data}\n\n"));
    Bytes::from(s)
}

/// The last event of a stream that cannot go on: the job is gone (its session was deleted)
/// or its events could not be read.
fn error_frame(job_id: &str, detail: &str) -> Bytes {
    frame("error", None, &json!({"job_id": job_id, "detail": detail}))
}

const JOB_GONE: &str = "The job no longer exists: its session was deleted.";
const READ_FAILED: &str = "The job's events could not be read. Reconnect with Last-Event-ID to resume.";

/// What a read of the job gave, or the `error` frame that ends the stream when it gave
/// nothing (the job is gone) or failed.
fn found<T, E>(job_id: &str, read: Result<Option<T>, E>) -> Result<T, Bytes> {
    match read {
        Ok(Some(v)) => Ok(v),
        Ok(None) => Err(error_frame(job_id, JOB_GONE)),
        Err(_) => Err(error_frame(job_id, READ_FAILED)),
    }
}

/// Resolves once `draining` is true.
async fn shutting_down(draining: &mut tokio::sync::watch::Receiver<bool>) {
    while !*draining.borrow() {
        if draining.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// The last frame of a stream cut by a restart: a `reconnect` event, with a `retry` hint of
/// one second for `EventSource`.
fn reconnect_frame(data: &Value) -> Bytes {
    let mut text = String::from("retry: 1000\n");
    text.push_str(&String::from_utf8_lossy(&frame("reconnect", None, data)));
    Bytes::from(text)
}

/// Streams a job's events after `after` until its final event. The job's id is in the
/// `X-Job-Id` header, so a caller that asked `POST /v1/chat/async` for the stream can poll,
/// cancel or approve the job.
pub fn event_stream(state: Arc<AppState>, job_id: String, after: i64, slot: Slot) -> HttpResponse {
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let chat = state.chat.clone();
    let header_id = job_id.clone();
    let mut draining = state.draining.clone();
    let base = state.config.public_base_url.clone();
    tokio::spawn(async move {
        // The stream's place, held until this task ends.
        let _slot = slot;
        let mut signals = chat.bus().subscribe();
        let mut last = after;
        let mut approval_sent = false;
        let mut heartbeat = tokio::time::interval(HEARTBEAT);
        heartbeat.tick().await;
        let mut status = None;
        let mut read_status = true;
        loop {
            // A wake-up reads the new events, and the status unless the signal said that only
            // events were added (point reads, inline on SQLite); the whole job only when an
            // approval or the final event needs it.
            if read_status {
                let Ok(now) = chat.peek_status(&job_id).await else {
                    let _ = tx.send(error_frame(&job_id, READ_FAILED)).await;
                    return;
                };
                status = now;
            }
            let Ok(events) = chat.events_after(&job_id, last).await else {
                let _ = tx.send(error_frame(&job_id, READ_FAILED)).await;
                return;
            };
            for e in &events {
                // A run starts: any review it leads to is a new one, even when this stream
                // never saw the job leave `awaiting_approval` (a quick round in between).
                if e.kind == "status"
                    && e.content.get("message").and_then(Value::as_str) == Some(redline_core::chat::RUN_START)
                {
                    approval_sent = false;
                }
                let item = job_body::value(&EventBody::from(e), &base);
                if tx.send(frame("intermediate", Some(e.sequence), &item)).await.is_err() {
                    return;
                }
                last = e.sequence;
            }
            let Some(status) = status else {
                let _ = tx.send(error_frame(&job_id, JOB_GONE)).await;
                return;
            };
            if status == JobStatus::AwaitingApproval && !approval_sent {
                let job = match found(&job_id, chat.peek_view(&job_id, false).await) {
                    Ok(job) => job,
                    Err(last_frame) => {
                        let _ = tx.send(last_frame).await;
                        return;
                    }
                };
                if job.status != JobStatus::AwaitingApproval {
                    // It moved on since the status was read: the next pass sees where to.
                    read_status = true;
                    continue;
                }
                approval_sent = true;
                let pending = match &job.kind {
                    JobKind::Chat(turn) => turn.pending_changes().map(job_body::changes),
                    JobKind::Attachment(_) => None,
                };
                let data = json!({"job_id": job.job_id, "pending_changes": job_body::value(&pending, &base)});
                if tx.send(frame("approval_required", None, &data)).await.is_err() {
                    return;
                }
            }
            if status != JobStatus::AwaitingApproval {
                approval_sent = false;
            }
            if status.is_finished() {
                let last_frame = match found(&job_id, chat.peek_view(&job_id, true).await) {
                    Ok(view) => frame("final", None, &job_body::value(&JobBody::new(&view, false), &base)),
                    Err(last_frame) => last_frame,
                };
                let _ = tx.send(last_frame).await;
                return;
            }
            // Whether the status must be read again: yes unless the signal was `Events`.
            let wake = async {
                loop {
                    match signals.recv().await {
                        Ok(Signal::Job(id)) if id == job_id => return true,
                        Ok(Signal::Events(id)) if id == job_id => return false,
                        Ok(_) => {}
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => return true,
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => std::future::pending::<()>().await,
                    }
                }
            };
            read_status = tokio::select! {
                status_too = wake => status_too,
                () = shutting_down(&mut draining) => {
                    // This replica is restarting: the client reconnects (to another one) with
                    // Last-Event-ID and misses nothing.
                    let data = json!({
                        "job_id": job_id,
                        "last_event_id": last,
                        "message": "This server is restarting. Reconnect with Last-Event-ID to continue the stream.",
                    });
                    let _ = tx.send(reconnect_frame(&data)).await;
                    return;
                }
                _ = tokio::time::sleep(POLL) => true,
                _ = heartbeat.tick() => {
                    if tx.send(Bytes::from_static(b": heartbeat\n\n")).await.is_err() {
                        return;
                    }
                    true
                }
            };
        }
    });
    let body = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok::<_, actix_web::Error>(b), rx))
    });
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("Cache-Control", "no-cache"))
        .insert_header(("X-Accel-Buffering", "no"))
        .insert_header(("X-Job-Id", header_id))
        .streaming(body)
}

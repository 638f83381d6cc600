//! Request ids, one tracing span per request, the request metrics, and the HTTP/1.1
//! semantics actix leaves to us (HEAD, stalled bodies, WebSocket upgrades, HTTP/1.0 streams).
//!
//! Log lines carry the method and the path only: never headers, bodies or query strings
//! (a signed link's query is a secret).

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use actix_web::body::{BodySize, BoxBody, EitherBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::error::PayloadError;
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::http::{Method, Version};
use actix_web::middleware::Next;
use actix_web::rt::time::{sleep, Sleep};
use actix_web::web::Bytes;
use actix_web::web::Data;
use actix_web::{Error, HttpMessage, HttpResponse};
use futures_util::Stream;
use serde_json::json;
use tracing::Instrument;

use crate::state::AppState;

/// The id of the request being served (also sent back as `X-Request-Id`).
#[derive(Debug, Clone)]
pub struct RequestId(pub String);

pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// Path prefixes whose next segment is a secret (a capability token): logged as `<redacted>`.
const CAPABILITY_PREFIXES: [&str; 4] =
    ["/v1/agents/handoff/", "/v1/documents/export/download/", "/v1/documents/images/", "/v1/attachments/upload/"];

/// The path as it may be logged: capability tokens replaced by `<redacted>`.
pub fn loggable_path(path: &str) -> String {
    for prefix in CAPABILITY_PREFIXES {
        if let Some(rest) = path.strip_prefix(prefix) {
            let tail = rest.find('/').map_or("", |i| &rest[i..]);
            return format!("{prefix}<redacted>{tail}");
        }
    }
    path.to_owned()
}

fn incoming_id(req: &ServiceRequest) -> Option<String> {
    let v = req.headers().get(REQUEST_ID_HEADER)?.to_str().ok()?;
    let ok = !v.is_empty() && v.len() <= 64 && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    ok.then(|| v.to_owned())
}

pub async fn observe(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let id = incoming_id(&req).unwrap_or_else(|| uuid::Uuid::now_v7().simple().to_string());
    req.extensions_mut().insert(RequestId(id.clone()));
    let state = req.app_data::<Data<AppState>>();
    let metrics = state.map(|s| s.metrics.clone());
    let client = state
        .and_then(|s| s.config.trusted_proxies.client(req.peer_addr(), req.headers()))
        .map_or_else(String::new, |ip| ip.to_string());
    let span = tracing::info_span!("request", request_id = %id, client = %client, method = %req.method(), path = %loggable_path(req.path()));
    let started = Instant::now();
    if let Some(m) = &metrics {
        m.started();
    }
    let result = next.call(req).instrument(span.clone()).await;
    let elapsed = started.elapsed();
    let status = match &result {
        Ok(res) => res.status().as_u16(),
        Err(e) => e.as_response_error().status_code().as_u16(),
    };
    if let Some(m) = &metrics {
        m.finished(status, elapsed);
    }
    span.in_scope(|| {
        tracing::info!(status, latency_ms = elapsed.as_secs_f64() * 1000.0, "request finished");
    });
    result.map(|mut res| {
        if let Ok(v) = HeaderValue::from_str(&id) {
            res.headers_mut().insert(HeaderName::from_static(REQUEST_ID_HEADER), v);
        }
        res
    })
}

/// HTTP/1.1 semantics that actix leaves to the application, in one pass over each request:
///
/// - **HEAD** is GET without the body (RFC 9110 §9.3.2): the request is routed as a GET and the
///   answer keeps its status and headers, but not its body, which is dropped unread (an event
///   stream is not followed). The answer carries no `Content-Length` (RFC 9110 §8.6 allows
///   that): actix frames an answer by the last request it has parsed, so with pipelined
///   requests a HEAD answer that announced a length would be taken for a GET's.
/// - **A stalled request body** (no byte for [`HttpConfig::body_idle_timeout`] while a handler
///   waits for one) ends the request with 408 and closes the connection.
/// - **`Upgrade: websocket`** is refused (400, connection closed): the service offers no
///   WebSocket, and actix would read such a request's body until the connection closes.
/// - **HTTP/1.0** clients get streamed answers (event streams) delimited by the connection's
///   close, not chunked, which HTTP/1.0 does not know (RFC 9112 §6.1).
///
/// [`HttpConfig::body_idle_timeout`]: crate::state::HttpConfig::body_idle_timeout
pub async fn protocol<B: MessageBody + 'static>(
    mut req: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<EitherBody<B>>, Error> {
    if wants_websocket(&req) {
        let res = HttpResponse::BadRequest().insert_header((header::CONNECTION, "close")).json(
            json!({"detail": "This service offers no WebSocket: send the request without 'Upgrade: websocket'."}),
        );
        return Ok(req.into_response(res).map_into_right_body());
    }
    if let Some(coding) = content_coding(&req) {
        let res = HttpResponse::UnsupportedMediaType().json(json!({"detail": format!(
            "Content-Encoding '{coding}' is not supported: send the request body uncompressed."
        )}));
        return Ok(req.into_response(res).map_into_right_body());
    }
    let stalled = has_body(&req).then(|| {
        let config =
            req.app_data::<Data<AppState>>().map(|s| (s.config.body_idle_timeout, s.config.anonymous_body_deadline));
        let (idle, whole) = config.unwrap_or((DEFAULT_BODY_IDLE, DEFAULT_ANONYMOUS_BODY_DEADLINE));
        let deadline = anonymous(&req).then(|| (whole, Box::pin(sleep(whole))));
        let stalled = Rc::new(Cell::new(None));
        let payload = IdleTimeout { inner: req.take_payload(), idle, timer: None, deadline, stalled: stalled.clone() };
        req.set_payload(Payload::Stream { payload: Box::pin(payload) });
        stalled
    });
    let head = req.method() == Method::HEAD;
    if head {
        req.head_mut().method = Method::GET;
    }
    let http10 = req.version() < Version::HTTP_11;
    let hsts = req.app_data::<Data<AppState>>().is_some_and(|s| s.config.hsts);
    let mut res = next.call(req).await?;
    if let Some(why) = stalled.and_then(|s| s.get()) {
        let detail = match why {
            Stall::Idle => "The request body stopped arriving: nothing came for too long. Send it again.",
            Stall::Deadline => {
                "The request body took too long to arrive: without credentials a body must arrive whole within a few seconds. Send it again."
            }
        };
        let timeout = HttpResponse::RequestTimeout().force_close().json(json!({"detail": detail}));
        let (request, _) = res.into_parts();
        return Ok(ServiceResponse::new(request, timeout).map_into_right_body());
    }
    if http10 {
        res.response_mut().head_mut().no_chunking(true);
    }
    // A draining replica closes each connection after its answer: the balancer's next request
    // opens a new one, which reaches a replica that is not stopping.
    if res.request().app_data::<Data<AppState>>().is_some_and(|s| *s.draining.borrow()) {
        res.response_mut().head_mut().set_connection_type(actix_web::http::ConnectionType::Close);
    }
    // Answers carry accounts' documents, keys and tokens: no shared or private cache keeps
    // them unless the route says otherwise (the content-addressed images do).
    let headers = res.headers_mut();
    if !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    // No answer is read as another type than it says (a JSON error as HTML, say).
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if hsts {
        headers.insert(header::STRICT_TRANSPORT_SECURITY, HeaderValue::from_static(HSTS));
    }
    Ok(if head { res.map_body(|_, _| EitherBody::right(BoxBody::new(HeadBody))) } else { res.map_into_left_body() })
}

/// Browsers keep to https for a year after any answer from the service (not its
/// subdomains, which the operator may serve otherwise).
pub const HSTS: &str = "max-age=31536000";

/// How long a request body may stall when the configuration says nothing.
const DEFAULT_BODY_IDLE: Duration = Duration::from_secs(30);

/// How long the whole body of a request without credentials may take when the configuration
/// says nothing.
const DEFAULT_ANONYMOUS_BODY_DEADLINE: Duration = Duration::from_secs(10);

/// Whether a request carries no credential at all (no `Authorization`, no cookie) and is not a
/// pre-signed upload (whose URL is its credential, and whose large body may take long): its
/// body must arrive whole within a short deadline, so that strangers cannot hold connections
/// open by trickling bytes (sign-in, sign-up, password reset).
fn anonymous(req: &ServiceRequest) -> bool {
    let headers = req.headers();
    let presigned_upload = req.method() == Method::PUT && req.path().starts_with("/v1/attachments/upload/");
    let credentials = headers.contains_key(header::AUTHORIZATION) || headers.contains_key(header::COOKIE);
    !(credentials || presigned_upload)
}

/// Why a body was cut off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stall {
    /// No byte came for the idle timeout.
    Idle,
    /// The whole body did not arrive within the deadline of a request without credentials.
    Deadline,
}

/// The body of an answer to HEAD: none, and no length (see [`protocol`]).
struct HeadBody;

impl MessageBody for HeadBody {
    type Error = std::convert::Infallible;

    fn size(&self) -> BodySize {
        BodySize::None
    }

    fn poll_next(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Bytes, Self::Error>>> {
        Poll::Ready(None)
    }
}

/// A request body's `Content-Encoding` other than `identity` (RFC 9110 §8.4): the service
/// reads no compressed bodies, and reading one as if it were plain would be wrong (RFC 9110
/// §15.5.16: 415 for a content coding that is not supported).
fn content_coding(req: &ServiceRequest) -> Option<String> {
    let value = req.headers().get(header::CONTENT_ENCODING)?;
    let coding = String::from_utf8_lossy(value.as_bytes()).trim().to_owned();
    let identity = coding.split(',').all(|c| c.trim().eq_ignore_ascii_case("identity") || c.trim().is_empty());
    (!identity).then_some(coding)
}

fn wants_websocket(req: &ServiceRequest) -> bool {
    req.headers()
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("websocket"))
}

/// Whether the request says a body follows (a length above zero, or a transfer coding).
fn has_body(req: &ServiceRequest) -> bool {
    let headers = req.headers();
    headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .is_some_and(|n| n > 0)
}

/// A request body that fails with `TimedOut` (and says so through `stalled`) when no byte
/// arrives for `idle` while it is being read. The clock starts at the first read, so a
/// handler that reads the body late is not cut off for it.
struct IdleTimeout {
    inner: Payload,
    idle: Duration,
    timer: Option<Pin<Box<Sleep>>>,
    /// For a request without credentials: the whole body's deadline.
    deadline: Option<(Duration, Pin<Box<Sleep>>)>,
    stalled: Rc<Cell<Option<Stall>>>,
}

impl Stream for IdleTimeout {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if let Some((whole, deadline)) = &mut this.deadline {
            if deadline.as_mut().poll(cx).is_ready() {
                this.stalled.set(Some(Stall::Deadline));
                let cause = format!("the body did not arrive whole within {} s", whole.as_secs());
                return Poll::Ready(Some(Err(PayloadError::Io(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    cause,
                )))));
            }
        }
        match Pin::new(&mut this.inner).poll_next(cx) {
            Poll::Ready(item) => {
                this.timer = None;
                Poll::Ready(item)
            }
            Poll::Pending => {
                let idle = this.idle;
                let timer = this.timer.get_or_insert_with(|| Box::pin(sleep(idle)));
                if timer.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                this.stalled.set(Some(Stall::Idle));
                let cause = format!("no byte of the body came for {} s", idle.as_secs());
                Poll::Ready(Some(Err(PayloadError::Io(std::io::Error::new(std::io::ErrorKind::TimedOut, cause)))))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capability_tokens_are_not_logged() {
        assert_eq!(loggable_path("/v1/agents/handoff/ho_secret/claim"), "/v1/agents/handoff/<redacted>/claim");
        assert_eq!(loggable_path("/v1/agents/handoff/ho_secret"), "/v1/agents/handoff/<redacted>");
        assert_eq!(loggable_path("/v1/agents/handoff"), "/v1/agents/handoff");
        assert_eq!(loggable_path("/v1/sessions"), "/v1/sessions");
    }
}

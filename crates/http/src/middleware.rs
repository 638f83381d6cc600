//! Request ids, one tracing span per request, and the request metrics.
//!
//! Log lines carry the method and the path only: never headers, bodies or query strings
//! (a signed link's query is a secret).

use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::web::Data;
use actix_web::{Error, HttpMessage};
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
    let metrics = req.app_data::<Data<AppState>>().map(|s| s.metrics.clone());
    let span =
        tracing::info_span!("request", request_id = %id, method = %req.method(), path = %loggable_path(req.path()));
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

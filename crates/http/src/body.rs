//! Request bodies: read as a stream under the configured cap, parsed as JSON, with the
//! contract's answers for every bad body (413 JSON, 415, 422 `json_invalid`).

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::web::{BytesMut, Data};
use actix_web::{FromRequest, HttpMessage, HttpRequest};
use futures_util::future::LocalBoxFuture;
use futures_util::StreamExt;
use serde_json::{json, Value};

use crate::error::ApiError;
use crate::middleware::RequestId;
use crate::state::AppState;
use crate::validation::ValidationItem;

/// How much of an oversized body is read and thrown away so that the client, still
/// sending, gets to read the 413 instead of a broken pipe. Past this the connection closes.
const DRAIN_LIMIT: u64 = 64 * 1024 * 1024;

/// A JSON request body, `Value::Null` when the body is empty.
pub struct JsonBody(pub Value);

impl FromRequest for JsonBody {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let (max, contact) = match req.app_data::<Data<AppState>>() {
            Some(state) => (state.config.max_body_bytes, state.config.contact_email.clone()),
            None => (u64::MAX, String::new()),
        };
        let request_id = req.extensions().get::<RequestId>().map(|r| r.0.clone()).unwrap_or_default();
        let content_type = req.headers().get(header::CONTENT_TYPE).map(|v| v.to_str().unwrap_or("?").to_owned());
        let declared =
            req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
        let mut payload = payload.take();
        Box::pin(async move {
            let too_large = |seen: u64| ApiError::PayloadTooLarge {
                request_bytes: seen,
                max_bytes: max,
                contact_email: contact.clone(),
                support_event_id: request_id.clone(),
            };
            if let Some(len) = declared.filter(|len| *len > max) {
                drain(&mut payload, len.min(DRAIN_LIMIT)).await;
                return Err(too_large(len));
            }
            let mut buf = BytesMut::new();
            while let Some(chunk) = payload.next().await {
                let chunk = chunk.map_err(|e| ApiError::BadRequest(format!("Could not read the request body: {e}")))?;
                if (buf.len() + chunk.len()) as u64 > max {
                    let seen = buf.len() as u64 + chunk.len() as u64;
                    let seen = seen + drain(&mut payload, DRAIN_LIMIT).await;
                    return Err(too_large(seen));
                }
                buf.extend_from_slice(&chunk);
            }
            if buf.iter().all(u8::is_ascii_whitespace) {
                return Ok(JsonBody(Value::Null));
            }
            if let Some(ct) = content_type.as_deref() {
                if !is_json_content_type(ct) {
                    return Err(ApiError::UnsupportedMediaType(format!(
                        "Unsupported content type '{ct}': this endpoint expects 'application/json'."
                    )));
                }
            }
            serde_json::from_slice::<Value>(&buf).map(JsonBody).map_err(|e| {
                let position = byte_offset(&buf, e.line(), e.column());
                ApiError::Validation(vec![ValidationItem::new(
                    "json_invalid",
                    vec![json!("body"), json!(position)],
                    "JSON decode error",
                    json!({}),
                )
                .with_ctx(json!({ "error": e.to_string() }))])
            })
        })
    }
}

/// A [`JsonBody`] whose problem (413, 415, 422) is kept for the handler, for endpoints that
/// authenticate: actix runs a handler's extractors side by side, and a bad body, found at
/// once, would otherwise be answered before the key's check ends, so that a caller without
/// a valid key learnt about its body instead of getting its 401. The handler takes it with
/// [`BodyOf::checked`] once its caller is known.
pub struct BodyOf(Result<JsonBody, ApiError>);

impl BodyOf {
    pub fn checked(self) -> Result<JsonBody, ApiError> {
        self.0
    }
}

impl FromRequest for BodyOf {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let body = JsonBody::from_request(req, payload);
        Box::pin(async move { Ok(BodyOf(body.await)) })
    }
}

/// Reads and discards up to `limit` bytes; returns how many were read.
async fn drain(payload: &mut Payload, limit: u64) -> u64 {
    let mut seen = 0u64;
    while seen < limit {
        match payload.next().await {
            Some(Ok(chunk)) => seen += chunk.len() as u64,
            _ => break,
        }
    }
    seen
}

/// `application/json`, `application/*+json`, with any parameters.
pub fn is_json_content_type(ct: &str) -> bool {
    let essence = ct.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
}

fn byte_offset(buf: &[u8], line: usize, column: usize) -> usize {
    let mut offset = 0;
    for (i, l) in buf.split(|b| *b == b'\n').enumerate() {
        if i + 1 == line {
            return offset + column.saturating_sub(1);
        }
        offset += l.len() + 1;
    }
    buf.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_content_types() {
        assert!(is_json_content_type("application/json"));
        assert!(is_json_content_type("Application/JSON; charset=utf-8"));
        assert!(is_json_content_type("application/merge-patch+json"));
        assert!(!is_json_content_type("text/plain"));
        assert!(!is_json_content_type("application/x-www-form-urlencoded"));
    }

    #[test]
    fn offsets() {
        assert_eq!(byte_offset(b"{\n  \"a\": ", 2, 8), 9);
    }
}

//! The one place where failures become HTTP responses.
//!
//! Every use-case error is mapped with an exhaustive `match` (no catch-all that would turn a
//! failure into a 400); 5xx bodies are fixed texts and the cause goes only to the log.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use redline_core::documents::DocumentError;
use redline_core::exports::ExportFailure;
use redline_core::identity::{AuthFailure, Guess};
use redline_core::templates::TemplateError;
use redline_core::usage::UsageError;
use redline_core::IdentityError;
use redline_ports::{BlobError, StoreError};
use serde_json::{json, Value};

use crate::validation::ValidationItem;

/// The detail of a missing `Authorization` header (docs/api.md, "Authentication").
pub const MISSING_HEADER_DETAIL: &str = "Missing Authorization header. Expected 'Authorization: Bearer <API_KEY>'";
/// The detail of a header that is not `Bearer <key>`.
pub const NOT_BEARER_DETAIL: &str = "Invalid Authorization header format. Expected 'Authorization: Bearer <API_KEY>'";
/// The detail of an unknown or revoked key.
pub const INVALID_KEY_DETAIL: &str = "Invalid API key";

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("validation failed")]
    Validation(Vec<ValidationItem>),
    #[error("bad request: {0}")]
    BadRequest(String),
    #[error("unauthorized: {0}")]
    Unauthorized(String),
    #[error("forbidden: {0}")]
    Forbidden(String),
    #[error("not found: {0}")]
    NotFound(String),
    #[error("conflict: {0}")]
    Conflict(String),
    #[error("gone: {0}")]
    Gone(String),
    #[error("too large")]
    PayloadTooLarge { request_bytes: u64, max_bytes: u64, contact_email: String, support_event_id: String },
    /// An export over its format's cap (the contract's Errors Details 8): `detail` is an object.
    #[error("export too large")]
    ExportTooLarge {
        format: &'static str,
        document_bytes: u64,
        max_bytes: u64,
        contact_email: String,
        support_event_id: String,
    },
    #[error("unsupported media type: {0}")]
    UnsupportedMediaType(String),
    #[error("too many requests: {detail}")]
    TooManyRequests { detail: String, retry_after_secs: u64 },
    /// The owner's attachments would pass the plan's storage limit.
    #[error("attachment storage full")]
    StorageFull { used: u64, limit: u64, adding: u64 },
    /// The monthly operations are used up (the contract's Errors 429, Details 4).
    #[error("quota exhausted")]
    QuotaExhausted { limit: i64, used: i64, retry_after_secs: u64 },
    #[error("service unavailable: {0}")]
    Unavailable(String),
    /// A synchronous wait ran out (the contract's Errors 504).
    #[error("gateway timeout: {0}")]
    GatewayTimeout(String),
    /// The upstream AI model failed a synchronous turn.
    #[error("bad gateway: {0}")]
    BadGateway(String),
    #[error("internal error: {0}")]
    Internal(String),
}

pub type ApiResult<T> = Result<T, ApiError>;

/// An observed size in MB, four decimals, rounded up: a body one byte over the cap never
/// shows as equal to it, and a small test cap does not show as 0.
fn observed_mb(bytes: u64) -> f64 {
    ((bytes as f64) / 1_048_576.0 * 10_000.0).ceil() / 10_000.0
}

/// A cap in MB, four decimals, rounded to the nearest (2048 bytes show as 0.002).
fn cap_mb(bytes: u64) -> f64 {
    ((bytes as f64) / 1_048_576.0 * 10_000.0).round() / 10_000.0
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            ApiError::Validation(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::Gone(_) => StatusCode::GONE,
            ApiError::PayloadTooLarge { .. } | ApiError::ExportTooLarge { .. } | ApiError::StorageFull { .. } => {
                StatusCode::PAYLOAD_TOO_LARGE
            }
            ApiError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::TooManyRequests { .. } | ApiError::QuotaExhausted { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::GatewayTimeout(_) => StatusCode::GATEWAY_TIMEOUT,
            ApiError::BadGateway(_) => StatusCode::BAD_GATEWAY,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let status = self.status_code();
        let body: Value = match self {
            ApiError::Validation(items) => json!({ "detail": items }),
            ApiError::BadRequest(d)
            | ApiError::Unauthorized(d)
            | ApiError::Forbidden(d)
            | ApiError::NotFound(d)
            | ApiError::Conflict(d)
            | ApiError::Gone(d)
            | ApiError::GatewayTimeout(d)
            | ApiError::BadGateway(d)
            | ApiError::UnsupportedMediaType(d) => json!({ "detail": d }),
            ApiError::TooManyRequests { detail, .. } => json!({ "detail": detail }),
            ApiError::StorageFull { used, limit, adding } => json!({
                "detail": format!(
                    "Attachment storage is full: your plan keeps {} MB of attachment files, {} MB are used and this file needs {} MB more. Delete attachments you no longer need, or upgrade the plan.",
                    cap_mb(*limit),
                    observed_mb(*used),
                    observed_mb(*adding)
                ),
                "error_code": "attachment_storage_full",
                "used_bytes": used,
                "limit_bytes": limit,
                "file_bytes": adding,
            }),
            ApiError::QuotaExhausted { limit, used, retry_after_secs } => json!({
                "detail": format!(
                    "Monthly operation limit reached ({used} of {limit} used). Billable requests resume when the cycle resets in {retry_after_secs} seconds, or after an upgrade or a promotion grant."
                ),
            }),
            ApiError::PayloadTooLarge { request_bytes, max_bytes, contact_email, support_event_id } => json!({
                // The bytes too: in MB a small cap rounds to nothing ("0.0001 MB exceeds the
                // 0 MB limit" for a pre-signed upload of 11 bytes).
                "detail": format!(
                    "Request body too large: {} MB ({request_bytes} bytes) exceeds the {} MB limit ({max_bytes} bytes).",
                    observed_mb(*request_bytes),
                    cap_mb(*max_bytes)
                ),
                "error_code": "request_too_large",
                "message_user": "This request is too large to process. Split it into smaller requests and try again.",
                "request_size_mb": observed_mb(*request_bytes),
                "max_size_mb": cap_mb(*max_bytes),
                "suggested_action": "split_request",
                "contact_email": contact_email,
                "support_event_id": support_event_id,
            }),
            ApiError::ExportTooLarge { format, document_bytes, max_bytes, contact_email, support_event_id } => json!({
                "detail": {
                    "error_code": "document_too_large",
                    "message_user": format!(
                        "This document is too large to download as {} ({} MB; the limit is {} MB). Request it by e-mail instead: POST /v1/documents/export/email-request.",
                        format.to_uppercase(),
                        observed_mb(*document_bytes),
                        cap_mb(*max_bytes)
                    ),
                    "suggested_action": "email_request",
                    "contact_email": contact_email,
                    "document_size_mb": observed_mb(*document_bytes),
                    "max_size_mb": cap_mb(*max_bytes),
                    "format": format,
                    "support_event_id": support_event_id,
                }
            }),
            ApiError::Unavailable(cause) => {
                tracing::warn!(cause = %cause, "service unavailable");
                json!({ "detail": "Service temporarily unavailable, please retry shortly." })
            }
            ApiError::Internal(cause) => {
                tracing::error!(cause = %cause, "internal error");
                json!({ "detail": "Internal server error" })
            }
        };
        let mut response = HttpResponse::build(status).json(body);
        match self {
            ApiError::Unauthorized(_) => {
                response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            ApiError::TooManyRequests { retry_after_secs, .. } => {
                if let Ok(v) = HeaderValue::from_str(&retry_after_secs.to_string()) {
                    response.headers_mut().insert(header::RETRY_AFTER, v);
                }
            }
            ApiError::QuotaExhausted { limit, used, retry_after_secs } => {
                let headers = response.headers_mut();
                for (name, value) in [
                    (header::RETRY_AFTER.as_str(), retry_after_secs.to_string()),
                    ("x-usage-limit", limit.to_string()),
                    ("x-usage-used", used.to_string()),
                    ("x-usage-remaining", "0".to_owned()),
                ] {
                    if let (Ok(n), Ok(v)) = (header::HeaderName::try_from(name), HeaderValue::from_str(&value)) {
                        headers.insert(n, v);
                    }
                }
            }
            ApiError::Unavailable(_) => {
                response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
            }
            ApiError::PayloadTooLarge { .. } => {
                // The rest of an oversized body is not read: the connection cannot be reused.
                response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            _ => {}
        }
        response
    }
}

impl From<Vec<ValidationItem>> for ApiError {
    fn from(items: Vec<ValidationItem>) -> Self {
        ApiError::Validation(items)
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Unavailable(cause) => ApiError::Unavailable(cause),
            StoreError::NotFound => ApiError::NotFound("Not found".to_owned()),
            StoreError::Duplicate(cause) | StoreError::Other(cause) => ApiError::Internal(cause),
            StoreError::LimitReached => ApiError::Internal("limit reached outside a limit check".to_owned()),
        }
    }
}

/// The 401 of an authentication failure.
pub fn unauthorized(failure: AuthFailure) -> ApiError {
    ApiError::Unauthorized(
        match failure {
            AuthFailure::MissingHeader => MISSING_HEADER_DETAIL,
            AuthFailure::NotBearer => NOT_BEARER_DETAIL,
            AuthFailure::InvalidKey => INVALID_KEY_DETAIL,
            AuthFailure::InvalidToken => "Invalid or expired session token. Sign in to the web app again.",
            AuthFailure::ApiKeyNotAccepted => {
                "API keys are not accepted on /v1/users/*: use a web-app session token (POST /v1/auth/login)."
            }
        }
        .to_owned(),
    )
}

impl From<IdentityError> for ApiError {
    fn from(e: IdentityError) -> Self {
        match e {
            IdentityError::Auth(failure) => unauthorized(failure),
            IdentityError::EmailTaken => ApiError::Conflict("An account with this email already exists.".to_owned()),
            IdentityError::InvalidCredentials => ApiError::Unauthorized("Invalid email or password.".to_owned()),
            IdentityError::KeyLimit { max } => ApiError::Conflict(format!(
                "API key limit reached: your plan allows {max} active keys. Revoke a key or upgrade your plan."
            )),
            IdentityError::NotFound(what) => ApiError::NotFound(format!("{} not found", capitalise(what))),
            IdentityError::Forbidden(why) => ApiError::Forbidden(why.to_owned()),
            IdentityError::Conflict(why) => ApiError::Conflict(why.to_owned()),
            IdentityError::Cooldown { retry_after_secs } => ApiError::TooManyRequests {
                detail: format!("Too many signups from this address. Retry after {retry_after_secs} seconds."),
                retry_after_secs,
            },
            IdentityError::Throttled { guess, retry_after_secs } => ApiError::TooManyRequests {
                detail: match guess {
                    Guess::Password => format!(
                        "Too many failed sign-in attempts. Wait {retry_after_secs} seconds before trying again."
                    ),
                    Guess::ApiKey => format!(
                        "Too many invalid API keys from this address. Wait {retry_after_secs} seconds before trying again."
                    ),
                    Guess::PromoCode => format!(
                        "Too many wrong promotion codes. Wait {retry_after_secs} seconds before trying again."
                    ),
                    Guess::PasswordReset => format!(
                        "Too many password-reset requests. Wait {retry_after_secs} seconds before asking again."
                    ),
                    Guess::VerificationMail => format!(
                        "Too many verification mails asked for. Wait {retry_after_secs} seconds before asking again."
                    ),
                },
                retry_after_secs,
            },
            IdentityError::HandoffNotFound => ApiError::NotFound("Handoff link not found or expired".to_owned()),
            IdentityError::HandoffDisabled => ApiError::Gone(
                "This handoff link was disabled after too many wrong codes and can never be used again.".to_owned(),
            ),
            IdentityError::WrongCode { attempts_left } => ApiError::Forbidden(if attempts_left == 0 {
                "Wrong code. 0 attempts left: the link is now disabled.".to_owned()
            } else if attempts_left == 1 {
                "Wrong code. 1 attempt left.".to_owned()
            } else {
                format!("Wrong code. {attempts_left} attempts left.")
            }),
            IdentityError::Store(e) => e.into(),
            IdentityError::Hashing(cause) => ApiError::Internal(cause),
            IdentityError::BadPassword(e) => crate::validation::password_refused("password", &e),
            IdentityError::ResetLinkInvalid => ApiError::NotFound(
                "This password-reset link is unknown, already used or expired. Ask for a new one.".to_owned(),
            ),
            IdentityError::WrongCurrentPassword => ApiError::Forbidden("The current password is wrong.".to_owned()),
            IdentityError::VerificationLinkInvalid => ApiError::NotFound(
                "This verification link is unknown, already used or expired. Ask for a new one in your account's settings.".to_owned(),
            ),
        }
    }
}

impl From<UsageError> for ApiError {
    fn from(e: UsageError) -> Self {
        match e {
            UsageError::Exhausted { limit, used, retry_after_secs } => {
                ApiError::QuotaExhausted { limit, used, retry_after_secs }
            }
            UsageError::UnknownAccount => ApiError::NotFound("Account not found".to_owned()),
            UsageError::NotAdmitted(id) => ApiError::Internal(format!("charge without admission for {id}")),
            UsageError::UnknownCode => ApiError::NotFound("Unknown or expired promotion code".to_owned()),
            UsageError::AlreadyRedeemed => {
                ApiError::Conflict("This promotion code was already redeemed by this account.".to_owned())
            }
            UsageError::Store(e) => e.into(),
        }
    }
}

impl From<DocumentError> for ApiError {
    fn from(e: DocumentError) -> Self {
        match e {
            DocumentError::NotFound => ApiError::NotFound("Session not found".to_owned()),
            DocumentError::VersionNotFound => ApiError::NotFound("Version not found".to_owned()),
            DocumentError::Unsupported(u) => ApiError::UnsupportedMediaType(u.to_string()),
            DocumentError::Convert(c) => ApiError::Validation(vec![ValidationItem::new(
                "file_invalid",
                vec![json!("body"), json!("file")],
                format!("The file could not be converted: {c}."),
                Value::Null,
            )]),
            DocumentError::TooDeep => ApiError::Validation(vec![ValidationItem::new(
                "html_too_deep",
                vec![json!("body"), json!("html")],
                "The HTML is nested too deeply to process.",
                Value::Null,
            )]),
            DocumentError::TooManySections { limit } => ApiError::Validation(vec![ValidationItem::new(
                "too_many_sections",
                vec![json!("body")],
                format!("The document would have more than {limit} sections, the most one document may have. Split it into smaller documents."),
                Value::Null,
            )]),
            DocumentError::WouldEmpty => ApiError::BadRequest(
                "Refusing to save a document with no content over a document that has content: the document is unchanged. Delete the session to start over.".to_owned(),
            ),
            DocumentError::Stale { current_version } => ApiError::Conflict(format!(
                "The document changed since the version in base_version_id: the current version is {}. Reload it and apply your edit again.",
                current_version.as_deref().unwrap_or("none")
            )),
            DocumentError::KeptChanging => ApiError::Conflict(format!(
                "The document kept changing while the file was appended ({} tries); nothing was appended. Send it again.",
                redline_core::documents::APPEND_ATTEMPTS
            )),
            DocumentError::Store(e) => e.into(),
            DocumentError::Worker(cause) => ApiError::Internal(cause),
            DocumentError::ImageNotFound => ApiError::NotFound("Image not found".to_owned()),
            DocumentError::NotAPicture => ApiError::UnsupportedMediaType(
                "The file is not a picture browsers show: send a PNG, JPEG, GIF, BMP or WebP picture.".to_owned(),
            ),
            DocumentError::Blob(BlobError::NotFound) => ApiError::NotFound("File not found".to_owned()),
            DocumentError::Blob(e) => ApiError::Unavailable(e.to_string()),
        }
    }
}

/// The answer of a failed export. `contact_email` and `support_event_id` (the request id)
/// go into the 413 object.
pub fn export_error(e: ExportFailure, contact_email: &str, support_event_id: &str) -> ApiError {
    match e {
        ExportFailure::NotFound => ApiError::NotFound("Session not found".to_owned()),
        ExportFailure::TooLarge { format, size_bytes, max_bytes } => ApiError::ExportTooLarge {
            format: format.as_str(),
            document_bytes: size_bytes,
            max_bytes,
            contact_email: contact_email.to_owned(),
            support_event_id: support_event_id.to_owned(),
        },
        ExportFailure::NoRecipient => ApiError::Validation(vec![ValidationItem::new(
            "missing",
            vec![json!("body"), json!("email")],
            "Field required: this account has no e-mail address to send the export to, so pass `email`.",
            Value::Null,
        )]),
        ExportFailure::RecipientNotAllowed => ApiError::Forbidden(
            "Exports are mailed only to your account's own e-mail address, or, for an organization, to the address of one of its members. An account without an address (an agent's) cannot mail exports: download the file with POST /v1/documents/export instead.".to_owned(),
        ),
        ExportFailure::RecipientUnverified => ApiError::Forbidden(
            "Exports are mailed only to verified addresses, and this one is not verified yet: open the link Redline mailed to it when the account was made, or ask for a new one (\"Mail me a new link\" in the web app, or POST /v1/users/me/email-verification).".to_owned(),
        ),
        ExportFailure::MailThrottled { retry_after_secs } => ApiError::TooManyRequests {
            detail: format!("Too many e-mailed exports from this account. Retry after {retry_after_secs} seconds."),
            retry_after_secs,
        },
        ExportFailure::LinkNotFound => ApiError::NotFound("Download link not found or expired".to_owned()),
        ExportFailure::Render(e) => ApiError::Internal(e.to_string()),
        ExportFailure::Store(e) => e.into(),
        ExportFailure::Blob(BlobError::NotFound) => ApiError::NotFound("File not found".to_owned()),
        ExportFailure::Blob(e @ (BlobError::Unavailable(_) | BlobError::TooLarge { .. })) => {
            ApiError::Unavailable(e.to_string())
        }
        ExportFailure::Worker(cause) => ApiError::Internal(cause),
    }
}

impl From<TemplateError> for ApiError {
    fn from(e: TemplateError) -> Self {
        match e {
            TemplateError::NotFound => ApiError::NotFound("Template not found".to_owned()),
            TemplateError::Forbidden(why) => ApiError::Forbidden(why.to_owned()),
            TemplateError::Empty => ApiError::Validation(vec![ValidationItem::new(
                "value_error",
                vec![json!("body"), json!("html")],
                "The template has no content once sanitized.",
                Value::Null,
            )]),
            TemplateError::Document(e) => e.into(),
            TemplateError::Store(e) => e.into(),
        }
    }
}

fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

impl From<redline_core::chat::ChatError> for ApiError {
    fn from(e: redline_core::chat::ChatError) -> Self {
        use redline_core::chat::ChatError;
        match e {
            ChatError::EmptyMessage => ApiError::BadRequest("Message cannot be empty".to_owned()),
            ChatError::JobNotFound => ApiError::NotFound("Job not found".to_owned()),
            ChatError::SessionNotFound => ApiError::NotFound("Session not found".to_owned()),
            ChatError::Forbidden => ApiError::Forbidden("This job belongs to another account".to_owned()),
            ChatError::Conflict(d) => ApiError::Conflict(d),
            ChatError::StaleChanges { detail, .. } => ApiError::Conflict(detail),
            ChatError::UnknownChanges(msg) => ApiError::Validation(vec![ValidationItem::new(
                "value_error",
                vec![json!("body"), json!("approve")],
                msg,
                Value::Null,
            )]),
            ChatError::BadCorrection { change_id, detail } => ApiError::Validation(vec![ValidationItem::new(
                "value_error",
                vec![json!("body"), json!("edits"), json!(change_id)],
                detail,
                Value::Null,
            )]),
            ChatError::NoSnapshot(msg) => ApiError::Validation(vec![ValidationItem::new(
                "value_error",
                vec![json!("body"), json!("message_id")],
                msg,
                Value::Null,
            )]),
            ChatError::MessageNotFound => ApiError::NotFound("Message not found in the active history".to_owned()),
            ChatError::Timeout { job_id } => ApiError::GatewayTimeout(format!(
                "The chat did not finish in time. Use POST /v1/chat/async for long requests and poll GET /v1/jobs/{{job_id}}; this turn continues as job {job_id}."
            )),
            ChatError::Usage(e) => e.into(),
            ChatError::Document(e) => e.into(),
            ChatError::Store(e) => e.into(),
        }
    }
}

impl From<redline_core::attachments::AttachmentError> for ApiError {
    fn from(e: redline_core::attachments::AttachmentError) -> Self {
        use redline_core::attachments::AttachmentError;
        match e {
            AttachmentError::NotFound => ApiError::NotFound("Attachment not found".to_owned()),
            AttachmentError::JobNotFound => ApiError::NotFound("Attachment processing job not found".to_owned()),
            AttachmentError::SessionNotFound => ApiError::NotFound("Session not found".to_owned()),
            AttachmentError::Forbidden => ApiError::Forbidden("This attachment belongs to another account".to_owned()),
            AttachmentError::Unsupported(u) => ApiError::UnsupportedMediaType(u.to_string()),
            // Handlers answer this with the request's id and contact (routes::attachments);
            // this is the same 413 without them.
            AttachmentError::TooLarge { limit, size } => ApiError::PayloadTooLarge {
                request_bytes: size.unwrap_or(limit.saturating_add(1)),
                max_bytes: limit,
                contact_email: String::new(),
                support_event_id: String::new(),
            },
            AttachmentError::StorageFull { used, limit, adding } => ApiError::StorageFull { used, limit, adding },
            AttachmentError::Empty => ApiError::Validation(vec![ValidationItem::new(
                "file_invalid",
                vec![json!("body"), json!("file")],
                "The file is empty.",
                Value::Null,
            )]),
            AttachmentError::UploadNotFound => ApiError::NotFound(
                "Upload URL not found or expired. Ask for a new one: POST /v1/attachments/upload-url.".to_owned(),
            ),
            AttachmentError::AlreadyUploaded(id) => ApiError::Conflict(format!(
                "This upload URL was already used; its file is attachment {id} (GET /v1/attachments/{id})."
            )),
            AttachmentError::Store(e) => e.into(),
            AttachmentError::Blob(BlobError::NotFound) => ApiError::NotFound("File not found".to_owned()),
            AttachmentError::Blob(e @ (BlobError::Unavailable(_) | BlobError::TooLarge { .. })) => {
                ApiError::Unavailable(e.to_string())
            }
            AttachmentError::Worker(cause) => ApiError::Internal(cause),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_over_a_cap_show_larger_than_it() {
        // A whole number of MB (the defaults) is exact, so one byte over shows larger.
        for (observed, cap) in
            [(1_048_577, 1_048_576), (2_000, 1_000), (104_857_601, 104_857_600), (1_000_100, 1_000_000)]
        {
            assert!(observed_mb(observed) > cap_mb(cap), "{observed} over {cap}");
        }
        assert_eq!(cap_mb(104_857_600), 100.0);
        assert_eq!(cap_mb(2_048), 0.002);
        assert_eq!(observed_mb(1_024), 0.001);
        assert!(observed_mb(1) > 0.0);
    }
}

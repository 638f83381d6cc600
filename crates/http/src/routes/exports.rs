//! Export (the contract's POST /v1/documents/export, Errors 413 Details 8, Versioning 3;
//! docs/api.md, "Export"): the file at once, or by an e-mailed signed link.

use super::Routes;
use actix_web::http::header::{
    self, Charset, ContentDisposition, DispositionParam, DispositionType, ExtendedValue, HeaderValue,
};
use actix_web::{web, HttpMessage, HttpRequest, HttpResponse};
use redline_core::exports::ExportedFile;
use redline_domain::export::{ExportFormat, RequestedFormat};
use redline_domain::{Email, SessionId};
use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

use crate::auth::ApiPrincipal;
use crate::body::BodyOf;
use crate::error::{export_error, ApiError, ApiResult};
use crate::middleware::RequestId;
use crate::state::AppState;
use crate::validation::Fields;

pub fn configure(routes: &mut Routes<'_>) {
    routes
        .post("/v1/documents/export", export)
        .post("/v1/documents/export/email-request", email_request)
        .get("/v1/documents/export/download/{token}", download);
}

/// The `detail` of an export over its format's cap (the contract's Errors, Details 8).
#[derive(Serialize, ToSchema)]
pub struct ExportTooLargeDetail {
    /// `document_too_large`
    pub error_code: String,
    /// Text safe to show in a UI.
    pub message_user: String,
    /// `email_request`: POST /v1/documents/export/email-request has no cap.
    pub suggested_action: String,
    pub contact_email: String,
    /// The rendered file's size, MB (MiB).
    pub document_size_mb: f64,
    /// The format's cap, MB (MiB).
    pub max_size_mb: f64,
    /// The format that hit the cap (`docx` for the `doc` alias).
    pub format: String,
    /// The request id (`X-Request-Id`), for support.
    pub support_event_id: String,
}

/// The 413 body of an export: `detail` is an object.
#[derive(Serialize, ToSchema)]
pub struct ExportTooLargeBody {
    pub detail: ExportTooLargeDetail,
}

/// The 413 of an export: the document over its format's cap, or the request body over the
/// service's.
#[derive(ToSchema)]
#[serde(untagged)]
pub enum ExportTooLargeAnswer {
    Document(ExportTooLargeBody),
    Request(crate::openapi::RequestTooLargeBody),
}

/// A format of `POST /v1/documents/export` in the OpenAPI document: the strict enum
/// [`ExportFormat::API_NAMES`], the one list the check of `format` uses too.
pub struct FormatField;

impl utoipa::PartialSchema for FormatField {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .description(Some("A format of `POST /v1/documents/export`; `doc` is the deprecated alias of `docx`."))
            .enum_values(Some(ExportFormat::API_NAMES))
            .into()
    }
}

impl ToSchema for FormatField {}

/// The body of `POST /v1/documents/export`.
#[derive(ToSchema)]
#[expect(dead_code, reason = "describes the request body in the OpenAPI document only")]
pub struct ExportRequest {
    #[schema(schema_with = crate::openapi::session_id_schema)]
    session_id: String,
    format: FormatField,
    /// DOCX only: the changes of the session's turn awaiting approval as Word revisions
    /// (tracked changes, with each change's explanation as a comment). Without such a turn
    /// the file is the plain DOCX. Default false.
    track_changes: Option<bool>,
}

/// The body of `POST /v1/documents/export/email-request`.
#[derive(ToSchema)]
#[expect(dead_code, reason = "describes the request body in the OpenAPI document only")]
pub struct EmailExportRequest {
    #[schema(schema_with = crate::openapi::session_id_schema)]
    session_id: String,
    format: FormatField,
    /// Where to send the link; the account's own address when absent (required for an
    /// account without one: 422).
    #[schema(format = Email)]
    email: Option<String>,
    /// DOCX only: the file mailed is the tracked export (`track_changes` of
    /// `POST /v1/documents/export`), rendered when asked for. Default false.
    track_changes: Option<bool>,
}

#[derive(Serialize, ToSchema)]
pub struct EmailRequestAccepted {
    /// The id of the export; the e-mail follows when the file is ready.
    pub request_id: String,
}

/// `session_id` and `format` of an export body, every problem at once.
fn session_and_format(f: &mut Fields<'_>) -> (Option<SessionId>, Option<RequestedFormat>) {
    let session = f.session_id("session_id");
    let format = f.required_literal("format", &ExportFormat::API_NAMES).and_then(ExportFormat::parse);
    (session, format)
}

fn request_id(req: &HttpRequest) -> String {
    req.extensions().get::<RequestId>().map(|r| r.0.clone()).unwrap_or_default()
}

/// The file as an attachment download.
fn file_response(file: ExportedFile, deprecated_alias: bool) -> HttpResponse {
    let mut response = HttpResponse::Ok();
    response
        .content_type(file.content_type.as_str())
        .insert_header(ContentDisposition {
            disposition: DispositionType::Attachment,
            // The name as ASCII for old clients, and in full (RFC 6266's `filename*`).
            parameters: vec![
                DispositionParam::Filename(redline_domain::title::ascii_file_name(&file.filename)),
                DispositionParam::FilenameExt(ExtendedValue {
                    charset: Charset::Ext("UTF-8".to_owned()),
                    language_tag: None,
                    value: file.filename.into_bytes(),
                }),
            ],
        })
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")));
    if deprecated_alias {
        response.insert_header(("Deprecation", "true"));
    }
    response.body(file.bytes)
}

/// Renders the session's document as a file (`{session_id, format, track_changes?}`;
/// `format` is one of `docx`, `pdf`, `html`, `markdown`, `txt`, or the deprecated `doc`,
/// served as DOCX with `Deprecation: true`). Over the format's cap → 413 whose `detail` is
/// an object. With `track_changes`, the pending changes are Word revisions and the answer
/// says how many (`Redline-Tracked-Changes`) and whose they are (`Redline-Job-Id`).
#[utoipa::path(post, path = "/v1/documents/export", tag = "export", security(("bearer" = ["read"])),
    request_body(content = ExportRequest),
    responses(
        (status = 200, description = "The file (DOCX, PDF, HTML, Markdown or text, with its content type), with `Content-Disposition: attachment; filename=<title>.<ext>; filename*=UTF-8''<title>.<ext>` (the session id when the document has no title) (and `Deprecation: true` for `doc`); with `track_changes`, `Redline-Tracked-Changes: <n>` and, when a turn awaits approval, `Redline-Job-Id: <job_id>`"),
        (status = 401, body = crate::openapi::ErrorBody),
        (status = 404, description = "Session not found", body = crate::openapi::ErrorBody),
        (status = 413, description = "Over the format's cap: `detail` is {error_code: document_too_large, message_user, suggested_action: email_request, contact_email, document_size_mb, max_size_mb, format, support_event_id}; or the request body over the service's cap", body = ExportTooLargeAnswer),
        (status = 422, description = "`format` outside the enum (literal_error), a bad session_id, or `track_changes` with a format other than DOCX", body = crate::openapi::ValidationErrorBody),
    ))]
pub async fn export(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    req: HttpRequest,
    body: BodyOf,
) -> ApiResult<HttpResponse> {
    let body = body.checked()?;
    let mut f = Fields::body(&body.0)?;
    let (session, format) = session_and_format(&mut f);
    let tracked = f.optional_bool("track_changes").unwrap_or(false);
    if tracked && format.is_some_and(|r| r.format != ExportFormat::Docx) {
        f.problem("track_changes", "value_error", "Value error, track_changes needs format docx", json!(true));
    }
    f.finish()?;
    let (Some(session), Some(requested)) = (session, format) else {
        return Err(ApiError::Internal("validation passed without values".to_owned()));
    };
    let owner = principal.0.owner;
    let failed = |e| export_error(e, &state.config.contact_email, &request_id(&req));
    if !tracked {
        let file = state.exports.export(owner, &session, requested.format).await.map_err(failed)?;
        return Ok(file_response(file, requested.deprecated_alias));
    }
    let pending = state.chat.pending_document(owner, &session).await?;
    let file = state.exports.export_tracked(owner, &session, pending.document).await.map_err(failed)?;
    let mut response = file_response(file, requested.deprecated_alias);
    let headers = response.headers_mut();
    headers.insert(header::HeaderName::from_static("redline-tracked-changes"), HeaderValue::from(pending.changes));
    if let Some(job) = pending.job_id.and_then(|id| HeaderValue::from_str(&id).ok()) {
        headers.insert(header::HeaderName::from_static("redline-job-id"), job);
    }
    Ok(response)
}

/// Renders the export in the background and e-mails a signed download link
/// (`{session_id, format, email?, track_changes?}`; without `email`, the account's own
/// address; with `track_changes`, the tracked DOCX, rendered before the answer). → 202.
#[utoipa::path(post, path = "/v1/documents/export/email-request", tag = "export", security(("bearer" = ["read"])),
    request_body(content = EmailExportRequest),
    responses(
        (status = 202, body = EmailRequestAccepted),
        (status = 401, body = crate::openapi::ErrorBody),
        (status = 403, description = "The address is not the account's own nor an organization member's (`REDLINE_EXPORT_MAIL_TO=account`)", body = crate::openapi::ErrorBody),
        (status = 404, description = "Session not found", body = crate::openapi::ErrorBody),
        (status = 422, description = "A bad field, no `email` for an organization, or `track_changes` with a format other than DOCX", body = crate::openapi::ValidationErrorBody),
        (status = 429, description = "Too many e-mailed exports from this account lately", body = crate::openapi::ErrorBody),
    ))]
pub async fn email_request(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    req: HttpRequest,
    body: BodyOf,
) -> ApiResult<HttpResponse> {
    let body = body.checked()?;
    let mut f = Fields::body(&body.0)?;
    let (session, format) = session_and_format(&mut f);
    let email = match f.optional_str("email") {
        None => None,
        Some(raw) => match Email::parse(raw) {
            Ok(email) => Some(email),
            Err(e) => {
                f.problem("email", "value_error", format!("value is not a valid email address: {e}"), json!(raw));
                None
            }
        },
    };
    let tracked = f.optional_bool("track_changes").unwrap_or(false);
    if tracked && format.is_some_and(|r| r.format != ExportFormat::Docx) {
        f.problem("track_changes", "value_error", "Value error, track_changes needs format docx", json!(true));
    }
    f.finish()?;
    let (Some(session), Some(requested)) = (session, format) else {
        return Err(ApiError::Internal("validation passed without values".to_owned()));
    };
    let owner = principal.0.owner;
    let failed = |e| export_error(e, &state.config.contact_email, &request_id(&req));
    let request_id = if tracked {
        let pending = state.chat.pending_document(owner, &session).await?;
        state.exports.request_email_tracked(owner, &session, email, pending.document).await.map_err(failed)?
    } else {
        state.exports.request_email(owner, &session, requested.format, email).await.map_err(failed)?
    };
    let mut response = HttpResponse::Accepted();
    if requested.deprecated_alias {
        response.insert_header(("Deprecation", "true"));
    }
    Ok(response.json(EmailRequestAccepted { request_id }))
}

/// Downloads an e-mailed export. No authorization: the signed link is the capability.
/// Tampered, unknown or expired → 404.
#[utoipa::path(get, path = "/v1/documents/export/download/{token}", tag = "export",
    params(("token" = String, Path, description = "The signed token of the e-mailed link")),
    responses(
        (status = 200, description = "The file, with `Content-Disposition: attachment`"),
        (status = 404, description = "Unknown, tampered with or expired link", body = crate::openapi::ErrorBody),
    ))]
pub async fn download(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let file = state
        .exports
        .download(&path)
        .await
        .map_err(|e| export_error(e, &state.config.contact_email, &request_id(&req)))?;
    Ok(file_response(file, false))
}

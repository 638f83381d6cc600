//! Documents (docs/api.md, "Documents"): upload, read, save, versions; and deleting a session.

use super::Routes;
use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use redline_core::documents::{DocumentError, OpenMode, TrackedChoice, UploadOptions};
use redline_domain::time_util::iso8601;
use redline_domain::title::{self, TITLE_MAX_CHARS};
use redline_domain::SessionId;
use redline_ports::documents::DocumentRecord;
use serde::Serialize;
use serde_json::{json, Value};
use utoipa::ToSchema;

use crate::auth::ApiPrincipal;
use crate::body::BodyOf;
use crate::error::{ApiError, ApiResult};
use crate::multipart::read_form;
use crate::paging::{page_of, paged_json};
use crate::public_html;
use crate::state::AppState;
use crate::validation::{session_id_at, Fields, ValidationItem};

pub fn configure(routes: &mut Routes<'_>) {
    routes
        .post("/v1/documents/upload", upload)
        .get("/v1/documents/images/{image_id}", get_image)
        .get("/v1/documents/{session_id}", get_document)
        .put("/v1/documents/{session_id}", save_document)
        .get("/v1/documents/{session_id}/versions", list_versions)
        .get("/v1/documents/{session_id}/versions/{version_id}", get_version)
        .post("/v1/documents/{session_id}/versions/{version_id}/restore", restore_version)
        .post("/v1/documents/{session_id}/images", add_image)
        .delete("/v1/sessions/{session_id}", delete_session);
}

#[derive(Serialize, ToSchema)]
pub struct DocumentBody {
    pub session_id: String,
    /// The document's title (see `PATCH /v1/sessions/{session_id}`); null when it has none.
    pub title: Option<String>,
    /// Sanitized HTML; every top-level block carries a unique `data-chunk-id`.
    pub html: String,
    pub version_id: Option<String>,
    pub section_count: i64,
    pub updated_at: String,
}

#[derive(Serialize, ToSchema)]
pub struct UploadBody {
    pub session_id: String,
    pub html: String,
    pub version_id: Option<String>,
    pub filename: String,
    /// The document's title: the one it had, else the file's own (DOCX properties, Markdown
    /// front matter, HTML `<title>`), else the file name without its extension.
    pub title: Option<String>,
    pub section_count: i64,
    /// Images extracted from the file, in document order.
    pub images: Vec<ImageBody>,
    /// What the conversion could not keep.
    pub warnings: Vec<String>,
    /// Whether the document was indexed for search now (`?index=true`): its text is then
    /// searchable like an attachment's (`GET /v1/attachments/search`, the AI's
    /// `search_attachments`).
    pub indexed: bool,
    /// The attachment that holds the indexed text (`?index=true`), else null.
    pub attachment_id: Option<String>,
    /// With `track_changes=review`: the chat job whose pending changes are the file's
    /// tracked changes, awaiting approval (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review_job_id: Option<String>,
    /// The turn awaiting approval that this file — its tracked export, reviewed in Word and
    /// uploaded back — settled (docs/api.md, "The Word round trip"); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settled_job_id: Option<String>,
}

/// An image extracted from an uploaded file. The HTML shows it from
/// `{public base URL}/v1/documents/images/{image_id}`, served without authorization.
#[derive(Serialize, ToSchema)]
pub struct ImageBody {
    pub content_type: String,
    pub size_bytes: usize,
}

#[derive(Serialize, ToSchema)]
pub struct VersionInfo {
    pub version_id: String,
    pub created_at: String,
    pub section_count: i64,
    /// What made it: upload, save, chat, revert.
    pub source: String,
}

/// `GET /v1/documents/{session_id}/versions`.
#[derive(Serialize, ToSchema)]
pub struct VersionList {
    pub session_id: String,
    /// One page of the versions, newest first.
    pub versions: Vec<VersionInfo>,
    /// How many versions this page holds.
    pub total: usize,
    /// Where the next page starts (pass it as `cursor`; the `Link` header carries the whole
    /// address); null on the last page.
    pub next_cursor: Option<String>,
}

/// One version with its HTML.
#[derive(Serialize, ToSchema)]
pub struct VersionBody {
    pub session_id: String,
    pub version_id: String,
    pub html: String,
    pub created_at: String,
    pub section_count: i64,
    /// What made it: upload, save, chat, revert.
    pub source: String,
}

/// The multipart form of `POST /v1/documents/upload`.
#[derive(ToSchema)]
#[expect(dead_code, reason = "describes the multipart form in the OpenAPI document only")]
pub struct DocumentUploadForm {
    /// The file: `.pdf`, `.docx`, `.txt`, `.rtf`, `.md`, `.html` or `.htm`; its name's
    /// extension says which.
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
    /// The session to load the document into (created when new).
    #[schema(schema_with = crate::openapi::session_id_schema)]
    session_id: String,
    /// `replace` (the default) the document, or `append` the file to it.
    open_mode: Option<OpenModeField>,
    /// What to do with a DOCX's tracked changes: `accept` them (the default), `reject`
    /// them (the document as it was before them), or `review` them (the document as it was
    /// before them, and the changes a chat job awaiting approval: `review_job_id`; with
    /// `open_mode=replace` only). Either way a warning names them.
    track_changes: Option<TrackChangesField>,
    /// The chat turn awaiting approval that this reviewed DOCX settles (`open_mode=replace`
    /// only). By default the turn the file names itself: a DOCX exported with
    /// `track_changes` does (docs/api.md, "The Word round trip").
    job_id: Option<String>,
}

/// What an upload does with the file's tracked changes.
#[derive(ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum TrackChangesField {
    Accept,
    Reject,
    Review,
}

/// What an upload does to the session's document.
#[derive(ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum OpenModeField {
    Replace,
    Append,
}

/// The body of `PUT /v1/documents/{session_id}`.
#[derive(ToSchema)]
#[expect(dead_code, reason = "describes the request body in the OpenAPI document only")]
pub struct SaveRequest {
    /// The document's HTML; sanitized and sectioned as it is saved.
    html: String,
    /// The version the edit was made on: a save over a newer one is refused (409).
    base_version_id: Option<String>,
    /// The session's title, when it has none yet (an upload's file name or a template's name
    /// gives it otherwise); ignored once set. Control and invisible characters are dropped.
    #[schema(max_length = 200)]
    title: Option<String>,
}

/// A document's body, its pictures under the public base URL.
pub fn document_body(d: DocumentRecord, state: &AppState) -> DocumentBody {
    DocumentBody {
        session_id: d.session_id.to_string(),
        title: d.title,
        html: public_html::html(d.html, &state.config.public_base_url),
        version_id: d.version_id,
        section_count: d.section_count,
        updated_at: iso8601(d.updated_at),
    }
}

/// A session id from the path (422 at `["path", "session_id"]`).
pub fn path_session(raw: &str) -> ApiResult<SessionId> {
    session_id_at(raw, vec![json!("path"), json!("session_id")]).map_err(|item| ApiError::Validation(vec![*item]))
}

/// A form field of a few values, the first the default (also when absent or blank); another
/// value is a `literal_error` at `["body", field]` and answers the default.
fn form_choice<T: Copy>(raw: Option<&str>, field: &str, values: &[(&str, T)], errors: &mut Vec<ValidationItem>) -> T {
    let default = values[0].1;
    match raw.map(str::trim) {
        None | Some("") => default,
        Some(v) if values.iter().any(|(name, _)| *name == v) => {
            values.iter().find(|(name, _)| *name == v).map_or(default, |(_, value)| *value)
        }
        Some(other) => {
            let names: Vec<String> = values.iter().map(|(name, _)| format!("'{name}'")).collect();
            let expected = match names.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
                _ => names.join(""),
            };
            errors.push(
                ValidationItem::new(
                    "literal_error",
                    vec![json!("body"), json!(field)],
                    format!("Input should be {expected}"),
                    json!(other),
                )
                .with_ctx(json!({ "expected": expected })),
            );
            default
        }
    }
}

/// Uploads a file and loads it into the session's document (multipart: `file`,
/// `session_id`, `open_mode` = `replace` | `append`). Costs 0 operations (not billable).
#[utoipa::path(post, path = "/v1/documents/upload", tag = "documents", security(("bearer" = ["edit"])),
    operation_id = "upload_document",
    params(("index" = Option<bool>, Query, description = "`true` to index the document for search now")),
    request_body(content_type = "multipart/form-data", content = DocumentUploadForm),
    responses(
        (status = 200, body = UploadBody),
        (status = 401, body = crate::openapi::ErrorBody),
        (status = 413, description = "File above the upload limit", body = crate::openapi::RequestTooLargeBody),
        (status = 409, description = "A review while a turn of the session runs or awaits review, `job_id` naming no turn of the session awaiting approval, or a settled change whose section changed since", body = crate::openapi::ErrorBody),
        (status = 415, description = "Unsupported extension", body = crate::openapi::ErrorBody),
        (status = 422, description = "Missing fields, or a corrupt, encrypted or empty file", body = crate::openapi::ValidationErrorBody),
    ))]
pub async fn upload(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    req: HttpRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let form = read_form(&req, payload.into_inner(), &state, "file", state.config.max_upload_bytes).await?;
    let mut query = crate::query::Query::parse(&req);
    let index = query.boolean("index");
    let mut errors = query.into_errors();
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
    let mode = form_choice(
        form.text("open_mode"),
        "open_mode",
        &[("replace", OpenMode::Replace), ("append", OpenMode::Append)],
        &mut errors,
    );
    // A reviewed file comes back to have its remaining tracked changes reviewed unless the
    // caller says otherwise: undecided proposals are never approved by default.
    let tracked_given = form.text("track_changes").is_some_and(|t| !t.trim().is_empty());
    let tracked = form_choice(
        form.text("track_changes"),
        "track_changes",
        &[("accept", TrackedChoice::Accept), ("reject", TrackedChoice::Reject), ("review", TrackedChoice::Review)],
        &mut errors,
    );
    if tracked == TrackedChoice::Review && mode == OpenMode::Append {
        errors.push(ValidationItem::new(
            "value_error",
            vec![json!("body"), json!("track_changes")],
            "Value error, track_changes=review needs open_mode=replace: the changes are proposed against the whole document",
            json!("review"),
        ));
    }
    if form.file.is_none() {
        errors.push(ValidationItem::new("missing", vec![json!("body"), json!("file")], "Field required", Value::Null));
    }
    // The turn the file settles, named by the caller (else by the file itself).
    let named_job = form.text("job_id").map(str::trim).filter(|j| !j.is_empty()).map(str::to_owned);
    if named_job.is_some() && mode == OpenMode::Append {
        errors.push(ValidationItem::new(
            "value_error",
            vec![json!("body"), json!("job_id")],
            "Value error, job_id needs open_mode=replace: the reviewed file settles the turn with the whole document",
            json!(named_job),
        ));
    }
    let (Some(session), Some(file), true) = (session, form.file, errors.is_empty()) else {
        return Err(ApiError::Validation(errors));
    };
    if let Some(job) = &named_job {
        if !state.chat.awaits_review(principal.0.owner, &session, job).await? {
            return Err(ApiError::from(redline_core::chat::ChatError::Conflict(format!(
                "No job awaiting approval in session {}: job {job} is not one of its turns awaiting approval.",
                session.as_str()
            ))));
        }
    }
    // The name as given is data: shown, echoed and used for the title only once neutralised
    // (no folders, control or invisible characters, at most 255 characters), as an
    // attachment's is.
    let filename = redline_domain::attachment::neutralise_filename(&file.filename);
    let size = file.bytes.len() as u64;
    let owner = principal.0.owner;
    let converted = state.documents.convert(&filename, file.bytes).await.map_err(upload_error)?;
    // The tracked export of a turn awaiting approval, come back from review, settles it
    // (docs/api.md, "The Word round trip").
    let settles = match (mode, named_job.clone().or_else(|| converted.origin_job.clone())) {
        (OpenMode::Replace, Some(job)) if state.chat.awaits_review(owner, &session, &job).await? => Some(job),
        _ => None,
    };
    if let Some(job_id) = settles {
        let tracked = if tracked_given { tracked } else { TrackedChoice::Review };
        return settle(&state, owner, &session, &job_id, converted, tracked, filename, index).await;
    }
    if let Some(job) = named_job {
        // Settled or cancelled while the file was read: nothing is loaded.
        return Err(ApiError::from(redline_core::chat::ChatError::Conflict(format!(
            "No job awaiting approval: job {job} no longer awaits approval."
        ))));
    }
    // Only a DOCX has tracked changes: another file loads whatever turn runs.
    if tracked == TrackedChoice::Review && filename.to_ascii_lowercase().ends_with(".docx") {
        state.chat.ensure_no_turn(owner, &session).await?;
    }
    let out = state
        .documents
        .load(owner, &session, &filename, converted, UploadOptions { mode, index, tracked })
        .await
        .map_err(upload_error)?;
    let mut warnings = out.warnings;
    let mut review_job_id = None;
    if let Some(revised) = out.revised {
        let summary = revised.summary.clone();
        let said = match state.chat.propose_revisions(owner, &session, revised, &filename).await {
            // The document is loaded: a review that could not be made is said, not a failure.
            Err(e) => {
                tracing::warn!(error = %e, "an upload's tracked changes could not be proposed for review");
                format!(
                    "The file has tracked changes ({summary}): the document is as it was before them, but they could not be proposed for review. Upload it again with track_changes=review, or with track_changes=accept to take them."
                )
            }
            Ok(Some(job)) => {
                let n = redline_core::chat::record::TurnState::read(&job.state)
                    .ok()
                    .and_then(|s| s.pending)
                    .map_or(0, |p| p.len());
                let said = format!(
                    "The file has tracked changes ({summary}): the document is as it was before them, and they are {n} proposed change{} awaiting your review in job {}.",
                    if n == 1 { "" } else { "s" },
                    job.job_id
                );
                review_job_id = Some(job.job_id);
                said
            }
            Ok(None) => format!("The file has tracked changes ({summary}), but accepting them changes no section: there is nothing to review."),
        };
        warnings.push(said);
    }
    let attachment_id = if index {
        index_upload(&state, principal.0.owner, &session, &filename, size, out.blocks, &mut warnings).await
    } else {
        None
    };
    let d = out.document;
    Ok(json_streaming_html(UploadBody {
        session_id: d.session_id.to_string(),
        html: public_html::html(d.html, &state.config.public_base_url),
        version_id: d.version_id,
        filename,
        title: d.title,
        section_count: d.section_count,
        images: out
            .images
            .into_iter()
            .map(|i| ImageBody { content_type: i.content_type, size_bytes: i.size_bytes })
            .collect(),
        warnings,
        indexed: attachment_id.is_some(),
        attachment_id,
        review_job_id,
        settled_job_id: None,
    }))
}

/// An upload's conversion or loading failure as the API answers it.
fn upload_error(e: DocumentError) -> ApiError {
    match e {
        // What is nested too deeply is the file's content, not an `html` field.
        DocumentError::TooDeep => ApiError::Validation(vec![ValidationItem::new(
            "file_invalid",
            vec![json!("body"), json!("file")],
            "The file could not be converted: its content is nested too deeply to process.",
            Value::Null,
        )]),
        e => ApiError::from(e),
    }
}

/// Indexes an uploaded document for search (`?index=true`): its attachment, or none with a
/// warning. The document is loaded whatever happens here: a failure to index is reported,
/// not fatal.
async fn index_upload(
    state: &AppState,
    owner: redline_domain::Owner,
    session: &redline_domain::SessionId,
    filename: &str,
    size: u64,
    blocks: Vec<redline_domain::attachment::TextBlock>,
    warnings: &mut Vec<String>,
) -> Option<String> {
    match state.attachments.index_document(owner, session, filename, size, blocks).await {
        Ok(a) => Some(a.attachment_id),
        Err(e) => {
            tracing::warn!(error = %e, "an uploaded document could not be indexed");
            warnings.push(format!("The document was loaded but could not be indexed for search: {e}."));
            None
        }
    }
}

/// The upload of a reviewed tracked export: settles the turn `job_id` from it.
#[allow(clippy::too_many_arguments)]
async fn settle(
    state: &AppState,
    owner: redline_domain::Owner,
    session: &redline_domain::SessionId,
    job_id: &str,
    converted: redline_ports::documents::Converted,
    tracked: TrackedChoice,
    filename: String,
    index: bool,
) -> ApiResult<HttpResponse> {
    let (_, doc) = state.documents.current(owner, session).await?;
    let readings = state.documents.readings(owner, session, &doc, converted).await.map_err(upload_error)?;
    let settled = state.chat.settle_from_file(owner, session, job_id, &readings, tracked, &filename).await?;
    let mut warnings = readings.warnings.clone();
    warnings.push(settled.said);
    let (record, doc) = state.documents.current(owner, session).await?;
    let Some(d) = record else { return Err(ApiError::from(DocumentError::NotFound)) };
    let attachment_id = if index {
        let blocks = redline_domain::attachment::TextBlock::of_sections(doc.sections());
        index_upload(state, owner, session, &filename, d.html.len() as u64, blocks, &mut warnings).await
    } else {
        None
    };
    Ok(json_streaming_html(UploadBody {
        session_id: d.session_id.to_string(),
        html: public_html::html(d.html, &state.config.public_base_url),
        version_id: d.version_id,
        filename,
        title: d.title,
        section_count: d.section_count,
        images: readings
            .images
            .into_iter()
            .map(|i| ImageBody { content_type: i.content_type, size_bytes: i.size_bytes })
            .collect(),
        warnings,
        indexed: attachment_id.is_some(),
        attachment_id,
        review_job_id: settled.review.map(|j| j.job_id),
        settled_job_id: Some(settled.job.job_id),
    }))
}

/// Bytes of the document's HTML escaped into the body at a time.
const HTML_CHUNK: usize = 64 * 1024;

/// 200 with `body` as JSON: the bytes of `HttpResponse::json`, with a `Content-Length`, but
/// the HTML is escaped into the body as it is sent rather than into a second copy of the
/// document (for a 50 MB upload, that copy and actix's copy of it into its write buffer made
/// the peak memory of the request).
fn json_streaming_html(mut body: UploadBody) -> HttpResponse {
    let html = std::mem::take(&mut body.html);
    // `session_id` comes first and a JSON string holds no bare `"`: the first match is the field.
    const EMPTY_HTML: &[u8] = br#","html":"""#;
    let rest = serde_json::to_vec(&body).unwrap_or_default();
    let Some(at) = rest.windows(EMPTY_HTML.len()).position(|w| w == EMPTY_HTML) else {
        body.html = html;
        return HttpResponse::Ok().json(body);
    };
    // Just before the closing quote of the empty string.
    let split = at + EMPTY_HTML.len() - 1;
    let prefix = web::Bytes::copy_from_slice(&rest[..split]);
    let suffix = web::Bytes::copy_from_slice(&rest[split..]);
    let len = prefix.len() + escaped_len(&html) + suffix.len();
    let parts = std::iter::once(prefix).chain(HtmlChunks { html, at: 0 }).chain(std::iter::once(suffix));
    let stream = futures_util::stream::iter(parts.map(Ok::<_, std::convert::Infallible>));
    HttpResponse::Ok()
        .insert_header(header::ContentType::json())
        .body(actix_web::body::SizedStream::new(len as u64, stream))
}

/// The HTML escaped as the contents of a JSON string, a chunk at a time.
struct HtmlChunks {
    html: String,
    at: usize,
}

impl Iterator for HtmlChunks {
    type Item = web::Bytes;

    fn next(&mut self) -> Option<web::Bytes> {
        if self.at >= self.html.len() {
            return None;
        }
        let mut end = (self.at + HTML_CHUNK).min(self.html.len());
        while !self.html.is_char_boundary(end) {
            end += 1;
        }
        let chunk = &self.html[self.at..end];
        self.at = end;
        // A `&str` always serializes; the quotes are left out.
        let quoted = serde_json::to_vec(chunk).unwrap_or_default();
        Some(web::Bytes::copy_from_slice(quoted.get(1..quoted.len().saturating_sub(1)).unwrap_or_default()))
    }
}

/// The length of `s` escaped as serde_json escapes the contents of a string: `"` and `\`,
/// and the control characters (`\b \t \n \f \r` in two bytes, the others as `\u00XX`).
fn escaped_len(s: &str) -> usize {
    s.bytes()
        .map(|b| match b {
            b'"' | b'\\' | 0x08 | 0x09 | 0x0a | 0x0c | 0x0d => 2,
            0x00..=0x1f => 6,
            _ => 1,
        })
        .sum()
}

#[cfg(test)]
mod streamed_json_tests {
    use super::*;

    fn upload_body(html: &str) -> UploadBody {
        UploadBody {
            session_id: "s-1".into(),
            html: html.into(),
            version_id: Some("v_1".into()),
            filename: "a \"b\".txt".into(),
            title: Some("a \"b\" \u{2028}".into()),
            section_count: 2,
            images: vec![ImageBody { content_type: "image/png".into(), size_bytes: 3 }],
            warnings: vec!["w \u{1}".into()],
            indexed: false,
            attachment_id: None,
            review_job_id: None,
            settled_job_id: None,
        }
    }

    async fn streamed(html: &str) -> Vec<u8> {
        let response = json_streaming_html(upload_body(html));
        let body = actix_web::body::to_bytes(response.into_body()).await;
        body.map(|b| b.to_vec()).unwrap_or_default()
    }

    #[actix_web::test]
    async fn the_streamed_body_is_the_json_of_the_body() {
        let long: String = "<p>a \"q\" \\ \u{0}\u{1f}\t\n\r\u{8}\u{c} é 😀 \u{7f}</p>\n".repeat(5000);
        for html in ["", "<p>x</p>\n", long.as_str()] {
            let body = streamed(html).await;
            assert_eq!(body, serde_json::to_vec(&upload_body(html)).unwrap());
            let response = json_streaming_html(upload_body(html));
            assert_eq!(
                actix_web::body::MessageBody::size(response.body()),
                actix_web::body::BodySize::Sized(body.len() as u64)
            );
            assert_eq!(response.headers().get(header::CONTENT_TYPE).unwrap(), "application/json");
        }
    }

    #[test]
    fn escaped_lengths_are_serde_jsons() {
        let all: String = (0u32..0x250).filter_map(char::from_u32).collect();
        for s in ["", "plain", "\"\\/", all.as_str(), "😀\u{2028}"] {
            assert_eq!(escaped_len(s), serde_json::to_string(s).unwrap().len() - 2, "{s:?}");
        }
    }
}
/// An image extracted from an upload. No authorization: the id (128 random bits) is the
/// capability, so the HTML displays in any editor. Cached for a year (an id never changes),
/// by the browser only: a shared cache must not keep an account's pictures.
#[utoipa::path(get, path = "/v1/documents/images/{image_id}", tag = "documents",
    params(("image_id" = String, Path, description = "`img_` + 32 hex characters, from the document's HTML")),
    responses((status = 200, description = "The image bytes with their content type", content_type = "image/*"),
        (status = 404, body = crate::openapi::ErrorBody)))]
pub async fn get_image(state: web::Data<AppState>, path: web::Path<String>) -> ApiResult<HttpResponse> {
    let image = state.documents.image(&path).await?;
    Ok(HttpResponse::Ok()
        .content_type(image.content_type.as_str())
        .insert_header((header::CACHE_CONTROL, "private, max-age=31536000, immutable"))
        // An SVG opened on its own must not run anything.
        .insert_header((header::CONTENT_SECURITY_POLICY, "default-src 'none'; style-src 'unsafe-inline'; sandbox"))
        .body(image.bytes))
}

/// The session's document.
#[utoipa::path(get, path = "/v1/documents/{session_id}", tag = "documents", security(("bearer" = ["read"])),
    params(("session_id" = String, Path)),
    responses((status = 200, body = DocumentBody), (status = 401, body = crate::openapi::ErrorBody),
        (status = 404, body = crate::openapi::ErrorBody), (status = 422, body = crate::openapi::ValidationErrorBody)))]
pub async fn get_document(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let session = path_session(&path)?;
    let d = state.documents.get(principal.0.owner, &session).await?;
    Ok(HttpResponse::Ok().json(document_body(d, &state)))
}

/// Saves the document from the editor (`{html, base_version_id?}`). Saving no content over a
/// document with content → 400; a stale `base_version_id` → 409.
#[utoipa::path(put, path = "/v1/documents/{session_id}", tag = "documents", security(("bearer" = ["edit"])),
    params(("session_id" = String, Path)),
    request_body(content = SaveRequest),
    responses((status = 200, body = DocumentBody),
        (status = 400, description = "No content over a document that has content", body = crate::openapi::ErrorBody),
        (status = 401, body = crate::openapi::ErrorBody), (status = 404, body = crate::openapi::ErrorBody),
        (status = 409, description = "`base_version_id` is not the current version", body = crate::openapi::ErrorBody),
        (status = 422, description = "Too deeply nested HTML, too many sections, or a bad field", body = crate::openapi::ValidationErrorBody)))]
pub async fn save_document(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    path: web::Path<String>,
    body: BodyOf,
) -> ApiResult<HttpResponse> {
    let body = body.checked()?;
    let session = path_session(&path);
    let mut f = Fields::body(&body.0)?;
    let html = f.required_str("html");
    let base = f.optional_str("base_version_id");
    let title = f.optional_bounded_str("title", TITLE_MAX_CHARS).and_then(title::clean);
    f.finish()?;
    let session = session?;
    let d = state
        .documents
        .save(principal.0.owner, &session, html.unwrap_or_default().to_owned(), base.map(str::to_owned), title)
        .await?;
    Ok(HttpResponse::Ok().json(document_body(d, &state)))
}

/// Versions of the document, newest first, a page at a time.
#[utoipa::path(get, path = "/v1/documents/{session_id}/versions", tag = "documents", security(("bearer" = ["read"])),
    params(("session_id" = String, Path),
        crate::paging::PageParams),
    responses((status = 200, description = "The versions, newest first", body = VersionList,
            headers(("Link" = String, description = "`<url>; rel=\"next\"` when another page follows"))),
        (status = 401, body = crate::openapi::ErrorBody),
        (status = 404, body = crate::openapi::ErrorBody), (status = 422, body = crate::openapi::ValidationErrorBody)))]
pub async fn list_versions(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    path: web::Path<String>,
    req: HttpRequest,
) -> ApiResult<HttpResponse> {
    let session = path_session(&path)?;
    let page = state.documents.versions(principal.0.owner, &session, &page_of(&req)?).await?.map(|v| VersionInfo {
        version_id: v.version_id,
        created_at: iso8601(v.created_at),
        section_count: v.section_count,
        source: v.source,
    });
    Ok(paged_json(&req, &state.config.public_base_url, page, |versions, next_cursor| VersionList {
        session_id: session.to_string(),
        total: versions.len(),
        versions,
        next_cursor,
    }))
}

/// One version with its HTML.
#[utoipa::path(get, path = "/v1/documents/{session_id}/versions/{version_id}", tag = "documents", security(("bearer" = ["read"])),
    params(("session_id" = String, Path), ("version_id" = String, Path)),
    responses((status = 200, body = VersionBody), (status = 401, body = crate::openapi::ErrorBody),
        (status = 404, body = crate::openapi::ErrorBody), (status = 422, body = crate::openapi::ValidationErrorBody)))]
pub async fn get_version(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    path: web::Path<(String, String)>,
) -> ApiResult<HttpResponse> {
    let (session, version) = path.into_inner();
    let session = path_session(&session)?;
    let v = state.documents.version(principal.0.owner, &session, &version).await?;
    Ok(HttpResponse::Ok().json(VersionBody {
        session_id: session.to_string(),
        version_id: v.version_id,
        html: public_html::html(v.html, &state.config.public_base_url),
        created_at: iso8601(v.created_at),
        section_count: v.section_count,
        source: v.source,
    }))
}

/// `{base_version_id?}`.
#[derive(ToSchema)]
#[expect(dead_code, reason = "describes the request body in the OpenAPI document only")]
pub struct RestoreRequest {
    /// Restore only over this version (409 when the document has moved on).
    base_version_id: Option<String>,
}

/// Makes an earlier version the document again, as a new version (`source: "restore"`); the
/// versions in between stay in the history.
#[utoipa::path(post, path = "/v1/documents/{session_id}/versions/{version_id}/restore", tag = "documents",
    security(("bearer" = ["edit"])),
    params(("session_id" = String, Path), ("version_id" = String, Path)),
    request_body(content = Option<RestoreRequest>),
    responses((status = 200, body = DocumentBody), (status = 401, body = crate::openapi::ErrorBody),
        (status = 404, description = "No such session or version", body = crate::openapi::ErrorBody),
        (status = 409, description = "`base_version_id` is not the current version", body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody)))]
pub async fn restore_version(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    path: web::Path<(String, String)>,
    body: BodyOf,
) -> ApiResult<HttpResponse> {
    let body = body.checked()?;
    let (session, version) = path.into_inner();
    let session = path_session(&session);
    let mut f = Fields::optional_body(&body.0)?;
    let base = f.optional_str("base_version_id").map(str::to_owned);
    f.finish()?;
    let session = session?;
    let d = state.documents.restore(principal.0.owner, &session, &version, base).await?;
    Ok(HttpResponse::Ok().json(document_body(d, &state)))
}

/// Deletes the session: its document, versions and everything stored with it.
#[utoipa::path(delete, path = "/v1/sessions/{session_id}", tag = "sessions", security(("bearer" = ["edit"])),
    params(("session_id" = String, Path)),
    responses((status = 204, description = "Deleted"), (status = 401, body = crate::openapi::ErrorBody),
        (status = 404, body = crate::openapi::ErrorBody), (status = 422, body = crate::openapi::ValidationErrorBody)))]
pub async fn delete_session(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let session = path_session(&path)?;
    // Files first (attachments, then images and exports), rows last: a failure leaves the
    // session in place to be deleted again.
    state.attachments.delete_session_files(principal.0.owner, &session).await?;
    state.documents.delete_session(principal.0.owner, &session).await?;
    state.chat.delete_session_jobs(principal.0.owner, &session).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// A picture added to a document by hand, stored as one of its images.
#[derive(Serialize, ToSchema)]
pub struct AddedImage {
    /// `img_` + 32 hex characters.
    pub image_id: String,
    /// Where the picture is read (`GET`, no authorization): the URL to put in an `<img src>`
    /// of the document.
    pub url: String,
    pub content_type: String,
    pub size_bytes: i64,
}

/// Adds a picture to the session's document (one pasted or dropped into a section in the
/// editor): the request body is the picture's bytes, whose first bytes decide its type. The
/// document is unchanged until HTML naming the answered `url` is saved. Consumes no operations.
#[utoipa::path(post, path = "/v1/documents/{session_id}/images", tag = "documents", security(("bearer" = ["edit"])),
    params(("session_id" = String, Path)),
    request_body(content_type = "application/octet-stream", content = Vec<u8>, description = "The picture: PNG, JPEG, GIF, BMP or WebP, at most 10 MiB"),
    responses(
        (status = 201, body = AddedImage),
        (status = 401, body = crate::openapi::ErrorBody),
        (status = 404, description = "No such session for the caller", body = crate::openapi::ErrorBody),
        (status = 413, description = "A picture over 10 MiB", body = crate::openapi::RequestTooLargeBody),
        (status = 415, description = "Not a picture browsers show", body = crate::openapi::ErrorBody),
        (status = 422, description = "A bad session id, or an empty body", body = crate::openapi::ValidationErrorBody),
    ))]
pub async fn add_image(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    req: HttpRequest,
    path: web::Path<String>,
    mut payload: web::Payload,
) -> ApiResult<HttpResponse> {
    use futures_util::StreamExt;
    let session = path_session(&path)?;
    let max = redline_domain::picture::MAX_ADDED_PICTURE_BYTES;
    if let Some(len) = crate::multipart::content_length(&req).filter(|l| *l > max) {
        return Err(crate::multipart::too_large(&req, &state, len, max));
    }
    let mut bytes = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| ApiError::BadRequest(format!("Could not read the picture: {e}")))?;
        let seen = (bytes.len() + chunk.len()) as u64;
        if seen > max {
            return Err(crate::multipart::too_large(&req, &state, seen, max));
        }
        bytes.extend_from_slice(&chunk);
    }
    if bytes.is_empty() {
        return Err(ApiError::Validation(vec![ValidationItem::new(
            "missing",
            vec![json!("body")],
            "Field required: send the picture's bytes as the request body",
            Value::Null,
        )]));
    }
    let image = state.documents.add_image(principal.0.owner, &session, bytes.freeze()).await?;
    let url = format!("{}/v1/documents/images/{}", state.config.public_base_url, image.image_id);
    Ok(HttpResponse::Created().json(AddedImage {
        image_id: image.image_id,
        url,
        content_type: image.content_type,
        size_bytes: image.size_bytes,
    }))
}

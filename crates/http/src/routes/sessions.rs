//! `GET /v1/sessions`, `PATCH /v1/sessions/{session_id}` (the title).

use super::Routes;
use actix_web::{web, HttpRequest, HttpResponse};
use redline_domain::time_util::iso8601;
use redline_domain::title::{self, TITLE_MAX_CHARS};
use redline_ports::records::SessionSummary;
use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

use super::documents::path_session;
use crate::auth::ApiPrincipal;
use crate::body::BodyOf;
use crate::error::{ApiError, ApiResult};
use crate::paging::{page_of, paged_json};
use crate::state::AppState;
use crate::validation::Fields;

pub fn configure(routes: &mut Routes<'_>) {
    routes.get("/v1/sessions", list_sessions).patch("/v1/sessions/{session_id}", update_session);
}

/// One session (one document) of the caller.
#[derive(Serialize, ToSchema)]
pub struct SessionInfo {
    pub session_id: String,
    pub title: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    pub version_id: Option<String>,
    pub section_count: i64,
}

impl From<SessionSummary> for SessionInfo {
    fn from(s: SessionSummary) -> Self {
        SessionInfo {
            session_id: s.session_id,
            title: s.title,
            created_at: iso8601(s.created_at),
            updated_at: iso8601(s.updated_at),
            version_id: s.version_id,
            section_count: s.section_count,
        }
    }
}

/// The fields of a session that can be changed.
#[derive(serde::Deserialize, ToSchema)]
#[allow(dead_code)] // the schema of the body; the handler reads it field by field
pub struct SessionUpdate {
    /// The new title: control, bidi and zero-width characters dropped, white space runs made
    /// one space, trimmed; 1 to 200 characters are left.
    #[schema(min_length = 1, max_length = 200)]
    title: String,
}

/// Lists the caller's sessions, most recently updated first, a page at a time. Consumes no
/// operations; a 200 also proves the key is valid.
#[utoipa::path(
    get,
    path = "/v1/sessions",
    tag = "sessions",
    security(("bearer" = ["read"])),
    params(
        crate::paging::PageParams,
    ),
    responses(
        (status = 200, description = "The caller's sessions, most recently updated first", body = Vec<SessionInfo>,
            headers(("Link" = String, description = "`<url>; rel=\"next\"` when another page follows"))),
        (status = 401, description = "Missing, malformed, unknown or revoked key", body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody),
    )
)]
pub async fn list_sessions(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    req: HttpRequest,
) -> ApiResult<HttpResponse> {
    let sessions = state.sessions.list(principal.0.owner, &page_of(&req)?).await?.map(SessionInfo::from);
    Ok(paged_json(&req, &state.config.public_base_url, sessions, |sessions, _| sessions))
}

/// Renames a session's document. The title names its exports and shows in listings; the
/// document, its versions and `updated_at` are unchanged. Consumes no operations.
#[utoipa::path(
    patch,
    path = "/v1/sessions/{session_id}",
    tag = "sessions",
    security(("bearer" = ["edit"])),
    params(("session_id" = String, Path)),
    request_body(content = SessionUpdate),
    responses(
        (status = 200, description = "The session with its new title", body = SessionInfo),
        (status = 401, description = "Missing, malformed, unknown or revoked key", body = crate::openapi::ErrorBody),
        (status = 404, description = "No such session for the caller", body = crate::openapi::ErrorBody),
        (status = 422, description = "A bad session id, or a title that is missing, blank or longer than 200 characters", body = crate::openapi::ValidationErrorBody),
    )
)]
pub async fn update_session(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    path: web::Path<String>,
    body: BodyOf,
) -> ApiResult<HttpResponse> {
    let body = body.checked()?;
    let session = path_session(&path);
    let mut f = Fields::body(&body.0)?;
    let raw = f.required_str("title");
    let cleaned = raw.map(title::clean);
    match (raw, &cleaned) {
        (Some(raw), Some(None)) => {
            f.problem("title", "string_too_short", "String should have at least 1 character", json!(raw));
        }
        (Some(raw), _) if raw.chars().count() > TITLE_MAX_CHARS => {
            let msg = format!("String should have at most {TITLE_MAX_CHARS} characters");
            f.problem("title", "string_too_long", msg, json!(raw));
        }
        _ => {}
    }
    f.finish()?;
    let session = session?;
    let title = cleaned.flatten().unwrap_or_default();
    let renamed = state.sessions.rename(principal.0.owner, &session, &title).await?;
    let renamed = renamed.ok_or_else(|| ApiError::NotFound("Session not found".to_owned()))?;
    Ok(HttpResponse::Ok().json(SessionInfo::from(renamed)))
}

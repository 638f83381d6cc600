//! `GET /v1/sessions`.

use super::Routes;
use actix_web::{web, HttpResponse};
use redline_domain::time_util::iso8601;
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::ApiPrincipal;
use crate::error::ApiResult;
use crate::state::AppState;

pub fn configure(routes: &mut Routes<'_>) {
    routes.get("/v1/sessions", list_sessions);
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

/// Lists the caller's sessions, newest first. Consumes no operations; a 200 also proves
/// the key is valid.
#[utoipa::path(
    get,
    path = "/v1/sessions",
    tag = "sessions",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The caller's sessions, newest first", body = Vec<SessionInfo>),
        (status = 401, description = "Missing, malformed, unknown or revoked key", body = crate::openapi::ErrorBody),
    )
)]
pub async fn list_sessions(state: web::Data<AppState>, principal: ApiPrincipal) -> ApiResult<HttpResponse> {
    let sessions = state.sessions.list(principal.0.owner).await?;
    let body: Vec<SessionInfo> = sessions
        .into_iter()
        .map(|s| SessionInfo {
            session_id: s.session_id,
            title: s.title,
            created_at: iso8601(s.created_at),
            updated_at: iso8601(s.updated_at),
            version_id: s.version_id,
            section_count: s.section_count,
        })
        .collect();
    Ok(HttpResponse::Ok().json(body))
}

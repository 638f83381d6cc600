//! `GET /v1/sessions`.

use super::Routes;
use actix_web::{web, HttpRequest, HttpResponse};
use redline_domain::time_util::iso8601;
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::ApiPrincipal;
use crate::error::ApiResult;
use crate::paging::link_next;
use crate::query::Query;
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

/// Sessions a page holds when the caller does not say.
pub const DEFAULT_LIMIT: usize = 100;
/// Most sessions a page holds.
pub const MAX_LIMIT: usize = 1000;

/// Lists the caller's sessions, most recently updated first, a page at a time. Consumes no
/// operations; a 200 also proves the key is valid.
#[utoipa::path(
    get,
    path = "/v1/sessions",
    tag = "sessions",
    security(("bearer" = [])),
    params(
        ("limit" = Option<i64>, Query, minimum = 1, description = "Most sessions returned (default 100; above 1000 counts as 1000)"),
        ("cursor" = Option<String>, Query, pattern = "^[A-Za-z0-9_-]*$", max_length = 1024, description = "Where the page starts: the cursor of the `Link` header of the page before"),
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
    let mut q = Query::parse(&req);
    let page = q.page(DEFAULT_LIMIT, MAX_LIMIT);
    q.finish()?;
    let sessions = state.sessions.list(principal.0.owner, &page).await?;
    let body: Vec<SessionInfo> = sessions
        .items
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
    let mut res = HttpResponse::Ok();
    link_next(&mut res, &req, &state.config.public_base_url, sessions.next.as_ref());
    Ok(res.json(body))
}

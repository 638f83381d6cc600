//! Templates (the contract's /v1/templates): built-in ones and the caller's own; applying one
//! makes it the session's document.

use super::Routes;
use actix_web::{web, HttpRequest, HttpResponse};
use redline_core::templates::{Template, TemplateSummary as Summary};
use redline_domain::time_util::iso8601;
use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

use crate::auth::ApiPrincipal;
use crate::body::BodyOf;
use crate::error::{ApiError, ApiResult};
use crate::paging::{page_of, paged_json};
use crate::public_html;
use crate::routes::documents::{document_body, DocumentBody};
use crate::state::AppState;
use crate::validation::Fields;

pub fn configure(routes: &mut Routes<'_>) {
    routes
        .get("/v1/templates", list_templates)
        .post("/v1/templates", create_template)
        .get("/v1/templates/{template_id}", get_template)
        .delete("/v1/templates/{template_id}", delete_template)
        .post("/v1/templates/{template_id}/apply", apply_template);
}

/// Longest template name, in characters.
pub const NAME_MAX_CHARS: usize = 200;
/// Longest template description, in characters.
pub const DESCRIPTION_MAX_CHARS: usize = 2000;

/// A template in a listing (without its HTML).
#[derive(Serialize, ToSchema)]
pub struct TemplateSummary {
    pub template_id: String,
    pub name: String,
    pub description: Option<String>,
    pub section_count: i64,
    /// Built-in templates are seen by every account and cannot be deleted.
    pub builtin: bool,
    pub created_at: String,
    pub updated_at: String,
}

/// A template with its sanitized, sectioned HTML.
#[derive(Serialize, ToSchema)]
pub struct TemplateBody {
    pub template_id: String,
    pub name: String,
    pub description: Option<String>,
    pub html: String,
    pub section_count: i64,
    pub builtin: bool,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Serialize, ToSchema)]
pub struct TemplateList {
    /// One page of the templates: built-in templates first, then the caller's own, newest
    /// first.
    pub templates: Vec<TemplateSummary>,
    /// How many templates this page holds.
    pub total: usize,
    /// Where the next page starts (pass it as `cursor`; the `Link` header carries the whole
    /// address); null on the last page.
    pub next_cursor: Option<String>,
}

/// The body of `POST /v1/templates`.
#[derive(ToSchema)]
#[expect(dead_code, reason = "describes the request body in the OpenAPI document only")]
pub struct TemplateRequest {
    /// Not blank; at most 200 characters.
    #[schema(min_length = 1, max_length = 200)]
    name: String,
    /// HTML with some content once sanitized.
    html: String,
    #[schema(max_length = 2000)]
    description: Option<String>,
}

/// The body of `POST /v1/templates/{template_id}/apply`.
#[derive(ToSchema)]
#[expect(dead_code, reason = "describes the request body in the OpenAPI document only")]
pub struct ApplyRequest {
    /// The session whose document the template becomes (created when new).
    #[schema(schema_with = crate::openapi::session_id_schema)]
    session_id: String,
}

fn summary(t: Summary) -> TemplateSummary {
    TemplateSummary {
        template_id: t.template_id,
        name: t.name,
        description: t.description,
        section_count: t.section_count,
        builtin: t.builtin,
        created_at: iso8601(t.created_at),
        updated_at: iso8601(t.updated_at),
    }
}

fn body(t: Template, state: &AppState) -> TemplateBody {
    TemplateBody {
        template_id: t.template_id,
        name: t.name,
        description: t.description,
        html: public_html::html(t.html, &state.config.public_base_url),
        section_count: t.section_count,
        builtin: t.builtin,
        created_at: iso8601(t.created_at),
        updated_at: iso8601(t.updated_at),
    }
}

/// The templates the caller can use: the built-in ones, then their own, newest first, a page
/// at a time.
#[utoipa::path(get, path = "/v1/templates", tag = "templates", security(("bearer" = ["read"])),
    params(
        crate::paging::PageParams),
    responses((status = 200, description = "The built-in templates, then the caller's own, newest first", body = TemplateList,
            headers(("Link" = String, description = "`<url>; rel=\"next\"` when another page follows"))),
        (status = 401, body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody)))]
pub async fn list_templates(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    req: HttpRequest,
) -> ApiResult<HttpResponse> {
    let page = state.templates.list(principal.0.owner, &page_of(&req)?).await?.map(summary);
    Ok(paged_json(&req, &state.config.public_base_url, page, |templates, next_cursor| TemplateList {
        total: templates.len(),
        templates,
        next_cursor,
    }))
}

/// Saves a template (`{name, html, description?}`), sanitized and sectioned like a save.
#[utoipa::path(post, path = "/v1/templates", tag = "templates", security(("bearer" = ["edit"])),
    request_body(content = TemplateRequest),
    responses((status = 201, body = TemplateBody), (status = 401, body = crate::openapi::ErrorBody),
        (status = 422, description = "A missing or blank name, too long a name or description, or HTML without content", body = crate::openapi::ValidationErrorBody)))]
pub async fn create_template(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    body_json: BodyOf,
) -> ApiResult<HttpResponse> {
    let body_json = body_json.checked()?;
    let mut f = Fields::body(&body_json.0)?;
    let name = f.required_str("name").map(str::trim);
    if let Some(n) = name {
        if n.is_empty() {
            f.problem("name", "string_too_short", "String should have at least 1 character", json!(n));
        } else if n.chars().count() > NAME_MAX_CHARS {
            let msg = format!("String should have at most {NAME_MAX_CHARS} characters");
            f.problem("name", "string_too_long", msg, json!(n));
        }
    }
    let description = f.optional_bounded_str("description", DESCRIPTION_MAX_CHARS);
    let html = f.required_str("html");
    f.finish()?;
    let (Some(name), Some(html)) = (name, html) else {
        return Err(ApiError::Internal("validation passed without values".to_owned()));
    };
    let description = description.map(str::trim).filter(|d| !d.is_empty()).map(str::to_owned);
    let t = state.templates.create(principal.0.owner, name.to_owned(), description, html.to_owned()).await?;
    Ok(HttpResponse::Created().json(body(t, &state)))
}

/// One template with its HTML. Another account's → 403; unknown → 404.
#[utoipa::path(get, path = "/v1/templates/{template_id}", tag = "templates", security(("bearer" = ["read"])),
    params(("template_id" = String, Path)),
    responses((status = 200, body = TemplateBody), (status = 401, body = crate::openapi::ErrorBody),
        (status = 403, body = crate::openapi::ErrorBody), (status = 404, body = crate::openapi::ErrorBody)))]
pub async fn get_template(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let t = state.templates.get(principal.0.owner, &path).await?;
    Ok(HttpResponse::Ok().json(body(t, &state)))
}

/// Deletes one of the caller's templates → 204. Built-in or another account's → 403; unknown → 404.
#[utoipa::path(delete, path = "/v1/templates/{template_id}", tag = "templates", security(("bearer" = ["edit"])),
    params(("template_id" = String, Path)),
    responses((status = 204, description = "Deleted"), (status = 401, body = crate::openapi::ErrorBody),
        (status = 403, body = crate::openapi::ErrorBody), (status = 404, body = crate::openapi::ErrorBody)))]
pub async fn delete_template(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    state.templates.delete(principal.0.owner, &path).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Makes the template the session's document (`{session_id}`), as a new version with source
/// `template`; the session is created on first use. Answers the document.
#[utoipa::path(post, path = "/v1/templates/{template_id}/apply", tag = "templates", security(("bearer" = ["edit"])),
    params(("template_id" = String, Path)),
    request_body(content = ApplyRequest),
    responses((status = 200, body = DocumentBody), (status = 401, body = crate::openapi::ErrorBody),
        (status = 403, body = crate::openapi::ErrorBody), (status = 404, body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody)))]
pub async fn apply_template(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    path: web::Path<String>,
    body_json: BodyOf,
) -> ApiResult<HttpResponse> {
    let body_json = body_json.checked()?;
    let mut f = Fields::body(&body_json.0)?;
    let session = f.session_id("session_id");
    f.finish()?;
    let Some(session) = session else {
        return Err(ApiError::Internal("validation passed without values".to_owned()));
    };
    let d = state.templates.apply(principal.0.owner, &path, &session).await?;
    Ok(HttpResponse::Ok().json(document_body(d, &state)))
}

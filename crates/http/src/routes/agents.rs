//! Agent self-signup and operator handoff (docs/api.md, "Agents").

use super::Routes;
use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use redline_domain::time_util::iso8601;
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::ApiPrincipal;
use crate::body::JsonBody;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::validation::Fields;

pub fn configure(routes: &mut Routes<'_>) {
    routes
        .post("/v1/agents/signup", signup)
        .post("/v1/agents/handoff", start_handoff)
        .get("/v1/agents/handoff/{token}", handoff_summary)
        .post("/v1/agents/handoff/{token}/claim", claim);
}

/// The body of `POST /v1/agents/signup` (optional).
#[derive(ToSchema)]
#[expect(dead_code, reason = "describes the request body in the OpenAPI document only")]
pub struct AgentSignupRequest {
    /// The agent's name, shown to the operator at handoff.
    #[schema(max_length = 200)]
    name: Option<String>,
}

/// The body of `POST /v1/agents/handoff/{token}/claim`.
#[derive(ToSchema)]
#[expect(dead_code, reason = "describes the request body in the OpenAPI document only")]
pub struct ClaimRequest {
    /// The 6-digit code the agent gave the operator.
    code: String,
    /// The operator's e-mail address: the account's from now on.
    #[schema(format = Email)]
    email: String,
    /// 8 to 1,024 characters.
    #[schema(min_length = 8, max_length = 1024)]
    password: String,
}

#[derive(Serialize, ToSchema)]
pub struct AgentSignupResponse {
    /// A working `sk_` key, shown once.
    pub api_key: String,
    pub key_id: String,
    pub user_id: String,
    pub subscription_tier: String,
    pub monthly_limit: i64,
}

#[derive(Serialize, ToSchema)]
pub struct HandoffResponse {
    /// The link to give to the operator.
    pub handoff_url: String,
    /// The 6-digit code the operator must type; give it to them separately.
    pub code: String,
    pub expires_at: String,
}

#[derive(Serialize, ToSchema)]
pub struct HandoffSummaryResponse {
    pub user_id: String,
    pub agent_name: Option<String>,
    pub status: String,
    pub expires_at: String,
    pub attempts_left: u32,
}

#[derive(Serialize, ToSchema)]
pub struct ClaimResponse {
    pub user_id: String,
    pub email: String,
    pub status: String,
}

/// Creates an account on the free tier and returns a working key, no human involved.
/// One signup per client address per cooldown (429 with `Retry-After`); behind trusted
/// proxies the address they forward for.
#[utoipa::path(post, path = "/v1/agents/signup", tag = "agents", operation_id = "agent_signup",
    request_body(content = Option<AgentSignupRequest>),
    responses(
        (status = 201, body = AgentSignupResponse),
        (status = 422, body = crate::openapi::ValidationErrorBody),
        (status = 429, description = "Signup cooldown for this address", body = crate::openapi::ErrorBody),
    ))]
pub async fn signup(state: web::Data<AppState>, req: HttpRequest, body: JsonBody) -> ApiResult<HttpResponse> {
    let mut f = Fields::optional_body(&body.0)?;
    let name = f.optional_bounded_str("name", 200).map(str::trim).filter(|n| !n.is_empty()).map(str::to_owned);
    f.finish()?;
    let addr = crate::client_addr::of(&req, &state.config.trusted_proxies);
    let out = state.identity.agent_signup(name, &addr).await?;
    let plan = out.user.plan.plan;
    Ok(HttpResponse::Created().json(AgentSignupResponse {
        api_key: out.key.expose().to_owned(),
        key_id: out.key_id.to_string(),
        user_id: out.user.id.to_string(),
        subscription_tier: plan.to_string(),
        monthly_limit: plan.monthly_ops().map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX)),
    }))
}

/// Starts a takeover of the agent's account by a human operator: a link and a 6-digit code,
/// valid 24 hours. Called with the agent's own key.
#[utoipa::path(post, path = "/v1/agents/handoff", tag = "agents", security(("bearer" = ["admin"])),
    responses(
        (status = 201, body = HandoffResponse),
        (status = 401, body = crate::openapi::ErrorBody),
        (status = 403, description = "Organization keys cannot start a handoff", body = crate::openapi::ErrorBody),
        (status = 409, description = "The account already has an operator", body = crate::openapi::ErrorBody),
    ))]
pub async fn start_handoff(state: web::Data<AppState>, principal: ApiPrincipal) -> ApiResult<HttpResponse> {
    let started = state.identity.start_handoff(&principal.0).await?;
    Ok(HttpResponse::Created().json(HandoffResponse {
        handoff_url: started.url,
        code: started.code,
        expires_at: iso8601(started.expires_at),
    }))
}

/// What the operator is about to take over. A browser that opens the link (it asks for HTML,
/// not JSON) is sent to the web app's claim page, which reads this summary and asks for the
/// code.
#[utoipa::path(get, path = "/v1/agents/handoff/{token}", tag = "agents",
    params(("token" = String, Path)),
    responses(
        (status = 200, body = HandoffSummaryResponse),
        (status = 303, description = "A browser asked for a page: `Location` is the web app's claim page for this link"),
        (status = 404, description = "Unknown or expired link", body = crate::openapi::ErrorBody),
        (status = 410, description = "Disabled after too many wrong codes", body = crate::openapi::ErrorBody),
    ))]
pub async fn handoff_summary(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    if wants_page(&req) && path.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
        return Ok(HttpResponse::SeeOther()
            .insert_header((header::LOCATION, format!("/claim/{}", path.as_str())))
            .insert_header((header::CACHE_CONTROL, "no-store"))
            .finish());
    }
    let s = state.identity.handoff_summary(&path).await?;
    Ok(HttpResponse::Ok().json(HandoffSummaryResponse {
        user_id: s.user_id.to_string(),
        agent_name: s.agent_name,
        status: "pending".to_owned(),
        expires_at: iso8601(s.expires_at),
        attempts_left: s.attempts_left,
    }))
}

/// Whether the request is a browser's navigation: it accepts HTML and not JSON.
fn wants_page(req: &HttpRequest) -> bool {
    let accept = req.headers().get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("");
    accept.contains("text/html") && !accept.contains("application/json")
}

/// Claims the account with the code: it becomes a web-app user with this e-mail and
/// password; the agent's keys keep working.
#[utoipa::path(post, path = "/v1/agents/handoff/{token}/claim", tag = "agents",
    params(("token" = String, Path)),
    request_body(content = ClaimRequest),
    responses(
        (status = 200, body = ClaimResponse),
        (status = 403, description = "Wrong code; the detail states the attempts left", body = crate::openapi::ErrorBody),
        (status = 404, description = "Unknown or expired link", body = crate::openapi::ErrorBody),
        (status = 409, description = "Email already registered", body = crate::openapi::ErrorBody),
        (status = 410, description = "Disabled after too many wrong codes", body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody),
    ))]
pub async fn claim(state: web::Data<AppState>, path: web::Path<String>, body: JsonBody) -> ApiResult<HttpResponse> {
    let mut f = Fields::body(&body.0)?;
    let code = f.required_secret("code");
    let parsed_email = f.email("email");
    let password = f.required_secret("password");
    let parsed_password = f.new_password("password", password, parsed_email.as_ref());
    f.finish()?;
    let (Some(code), Some(email), Some(password)) = (code, parsed_email, parsed_password) else {
        return Err(ApiError::Internal("claim body validated twice".into()));
    };
    let user = state.identity.claim_handoff(&path, code, email.clone(), password).await?;
    Ok(HttpResponse::Ok().json(ClaimResponse {
        user_id: user.to_string(),
        email: email.to_string(),
        status: "claimed".to_owned(),
    }))
}

//! Web-app accounts: `POST /v1/auth/signup`, `/login`, `/logout` (docs/api.md, "Authentication").

use super::Routes;
use actix_web::cookie::{time::Duration as CookieDuration, Cookie, SameSite};
use actix_web::{web, HttpRequest, HttpResponse};
use redline_domain::time_util::iso8601;
use redline_domain::{Email, Password};
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::{session_cookie_name, session_credential};
use crate::body::JsonBody;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::validation::Fields;
use redline_core::identity::ClientInfo;

/// Lifetime of the session cookie: that of the session token (docs/api.md, "Authentication", 30 days).
const SESSION_COOKIE_MAX_AGE_SECS: i64 = 30 * 24 * 3600;

pub fn configure(routes: &mut Routes<'_>) {
    routes.post("/v1/auth/signup", signup).post("/v1/auth/login", login).post("/v1/auth/logout", logout);
}

/// `{email, password}` of signup and login.
#[derive(ToSchema)]
#[expect(dead_code, reason = "describes the request body in the OpenAPI document only")]
pub struct Credentials {
    /// An e-mail address.
    #[schema(format = Email)]
    email: String,
    /// 8 to 1,024 characters; at sign-up not on the list of common and leaked passwords and
    /// not made from the e-mail address (docs/api.md, "Passwords").
    #[schema(min_length = 8, max_length = 1024)]
    password: String,
}

#[derive(Serialize, ToSchema)]
pub struct UserCreated {
    pub user_id: String,
    pub email: String,
    pub subscription_tier: String,
    pub created_at: String,
}

#[derive(Serialize, ToSchema)]
pub struct LoginResponse {
    /// The web-app session token (`ws_` + 43 base64url characters), also set as an
    /// HttpOnly cookie. Send it as `Authorization: Bearer <token>` to `/v1/users/*`.
    pub token: String,
    pub token_type: String,
    pub expires_at: String,
    pub user_id: String,
    pub email: String,
}

/// The `{email, password}` of a sign-in, as typed: checked for presence only (every password
/// ever set must still sign in).
fn parse_login(body: &serde_json::Value) -> ApiResult<(String, String)> {
    let mut f = Fields::body(body)?;
    let email = f.required_str("email");
    let password = f.required_secret("password");
    f.finish()?;
    Ok((email.unwrap_or_default().to_owned(), password.unwrap_or_default().to_owned()))
}

/// The `{email, password}` of a sign-up: a valid address and a password by the rules of
/// docs/api.md, "Passwords".
fn parse_signup(body: &serde_json::Value) -> ApiResult<(Email, Password)> {
    let mut f = Fields::body(body)?;
    let parsed_email = f.email("email");
    let password = f.required_secret("password");
    let parsed_password = f.new_password("password", password, parsed_email.as_ref());
    f.finish()?;
    match (parsed_email, parsed_password) {
        (Some(email), Some(password)) => Ok((email, password)),
        _ => Err(ApiError::Internal("sign-up body validated twice".into())),
    }
}

/// Creates a web-app account on the free plan.
#[utoipa::path(post, path = "/v1/auth/signup", tag = "auth", request_body = Credentials,
    responses(
        (status = 201, body = UserCreated),
        (status = 409, description = "Email already registered", body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody),
        (status = 429, description = "A sign-up from this address within the cooldown", body = crate::openapi::ErrorBody),
    ))]
pub async fn signup(state: web::Data<AppState>, req: HttpRequest, body: JsonBody) -> ApiResult<HttpResponse> {
    let (email, password) = parse_signup(&body.0)?;
    let client = crate::client_addr::of(&req, &state.config.trusted_proxies);
    let user = state.identity.web_signup(email, password, &client).await?;
    Ok(HttpResponse::Created().json(UserCreated {
        user_id: user.id.to_string(),
        email: user.email.map(|e| e.to_string()).unwrap_or_default(),
        subscription_tier: user.plan.plan.to_string(),
        created_at: iso8601(user.created_at),
    }))
}

/// The cookie that removes the session cookie from the browser.
pub fn clear_session_cookie(state: &AppState) -> Cookie<'static> {
    session_cookie(state, String::new(), 0)
}

fn session_cookie(state: &AppState, value: String, max_age_secs: i64) -> Cookie<'static> {
    Cookie::build(session_cookie_name(&state.config.public_base_url), value)
        .path("/")
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(state.config.public_base_url.starts_with("https://"))
        .max_age(CookieDuration::seconds(max_age_secs))
        .finish()
}

/// Signs in: returns a session token and sets it as a cookie.
#[utoipa::path(post, path = "/v1/auth/login", tag = "auth", request_body = Credentials,
    responses(
        (status = 200, body = LoginResponse),
        (status = 401, description = "Wrong email or password", body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody),
        (status = 429, description = "Too many failed sign-ins for this account or from this address", body = crate::openapi::ErrorBody),
    ))]
pub async fn login(state: web::Data<AppState>, req: HttpRequest, body: JsonBody) -> ApiResult<HttpResponse> {
    let (email, password) = parse_login(&body.0)?;
    let client = crate::client_addr::of(&req, &state.config.trusted_proxies);
    let user_agent = req.headers().get(actix_web::http::header::USER_AGENT).and_then(|v| v.to_str().ok());
    let client = ClientInfo { address: client, user_agent: user_agent.map(str::to_owned) };
    let login = state.identity.login(&email, &password, &client).await?;
    let cookie = session_cookie(&state, login.token.clone(), SESSION_COOKIE_MAX_AGE_SECS);
    Ok(HttpResponse::Ok().cookie(cookie).json(LoginResponse {
        token: login.token,
        token_type: "bearer".to_owned(),
        expires_at: iso8601(login.expires_at),
        user_id: login.user.id.to_string(),
        email: login.user.email.map(|e| e.to_string()).unwrap_or_default(),
    }))
}

/// Ends the session at once (token from the header or the cookie).
#[utoipa::path(post, path = "/v1/auth/logout", tag = "auth",
    responses((status = 204, description = "Signed out"), (status = 401, body = crate::openapi::ErrorBody)))]
pub async fn logout(state: web::Data<AppState>, req: HttpRequest) -> ApiResult<HttpResponse> {
    let token = session_credential(&req, &state.config.public_base_url)?;
    state.identity.logout(&token).await?;
    Ok(HttpResponse::NoContent().cookie(clear_session_cookie(&state)).finish())
}

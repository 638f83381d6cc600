//! Accounts people can recover and control (docs/api.md, "Accounts"): signed-in sessions,
//! password change, password reset by e-mail, and e-mail verification.

use super::Routes;
use actix_web::{web, HttpRequest, HttpResponse};
use redline_core::identity::{IdentityError, SessionListing};
use redline_domain::time_util::iso8601;
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::WebUser;
use crate::body::JsonBody;
use crate::error::{ApiError, ApiResult};
use crate::routes::auth::clear_session_cookie;
use crate::state::AppState;
use crate::validation::{password_refused, Fields};

pub fn configure(routes: &mut Routes<'_>) {
    routes
        .post("/v1/users/me/password", change_password)
        .get("/v1/users/me/sessions", list_sign_in_sessions)
        .delete("/v1/users/me/sessions", sign_out_everywhere)
        .delete("/v1/users/me/sessions/{session_id}", sign_out_session)
        .post("/v1/auth/password-reset", request_password_reset)
        .post("/v1/auth/password-reset/confirm", confirm_password_reset)
        .post("/v1/users/me/email-verification", send_verification)
        .post("/v1/auth/verify-email", verify_email);
}

/// `{current_password, new_password}`.
#[derive(ToSchema)]
#[expect(dead_code, reason = "describes the request body in the OpenAPI document only")]
pub struct PasswordChange {
    current_password: String,
    /// 8 to 1,024 characters, not on the list of common and leaked passwords, not made from
    /// the e-mail address.
    #[schema(min_length = 8, max_length = 1024)]
    new_password: String,
}

#[derive(Serialize, ToSchema)]
pub struct PasswordChanged {
    /// How many other sessions of the account were signed out (this one goes on).
    pub other_sessions_ended: u64,
}

/// A signed-in session of the web app.
#[derive(Serialize, ToSchema)]
pub struct SignInSession {
    /// `wss_…`: names the session in `DELETE /v1/users/me/sessions/{session_id}`; not a
    /// credential.
    pub session_id: String,
    pub created_at: String,
    /// When it was last used (up to a minute behind).
    pub last_seen_at: String,
    /// When it ends at the latest; it ends earlier when unused for the idle period.
    pub expires_at: String,
    pub idle_expires_at: String,
    /// The browser it was opened from, as its `User-Agent` named it.
    pub user_agent: Option<String>,
    /// The client address it was opened from.
    pub ip_address: Option<String>,
    /// Whether this is the session making the request.
    pub current: bool,
}

#[derive(Serialize, ToSchema)]
pub struct SignInSessions {
    /// The live sessions, most recently used first (at most 100).
    pub sessions: Vec<SignInSession>,
}

/// `{email}`.
#[derive(ToSchema)]
#[expect(dead_code, reason = "describes the request body in the OpenAPI document only")]
pub struct ResetRequest {
    #[schema(format = Email)]
    email: String,
}

/// `{token, password}`.
#[derive(ToSchema)]
#[expect(dead_code, reason = "describes the request body in the OpenAPI document only")]
pub struct ResetConfirm {
    /// The `pr_…` token of the mailed link.
    token: String,
    #[schema(min_length = 8, max_length = 1024)]
    password: String,
}

/// `{token}`.
#[derive(ToSchema)]
#[expect(dead_code, reason = "describes the request body in the OpenAPI document only")]
pub struct VerifyEmail {
    /// The `ev_…` token of the mailed link.
    token: String,
}

#[derive(Serialize, ToSchema)]
pub struct EmailVerified {
    /// The address now proven.
    pub email: String,
    pub verified_at: String,
}

#[derive(Serialize, ToSchema)]
pub struct Detail {
    pub detail: String,
}

/// Changes the password; every other session of the account is signed out.
#[utoipa::path(post, path = "/v1/users/me/password", tag = "users", security(("session" = [])),
    request_body = PasswordChange,
    responses(
        (status = 200, body = PasswordChanged),
        (status = 401, description = "Not signed in", body = crate::openapi::ErrorBody),
        (status = 403, description = "The current password is wrong", body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody),
        (status = 429, description = "Too many wrong current passwords", body = crate::openapi::ErrorBody),
    ))]
pub async fn change_password(state: web::Data<AppState>, web_user: WebUser, body: JsonBody) -> ApiResult<HttpResponse> {
    let mut f = Fields::body(&body.0)?;
    let current = f.required_secret("current_password");
    let new = f.required_secret("new_password");
    let new = new.and_then(|raw| f.new_password("new_password", Some(raw), web_user.user.email.as_ref()).map(|_| raw));
    f.finish()?;
    let (Some(current), Some(new)) = (current, new) else {
        return Err(ApiError::Internal("password change validated twice".into()));
    };
    let ended = match state.identity.change_password(&web_user.user, &web_user.token, current, new).await {
        Ok(n) => n,
        Err(IdentityError::WrongCurrentPassword) => {
            return Err(ApiError::Forbidden("The current password is wrong.".to_owned()))
        }
        Err(IdentityError::BadPassword(e)) => return Err(password_refused("new_password", &e)),
        Err(e) => return Err(e.into()),
    };
    Ok(HttpResponse::Ok().json(PasswordChanged { other_sessions_ended: ended }))
}

fn listing(state: &AppState, s: SessionListing) -> SignInSession {
    let idle = state.identity.config().web_session_idle_ms;
    SignInSession {
        session_id: s.session.id,
        created_at: iso8601(s.session.created_at),
        last_seen_at: iso8601(s.session.last_seen_at),
        expires_at: iso8601(s.session.expires_at),
        idle_expires_at: iso8601((s.session.last_seen_at + idle).min(s.session.expires_at)),
        user_agent: s.session.user_agent,
        ip_address: s.session.address,
        current: s.current,
    }
}

/// The account's signed-in sessions, most recently used first.
#[utoipa::path(get, path = "/v1/users/me/sessions", tag = "users", security(("session" = [])),
    responses((status = 200, body = SignInSessions), (status = 401, body = crate::openapi::ErrorBody)))]
pub async fn list_sign_in_sessions(state: web::Data<AppState>, web_user: WebUser) -> ApiResult<HttpResponse> {
    let sessions = state.identity.sessions_of(web_user.user.id, &web_user.token).await?;
    Ok(HttpResponse::Ok().json(SignInSessions { sessions: sessions.into_iter().map(|s| listing(&state, s)).collect() }))
}

/// Signs out one session of the account (this one too, when named).
#[utoipa::path(delete, path = "/v1/users/me/sessions/{session_id}", tag = "users", security(("session" = [])),
    params(("session_id" = String, Path)),
    responses(
        (status = 204, description = "Signed out"),
        (status = 401, body = crate::openapi::ErrorBody),
        (status = 404, description = "No such session of this account", body = crate::openapi::ErrorBody),
    ))]
pub async fn sign_out_session(
    state: web::Data<AppState>,
    web_user: WebUser,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    state.identity.sign_out_session(web_user.user.id, &path).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Signs out every session of the account, this one included.
#[utoipa::path(delete, path = "/v1/users/me/sessions", tag = "users", security(("session" = [])),
    responses((status = 204, description = "Every session signed out"), (status = 401, body = crate::openapi::ErrorBody)))]
pub async fn sign_out_everywhere(state: web::Data<AppState>, web_user: WebUser) -> ApiResult<HttpResponse> {
    state.identity.sign_out_everywhere(web_user.user.id).await?;
    Ok(HttpResponse::NoContent().cookie(clear_session_cookie(&state)).finish())
}

/// Mails a link to reset the password to the address, if an account has it. The answer is
/// the same either way.
#[utoipa::path(post, path = "/v1/auth/password-reset", tag = "auth", request_body = ResetRequest,
    responses(
        (status = 202, body = Detail),
        (status = 422, body = crate::openapi::ValidationErrorBody),
        (status = 429, description = "Too many reset requests for this address or from this client", body = crate::openapi::ErrorBody),
    ))]
pub async fn request_password_reset(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let mut f = Fields::body(&body.0)?;
    let email = f.email("email");
    f.finish()?;
    let email = email.ok_or_else(|| ApiError::Internal("email validated twice".into()))?;
    let client = crate::client_addr::of(&req, &state.config.trusted_proxies);
    state.identity.request_password_reset(email.as_str(), &client).await?;
    Ok(HttpResponse::Accepted().json(Detail {
        detail:
            "If an account has this address, a link to reset its password is on its way. It works once, for 30 minutes."
                .to_owned(),
    }))
}

/// Sets a new password with the token of a mailed reset link; every session of the account
/// is signed out.
#[utoipa::path(post, path = "/v1/auth/password-reset/confirm", tag = "auth", request_body = ResetConfirm,
    responses(
        (status = 204, description = "Password changed: sign in with it"),
        (status = 404, description = "The link is unknown, used or expired", body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody),
    ))]
pub async fn confirm_password_reset(state: web::Data<AppState>, body: JsonBody) -> ApiResult<HttpResponse> {
    let mut f = Fields::body(&body.0)?;
    let token = f.required_secret("token");
    let password = f.required_secret("password");
    f.finish()?;
    let (Some(token), Some(password)) = (token, password) else {
        return Err(ApiError::Internal("reset validated twice".into()));
    };
    match state.identity.reset_password(token, password).await {
        Ok(()) => Ok(HttpResponse::NoContent().cookie(clear_session_cookie(&state)).finish()),
        Err(IdentityError::BadPassword(e)) => Err(password_refused("password", &e)),
        Err(e) => Err(e.into()),
    }
}

/// Mails a new verification link to the signed-in user's address.
#[utoipa::path(post, path = "/v1/users/me/email-verification", tag = "users", security(("session" = [])),
    responses(
        (status = 202, body = Detail),
        (status = 401, body = crate::openapi::ErrorBody),
        (status = 409, description = "The address is verified already", body = crate::openapi::ErrorBody),
        (status = 429, description = "Too many verification mails asked for", body = crate::openapi::ErrorBody),
    ))]
pub async fn send_verification(state: web::Data<AppState>, web_user: WebUser) -> ApiResult<HttpResponse> {
    state.identity.send_verification(&web_user.user, true).await?;
    let to = web_user.user.email.map(|e| e.to_string()).unwrap_or_default();
    Ok(HttpResponse::Accepted()
        .json(Detail { detail: format!("A verification link is on its way to {to}. It works for 24 hours.") }))
}

/// Proves the address with the token of a mailed verification link. No sign-in is needed:
/// the link may be opened in another browser.
#[utoipa::path(post, path = "/v1/auth/verify-email", tag = "auth", request_body = VerifyEmail,
    responses(
        (status = 200, body = EmailVerified),
        (status = 404, description = "The link is unknown, used or expired", body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody),
    ))]
pub async fn verify_email(state: web::Data<AppState>, body: JsonBody) -> ApiResult<HttpResponse> {
    let mut f = Fields::body(&body.0)?;
    let token = f.required_secret("token");
    f.finish()?;
    let token = token.ok_or_else(|| ApiError::Internal("token validated twice".into()))?;
    let user = state.identity.verify_email(token).await?;
    let user = state.identity.user(user).await?;
    let verified_at = match state.identity.email_status(&user).await? {
        redline_core::identity::EmailStatus::Verified(at) => at,
        _ => return Err(IdentityError::VerificationLinkInvalid.into()),
    };
    Ok(HttpResponse::Ok().json(EmailVerified {
        email: user.email.map(|e| e.to_string()).unwrap_or_default(),
        verified_at: iso8601(verified_at),
    }))
}

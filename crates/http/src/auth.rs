//! Authentication as extractors: a handler that takes [`ApiPrincipal`] is reachable with an
//! API key only, one that takes [`WebUser`] with a web-app session only.

use actix_web::dev::Payload;
use actix_web::http::{header, Method};
use actix_web::web::Data;
use actix_web::{FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;
use redline_core::identity::{bearer_token, AuthFailure};
use redline_core::Principal;
use redline_ports::records::UserRecord;

use crate::error::{unauthorized, ApiError};
use crate::state::AppState;

/// Name of the web-app session cookie.
pub const SESSION_COOKIE: &str = "redline_session";

fn state(req: &HttpRequest) -> Result<Data<AppState>, ApiError> {
    req.app_data::<Data<AppState>>()
        .cloned()
        .ok_or_else(|| ApiError::Internal("application state missing".to_owned()))
}

/// The caller of an API-key endpoint.
pub struct ApiPrincipal(pub Principal);

impl FromRequest for ApiPrincipal {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = state(req);
        // A header that is not visible ASCII cannot be `Bearer <key>`.
        let header = req
            .headers()
            .get(header::AUTHORIZATION)
            .map(|v| v.to_str().map(str::to_owned).unwrap_or_default());
        Box::pin(async move {
            let state = state?;
            Ok(ApiPrincipal(state.identity.authenticate_header(header.as_deref()).await?))
        })
    }
}

/// A signed-in web-app user and the session token used.
pub struct WebUser {
    pub user: UserRecord,
    pub token: String,
}

/// The session credential of a request: `Authorization: Bearer ws_…`, else the cookie.
/// An API key in the header is refused outright (interface.md Authentication 7).
pub fn session_credential(req: &HttpRequest) -> Result<(String, bool), ApiError> {
    if let Some(value) = req.headers().get(header::AUTHORIZATION) {
        let value = value.to_str().unwrap_or_default();
        let token = bearer_token(value).ok_or_else(|| unauthorized(AuthFailure::NotBearer))?;
        if token.starts_with("sk_") || token.starts_with("lce_") {
            return Err(unauthorized(AuthFailure::ApiKeyNotAccepted));
        }
        return Ok((token.to_owned(), false));
    }
    match req.cookie(SESSION_COOKIE) {
        Some(cookie) => Ok((cookie.value().to_owned(), true)),
        None => Err(ApiError::Unauthorized(
            "Not signed in: send 'Authorization: Bearer <session token>' from POST /v1/auth/login.".to_owned(),
        )),
    }
}

/// Cookie-authenticated writes must come from the service's own origin (CSRF defence).
fn check_origin(req: &HttpRequest, public_base_url: &str) -> Result<(), ApiError> {
    if matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS) {
        return Ok(());
    }
    let origin = req.headers().get(header::ORIGIN).and_then(|v| v.to_str().ok());
    let expected = public_base_url.trim_end_matches('/');
    match origin {
        Some(o) if o.eq_ignore_ascii_case(expected) => Ok(()),
        _ => Err(ApiError::Forbidden(
            "Cross-origin request refused: cookie-authenticated writes must come from the web app's origin.".to_owned(),
        )),
    }
}

impl FromRequest for WebUser {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = state(req);
        let credential = session_credential(req);
        let origin_ok = match (&state, &credential) {
            (Ok(s), Ok((_, true))) => check_origin(req, &s.config.public_base_url),
            _ => Ok(()),
        };
        Box::pin(async move {
            let state = state?;
            let (token, _) = credential?;
            origin_ok?;
            let user = state.identity.authenticate_session(&token).await?;
            Ok(WebUser { user, token })
        })
    }
}

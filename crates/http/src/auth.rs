//! Authentication as extractors: a handler that takes [`ApiPrincipal`] is reachable with an
//! API key or a web-app session, one that takes [`WebUser`] with a web-app session only.

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::web::Data;
use actix_web::{FromRequest, HttpMessage, HttpRequest};
use futures_util::future::LocalBoxFuture;
use redline_core::identity::{bearer_token, AuthFailure, SESSION_TOKEN_PREFIX};
use redline_core::Principal;
use redline_ports::records::UserRecord;

use crate::error::{unauthorized, ApiError};
use crate::state::AppState;

/// The web-app session cookie's name: `__Host-redline_session` when the public base URL is
/// https (a browser then takes it only from a secure page of this very host, for path `/`,
/// with no `Domain`: a sibling subdomain cannot set or shadow it), else `redline_session`
/// (the prefix needs `Secure`, which a plain-http origin cannot use).
pub fn session_cookie_name(public_base_url: &str) -> &'static str {
    if public_base_url.starts_with("https://") {
        "__Host-redline_session"
    } else {
        "redline_session"
    }
}

fn state(req: &HttpRequest) -> Result<Data<AppState>, ApiError> {
    req.app_data::<Data<AppState>>().cloned().ok_or_else(|| ApiError::Internal("application state missing".to_owned()))
}

/// Runs a store-backed future as its own task so that it always runs to completion.
///
/// actix drops the other extractors of a request as soon as one fails (an oversized body,
/// say); dropping a SQLite query in flight would block the worker thread (diesel-async's
/// `SyncConnectionWrapper` waits for the query with `block_in_place`, which panics on
/// actix's single-threaded workers). A detached task is never dropped half-way.
pub(crate) async fn detached<T: 'static>(f: impl std::future::Future<Output = T> + 'static) -> Result<T, ApiError> {
    actix_web::rt::spawn(f).await.map_err(|e| ApiError::Internal(format!("task failed: {e}")))
}

/// The request's `Authorization` value. A value that is not visible ASCII cannot be
/// `Bearer <credential>`, and neither can a header sent twice (RFC 9110 allows one; a proxy in
/// front may have read the other copy): both are `""`, which gets the format 401.
fn authorization(req: &HttpRequest) -> Option<String> {
    let mut values = req.headers().get_all(header::AUTHORIZATION);
    let first = values.next()?;
    if values.next().is_some() {
        return Some(String::new());
    }
    Some(first.to_str().map(str::to_owned).unwrap_or_default())
}

/// Header naming the organization a web-app session acts for on an API-key endpoint.
pub const ORGANIZATION_HEADER: &str = "redline-organization";

/// The caller of an API-key endpoint: an API key (`sk_`, `lce_`) acting for its owner, or a
/// web-app session (`Bearer ws_…`, or the cookie from the web app's own origin) acting for
/// its user, or for the organization named by `Redline-Organization` when the user is one of
/// its members. The header means nothing to an API key, which keeps its own scope.
pub struct ApiPrincipal(pub Principal);

impl FromRequest for ApiPrincipal {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        // Admitted already, for this very route (the idempotency middleware checks first).
        if let Some(principal) = req.extensions().get::<Principal>().cloned() {
            return Box::pin(async move { Ok(ApiPrincipal(principal)) });
        }
        let state = state(req);
        let header = authorization(req);
        let session = match (&header, &state) {
            (Some(value), _) => {
                bearer_token(value).filter(|token| token.starts_with(SESSION_TOKEN_PREFIX)).map(str::to_owned)
            }
            (None, Ok(state)) => req
                .cookie(session_cookie_name(&state.config.public_base_url))
                .filter(|_| from_own_origin(req, &state.config.public_base_url))
                .map(|cookie| cookie.value().to_owned()),
            (None, Err(_)) => None,
        };
        // A header that is not text cannot name a membership: it gets the 403 of a stranger.
        let org = req.headers().get(ORGANIZATION_HEADER).map(|v| v.to_str().map(str::to_owned).unwrap_or_default());
        let client = state.as_ref().map(|s| crate::client_addr::of(req, &s.config.trusted_proxies)).unwrap_or_default();
        let method = req.method().clone();
        let pattern = req.match_pattern().unwrap_or_default();
        Box::pin(async move {
            let state = state?;
            let principal = detached(async move {
                match session {
                    Some(token) => state.identity.authenticate_web(&token, org.as_deref()).await,
                    None => state.identity.authenticate_header(header.as_deref(), &client).await,
                }
            })
            .await?;
            let principal = principal?;
            crate::scopes::check(principal.scopes, &method, &pattern).map_err(|detail| match principal.key_id {
                Some(_) => ApiError::Forbidden(detail),
                // A web session holds less than every scope only for an organization it does
                // not manage.
                None => ApiError::Forbidden(format!(
                    "Only the organization's owners and admins may call {} {pattern}.",
                    method.as_str()
                )),
            })?;
            Ok(ApiPrincipal(principal))
        })
    }
}

/// A signed-in web-app user and the session token used.
pub struct WebUser {
    pub user: UserRecord,
    pub token: String,
}

/// The session credential of a request: `Authorization: Bearer ws_…`, else the cookie when
/// the request comes from the web app itself (see [`from_own_origin`]).
/// An API key in the header is refused outright (the contract's Authentication 7).
pub fn session_credential(req: &HttpRequest, public_base_url: &str) -> Result<String, ApiError> {
    if let Some(value) = authorization(req) {
        let token = bearer_token(&value).ok_or_else(|| unauthorized(AuthFailure::NotBearer))?;
        if token.starts_with("sk_") || token.starts_with("lce_") {
            return Err(unauthorized(AuthFailure::ApiKeyNotAccepted));
        }
        return Ok(token.to_owned());
    }
    match req.cookie(session_cookie_name(public_base_url)) {
        Some(cookie) if from_own_origin(req, public_base_url) => Ok(cookie.value().to_owned()),
        _ => Err(ApiError::Unauthorized(
            "Not signed in: send 'Authorization: Bearer <session token>' from POST /v1/auth/login.".to_owned(),
        )),
    }
}

/// The session cookie is honoured only on requests a browser made from the web app's own
/// origin: `Origin` equal to the public base URL, or `Sec-Fetch-Site: same-origin`. That is
/// the CSRF defence for every method (reads included), and it keeps a cookie jar of a
/// non-browser client (which sends neither header) from authenticating by accident: such
/// clients send the token as a Bearer credential.
fn from_own_origin(req: &HttpRequest, public_base_url: &str) -> bool {
    let expected = public_base_url.trim_end_matches('/');
    let origin_ok = req
        .headers()
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|o| o.eq_ignore_ascii_case(expected));
    let fetch_site_ok = req
        .headers()
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("same-origin"));
    origin_ok || fetch_site_ok
}

impl FromRequest for WebUser {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = state(req);
        let credential = state.as_ref().map_err(|_| ()).map(|s| session_credential(req, &s.config.public_base_url));
        Box::pin(async move {
            let state = state?;
            let token = credential.map_err(|_| ApiError::Internal("application state missing".to_owned()))??;
            let checked = token.clone();
            let user = detached(async move { state.identity.authenticate_session(&checked).await }).await??;
            Ok(WebUser { user, token })
        })
    }
}

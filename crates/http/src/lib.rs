//! The HTTP shell of Redline (actix-web): extractors, routes, error mapping.
//!
//! Invariant: this is the only crate that knows HTTP and the JSON shapes of the contract.
//! Handlers hold no rules and no SQL: they extract, call one use case of `core`, and map.

pub mod auth;
pub mod body;
pub mod client_addr;
pub mod error;
pub mod idempotency;
pub mod metrics;
pub mod middleware;
pub mod multipart;
pub mod openapi;
mod paging;
pub mod public_html;
pub mod query;
pub mod routes;
pub mod scopes;
pub mod state;
pub mod streams;
pub mod validation;

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::Server;
use actix_web::http::{header, KeepAlive, Method};
use actix_web::middleware::from_fn;
use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use serde_json::json;

pub use state::{AppState, HttpConfig};

/// What no route took: 404 for a path the service does not have; for one it has, 405 with the
/// methods it answers to in `Allow` (RFC 9110 §15.5.6), or 204 with them for OPTIONS.
async fn not_routed(req: HttpRequest) -> HttpResponse {
    let allowed = req.app_data::<routes::KnownPaths>().map(|known| known.allowed(req.path())).unwrap_or_default();
    if allowed.is_empty() {
        return HttpResponse::NotFound().json(json!({"detail": "Not Found"}));
    }
    let allow = allowed.iter().map(Method::as_str).collect::<Vec<_>>().join(", ");
    if req.method() == Method::OPTIONS {
        return HttpResponse::NoContent().insert_header((header::ALLOW, allow)).finish();
    }
    HttpResponse::MethodNotAllowed().insert_header((header::ALLOW, allow)).json(json!({"detail": "Method Not Allowed"}))
}

/// How the HTTP server itself behaves (the app's configuration fills it in).
#[derive(Clone, Copy, Debug)]
pub struct ServerOptions {
    /// Worker threads (at least one).
    pub workers: usize,
    /// In-flight requests get this long to finish when the server stops.
    pub shutdown_timeout: Duration,
    /// How long an idle keep-alive connection stays open; `None` closes each connection after
    /// its answer.
    pub keep_alive: Option<Duration>,
}

/// Builds the server on a bound listener. It does not handle signals itself: the caller stops
/// it through its handle (in-flight requests get [`ServerOptions::shutdown_timeout`] to
/// finish), after turning [`AppState::draining`] true. `beside` registers what is
/// served next to the API (the web app), under the same middleware.
pub fn server<F>(
    listener: TcpListener,
    state: Arc<AppState>,
    options: ServerOptions,
    beside: F,
) -> std::io::Result<Server>
where
    F: Fn(&mut web::ServiceConfig) + Clone + Send + Sync + 'static,
{
    let data = web::Data::from(state);
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .wrap(from_fn(middleware::protocol))
            .wrap(from_fn(middleware::observe))
            .configure(routes::configure)
            .configure(beside.clone())
            .default_service(web::to(not_routed))
    })
    .workers(options.workers.max(1))
    .shutdown_timeout(options.shutdown_timeout.as_secs())
    .keep_alive(options.keep_alive.map_or(KeepAlive::Disabled, KeepAlive::Timeout))
    .disable_signals()
    .listen(listener)?
    .run();
    Ok(server)
}

//! The HTTP shell of Redline (actix-web): extractors, routes, error mapping.
//!
//! Invariant: this is the only crate that knows HTTP and the JSON shapes of the contract.
//! Handlers hold no rules and no SQL: they extract, call one use case of `core`, and map.

pub mod auth;
pub mod body;
pub mod error;
pub mod metrics;
pub mod middleware;
pub mod multipart;
pub mod openapi;
pub mod routes;
pub mod state;
pub mod validation;

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::Server;
use actix_web::middleware::from_fn;
use actix_web::{web, App, HttpResponse, HttpServer};
use serde_json::json;

pub use state::{AppState, HttpConfig};

async fn not_found() -> HttpResponse {
    HttpResponse::NotFound().json(json!({"detail": "Not Found"}))
}

/// Builds the server on a bound listener. It stops gracefully on SIGTERM/SIGINT (in-flight
/// requests get `shutdown_timeout` to finish).
pub fn server(
    listener: TcpListener,
    state: Arc<AppState>,
    workers: usize,
    shutdown_timeout: Duration,
) -> std::io::Result<Server> {
    let data = web::Data::from(state);
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .wrap(from_fn(middleware::observe))
            .configure(routes::configure)
            .default_service(web::to(not_found))
    })
    .workers(workers.max(1))
    .shutdown_timeout(shutdown_timeout.as_secs())
    .listen(listener)?
    .run();
    Ok(server)
}

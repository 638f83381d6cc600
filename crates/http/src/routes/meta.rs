//! Operational endpoints: health, readiness, metrics and the OpenAPI document (the web crate
//! serves its interactive reference at `/docs`).

use super::Routes;
use actix_web::{web, HttpResponse};
use serde_json::json;

use crate::state::AppState;

pub fn configure(routes: &mut Routes<'_>) {
    routes.get("/healthz", healthz).get("/readyz", readyz).get("/metrics", metrics).get("/openapi.json", openapi);
}

/// The process is up (no dependency is checked).
async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok"}))
}

/// The process can serve: it is not shutting down and the database answered just now.
async fn readyz(state: web::Data<AppState>) -> HttpResponse {
    if *state.draining.borrow() {
        return HttpResponse::ServiceUnavailable()
            .insert_header(("retry-after", "5"))
            .json(json!({"status": "draining", "database": "not checked"}));
    }
    match state.health.ping().await {
        Ok(()) => HttpResponse::Ok().json(json!({"status": "ready", "database": "ok"})),
        Err(e) => {
            tracing::warn!(error = %e, "readiness check failed");
            HttpResponse::ServiceUnavailable()
                .insert_header(("retry-after", "5"))
                .json(json!({"status": "unavailable", "database": "unreachable"}))
        }
    }
}

/// The HTTP figures, the job and model figures of this replica, and the queue depth of all
/// (left out, with a log line, when the database does not answer: a scrape never fails).
async fn metrics(state: web::Data<AppState>) -> HttpResponse {
    let mut text = state.metrics.render();
    state.chat.telemetry().render(&mut text);
    match state.chat.queue_depth().await {
        Ok(counts) => redline_core::telemetry::render_queue_depth(&mut text, &counts),
        Err(e) => tracing::warn!(error = %e, "metrics: the queue depth could not be read"),
    }
    HttpResponse::Ok().content_type("text/plain; version=0.0.4; charset=utf-8").body(text)
}

async fn openapi() -> HttpResponse {
    HttpResponse::Ok().content_type("application/json").body(crate::openapi::document_json())
}

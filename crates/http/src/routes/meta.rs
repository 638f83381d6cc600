//! Operational endpoints: health, readiness, metrics, the OpenAPI document and its viewer.

use super::Routes;
use actix_web::{web, HttpResponse};
use serde_json::json;

use crate::state::AppState;

pub fn configure(routes: &mut Routes<'_>) {
    routes
        .get("/healthz", healthz)
        .get("/readyz", readyz)
        .get("/metrics", metrics)
        .get("/openapi.json", openapi)
        .get("/docs", docs);
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

/// Interactive documentation of `/openapi.json` (the viewer's script is loaded by the
/// browser from its CDN; the service itself ships no JavaScript).
async fn docs() -> HttpResponse {
    HttpResponse::Ok().content_type("text/html; charset=utf-8").body(
        r#"<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Redline API</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
</head>
<body>
  <script id="api-reference" data-url="/openapi.json"></script>
  <script src="https://cdn.jsdelivr.net/npm/@scalar/api-reference"></script>
  <noscript>The machine-readable description is at <a href="/openapi.json">/openapi.json</a>.</noscript>
</body>
</html>
"#,
    )
}

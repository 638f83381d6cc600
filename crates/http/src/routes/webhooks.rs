//! Webhook endpoints, their delivery log and "send again" (docs/api.md, "Webhooks"). Every
//! operation needs the `admin` scope: a key limited to `read` or `edit` cannot see or change
//! where the owner's events go.

use actix_web::{web, HttpRequest, HttpResponse};
use redline_core::webhooks::{NewEndpoint, WebhookError};
use redline_domain::time_util::iso8601;
use redline_domain::webhook::{EventType, MAX_URL_CHARS};
use redline_ports::{Delivery, DeliveryAttempt, EndpointChanges, WebhookEndpoint};
use serde::Serialize;
use serde_json::{json, Value};
use utoipa::ToSchema;

use super::Routes;
use crate::auth::ApiPrincipal;
use crate::body::BodyOf;
use crate::error::{ApiError, ApiResult};
use crate::paging::{page_of, paged_json};
use crate::state::AppState;
use crate::validation::{Fields, ValidationItem};

pub fn configure(routes: &mut Routes<'_>) {
    routes
        .get("/v1/webhooks", list)
        .post("/v1/webhooks", create)
        .get("/v1/webhooks/{endpoint_id}", get)
        .patch("/v1/webhooks/{endpoint_id}", update)
        .delete("/v1/webhooks/{endpoint_id}", delete)
        .post("/v1/webhooks/{endpoint_id}/rotate-secret", rotate)
        .get("/v1/webhooks/{endpoint_id}/deliveries", deliveries)
        .post("/v1/webhooks/{endpoint_id}/deliveries/{delivery_id}/resend", resend);
}

/// The longest description kept.
const DESCRIPTION_MAX: usize = 200;

impl From<WebhookError> for ApiError {
    fn from(e: WebhookError) -> Self {
        match e {
            WebhookError::NotFound | WebhookError::DeliveryNotFound => ApiError::NotFound(e.to_string()),
            WebhookError::BadUrl(problem) => ApiError::Validation(vec![ValidationItem::new(
                "value_error",
                vec![json!("body"), json!("url")],
                format!("Value error, the URL {problem}"),
                Value::Null,
            )]),
            WebhookError::TooMany => ApiError::Conflict(e.to_string()),
            WebhookError::Store(e) => e.into(),
        }
    }
}

/// An endpoint as answered; its secret only where it is made ([`CreatedEndpoint`], rotation).
#[derive(Serialize, ToSchema)]
pub struct EndpointBody {
    /// `we_` + 32 hex.
    pub id: String,
    pub url: String,
    pub description: String,
    /// The events it receives.
    #[schema(example = json!(["job.completed", "job.failed"]))]
    pub events: Vec<String>,
    pub enabled: bool,
    /// Why it is disabled: by its owner, or after its deliveries failed for 3 days.
    pub disabled_reason: Option<String>,
    /// Since when every attempt failed; null while it works.
    pub failing_since: Option<String>,
    /// Until when the secret before the last rotation still signs.
    pub previous_secret_valid_until: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

fn endpoint_body(e: &WebhookEndpoint) -> EndpointBody {
    EndpointBody {
        id: e.id.clone(),
        url: e.url.clone(),
        description: e.description.clone(),
        events: e.events.iter().map(|ev| ev.as_str().to_owned()).collect(),
        enabled: e.enabled(),
        disabled_reason: e.disabled_reason.clone(),
        failing_since: e.failing_since.map(iso8601),
        previous_secret_valid_until: e.previous_secret_until.map(iso8601),
        created_at: iso8601(e.created_at),
        updated_at: iso8601(e.updated_at),
    }
}

/// An endpoint with its signing secret (`whsec_…`), answered when it is made and when its
/// secret is rotated.
#[derive(Serialize, ToSchema)]
pub struct CreatedEndpoint {
    #[serde(flatten)]
    pub endpoint: EndpointBody,
    /// The secret that signs every message (Standard Webhooks: `whsec_` + base64).
    pub secret: String,
}

#[derive(Serialize, ToSchema)]
pub struct EndpointList {
    pub endpoints: Vec<EndpointBody>,
}

/// The body of `POST /v1/webhooks` (and, every field optional, `PATCH`).
#[derive(ToSchema)]
#[expect(dead_code, reason = "describes the request body in the OpenAPI document only")]
pub struct EndpointRequest {
    /// Where messages go: `https://` (or `http://`); not a loopback, private or link-local
    /// address unless the operator allows it.
    url: String,
    /// Which events it receives (at least one).
    #[schema(example = json!(["job.completed", "job.failed", "job.awaiting_approval"]))]
    events: Vec<String>,
    description: Option<String>,
    /// `PATCH` only: false disables it (owed deliveries are given up), true enables it again.
    enabled: Option<bool>,
}

#[derive(Serialize, ToSchema)]
pub struct AttemptBody {
    pub attempt: i32,
    pub at: String,
    /// The receiver's status; null when it did not answer.
    pub status_code: Option<i32>,
    pub latency_ms: i64,
    pub error: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct DeliveryBody {
    /// `msg_` + 32 hex: the `webhook-id` of every attempt.
    pub id: String,
    pub event: String,
    /// `pending`, `delivered` or `failed`.
    pub status: String,
    pub attempts: i32,
    pub created_at: String,
    /// When a pending delivery is tried next.
    pub next_attempt_at: Option<String>,
    pub delivered_at: Option<String>,
    pub last_status_code: Option<i32>,
    pub last_error: Option<String>,
    /// The JSON body sent.
    pub payload: Value,
    pub attempt_log: Vec<AttemptBody>,
}

fn delivery_body(d: Delivery, attempts: Vec<DeliveryAttempt>) -> DeliveryBody {
    let pending = d.status == redline_ports::DeliveryStatus::Pending;
    DeliveryBody {
        payload: serde_json::from_str(&d.payload).unwrap_or(Value::Null),
        id: d.id,
        event: d.event.as_str().to_owned(),
        status: d.status.as_str().to_owned(),
        attempts: d.attempts,
        created_at: iso8601(d.created_at),
        next_attempt_at: pending.then(|| iso8601(d.next_attempt_at)),
        delivered_at: d.delivered_at.map(iso8601),
        last_status_code: d.last_status_code,
        last_error: d.last_error,
        attempt_log: attempts
            .into_iter()
            .map(|a| AttemptBody {
                attempt: a.attempt,
                at: iso8601(a.at),
                status_code: a.status_code,
                latency_ms: a.latency_ms,
                error: a.error,
            })
            .collect(),
    }
}

#[derive(Serialize, ToSchema)]
pub struct DeliveryList {
    pub deliveries: Vec<DeliveryBody>,
    /// The `cursor` of the next page; null on the last.
    pub next_cursor: Option<String>,
}

/// The fields of a create (`all_required`) or an update.
fn endpoint_fields(body: &Value, all_required: bool) -> ApiResult<(EndpointChanges, Option<bool>)> {
    let mut f = if all_required { Fields::body(body)? } else { Fields::optional_body(body)? };
    let mut changes = EndpointChanges::default();
    let url = if all_required { f.required_str("url") } else { f.optional_str("url") };
    if let Some(url) = url {
        if url.chars().count() > MAX_URL_CHARS {
            f.problem("url", "string_too_long", "String should have at most 2048 characters", json!(url));
        } else {
            changes.url = Some(url.to_owned());
        }
    }
    changes.description = f.optional_bounded_str("description", DESCRIPTION_MAX).map(str::to_owned);
    match f.raw("events") {
        None | Some(Value::Null) if !all_required => {}
        Some(Value::Array(items)) if !items.is_empty() => {
            let parsed: Option<Vec<EventType>> = items.iter().map(|v| v.as_str().and_then(EventType::parse)).collect();
            match parsed {
                Some(events) => {
                    let mut unique: Vec<EventType> = Vec::new();
                    for e in events {
                        if !unique.contains(&e) {
                            unique.push(e);
                        }
                    }
                    changes.events = Some(unique);
                }
                None => f.problem(
                    "events",
                    "literal_error",
                    format!("Each event should be one of {}", event_names()),
                    Value::Array(items.clone()),
                ),
            }
        }
        other => f.problem(
            "events",
            "list_type",
            format!("Input should be a non-empty list of events: {}", event_names()),
            other.cloned().unwrap_or(Value::Null),
        ),
    }
    let enabled = if all_required { None } else { f.optional_bool("enabled") };
    f.finish()?;
    Ok((changes, enabled))
}

fn event_names() -> String {
    EventType::ALL.iter().map(|e| format!("'{}'", e.as_str())).collect::<Vec<_>>().join(", ")
}

/// The owner's webhook endpoints, oldest first.
#[utoipa::path(get, path = "/v1/webhooks", operation_id = "list_webhooks", tag = "webhooks", security(("bearer" = ["admin"])),
    responses((status = 200, body = EndpointList), (status = 401, body = crate::openapi::ErrorBody),
        (status = 403, body = crate::openapi::ErrorBody)))]
pub async fn list(state: web::Data<AppState>, principal: ApiPrincipal) -> ApiResult<HttpResponse> {
    let endpoints = state.webhooks.list(principal.0.owner).await?;
    Ok(HttpResponse::Ok().json(EndpointList { endpoints: endpoints.iter().map(endpoint_body).collect() }))
}

/// Registers an endpoint; the answer holds its signing secret.
#[utoipa::path(post, path = "/v1/webhooks", operation_id = "create_webhook", tag = "webhooks", security(("bearer" = ["admin"])),
    request_body(content = EndpointRequest),
    responses((status = 201, body = CreatedEndpoint), (status = 401, body = crate::openapi::ErrorBody),
        (status = 403, body = crate::openapi::ErrorBody),
        (status = 409, description = "The owner has 20 endpoints already", body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody)))]
pub async fn create(state: web::Data<AppState>, principal: ApiPrincipal, body: BodyOf) -> ApiResult<HttpResponse> {
    let body = body.checked()?;
    let (changes, _) = endpoint_fields(&body.0, true)?;
    let new = NewEndpoint {
        url: changes.url.unwrap_or_default(),
        description: changes.description.unwrap_or_default(),
        events: changes.events.unwrap_or_default(),
    };
    let endpoint = state.webhooks.create(principal.0.owner, new).await?;
    Ok(HttpResponse::Created()
        .json(CreatedEndpoint { endpoint: endpoint_body(&endpoint), secret: endpoint.secret.clone() }))
}

/// One endpoint.
#[utoipa::path(get, path = "/v1/webhooks/{endpoint_id}", operation_id = "get_webhook", tag = "webhooks", security(("bearer" = ["admin"])),
    params(("endpoint_id" = String, Path)),
    responses((status = 200, body = EndpointBody), (status = 401, body = crate::openapi::ErrorBody),
        (status = 403, body = crate::openapi::ErrorBody), (status = 404, body = crate::openapi::ErrorBody)))]
pub async fn get(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let endpoint = state.webhooks.get(principal.0.owner, &path).await?;
    Ok(HttpResponse::Ok().json(endpoint_body(&endpoint)))
}

/// Changes an endpoint's URL, events or description, or disables (`enabled: false`) or
/// enables it again.
#[utoipa::path(patch, path = "/v1/webhooks/{endpoint_id}", operation_id = "update_webhook", tag = "webhooks", security(("bearer" = ["admin"])),
    params(("endpoint_id" = String, Path)), request_body(content = Option<EndpointRequest>),
    responses((status = 200, body = EndpointBody), (status = 401, body = crate::openapi::ErrorBody),
        (status = 403, body = crate::openapi::ErrorBody), (status = 404, body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody)))]
pub async fn update(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    path: web::Path<String>,
    body: BodyOf,
) -> ApiResult<HttpResponse> {
    let body = body.checked()?;
    let (changes, enabled) = endpoint_fields(&body.0, false)?;
    let endpoint = state.webhooks.update(principal.0.owner, &path, changes, enabled).await?;
    Ok(HttpResponse::Ok().json(endpoint_body(&endpoint)))
}

/// Deletes an endpoint and its delivery log.
#[utoipa::path(delete, path = "/v1/webhooks/{endpoint_id}", operation_id = "delete_webhook", tag = "webhooks", security(("bearer" = ["admin"])),
    params(("endpoint_id" = String, Path)),
    responses((status = 204, description = "Deleted"), (status = 401, body = crate::openapi::ErrorBody),
        (status = 403, body = crate::openapi::ErrorBody), (status = 404, body = crate::openapi::ErrorBody)))]
pub async fn delete(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    state.webhooks.delete(principal.0.owner, &path).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// A new signing secret; the one before still signs (a second signature) for 24 hours.
#[utoipa::path(post, path = "/v1/webhooks/{endpoint_id}/rotate-secret", operation_id = "rotate_webhook_secret", tag = "webhooks", security(("bearer" = ["admin"])),
    params(("endpoint_id" = String, Path)),
    responses((status = 200, body = CreatedEndpoint), (status = 401, body = crate::openapi::ErrorBody),
        (status = 403, body = crate::openapi::ErrorBody), (status = 404, body = crate::openapi::ErrorBody)))]
pub async fn rotate(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let endpoint = state.webhooks.rotate(principal.0.owner, &path).await?;
    Ok(HttpResponse::Ok().json(CreatedEndpoint { endpoint: endpoint_body(&endpoint), secret: endpoint.secret.clone() }))
}

/// The endpoint's delivery log, newest first, a page at a time, each delivery with its
/// attempts.
#[utoipa::path(get, path = "/v1/webhooks/{endpoint_id}/deliveries", operation_id = "list_webhook_deliveries", tag = "webhooks", security(("bearer" = ["admin"])),
    params(("endpoint_id" = String, Path), crate::paging::PageParams),
    responses((status = 200, body = DeliveryList,
            headers(("Link" = String, description = "`<url>; rel=\"next\"` when another page follows"))),
        (status = 401, body = crate::openapi::ErrorBody),
        (status = 403, body = crate::openapi::ErrorBody), (status = 404, body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody)))]
pub async fn deliveries(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    path: web::Path<String>,
    req: HttpRequest,
) -> ApiResult<HttpResponse> {
    let page = state.webhooks.deliveries(principal.0.owner, &path, &page_of(&req)?).await?;
    let page = page.map(|(d, a)| delivery_body(d, a));
    Ok(paged_json(&req, &state.config.public_base_url, page, |deliveries, next_cursor| DeliveryList {
        deliveries,
        next_cursor,
    }))
}

/// "Send again": the delivery is owed again now, under the same `webhook-id`.
#[utoipa::path(post, path = "/v1/webhooks/{endpoint_id}/deliveries/{delivery_id}/resend", operation_id = "resend_webhook_delivery", tag = "webhooks",
    security(("bearer" = ["admin"])),
    params(("endpoint_id" = String, Path), ("delivery_id" = String, Path)),
    responses((status = 202, body = DeliveryBody), (status = 401, body = crate::openapi::ErrorBody),
        (status = 403, body = crate::openapi::ErrorBody), (status = 404, body = crate::openapi::ErrorBody)))]
pub async fn resend(
    state: web::Data<AppState>,
    principal: ApiPrincipal,
    path: web::Path<(String, String)>,
) -> ApiResult<HttpResponse> {
    let (endpoint, delivery) = path.into_inner();
    let d = state.webhooks.redeliver(principal.0.owner, &endpoint, &delivery).await?;
    Ok(HttpResponse::Accepted().json(delivery_body(d, Vec::new())))
}

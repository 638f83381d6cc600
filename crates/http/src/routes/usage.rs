//! `GET /v1/usage` and promotion codes (docs/api.md, "Usage and billing").

use super::Routes;
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::{web, HttpResponse, HttpResponseBuilder};
use redline_core::usage::{PromotionInfo, UsageInfo};
use redline_domain::time_util::iso8601;
use redline_domain::Owner;
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::{ApiPrincipal, WebUser};
use crate::body::BodyOf;
use crate::error::ApiResult;
use crate::state::AppState;
use crate::validation::Fields;

pub fn configure(routes: &mut Routes<'_>) {
    routes.get("/v1/usage", usage).post("/v1/users/me/promotions/redeem", redeem);
}

/// the contract's ActivePromotionInfo.
#[derive(Serialize, ToSchema)]
pub struct ActivePromotionInfo {
    pub redemption_id: String,
    pub name: String,
    pub ops_remaining: i64,
    pub ops_granted: i64,
    pub expires_at: Option<String>,
}

/// the contract's UsageInfo.
#[derive(Serialize, ToSchema)]
pub struct UsageBody {
    pub monthly_used: i64,
    /// -1 means unlimited.
    pub monthly_limit: i64,
    /// -1 means unlimited.
    pub monthly_remaining: i64,
    pub was_billable: bool,
    pub ops_charged: i64,
    pub quota_exhausted: bool,
    pub subscription_tier: String,
    /// `tier` or `promo`; null for non-billable operations.
    pub bucket_used: Option<String>,
    pub redemption_id: Option<String>,
    pub promotions: Vec<ActivePromotionInfo>,
    /// When this month's count starts again (the first of the next month, 00:00 UTC). In
    /// `GET /v1/usage`; absent from the usage stored with a job.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resets_at: Option<String>,
    /// The account's attachment files and the plan's limit for them. In `GET /v1/usage`;
    /// absent from the usage stored with a job.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attachment_storage: Option<AttachmentStorage>,
}

/// Bytes of attachment files kept, and the most the plan keeps.
#[derive(Serialize, ToSchema)]
pub struct AttachmentStorage {
    pub used_bytes: u64,
    /// -1 means unlimited.
    pub limit_bytes: i64,
}

/// The body of `POST /v1/users/me/promotions/redeem`.
#[derive(ToSchema)]
#[expect(dead_code, reason = "describes the request body in the OpenAPI document only")]
pub struct RedeemRequest {
    /// The promotion code.
    code: String,
}

fn promotion(p: PromotionInfo) -> ActivePromotionInfo {
    ActivePromotionInfo {
        redemption_id: p.redemption_id,
        name: p.name,
        ops_remaining: p.ops_remaining,
        ops_granted: p.ops_granted,
        expires_at: p.expires_at.map(iso8601),
    }
}

impl From<UsageInfo> for UsageBody {
    fn from(u: UsageInfo) -> Self {
        Self {
            monthly_used: u.monthly_used,
            monthly_limit: u.monthly_limit,
            monthly_remaining: u.monthly_remaining,
            was_billable: u.was_billable,
            ops_charged: u.ops_charged,
            quota_exhausted: u.quota_exhausted,
            subscription_tier: u.subscription_tier.to_string(),
            bucket_used: u.bucket_used.map(|b| b.as_str().to_owned()),
            redemption_id: u.redemption_id,
            promotions: u.promotions.into_iter().map(promotion).collect(),
            resets_at: Some(iso8601(u.resets_at)),
            attachment_storage: None,
        }
    }
}

/// Adds `X-Usage-Limit`, `X-Usage-Used`, `X-Usage-Remaining` (billable responses).
pub fn usage_headers(builder: &mut HttpResponseBuilder, u: &UsageInfo) {
    for (name, value) in [
        ("x-usage-limit", u.monthly_limit),
        ("x-usage-used", u.monthly_used),
        ("x-usage-remaining", u.monthly_remaining),
    ] {
        if let Ok(v) = HeaderValue::from_str(&value.to_string()) {
            builder.insert_header((HeaderName::from_static(name), v));
        }
    }
}

/// The caller's usage this cycle (not billable).
#[utoipa::path(get, path = "/v1/usage", tag = "usage", security(("bearer" = ["read"])),
    responses((status = 200, body = UsageBody), (status = 401, body = crate::openapi::ErrorBody)))]
pub async fn usage(state: web::Data<AppState>, principal: ApiPrincipal) -> ApiResult<HttpResponse> {
    let owner = principal.0.owner;
    let info = state.usage.current(owner).await?;
    let (used_bytes, limit) = state.attachments.storage(owner).await?;
    let limit_bytes = limit.map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX));
    Ok(HttpResponse::Ok().json(UsageBody {
        attachment_storage: Some(AttachmentStorage { used_bytes, limit_bytes }),
        ..UsageBody::from(info)
    }))
}

/// Redeems a promotion code: its operations become a grant of the signed-in user.
#[utoipa::path(post, path = "/v1/users/me/promotions/redeem", tag = "usage", security(("session" = [])),
    request_body(content = RedeemRequest),
    responses(
        (status = 201, body = ActivePromotionInfo),
        (status = 401, body = crate::openapi::ErrorBody),
        (status = 404, description = "Unknown or expired code", body = crate::openapi::ErrorBody),
        (status = 409, description = "Already redeemed by this account", body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody),
        (status = 429, description = "Too many wrong codes from this account or address", body = crate::openapi::ErrorBody),
    ))]
pub async fn redeem(
    state: web::Data<AppState>,
    req: actix_web::HttpRequest,
    web_user: WebUser,
    body: BodyOf,
) -> ApiResult<HttpResponse> {
    let body = body.checked()?;
    let mut f = Fields::body(&body.0)?;
    let code = f.required_str("code");
    f.finish()?;
    let client = crate::client_addr::of(&req, &state.config.trusted_proxies);
    let guess = state.identity.take_promo_guess(web_user.user.id, &client).await?;
    let redeemed = state.usage.redeem(Owner::User(web_user.user.id), code.unwrap_or_default()).await;
    if !matches!(redeemed, Err(redline_core::usage::UsageError::UnknownCode)) {
        state.identity.promo_guess_found(guess).await?;
    }
    Ok(HttpResponse::Created().json(promotion(redeemed?)))
}

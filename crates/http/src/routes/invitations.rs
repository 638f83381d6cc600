//! Invitations to organizations (docs/api.md, "Accounts, keys and organizations"): the
//! organization's pending ones for its admins, and the invitee's side of a mailed link.

use super::Routes;
use actix_web::{web, HttpResponse};
use redline_domain::time_util::iso8601;
use redline_ports::records::InvitationRecord;
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::WebUser;
use crate::body::JsonBody;
use crate::error::{ApiError, ApiResult};
use crate::routes::users::parse_org_id;
use crate::state::AppState;
use crate::validation::Fields;

pub fn configure(routes: &mut Routes<'_>) {
    routes
        .get("/v1/users/me/organizations/{org_id}/invitations", list_invitations)
        .delete("/v1/users/me/organizations/{org_id}/invitations/{invitation_id}", withdraw_invitation)
        .post("/v1/users/me/invitations/lookup", lookup_invitation)
        .post("/v1/users/me/invitations/accept", accept_invitation)
        .post("/v1/users/me/invitations/decline", decline_invitation);
}

/// A pending invitation, as its organization's admins see it.
#[derive(Serialize, ToSchema)]
pub struct InvitationInfo {
    /// `inv_…`.
    pub invitation_id: String,
    pub org_id: String,
    pub email: String,
    pub role: String,
    /// Always `invited`: accepted, declined, withdrawn and expired invitations are gone.
    pub status: String,
    pub created_at: String,
    pub expires_at: String,
}

#[derive(Serialize, ToSchema)]
pub struct InvitationList {
    pub invitations: Vec<InvitationInfo>,
}

/// What an invitation offers, to the person it was sent to.
#[derive(Serialize, ToSchema)]
pub struct InvitationOffer {
    pub org_id: String,
    pub org_name: String,
    pub role: String,
    /// Who invited; null when their account has no address.
    pub invited_by: Option<String>,
    pub expires_at: String,
}

/// `{token}`: the token of the mailed link.
#[derive(ToSchema)]
#[expect(dead_code, reason = "describes the request body in the OpenAPI document only")]
pub struct InvitationToken {
    token: String,
}

/// The membership an accepted invitation made.
#[derive(Serialize, ToSchema)]
pub struct Joined {
    pub org_id: String,
    pub user_id: String,
    pub role: String,
    pub created_at: String,
}

pub fn invitation_info(i: InvitationRecord) -> InvitationInfo {
    InvitationInfo {
        invitation_id: i.id,
        org_id: i.org_id.to_string(),
        email: i.email.to_string(),
        role: i.role,
        status: "invited".to_owned(),
        created_at: iso8601(i.created_at),
        expires_at: iso8601(i.expires_at),
    }
}

fn token(body: &serde_json::Value) -> ApiResult<String> {
    let mut f = Fields::body(body)?;
    let token = f.required_secret("token").map(str::to_owned);
    f.finish()?;
    token.ok_or_else(|| ApiError::Internal("token validated twice".into()))
}

/// The organization's pending invitations (owners and admins).
#[utoipa::path(get, path = "/v1/users/me/organizations/{org_id}/invitations", tag = "organizations", security(("session" = [])),
    params(("org_id" = String, Path)),
    responses((status = 200, body = InvitationList), (status = 403, body = crate::openapi::ErrorBody),
        (status = 404, body = crate::openapi::ErrorBody)))]
pub async fn list_invitations(
    state: web::Data<AppState>,
    web_user: WebUser,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let pending = state.identity.invitations_of(web_user.user.id, parse_org_id(&path)?).await?;
    Ok(HttpResponse::Ok().json(InvitationList { invitations: pending.into_iter().map(invitation_info).collect() }))
}

/// Withdraws a pending invitation (owners and admins): its link stops working.
#[utoipa::path(delete, path = "/v1/users/me/organizations/{org_id}/invitations/{invitation_id}", tag = "organizations", security(("session" = [])),
    params(("org_id" = String, Path), ("invitation_id" = String, Path)),
    responses((status = 204, description = "Withdrawn"), (status = 403, body = crate::openapi::ErrorBody),
        (status = 404, body = crate::openapi::ErrorBody)))]
pub async fn withdraw_invitation(
    state: web::Data<AppState>,
    web_user: WebUser,
    path: web::Path<(String, String)>,
) -> ApiResult<HttpResponse> {
    let (org, id) = path.into_inner();
    state.identity.withdraw_invitation(web_user.user.id, parse_org_id(&org)?, &id).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// What the invitation of a mailed link offers, for the signed-in person it was sent to.
#[utoipa::path(post, path = "/v1/users/me/invitations/lookup", tag = "organizations", security(("session" = [])),
    request_body = InvitationToken,
    responses((status = 200, body = InvitationOffer),
        (status = 403, description = "Sent to another address", body = crate::openapi::ErrorBody),
        (status = 404, description = "Unknown, used, withdrawn or expired", body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody)))]
pub async fn lookup_invitation(
    state: web::Data<AppState>,
    web_user: WebUser,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let token = token(&body.0)?;
    let (invitation, org_name, inviter) = state.identity.invitation_summary(&web_user.user, &token).await?;
    Ok(HttpResponse::Ok().json(InvitationOffer {
        org_id: invitation.org_id.to_string(),
        org_name,
        role: invitation.role,
        invited_by: inviter.map(|e| e.to_string()),
        expires_at: iso8601(invitation.expires_at),
    }))
}

/// Accepts the invitation of a mailed link: the signed-in person becomes a member.
#[utoipa::path(post, path = "/v1/users/me/invitations/accept", tag = "organizations", security(("session" = [])),
    request_body = InvitationToken,
    responses((status = 201, body = Joined),
        (status = 403, description = "Sent to another address", body = crate::openapi::ErrorBody),
        (status = 404, description = "Unknown, used, withdrawn or expired", body = crate::openapi::ErrorBody),
        (status = 409, description = "Already a member", body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody)))]
pub async fn accept_invitation(
    state: web::Data<AppState>,
    web_user: WebUser,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let token = token(&body.0)?;
    let member = state.identity.accept_invitation(&web_user.user, &token).await?;
    Ok(HttpResponse::Created().json(Joined {
        org_id: member.org_id.to_string(),
        user_id: member.user_id.to_string(),
        role: member.role,
        created_at: iso8601(member.created_at),
    }))
}

/// Declines the invitation of a mailed link.
#[utoipa::path(post, path = "/v1/users/me/invitations/decline", tag = "organizations", security(("session" = [])),
    request_body = InvitationToken,
    responses((status = 204, description = "Declined"),
        (status = 403, description = "Sent to another address", body = crate::openapi::ErrorBody),
        (status = 404, description = "Unknown, used, withdrawn or expired", body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody)))]
pub async fn decline_invitation(
    state: web::Data<AppState>,
    web_user: WebUser,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let token = token(&body.0)?;
    state.identity.decline_invitation(&web_user.user, &token).await?;
    Ok(HttpResponse::NoContent().finish())
}

//! `/v1/users/*`: the signed-in web-app user, their API keys and organizations. Web-app
//! session tokens only; an API key here is a 401 (the contract's Authentication 7).

use super::Routes;
use actix_web::{web, HttpRequest, HttpResponse};
use redline_core::identity::KeyTerms;
use redline_core::identity::MemberListing;
use redline_domain::keys::redact_prefix;
use redline_domain::page::PageRequest;
use redline_domain::time_util::{iso8601, parse_iso8601, Millis};
use redline_domain::{Email, KeyId, OrgId, Owner, Scope, Scopes, UserId};
use redline_ports::records::{KeyRecord, OrgRecord};
use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

use crate::auth::WebUser;
use crate::body::BodyOf;
use crate::error::{ApiError, ApiResult};
use crate::paging::{page_of, paged_json};
use crate::query::Query;
use crate::state::AppState;
use crate::validation::Fields;

pub fn configure(routes: &mut Routes<'_>) {
    routes
        .get("/v1/users/me", me)
        .get("/v1/users/me/api-keys", list_keys)
        .post("/v1/users/me/api-keys", create_key)
        .delete("/v1/users/me/api-keys/{key_id}", revoke_key)
        .get("/v1/users/me/organizations", list_orgs)
        .post("/v1/users/me/organizations", create_org)
        .get("/v1/users/me/organizations/{org_id}", get_org)
        .get("/v1/users/me/organizations/{org_id}/members", list_members)
        .post("/v1/users/me/organizations/{org_id}/members", add_member)
        .delete("/v1/users/me/organizations/{org_id}/members/{user_id}", remove_member)
        .get("/v1/users/me/organizations/{org_id}/api-keys", list_org_keys)
        .post("/v1/users/me/organizations/{org_id}/api-keys", create_org_key)
        .delete("/v1/users/me/organizations/{org_id}/api-keys/{key_id}", revoke_org_key);
}

const NAME_MAX: usize = 200;

#[derive(Serialize, ToSchema)]
pub struct OrgMembership {
    pub org_id: String,
    pub name: String,
    pub role: String,
}

#[derive(Serialize, ToSchema)]
pub struct Me {
    pub user_id: String,
    pub email: Option<String>,
    /// Whether the address is proven by a mailed link (exports are mailed only to proven
    /// addresses; docs/api.md, "E-mail verification").
    pub email_verified: bool,
    pub name: Option<String>,
    pub subscription_tier: String,
    pub created_at: String,
    pub organizations: Vec<OrgMembership>,
}

/// A key as listed: never the key itself, only its redacted form.
#[derive(Serialize, ToSchema)]
pub struct KeyInfo {
    pub key_id: String,
    pub name: String,
    /// The first characters of the key, e.g. `sk_1a2b3c4d…`.
    pub key_preview: String,
    pub created_at: String,
    pub revoked: bool,
    pub revoked_at: Option<String>,
    /// Who made the key; null for a key the operator made.
    pub created_by: Option<KeyCreator>,
    /// What the key may do (`read`, `edit`, `admin`); a key made without naming scopes holds
    /// all three.
    pub scopes: Vec<String>,
    /// When the key stops working by itself; null: never.
    pub expires_at: Option<String>,
    /// Whether `expires_at` has passed (an expired key answers 401 like a revoked one).
    pub expired: bool,
    /// When the key last authenticated a request, to the minute; null: never.
    pub last_used_at: Option<String>,
}

/// The user who made a key.
#[derive(Serialize, ToSchema)]
pub struct KeyCreator {
    pub user_id: String,
    /// Null for an account without an address (an agent's).
    pub email: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct KeyList {
    /// One page of the keys, newest first, revoked ones included.
    pub keys: Vec<KeyInfo>,
    /// How many keys this page holds.
    pub total: usize,
    /// Where the next page starts (pass it as `cursor`; the `Link` header carries the whole
    /// address); null on the last page.
    pub next_cursor: Option<String>,
}

/// A key just created: the only time the key itself is shown.
#[derive(Serialize, ToSchema)]
pub struct CreatedKey {
    pub key_id: String,
    pub name: String,
    /// The API key. Store it now: it cannot be shown again.
    pub api_key: String,
    pub key_preview: String,
    pub created_at: String,
    pub scopes: Vec<String>,
    pub expires_at: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct OrgInfo {
    pub org_id: String,
    pub name: String,
    pub owner_user_id: String,
    pub subscription_tier: String,
    pub created_at: String,
}

#[derive(Serialize, ToSchema)]
pub struct MemberInfo {
    pub user_id: String,
    /// The member's e-mail; null for an account that has none (an agent's).
    pub email: Option<String>,
    pub role: String,
    pub created_at: String,
}

/// `GET /v1/users/me/organizations`.
#[derive(Serialize, ToSchema)]
pub struct OrgList {
    /// One page of the organizations, oldest first.
    pub organizations: Vec<OrgInfo>,
    /// How many organizations this page holds.
    pub total: usize,
    /// Where the next page starts (pass it as `cursor`; the `Link` header carries the whole
    /// address); null on the last page.
    pub next_cursor: Option<String>,
}

/// `GET /v1/users/me/organizations/{org_id}/members`.
#[derive(Serialize, ToSchema)]
pub struct MemberList {
    /// One page of the members, oldest membership first.
    pub members: Vec<MemberInfo>,
    /// How many members this page holds.
    pub total: usize,
    /// Where the next page starts (pass it as `cursor`; the `Link` header carries the whole
    /// address); null on the last page.
    pub next_cursor: Option<String>,
}

/// The body of a key's creation (optional).
#[derive(ToSchema)]
#[expect(dead_code, reason = "describes the request body in the OpenAPI document only")]
pub struct KeyRequest {
    /// The key's name; `default` when absent or blank.
    #[schema(max_length = 200)]
    name: Option<String>,
    /// What the key may do: any of `read` (sessions, documents, jobs, history, versions,
    /// attachments, templates, usage, exports), `edit` (also chat, approvals, uploads, saves,
    /// restores, deletions, cancels; brings `read`), `admin` (the account itself: an agent's
    /// handoff). Absent: all three. A key used outside them → 403 naming the scope it lacks.
    #[schema(min_items = 1)]
    scopes: Option<Vec<ScopeName>>,
    /// When the key stops working (RFC 3339, in the future; a time already past → 422); then
    /// it answers 401 like a revoked key. Absent: never.
    #[schema(format = DateTime)]
    expires_at: Option<String>,
}

/// The body of `POST /v1/users/me/organizations`.
#[derive(ToSchema)]
#[expect(dead_code, reason = "describes the request body in the OpenAPI document only")]
pub struct OrgRequest {
    /// Not blank; at most 200 characters.
    #[schema(min_length = 1, max_length = 200)]
    name: String,
}

/// The body of `POST /v1/users/me/organizations/{org_id}/members`.
#[derive(ToSchema)]
#[expect(dead_code, reason = "describes the request body in the OpenAPI document only")]
pub struct MemberRequest {
    /// The e-mail address of an existing user.
    #[schema(format = Email)]
    email: String,
    /// `member` when absent.
    role: Option<MemberRole>,
}

/// What a key may do (docs/api.md, "Key scopes, expiry and last use").
#[derive(ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ScopeName {
    Read,
    Edit,
    Admin,
}

/// A member's role as it can be given.
#[derive(ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum MemberRole {
    Member,
    Admin,
}

fn scope_names(scopes: redline_domain::Scopes) -> Vec<String> {
    scopes.iter().map(|s| s.as_str().to_owned()).collect()
}

fn key_info(k: KeyRecord, emails: &std::collections::HashMap<UserId, Email>, now: Millis) -> KeyInfo {
    KeyInfo {
        scopes: scope_names(k.scopes),
        expires_at: k.expires_at.map(iso8601),
        expired: k.expires_at.is_some_and(|at| at <= now),
        last_used_at: k.last_used_at.map(iso8601),
        key_id: k.id.to_string(),
        name: k.name,
        key_preview: redact_prefix(&k.lookup_prefix),
        created_at: iso8601(k.created_at),
        revoked: k.revoked_at.is_some(),
        revoked_at: k.revoked_at.map(iso8601),
        created_by: k
            .created_by
            .map(|user| KeyCreator { user_id: user.to_string(), email: emails.get(&user).map(Email::to_string) }),
    }
}

fn org_info(o: OrgRecord) -> OrgInfo {
    OrgInfo {
        org_id: o.id.to_string(),
        name: o.name,
        owner_user_id: o.owner_user_id.to_string(),
        subscription_tier: o.plan.plan.to_string(),
        created_at: iso8601(o.created_at),
    }
}

fn member_info(listed: MemberListing) -> MemberInfo {
    let MemberListing { member: m, email } = listed;
    MemberInfo {
        user_id: m.user_id.to_string(),
        email: email.map(|e| e.to_string()),
        role: m.role,
        created_at: iso8601(m.created_at),
    }
}

/// A new key's name and terms from `{name?, scopes?, expires_at?}`.
fn new_key_body(body: &serde_json::Value, now: Millis) -> ApiResult<(String, KeyTerms)> {
    let mut f = Fields::optional_body(body)?;
    let name = f.optional_bounded_str("name", NAME_MAX).map(redline_domain::account::plain_name);
    let mut terms = KeyTerms::default();
    match f.raw("scopes") {
        None | Some(serde_json::Value::Null) => {}
        Some(serde_json::Value::Array(items)) if !items.is_empty() => {
            let parsed: Option<Vec<Scope>> = items.iter().map(|v| v.as_str().and_then(Scope::parse)).collect();
            match parsed {
                Some(scopes) => terms.scopes = Scopes::of(scopes),
                None => f.problem(
                    "scopes",
                    "literal_error",
                    "Each scope should be 'read', 'edit' or 'admin'",
                    serde_json::Value::Array(items.clone()),
                ),
            }
        }
        Some(other) => f.problem(
            "scopes",
            "list_type",
            "Input should be a non-empty list of scopes: 'read', 'edit', 'admin'",
            other.clone(),
        ),
    }
    if let Some(raw) = f.optional_str("expires_at") {
        match parse_iso8601(raw) {
            Some(at) if at > now => terms.expires_at = Some(at),
            Some(_) => {
                f.problem("expires_at", "value_error", "Value error, expires_at must lie in the future", raw.into())
            }
            None => f.problem(
                "expires_at",
                "datetime_parsing",
                "Input should be a valid datetime (RFC 3339, e.g. 2027-01-31T00:00:00Z)",
                raw.into(),
            ),
        }
    }
    f.finish()?;
    Ok((name.filter(|n| !n.is_empty()).unwrap_or_else(|| "default".to_owned()), terms))
}

fn parse_key_id(raw: &str) -> ApiResult<KeyId> {
    KeyId::parse(raw).ok_or_else(|| ApiError::NotFound("API key not found".to_owned()))
}

pub(crate) fn parse_org_id(raw: &str) -> ApiResult<OrgId> {
    OrgId::parse(raw).ok_or_else(|| ApiError::NotFound("Organization not found".to_owned()))
}

/// The signed-in user.
#[utoipa::path(get, path = "/v1/users/me", tag = "users", security(("session" = [])),
    responses((status = 200, body = Me), (status = 401, body = crate::openapi::ErrorBody)))]
pub async fn me(state: web::Data<AppState>, web_user: WebUser) -> ApiResult<HttpResponse> {
    let user = web_user.user;
    let email_verified =
        matches!(state.identity.email_status(&user).await?, redline_core::identity::EmailStatus::Verified(_));
    let organizations = state
        .identity
        .memberships(user.id)
        .await?
        .into_iter()
        .map(|(org, member)| OrgMembership { org_id: org.id.to_string(), name: org.name, role: member.role })
        .collect();
    Ok(HttpResponse::Ok().json(Me {
        user_id: user.id.to_string(),
        email: user.email.map(|e| e.to_string()),
        email_verified,
        name: user.name,
        subscription_tier: user.plan.plan.to_string(),
        created_at: iso8601(user.created_at),
        organizations,
    }))
}

async fn keys_response(
    state: &AppState,
    req: &HttpRequest,
    owner: Owner,
    page: &PageRequest,
) -> ApiResult<HttpResponse> {
    let page = state.identity.list_keys(owner, page).await?;
    let mut creators: Vec<UserId> = page.items.iter().filter_map(|k| k.created_by).collect();
    creators.sort_unstable_by_key(|u| u.to_string());
    creators.dedup();
    let emails = state.identity.emails_of(&creators).await?;
    let now = state.identity.now();
    let page = page.map(|k| key_info(k, &emails, now));
    Ok(paged_json(req, &state.config.public_base_url, page, |keys, next_cursor| KeyList {
        total: keys.len(),
        keys,
        next_cursor,
    }))
}

async fn create_key_response(
    state: &AppState,
    owner: Owner,
    by: UserId,
    body: &serde_json::Value,
) -> ApiResult<HttpResponse> {
    let (name, terms) = new_key_body(body, state.identity.now())?;
    let created = state.identity.create_key(owner, &name, Some(by), terms).await?;
    Ok(HttpResponse::Created().json(CreatedKey {
        key_id: created.record.id.to_string(),
        name: created.record.name,
        api_key: created.key.expose().to_owned(),
        key_preview: created.key.redacted(),
        created_at: iso8601(created.record.created_at),
        scopes: scope_names(created.record.scopes),
        expires_at: created.record.expires_at.map(iso8601),
    }))
}

/// The user's API keys, newest first, revoked ones included (redacted), a page at a time.
#[utoipa::path(get, path = "/v1/users/me/api-keys", tag = "users", security(("session" = [])),
    params(
        crate::paging::PageParams),
    responses((status = 200, description = "The keys, newest first", body = KeyList,
            headers(("Link" = String, description = "`<url>; rel=\"next\"` when another page follows"))),
        (status = 401, body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody)))]
pub async fn list_keys(state: web::Data<AppState>, web_user: WebUser, req: HttpRequest) -> ApiResult<HttpResponse> {
    let page = page_of(&req)?;
    keys_response(&state, &req, Owner::User(web_user.user.id), &page).await
}

/// Creates an API key; the body holds the key once.
#[utoipa::path(post, path = "/v1/users/me/api-keys", tag = "users", security(("session" = [])),
    request_body(content = Option<KeyRequest>),
    responses(
        (status = 201, body = CreatedKey),
        (status = 401, body = crate::openapi::ErrorBody),
        (status = 409, description = "Plan's key limit reached (Free 5, others 25)", body = crate::openapi::ErrorBody),
    ))]
pub async fn create_key(state: web::Data<AppState>, web_user: WebUser, body: BodyOf) -> ApiResult<HttpResponse> {
    let body = body.checked()?;
    create_key_response(&state, Owner::User(web_user.user.id), web_user.user.id, &body.0).await
}

/// Revokes a key, permanently.
#[utoipa::path(delete, path = "/v1/users/me/api-keys/{key_id}", tag = "users", security(("session" = [])),
    params(("key_id" = String, Path)),
    responses((status = 204, description = "Revoked"), (status = 401, body = crate::openapi::ErrorBody), (status = 404, body = crate::openapi::ErrorBody)))]
pub async fn revoke_key(
    state: web::Data<AppState>,
    web_user: WebUser,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let key = parse_key_id(&path)?;
    state.identity.revoke_key(Owner::User(web_user.user.id), key).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The organizations the user belongs to, oldest first, a page at a time.
#[utoipa::path(get, path = "/v1/users/me/organizations", tag = "organizations", security(("session" = [])),
    params(
        crate::paging::PageParams),
    responses((status = 200, description = "The organizations, oldest first", body = OrgList,
            headers(("Link" = String, description = "`<url>; rel=\"next\"` when another page follows"))),
        (status = 401, body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody)))]
pub async fn list_orgs(state: web::Data<AppState>, web_user: WebUser, req: HttpRequest) -> ApiResult<HttpResponse> {
    let page = page_of(&req)?;
    let page = state.identity.orgs_of(web_user.user.id, &page).await?.map(org_info);
    Ok(paged_json(&req, &state.config.public_base_url, page, |organizations, next_cursor| OrgList {
        total: organizations.len(),
        organizations,
        next_cursor,
    }))
}

/// Creates an organization with the user as its owner.
#[utoipa::path(post, path = "/v1/users/me/organizations", tag = "organizations", security(("session" = [])),
    request_body(content = OrgRequest),
    responses((status = 201, body = OrgInfo), (status = 401, body = crate::openapi::ErrorBody), (status = 422, body = crate::openapi::ValidationErrorBody)))]
pub async fn create_org(state: web::Data<AppState>, web_user: WebUser, body: BodyOf) -> ApiResult<HttpResponse> {
    let body = body.checked()?;
    let mut f = Fields::body(&body.0)?;
    let raw = f.required_str("name");
    let name = raw.map(redline_domain::account::plain_name);
    match (raw, name.as_deref()) {
        (Some(raw), Some("")) => {
            f.problem("name", "string_too_short", "String should have at least 1 character", json!(raw))
        }
        (_, Some(n)) if n.chars().count() > NAME_MAX => {
            f.problem("name", "string_too_long", format!("String should have at most {NAME_MAX} characters"), json!(n))
        }
        _ => {}
    }
    f.finish()?;
    let org = state.identity.create_org(web_user.user.id, &name.unwrap_or_default()).await?;
    Ok(HttpResponse::Created().json(org_info(org)))
}

/// One organization of the user.
#[utoipa::path(get, path = "/v1/users/me/organizations/{org_id}", tag = "organizations", security(("session" = [])),
    params(("org_id" = String, Path)),
    responses((status = 200, body = OrgInfo), (status = 404, body = crate::openapi::ErrorBody)))]
pub async fn get_org(
    state: web::Data<AppState>,
    web_user: WebUser,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let (org, _) = state.identity.org_for_member(web_user.user.id, parse_org_id(&path)?).await?;
    Ok(HttpResponse::Ok().json(org_info(org)))
}

/// Members of an organization of the user, oldest membership first, a page at a time.
#[utoipa::path(get, path = "/v1/users/me/organizations/{org_id}/members", tag = "organizations", security(("session" = [])),
    params(("org_id" = String, Path),
        crate::paging::PageParams),
    responses((status = 200, description = "The members, oldest membership first", body = MemberList,
            headers(("Link" = String, description = "`<url>; rel=\"next\"` when another page follows"))),
        (status = 404, body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody)))]
pub async fn list_members(
    state: web::Data<AppState>,
    web_user: WebUser,
    path: web::Path<String>,
    req: HttpRequest,
) -> ApiResult<HttpResponse> {
    let page = page_of(&req)?;
    let page = state.identity.members(web_user.user.id, parse_org_id(&path)?, &page).await?.map(member_info);
    Ok(paged_json(&req, &state.config.public_base_url, page, |members, next_cursor| MemberList {
        total: members.len(),
        members,
        next_cursor,
    }))
}

/// Invites an address to the organization (owners and admins): a link is mailed to it, and
/// the address becomes a member once its owner accepts.
#[utoipa::path(post, path = "/v1/users/me/organizations/{org_id}/members", tag = "organizations", security(("session" = [])),
    params(("org_id" = String, Path)),
    request_body(content = MemberRequest),
    responses((status = 201, description = "Invited", body = crate::routes::invitations::InvitationInfo),
        (status = 403, body = crate::openapi::ErrorBody),
        (status = 404, body = crate::openapi::ErrorBody), (status = 409, description = "Already a member", body = crate::openapi::ErrorBody)))]
pub async fn add_member(
    state: web::Data<AppState>,
    web_user: WebUser,
    path: web::Path<String>,
    body: BodyOf,
) -> ApiResult<HttpResponse> {
    let body = body.checked()?;
    let org = parse_org_id(&path)?;
    let mut f = Fields::body(&body.0)?;
    let email = f.required_str("email");
    let role = f.optional_literal("role", &["member", "admin"]).unwrap_or("member");
    let parsed = email.and_then(|e| Email::parse(e).ok());
    if let (Some(e), None) = (email, &parsed) {
        f.problem("email", "value_error", "value is not a valid email address", json!(e));
    }
    f.finish()?;
    let email = parsed.ok_or_else(|| ApiError::Internal("email validated twice".into()))?;
    let invitation = state.identity.invite(web_user.user.id, org, &email, role).await?;
    Ok(HttpResponse::Created().json(crate::routes::invitations::invitation_info(invitation)))
}

/// Removes a member (owners and admins; any member may remove themselves). The owner is never
/// removed (409). The organization keys the member made are revoked unless
/// `revoke_keys=false`.
#[utoipa::path(delete, path = "/v1/users/me/organizations/{org_id}/members/{user_id}", tag = "organizations", security(("session" = [])),
    params(("org_id" = String, Path), ("user_id" = String, Path),
        ("revoke_keys" = Option<bool>, Query, description = "Revoke the organization keys the member made (default true)")),
    responses((status = 204, description = "Removed"), (status = 403, body = crate::openapi::ErrorBody),
        (status = 404, body = crate::openapi::ErrorBody), (status = 409, body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody)))]
pub async fn remove_member(
    state: web::Data<AppState>,
    web_user: WebUser,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> ApiResult<HttpResponse> {
    let mut query = Query::parse(&req);
    let revoke_keys = query.get("revoke_keys").is_none() || query.boolean("revoke_keys");
    query.finish()?;
    let (org, user) = path.into_inner();
    let org = parse_org_id(&org)?;
    // An id that is no user's is no member's either (after the organization is checked).
    let user = match UserId::parse(&user) {
        Some(u) => u,
        None => {
            state.identity.org_for_member(web_user.user.id, org).await?;
            return Err(ApiError::NotFound("Member not found".to_owned()));
        }
    };
    state.identity.remove_member(web_user.user.id, org, user, revoke_keys).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The organization's keys (owners and admins), newest first, revoked ones included, a page
/// at a time.
#[utoipa::path(get, path = "/v1/users/me/organizations/{org_id}/api-keys", tag = "organizations", security(("session" = [])),
    params(("org_id" = String, Path),
        crate::paging::PageParams),
    responses((status = 200, description = "The keys, newest first", body = KeyList,
            headers(("Link" = String, description = "`<url>; rel=\"next\"` when another page follows"))),
        (status = 403, body = crate::openapi::ErrorBody), (status = 404, body = crate::openapi::ErrorBody),
        (status = 422, body = crate::openapi::ValidationErrorBody)))]
pub async fn list_org_keys(
    state: web::Data<AppState>,
    web_user: WebUser,
    path: web::Path<String>,
    req: HttpRequest,
) -> ApiResult<HttpResponse> {
    let page = page_of(&req)?;
    let owner = state.identity.org_admin(web_user.user.id, parse_org_id(&path)?).await?;
    keys_response(&state, &req, owner, &page).await
}

/// Creates an organization key (`lce_…`); it acts for the organization.
#[utoipa::path(post, path = "/v1/users/me/organizations/{org_id}/api-keys", tag = "organizations", security(("session" = [])),
    params(("org_id" = String, Path)),
    request_body(content = Option<KeyRequest>),
    responses((status = 201, body = CreatedKey), (status = 403, body = crate::openapi::ErrorBody),
        (status = 404, body = crate::openapi::ErrorBody), (status = 409, body = crate::openapi::ErrorBody)))]
pub async fn create_org_key(
    state: web::Data<AppState>,
    web_user: WebUser,
    path: web::Path<String>,
    body: BodyOf,
) -> ApiResult<HttpResponse> {
    let body = body.checked()?;
    let owner = state.identity.org_admin(web_user.user.id, parse_org_id(&path)?).await?;
    create_key_response(&state, owner, web_user.user.id, &body.0).await
}

/// Revokes an organization key, permanently.
#[utoipa::path(delete, path = "/v1/users/me/organizations/{org_id}/api-keys/{key_id}", tag = "organizations", security(("session" = [])),
    params(("org_id" = String, Path), ("key_id" = String, Path)),
    responses((status = 204, description = "Revoked"), (status = 403, body = crate::openapi::ErrorBody), (status = 404, body = crate::openapi::ErrorBody)))]
pub async fn revoke_org_key(
    state: web::Data<AppState>,
    web_user: WebUser,
    path: web::Path<(String, String)>,
) -> ApiResult<HttpResponse> {
    let (org, key) = path.into_inner();
    let owner = state.identity.org_admin(web_user.user.id, parse_org_id(&org)?).await?;
    state.identity.revoke_key(owner, parse_key_id(&key)?).await?;
    Ok(HttpResponse::NoContent().finish())
}

//! Row structs and their conversion to the ports' records. A row that does not convert (a
//! corrupt id, an unknown plan) is a `StoreError::Other`, never a panic.

use diesel::prelude::*;
use redline_domain::{Email, KeyId, OrgId, Owner, Plan, Scopes, UserId};
use redline_ports::records::*;
use redline_ports::StoreError;

use crate::schema::*;

pub(crate) fn corrupt(what: &str, value: &str) -> StoreError {
    StoreError::Other(format!("corrupt {what} in database: {value:?}"))
}

pub(crate) fn user_id(s: &str) -> Result<UserId, StoreError> {
    UserId::parse(s).ok_or_else(|| corrupt("user id", s))
}

pub(crate) fn org_id(s: &str) -> Result<OrgId, StoreError> {
    OrgId::parse(s).ok_or_else(|| corrupt("organization id", s))
}

pub(crate) fn owner(s: &str) -> Result<Owner, StoreError> {
    Owner::parse(s).ok_or_else(|| corrupt("owner", s))
}

fn plan(s: &str) -> Result<Plan, StoreError> {
    s.parse().map_err(|_| corrupt("plan", s))
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = users)]
pub(crate) struct UserRow {
    pub id: String,
    pub kind: String,
    pub email: Option<String>,
    pub password_hash: Option<String>,
    pub name: Option<String>,
    pub plan: String,
    pub monthly_limit: Option<i64>,
    pub created_at: i64,
}

impl From<&UserRecord> for UserRow {
    fn from(u: &UserRecord) -> Self {
        Self {
            id: u.id.to_string(),
            kind: u.kind.as_str().to_owned(),
            email: u.email.as_ref().map(|e| e.as_str().to_owned()),
            password_hash: u.password_hash.clone(),
            name: u.name.clone(),
            plan: u.plan.plan.as_str().to_owned(),
            monthly_limit: u.plan.monthly_limit_override,
            created_at: u.created_at,
        }
    }
}

impl TryFrom<UserRow> for UserRecord {
    type Error = StoreError;

    fn try_from(r: UserRow) -> Result<Self, StoreError> {
        Ok(UserRecord {
            id: user_id(&r.id)?,
            kind: UserKind::parse(&r.kind).ok_or_else(|| corrupt("user kind", &r.kind))?,
            email: r.email.as_deref().map(Email::unchecked),
            password_hash: r.password_hash,
            name: r.name,
            plan: PlanSettings { plan: plan(&r.plan)?, monthly_limit_override: r.monthly_limit },
            created_at: r.created_at,
        })
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = organizations)]
pub(crate) struct OrgRow {
    pub id: String,
    pub name: String,
    pub owner_user_id: String,
    pub plan: String,
    pub monthly_limit: Option<i64>,
    pub created_at: i64,
}

impl From<&OrgRecord> for OrgRow {
    fn from(o: &OrgRecord) -> Self {
        Self {
            id: o.id.to_string(),
            name: o.name.clone(),
            owner_user_id: o.owner_user_id.to_string(),
            plan: o.plan.plan.as_str().to_owned(),
            monthly_limit: o.plan.monthly_limit_override,
            created_at: o.created_at,
        }
    }
}

impl TryFrom<OrgRow> for OrgRecord {
    type Error = StoreError;

    fn try_from(r: OrgRow) -> Result<Self, StoreError> {
        Ok(OrgRecord {
            id: org_id(&r.id)?,
            name: r.name,
            owner_user_id: user_id(&r.owner_user_id)?,
            plan: PlanSettings { plan: plan(&r.plan)?, monthly_limit_override: r.monthly_limit },
            created_at: r.created_at,
        })
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = org_members)]
pub(crate) struct MemberRow {
    pub org_id: String,
    pub user_id: String,
    pub role: String,
    pub created_at: i64,
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = org_invitations)]
pub(crate) struct InvitationRow {
    pub id: String,
    pub token_hash: String,
    pub org_id: String,
    pub email: String,
    pub role: String,
    pub invited_by: String,
    pub created_at: i64,
    pub expires_at: i64,
}

impl From<&InvitationRecord> for InvitationRow {
    fn from(i: &InvitationRecord) -> Self {
        Self {
            id: i.id.clone(),
            token_hash: i.token_hash.clone(),
            org_id: i.org_id.to_string(),
            email: i.email.to_string(),
            role: i.role.clone(),
            invited_by: i.invited_by.to_string(),
            created_at: i.created_at,
            expires_at: i.expires_at,
        }
    }
}

impl TryFrom<InvitationRow> for InvitationRecord {
    type Error = StoreError;

    fn try_from(r: InvitationRow) -> Result<Self, StoreError> {
        Ok(InvitationRecord {
            org_id: org_id(&r.org_id)?,
            email: Email::unchecked(&r.email),
            invited_by: user_id(&r.invited_by)?,
            id: r.id,
            token_hash: r.token_hash,
            role: r.role,
            created_at: r.created_at,
            expires_at: r.expires_at,
        })
    }
}

impl From<&MemberRecord> for MemberRow {
    fn from(m: &MemberRecord) -> Self {
        Self {
            org_id: m.org_id.to_string(),
            user_id: m.user_id.to_string(),
            role: m.role.clone(),
            created_at: m.created_at,
        }
    }
}

impl TryFrom<MemberRow> for MemberRecord {
    type Error = StoreError;

    fn try_from(r: MemberRow) -> Result<Self, StoreError> {
        Ok(MemberRecord {
            org_id: org_id(&r.org_id)?,
            user_id: user_id(&r.user_id)?,
            role: r.role,
            created_at: r.created_at,
        })
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = api_keys)]
pub(crate) struct KeyRow {
    pub id: String,
    pub owner: String,
    pub name: String,
    pub lookup_prefix: String,
    pub hash: String,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
    pub created_by: Option<String>,
    pub scopes: Option<String>,
    pub expires_at: Option<i64>,
    pub last_used_at: Option<i64>,
}

impl From<&KeyRecord> for KeyRow {
    fn from(k: &KeyRecord) -> Self {
        Self {
            id: k.id.to_string(),
            owner: k.owner.to_string(),
            name: k.name.clone(),
            lookup_prefix: k.lookup_prefix.clone(),
            hash: k.hash.clone(),
            created_at: k.created_at,
            revoked_at: k.revoked_at,
            created_by: k.created_by.map(|u| u.to_string()),
            scopes: (!k.scopes.is_full()).then(|| k.scopes.to_words()),
            expires_at: k.expires_at,
            last_used_at: k.last_used_at,
        }
    }
}

impl TryFrom<KeyRow> for KeyRecord {
    type Error = StoreError;

    fn try_from(r: KeyRow) -> Result<Self, StoreError> {
        Ok(KeyRecord {
            id: KeyId::parse(&r.id).ok_or_else(|| corrupt("key id", &r.id))?,
            owner: owner(&r.owner)?,
            name: r.name,
            lookup_prefix: r.lookup_prefix,
            hash: r.hash,
            created_at: r.created_at,
            revoked_at: r.revoked_at,
            created_by: r.created_by.as_deref().map(user_id).transpose()?,
            scopes: match &r.scopes {
                None => Scopes::FULL,
                Some(words) => Scopes::from_words(words).ok_or_else(|| corrupt("key scopes", words))?,
            },
            expires_at: r.expires_at,
            last_used_at: r.last_used_at,
        })
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = web_sessions)]
pub(crate) struct WebSessionRow {
    pub token_hash: String,
    pub user_id: String,
    pub created_at: i64,
    pub expires_at: i64,
    pub id: String,
    pub last_seen_at: i64,
    pub user_agent: Option<String>,
    pub address: Option<String>,
}

impl From<&WebSessionRecord> for WebSessionRow {
    fn from(s: &WebSessionRecord) -> Self {
        Self {
            token_hash: s.token_hash.clone(),
            user_id: s.user_id.to_string(),
            created_at: s.created_at,
            expires_at: s.expires_at,
            id: s.id.clone(),
            last_seen_at: s.last_seen_at,
            user_agent: s.user_agent.clone(),
            address: s.address.clone(),
        }
    }
}

impl TryFrom<WebSessionRow> for WebSessionRecord {
    type Error = StoreError;

    fn try_from(r: WebSessionRow) -> Result<Self, StoreError> {
        Ok(WebSessionRecord {
            token_hash: r.token_hash,
            id: r.id,
            user_id: user_id(&r.user_id)?,
            created_at: r.created_at,
            expires_at: r.expires_at,
            last_seen_at: r.last_seen_at,
            user_agent: r.user_agent,
            address: r.address,
        })
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = handoffs)]
pub(crate) struct HandoffRow {
    pub token_hash: String,
    pub user_id: String,
    pub code_hash: String,
    pub created_at: i64,
    pub expires_at: i64,
    pub wrong_codes: i64,
    pub claimed_at: Option<i64>,
}

impl From<&HandoffRecord> for HandoffRow {
    fn from(h: &HandoffRecord) -> Self {
        Self {
            token_hash: h.token_hash.clone(),
            user_id: h.user_id.to_string(),
            code_hash: h.code_hash.clone(),
            created_at: h.created_at,
            expires_at: h.expires_at,
            wrong_codes: i64::from(h.wrong_codes),
            claimed_at: h.claimed_at,
        }
    }
}

impl TryFrom<HandoffRow> for HandoffRecord {
    type Error = StoreError;

    fn try_from(r: HandoffRow) -> Result<Self, StoreError> {
        Ok(HandoffRecord {
            token_hash: r.token_hash,
            user_id: user_id(&r.user_id)?,
            code_hash: r.code_hash,
            created_at: r.created_at,
            expires_at: r.expires_at,
            wrong_codes: u32::try_from(r.wrong_codes.max(0)).unwrap_or(u32::MAX),
            claimed_at: r.claimed_at,
        })
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = promo_codes)]
pub(crate) struct PromoCodeRow {
    pub code: String,
    pub name: String,
    pub grant_ops: i64,
    pub expires_at: Option<i64>,
    pub created_at: i64,
}

#[derive(Queryable, Selectable, Insertable, Clone)]
#[diesel(table_name = promo_grants)]
pub(crate) struct PromoGrantRow {
    pub redemption_id: String,
    pub owner: String,
    pub name: String,
    pub code: Option<String>,
    pub ops_granted: i64,
    pub ops_remaining: i64,
    pub expires_at: Option<i64>,
    pub created_at: i64,
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = sessions)]
pub(crate) struct SessionRow {
    pub session_id: String,
    pub title: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub version_id: Option<String>,
    pub section_count: i64,
}

#[derive(Queryable, Selectable, Insertable, Clone)]
#[diesel(table_name = usage_ledger)]
pub(crate) struct LedgerRow {
    pub request_id: String,
    pub owner: String,
    pub cycle: String,
    pub status: String,
    pub tier_ops: i64,
    pub promo_ops: i64,
    pub first_redemption: Option<String>,
    pub created_at: i64,
    pub settled_at: Option<i64>,
}

impl TryFrom<LedgerRow> for redline_ports::usage::LedgerEntry {
    type Error = StoreError;

    fn try_from(r: LedgerRow) -> Result<Self, StoreError> {
        Ok(redline_ports::usage::LedgerEntry {
            owner: owner(&r.owner)?,
            status: redline_ports::usage::LedgerStatus::parse(&r.status)
                .ok_or_else(|| corrupt("ledger status", &r.status))?,
            request_id: r.request_id,
            cycle: r.cycle,
            tier_ops: r.tier_ops,
            promo_ops: r.promo_ops,
            first_redemption: r.first_redemption,
            created_at: r.created_at,
            settled_at: r.settled_at,
        })
    }
}

impl TryFrom<PromoGrantRow> for PromoGrantRecord {
    type Error = StoreError;

    fn try_from(r: PromoGrantRow) -> Result<Self, StoreError> {
        Ok(PromoGrantRecord {
            owner: owner(&r.owner)?,
            redemption_id: r.redemption_id,
            name: r.name,
            code: r.code,
            ops_granted: r.ops_granted,
            ops_remaining: r.ops_remaining,
            expires_at: r.expires_at,
            created_at: r.created_at,
        })
    }
}

/// The rules' view of a grant row.
pub(crate) fn domain_grant(r: &PromoGrantRow) -> redline_domain::usage::Grant {
    redline_domain::usage::Grant {
        redemption_id: r.redemption_id.clone(),
        remaining: u64::try_from(r.ops_remaining.max(0)).unwrap_or(0),
        expires_at: r.expires_at,
        created_at: r.created_at,
    }
}

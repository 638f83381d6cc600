//! Plain records exchanged with the stores. No behaviour: the rules live in `domain`.

use redline_domain::time_util::Millis;
use redline_domain::{Email, KeyId, OrgId, Owner, Plan, Scopes, UserId};

/// How an account came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserKind {
    /// Signed up in the web app (or created by an operator) with e-mail and password.
    Web,
    /// Created by `POST /v1/agents/signup`, no human yet.
    Agent,
}

impl UserKind {
    pub fn as_str(self) -> &'static str {
        match self {
            UserKind::Web => "web",
            UserKind::Agent => "agent",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "web" => Some(UserKind::Web),
            "agent" => Some(UserKind::Agent),
            _ => None,
        }
    }
}

/// Plan settings of a user or an organization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanSettings {
    pub plan: Plan,
    /// Per-account override of the plan's monthly operations; -1 = unlimited.
    pub monthly_limit_override: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserRecord {
    pub id: UserId,
    pub kind: UserKind,
    pub email: Option<Email>,
    /// argon2id PHC string; `None` for agents that were never claimed.
    pub password_hash: Option<String>,
    pub name: Option<String>,
    pub plan: PlanSettings,
    pub created_at: Millis,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrgRecord {
    pub id: OrgId,
    pub name: String,
    pub owner_user_id: UserId,
    pub plan: PlanSettings,
    pub created_at: Millis,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberRecord {
    pub org_id: OrgId,
    pub user_id: UserId,
    pub role: String,
    pub created_at: Millis,
}

impl MemberRecord {
    /// Whether the member manages the organization (an owner or admin): its keys, invitations,
    /// members and webhooks.
    pub fn manages(&self) -> bool {
        self.role == "owner" || self.role == "admin"
    }
}

/// An invitation of an address to an organization, pending until accepted, declined,
/// withdrawn or expired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvitationRecord {
    /// `inv_…`: names the invitation to its organization's admins.
    pub id: String,
    /// The SHA-256 of the token of the mailed link.
    pub token_hash: String,
    pub org_id: OrgId,
    pub email: Email,
    pub role: String,
    pub invited_by: UserId,
    pub created_at: Millis,
    pub expires_at: Millis,
}

/// A stored API key: never the key itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRecord {
    pub id: KeyId,
    pub owner: Owner,
    pub name: String,
    pub lookup_prefix: String,
    /// argon2id PHC string of the whole key.
    pub hash: String,
    pub created_at: Millis,
    pub revoked_at: Option<Millis>,
    /// Who made it: the user for a user's keys and for organization keys made in the web
    /// app; `None` for keys the operator made.
    pub created_by: Option<UserId>,
    /// What the key may do ([`Scopes::FULL`] unless restricted at creation).
    pub scopes: Scopes,
    /// When it stops working by itself; `None`: never.
    pub expires_at: Option<Millis>,
    /// When it last authenticated a request, to the minute.
    pub last_used_at: Option<Millis>,
}

impl KeyRecord {
    /// Neither revoked nor expired at `now`.
    pub fn is_live(&self, now: Millis) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|at| at > now)
    }
}

/// A web-app login session; the token itself is never stored, only its SHA-256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebSessionRecord {
    pub token_hash: String,
    /// The public id shown in the list of signed-in sessions (`wss_…`); not a credential.
    pub id: String,
    pub user_id: UserId,
    pub created_at: Millis,
    /// The absolute end of the session.
    pub expires_at: Millis,
    /// When the session was last used (at most a minute behind); idle expiry counts from it.
    pub last_seen_at: Millis,
    /// The browser's `User-Agent` at sign-in, shortened.
    pub user_agent: Option<String>,
    /// The client address at sign-in.
    pub address: Option<String>,
}

/// A password-reset link, by the hash of its token: usable once, until `expires_at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PasswordResetRecord {
    pub token_hash: String,
    pub user_id: UserId,
    pub created_at: Millis,
    pub expires_at: Millis,
}

/// An e-mail verification link, by the hash of its token: it proves that whoever opens it
/// receives mail at `email`, until `expires_at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmailVerificationRecord {
    pub token_hash: String,
    pub user_id: UserId,
    pub email: Email,
    pub created_at: Millis,
    pub expires_at: Millis,
}

/// An agent handoff link. The token and the code are stored as hashes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandoffRecord {
    pub token_hash: String,
    pub user_id: UserId,
    pub code_hash: String,
    pub created_at: Millis,
    pub expires_at: Millis,
    pub wrong_codes: u32,
    pub claimed_at: Option<Millis>,
}

/// A promotion code that an account can redeem once (docs/api.md, "Authentication").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromoCodeRecord {
    pub code: String,
    pub name: String,
    pub ops: i64,
    pub expires_at: Option<Millis>,
    pub created_at: Millis,
}

/// Operations granted to one owner by a promotion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromoGrantRecord {
    pub redemption_id: String,
    pub owner: Owner,
    pub name: String,
    pub code: Option<String>,
    pub ops_granted: i64,
    pub ops_remaining: i64,
    pub expires_at: Option<Millis>,
    pub created_at: Millis,
}

/// One row of `GET /v1/sessions`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSummary {
    pub session_id: String,
    pub title: Option<String>,
    pub created_at: Millis,
    pub updated_at: Millis,
    pub version_id: Option<String>,
    pub section_count: i64,
}

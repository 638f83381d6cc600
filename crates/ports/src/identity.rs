//! Accounts, organizations, keys, web sessions, agent handoffs and promotions.

use redline_domain::page::{Page, PageRequest};
use redline_domain::throttle::ThrottlePolicy;
use redline_domain::time_util::Millis;
use redline_domain::{Email, KeyId, OrgId, Owner, UserId};

use crate::error::StoreError;
use crate::records::*;

#[cfg_attr(feature = "mocks", mockall::automock)]
#[async_trait::async_trait]
pub trait IdentityStore: Send + Sync {
    /// Inserts a user. MUST return `Duplicate` when the e-mail is taken (case-insensitively:
    /// e-mails arrive normalised).
    async fn create_user(&self, user: &UserRecord) -> Result<(), StoreError>;

    async fn user_by_id(&self, id: UserId) -> Result<Option<UserRecord>, StoreError>;

    async fn user_by_email(&self, email: &Email) -> Result<Option<UserRecord>, StoreError>;

    /// Sets the plan of a user or an organization. MUST return `NotFound` for an unknown owner.
    async fn set_plan(&self, owner: Owner, plan: PlanSettings) -> Result<(), StoreError>;

    /// Plan settings of a user or an organization; `NotFound` for an unknown owner.
    async fn plan_of(&self, owner: Owner) -> Result<PlanSettings, StoreError>;

    /// Inserts an organization and its owner as its first member, in one transaction.
    async fn create_org(&self, org: &OrgRecord) -> Result<(), StoreError>;

    async fn org_by_id(&self, id: OrgId) -> Result<Option<OrgRecord>, StoreError>;

    /// One page of the organizations the user belongs to, oldest first (by the organization's
    /// `created_at`, ties by organization id), starting after `page.after` (its number an
    /// organization's `created_at`, its id an organization id). MUST read through an index
    /// that starts with the member.
    async fn orgs_of_user(&self, user: UserId, page: &PageRequest) -> Result<Page<OrgRecord>, StoreError>;

    /// Adds a member. MUST return `Duplicate` when already a member, `NotFound` for an
    /// unknown organization or user.
    async fn add_member(&self, member: &MemberRecord) -> Result<(), StoreError>;

    /// One page of the organization's members, oldest membership first (by the membership's
    /// `created_at`, ties by user id), starting after `page.after` (its number a membership's
    /// `created_at`, its id a user id); empty for an unknown organization. MUST read through
    /// an index that starts with the organization.
    async fn members(&self, org: OrgId, page: &PageRequest) -> Result<Page<MemberRecord>, StoreError>;

    /// The user's membership of the organization, if any.
    async fn member(&self, org: OrgId, user: UserId) -> Result<Option<MemberRecord>, StoreError>;

    /// The e-mail addresses of these users (those that have one: agents have none), in one
    /// query. Unknown ids are left out.
    async fn emails_of(&self, users: &[UserId]) -> Result<Vec<(UserId, Email)>, StoreError>;

    /// Removes a member. MUST NOT remove the organization's owner (role `owner`): `false` for
    /// the owner, or for a user who is not a member; `true` when a member was removed.
    async fn remove_member(&self, org: OrgId, user: UserId) -> Result<bool, StoreError>;

    /// Inserts an invitation, replacing a pending one of the same organization and address
    /// (a new id, role and expiry).
    async fn upsert_invitation(&self, invitation: &InvitationRecord) -> Result<(), StoreError>;

    /// The invitation whose link's token has this hash.
    async fn invitation_by_token(&self, token_hash: &str) -> Result<Option<InvitationRecord>, StoreError>;

    /// The organization's invitations not expired at `now`, oldest first (at most 1,000).
    async fn invitations_of(&self, org: OrgId, now: Millis) -> Result<Vec<InvitationRecord>, StoreError>;

    /// Deletes an invitation: `false` when there was none.
    async fn delete_invitation(&self, id: &str) -> Result<bool, StoreError>;

    /// Accepts an invitation in one transaction: deletes it and adds its member. MUST return
    /// `NotFound`, changing nothing, when the invitation is gone, and `Duplicate` (the
    /// invitation deleted all the same) when the user is already a member.
    async fn accept_invitation(&self, id: &str, member: &MemberRecord) -> Result<(), StoreError>;

    /// Inserts a key unless its owner already holds `max_live` keys that are neither revoked
    /// nor expired at the key's `created_at`, in which case it MUST return `LimitReached` and insert nothing. Atomic under concurrency:
    /// two concurrent calls never both pass the limit.
    async fn insert_key_within_limit(&self, key: &KeyRecord, max_live: u32) -> Result<(), StoreError>;

    /// Keys not revoked whose lookup prefix equals `prefix` (expired ones included: the caller
    /// holds the clock).
    async fn live_keys_by_prefix(&self, prefix: &str) -> Result<Vec<KeyRecord>, StoreError>;

    /// One page of an owner's keys, revoked ones included, newest first (ties by key id,
    /// descending), starting after `page.after` (its number a `created_at`, its id a key id).
    /// MUST read through an index that starts with the owner.
    async fn keys_of(&self, owner: Owner, page: &PageRequest) -> Result<Page<KeyRecord>, StoreError>;

    /// Revokes a key of `owner`. MUST return `NotFound` when the key does not exist, belongs
    /// to another owner, or is already revoked.
    async fn revoke_key(&self, owner: Owner, key: KeyId, now: Millis) -> Result<(), StoreError>;

    /// Revokes every live key of `owner` that `user` made; answers their ids.
    async fn revoke_keys_created_by(&self, owner: Owner, user: UserId, now: Millis) -> Result<Vec<KeyId>, StoreError>;

    /// Whether the key exists, is not revoked and has not expired at `now`.
    async fn key_is_live(&self, key: KeyId, now: Millis) -> Result<bool, StoreError>;

    /// Records that the key authenticated a request at `now`, unless its recorded last use is
    /// less than `min_gap` ms before `now` (one write a minute per key under load).
    async fn touch_key(&self, key: KeyId, now: Millis, min_gap: Millis) -> Result<(), StoreError>;

    async fn insert_web_session(&self, session: &WebSessionRecord) -> Result<(), StoreError>;

    /// The session with this token hash if it has not expired at `now`.
    async fn web_session(&self, token_hash: &str, now: Millis) -> Result<Option<WebSessionRecord>, StoreError>;

    /// Ends a session at once. Deleting an unknown session is not an error.
    async fn delete_web_session(&self, token_hash: &str) -> Result<(), StoreError>;

    /// Records that the session was used at `now`.
    async fn touch_web_session(&self, token_hash: &str, now: Millis) -> Result<(), StoreError>;

    /// The user's sessions that have not expired at `now` (absolute expiry), most recently
    /// used first, at most `limit`. MUST read through an index that starts with the user.
    async fn web_sessions_of(
        &self,
        user: UserId,
        now: Millis,
        limit: usize,
    ) -> Result<Vec<WebSessionRecord>, StoreError>;

    /// Ends the user's session with this public id: `false` when the user has none such.
    async fn delete_web_session_by_id(&self, user: UserId, id: &str) -> Result<bool, StoreError>;

    /// Ends every session of the user but the one with `keep` (a token hash), if given;
    /// answers how many were ended.
    async fn delete_web_sessions_of(&self, user: UserId, keep: Option<String>) -> Result<u64, StoreError>;

    /// Sets a web user's password hash. MUST return `NotFound` for an unknown user.
    async fn set_password_hash(&self, user: UserId, hash: &str) -> Result<(), StoreError>;

    async fn insert_password_reset(&self, reset: &PasswordResetRecord) -> Result<(), StoreError>;

    /// The user of a reset link that is unused and not expired at `now`.
    async fn password_reset(&self, token_hash: &str, now: Millis) -> Result<Option<UserId>, StoreError>;

    /// Uses a reset link: atomically marks it used if it is unused and not expired at `now`,
    /// and answers its user; `None`, changing nothing, otherwise. Two uses at the same moment
    /// never both succeed.
    async fn use_password_reset(&self, token_hash: &str, now: Millis) -> Result<Option<UserId>, StoreError>;

    async fn insert_email_verification(&self, link: &EmailVerificationRecord) -> Result<(), StoreError>;

    /// Uses a verification link not expired at `now`: records its address as its user's
    /// verified one (at `now`), deletes the link and answers the user; `None`, changing
    /// nothing, for an unknown or expired link.
    async fn use_email_verification(&self, token_hash: &str, now: Millis) -> Result<Option<UserId>, StoreError>;

    /// Records `email` as the address the user has proven (replacing any earlier one).
    async fn set_verified_email(&self, user: UserId, email: &Email, at: Millis) -> Result<(), StoreError>;

    /// The address the user has proven, and when.
    async fn verified_email(&self, user: UserId) -> Result<Option<(Email, Millis)>, StoreError>;

    async fn insert_handoff(&self, handoff: &HandoffRecord) -> Result<(), StoreError>;

    async fn handoff(&self, token_hash: &str) -> Result<Option<HandoffRecord>, StoreError>;

    /// Takes one of the handoff's attempts before its code is checked: atomically adds one to
    /// `wrong_codes` if the handoff is unclaimed, not expired at `now` and has fewer than
    /// `MAX_WRONG_CODES`, and returns the record as it is after. MUST return `NotFound`,
    /// changing nothing, otherwise (unknown, claimed, expired or disabled), so that codes tried
    /// at the same moment never get more than `MAX_WRONG_CODES` checks between them.
    async fn take_attempt(&self, token_hash: &str, now: Millis) -> Result<HandoffRecord, StoreError>;

    /// Gives back an attempt taken by [`Self::take_attempt`] for a code that was right.
    async fn give_back_attempt(&self, token_hash: &str) -> Result<(), StoreError>;

    /// In one transaction: marks the handoff claimed (only if not yet claimed, not expired at
    /// `now` and not disabled, else `NotFound`) and turns its user into a web user with this
    /// e-mail and password hash (`Duplicate` when the e-mail is taken; nothing changes then).
    /// MUST return `NotFound`, changing nothing, when the user is no longer an agent (another
    /// of its handoffs was claimed first, also concurrently).
    async fn claim_handoff(
        &self,
        token_hash: &str,
        email: &Email,
        password_hash: &str,
        now: Millis,
    ) -> Result<UserId, StoreError>;

    /// Takes one attempt on every scope at `now` (`ThrottlePolicy::take`), in one transaction:
    /// when none of them makes the caller wait, stores each scope's new state and answers
    /// `Ok(())`; otherwise changes nothing and answers the longest wait in milliseconds. Scopes
    /// are opaque keys (the core hashes them). MUST be atomic under concurrency, across
    /// replicas too, so that guesses sent at once are each counted. MAY delete the rows of
    /// scopes whose last attempt is older than twice their policy's window.
    async fn take_throttle(
        &self,
        scopes: &[(String, ThrottlePolicy)],
        now: Millis,
    ) -> Result<Result<(), Millis>, StoreError>;

    /// Gives back one attempt of the scope (its secret was right); forgets the scope
    /// altogether when `forget`. An unknown scope is not an error.
    async fn give_back_throttle(&self, scope: &str, forget: bool) -> Result<(), StoreError>;

    /// Inserts a promotion code. MUST return `Duplicate` for a code that exists, also when it
    /// differs from this one only in ASCII case.
    async fn create_promo_code(&self, code: &PromoCodeRecord) -> Result<(), StoreError>;

    /// Inserts a grant of promotion operations to an owner.
    async fn insert_promo_grant(&self, grant: &PromoGrantRecord) -> Result<(), StoreError>;
}

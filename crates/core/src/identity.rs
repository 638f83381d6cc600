//! Identity: API keys, web-app users and their sessions, organizations, agent signup and
//! handoff, and the operator's account commands.

use std::sync::Arc;
use std::time::Duration;

use redline_domain::handoff::{HandoffRefusal, HandoffState};
use redline_domain::keys::max_keys;
use redline_domain::page::{Page, PageRequest};
use redline_domain::throttle::{self, ThrottlePolicy};
use redline_domain::time_util::Millis;
use redline_domain::{ApiKey, Email, KeyId, KeyKind, OrgId, Owner, Password, Plan, Scope, Scopes, UserId};
use redline_ports::jobs::Signal;
use redline_ports::records::*;
use redline_ports::{Clock, IdentityStore, StoreError};
use std::collections::HashMap;

use crate::key_cache::KeyCache;
use crate::secrets;
use crate::throttle::Cooldown;

/// Prefix of web-app session tokens (`ws_` + 43 base64url characters).
pub const SESSION_TOKEN_PREFIX: &str = "ws_";
const HANDOFF_TOKEN_PREFIX: &str = "ho_";
/// How stale a session's `last_seen_at` may get before a request writes it again (idle expiry
/// is that much late at most; most requests write nothing).
const TOUCH_EVERY_MS: Millis = 60_000;
/// Organizations read at a time when all of a user's are listed.
const MEMBERSHIPS_PAGE: usize = 1000;

/// Tunables of the identity use cases.
#[derive(Debug, Clone)]
pub struct IdentityConfig {
    pub handoff_ttl_ms: Millis,
    /// A web session's absolute lifetime.
    pub web_session_ttl_ms: Millis,
    /// A web session unused for this long has ended.
    pub web_session_idle_ms: Millis,
    /// How long a password-reset link works.
    pub password_reset_ttl_ms: Millis,
    pub signup_cooldown_ms: Millis,
    pub key_cache_ttl: Duration,
    pub key_cache_capacity: usize,
    /// Base of the links handed out (handoff URLs), without a trailing slash.
    pub public_base_url: String,
}

impl Default for IdentityConfig {
    fn default() -> Self {
        Self {
            handoff_ttl_ms: 24 * 3600 * 1000,
            web_session_ttl_ms: 30 * 24 * 3600 * 1000,
            web_session_idle_ms: 7 * 24 * 3600 * 1000,
            password_reset_ttl_ms: 30 * 60 * 1000,
            signup_cooldown_ms: 10_000,
            key_cache_ttl: Duration::from_secs(60),
            key_cache_capacity: 10_000,
            public_base_url: "http://127.0.0.1:8080".to_owned(),
        }
    }
}

/// Who the caller of an API-key endpoint acts for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub owner: Owner,
    /// The key presented; `None` when a web-app session acts (for its user, or for an
    /// organization the user is a member of).
    pub key_id: Option<KeyId>,
    /// What the credential may do: a key's scopes; every scope for a web-app session.
    pub scopes: Scopes,
}

/// What a new key may do and until when (`POST …/api-keys {scopes?, expires_at?}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyTerms {
    pub scopes: Scopes,
    pub expires_at: Option<Millis>,
}

impl Default for KeyTerms {
    fn default() -> Self {
        Self { scopes: Scopes::FULL, expires_at: None }
    }
}

/// A key's last use is written at most once per this many milliseconds.
pub const KEY_USE_GRANULARITY_MS: Millis = 60_000;

/// Why a credential was refused. Each has its own 401 text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthFailure {
    MissingHeader,
    NotBearer,
    InvalidKey,
    /// A web-app session token that is unknown, expired or logged out.
    InvalidToken,
    /// An API key on an endpoint for web-app sessions only.
    ApiKeyNotAccepted,
}

#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    #[error("authentication failed: {0:?}")]
    Auth(AuthFailure),
    #[error("an account with this email already exists")]
    EmailTaken,
    #[error("invalid email or password")]
    InvalidCredentials,
    #[error("key limit of {max} reached")]
    KeyLimit { max: u32 },
    #[error("{0} not found")]
    NotFound(&'static str),
    #[error("forbidden: {0}")]
    Forbidden(&'static str),
    #[error("conflict: {0}")]
    Conflict(&'static str),
    #[error("cooldown: retry after {retry_after_secs} s")]
    Cooldown { retry_after_secs: u64 },
    /// Too many wrong guesses of this kind from this scope: wait before the next.
    #[error("throttled: retry after {retry_after_secs} s")]
    Throttled { guess: Guess, retry_after_secs: u64 },
    #[error("handoff link not found or expired")]
    HandoffNotFound,
    #[error("handoff link disabled")]
    HandoffDisabled,
    #[error("wrong code, {attempts_left} attempts left")]
    WrongCode { attempts_left: u32 },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("hashing failed: {0}")]
    Hashing(String),
    /// A new password the rules refuse (docs/api.md, "Passwords").
    #[error("password refused: {0}")]
    BadPassword(redline_domain::account::PasswordError),
    /// A password-reset link that is unknown, used or expired.
    #[error("password-reset link not found, used or expired")]
    ResetLinkInvalid,
    /// The current password given to change it was wrong.
    #[error("the current password is wrong")]
    WrongCurrentPassword,
    /// An e-mail verification link that is unknown, used or expired.
    #[error("verification link not found, used or expired")]
    VerificationLinkInvalid,
}

pub type IdentityResult<T> = Result<T, IdentityError>;

/// What was being guessed when a caller was throttled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guess {
    /// A sign-in's password.
    Password,
    /// An API key.
    ApiKey,
    /// Not a guess: password-reset mails asked for.
    PasswordReset,
    /// A promotion code.
    PromoCode,
    /// Not a guess: verification mails asked for.
    VerificationMail,
}

/// A promotion-code guess taken from the account and the client address
/// ([`Identity::take_promo_guess`]).
#[derive(Debug)]
pub struct PromoGuess {
    account: String,
    address: String,
}

/// A successful agent signup: the account and its first key (shown once).
#[derive(Debug)]
pub struct AgentSignup {
    pub user: UserRecord,
    pub key: ApiKey,
    pub key_id: KeyId,
}

/// Who is calling, as the HTTP shell sees it: the client address (throttling, the session
/// list) and the browser's `User-Agent` (the session list).
#[derive(Debug, Clone, Default)]
pub struct ClientInfo {
    pub address: String,
    pub user_agent: Option<String>,
}

impl ClientInfo {
    pub fn at(address: &str) -> Self {
        Self { address: address.to_owned(), user_agent: None }
    }
}

/// A `User-Agent` as kept in the session list: visible characters only, at most 200.
fn short_user_agent(ua: &str) -> String {
    redline_domain::account::plain_name(ua).chars().take(200).collect()
}

/// A successful login.
#[derive(Debug)]
pub struct Login {
    pub user: UserRecord,
    pub token: String,
    pub expires_at: Millis,
}

/// A started handoff: the link and the code, shown once to the agent.
#[derive(Debug)]
pub struct HandoffStarted {
    pub url: String,
    pub token: String,
    pub code: String,
    pub expires_at: Millis,
}

/// What an operator sees before claiming.
#[derive(Debug)]
pub struct HandoffSummary {
    pub user_id: UserId,
    pub agent_name: Option<String>,
    pub expires_at: Millis,
    pub attempts_left: u32,
}

/// A member as listed: the membership and the member's e-mail, when the account has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberListing {
    pub member: MemberRecord,
    pub email: Option<Email>,
}

/// A newly created key with its secret (shown once).
#[derive(Debug)]
pub struct NewKey {
    pub record: KeyRecord,
    pub key: ApiKey,
}

/// Shards of the single-flight lock of key verification (also the most argon2 verifications
/// of keys that run at once).
const VERIFY_SHARDS: usize = 16;

pub struct Identity {
    verifying: [tokio::sync::Mutex<()>; VERIFY_SHARDS],
    store: Arc<dyn IdentityStore>,
    clock: Arc<dyn Clock>,
    cache: KeyCache,
    signups: Cooldown,
    config: IdentityConfig,
    /// Where revocations are announced to the other replicas ([`Identity::follow_revocations`]).
    bus: std::sync::OnceLock<Arc<dyn redline_ports::EventBus>>,
    /// Where password-reset mails go ([`Identity::with_mailer`]); without it no reset mail is
    /// sent (the request is still answered the same).
    mailer: Option<Arc<dyn redline_ports::Mailer>>,
    /// When each key's last use was last written from this replica ([`Identity::note_use`]).
    key_uses: std::sync::Mutex<HashMap<KeyId, Millis>>,
}

/// The keys whose last write [`Identity::note_use`] remembers before starting afresh.
const KEY_USE_MARKS: usize = 10_000;

impl Identity {
    pub fn new(store: Arc<dyn IdentityStore>, clock: Arc<dyn Clock>, config: IdentityConfig) -> Self {
        Self {
            verifying: std::array::from_fn(|_| tokio::sync::Mutex::new(())),
            store,
            clock,
            cache: KeyCache::new(config.key_cache_ttl, config.key_cache_capacity),
            signups: Cooldown::new(config.signup_cooldown_ms),
            config,
            bus: std::sync::OnceLock::new(),
            mailer: None,
            key_uses: std::sync::Mutex::new(HashMap::new()),
        }
    }

    /// Sends password-reset mails through `mailer`.
    pub fn with_mailer(mut self, mailer: Arc<dyn redline_ports::Mailer>) -> Self {
        self.mailer = Some(mailer);
        self
    }

    /// The service's clock.
    pub fn now(&self) -> Millis {
        self.clock.now_ms()
    }

    pub fn config(&self) -> &IdentityConfig {
        &self.config
    }

    // -- API keys ---------------------------------------------------------------------

    /// Authenticates the value of an `Authorization` header carrying an API key.
    /// `client` is the caller's address, which wrong keys are throttled by.
    pub async fn authenticate_header(&self, header: Option<&str>, client: &str) -> IdentityResult<Principal> {
        let value = header.ok_or(IdentityError::Auth(AuthFailure::MissingHeader))?;
        let token = bearer_token(value).ok_or(IdentityError::Auth(AuthFailure::NotBearer))?;
        self.authenticate_key(token, client).await
    }

    /// Authenticates a presented API key: from the cache when it was verified in the last
    /// minute, else by its lookup prefix and argon2. A key that shares a live key's prefix
    /// costs a slow hash, so those checks are throttled per prefix and client address
    /// (`throttle::KEY_PREFIX`): strangers' wrong keys never slow down the owner's.
    pub async fn authenticate_key(&self, presented: &str, client: &str) -> IdentityResult<Principal> {
        let key = ApiKey::parse(presented).ok_or(IdentityError::Auth(AuthFailure::InvalidKey))?;
        let digest = secrets::sha256(key.expose().as_bytes());
        if let Some((p, expires_at)) = self.cache.get(&digest) {
            return self.admit_key(p, expires_at);
        }
        // One verification per key at a time: when a cached entry expires under load, the
        // requests that miss wait for the first one's argon2 instead of each running their own.
        let _single_flight = self.verifying[usize::from(digest[0]) % VERIFY_SHARDS].lock().await;
        if let Some((p, expires_at)) = self.cache.get(&digest) {
            return self.admit_key(p, expires_at);
        }
        let began = self.cache.generation();
        let candidates = self.store.live_keys_by_prefix(key.lookup_prefix()).await?;
        if candidates.is_empty() {
            return Err(IdentityError::Auth(AuthFailure::InvalidKey));
        }
        let scope = throttle_scope("key", &format!("{}|{client}", key.lookup_prefix()));
        self.take_throttle(vec![(scope.clone(), throttle::KEY_PREFIX)], Guess::ApiKey).await?;
        for candidate in candidates {
            if secrets::verify_secret(key.expose().to_owned(), candidate.hash.clone()).await {
                let principal =
                    Principal { owner: candidate.owner, key_id: Some(candidate.id), scopes: candidate.scopes };
                self.cache.insert(digest, principal.clone(), candidate.expires_at, began);
                self.store.give_back_throttle(&scope, false).await?;
                return self.admit_key(principal, candidate.expires_at);
            }
        }
        Err(IdentityError::Auth(AuthFailure::InvalidKey))
    }

    /// A verified key that has expired gets the 401 of a revoked one; a live one is let in,
    /// and its last use noted.
    fn admit_key(&self, principal: Principal, expires_at: Option<Millis>) -> IdentityResult<Principal> {
        let now = self.now();
        if expires_at.is_some_and(|at| at <= now) {
            return Err(IdentityError::Auth(AuthFailure::InvalidKey));
        }
        if let Some(key) = principal.key_id {
            self.note_use(key, now);
        }
        Ok(principal)
    }

    /// Writes a key's last use, at most once a minute per key and off the request's path: the
    /// in-memory mark decides without touching the store, and the write itself runs as a task
    /// of its own (whose conditional update keeps replicas to one write a minute too).
    fn note_use(&self, key: KeyId, now: Millis) {
        {
            let mut marks = self.key_uses.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if marks.get(&key).is_some_and(|&at| now - at < KEY_USE_GRANULARITY_MS) {
                return;
            }
            if marks.len() >= KEY_USE_MARKS {
                marks.clear();
            }
            marks.insert(key, now);
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let store = Arc::clone(&self.store);
        runtime.spawn(async move {
            if let Err(e) = store.touch_key(key, now, KEY_USE_GRANULARITY_MS).await {
                tracing::warn!(key = %key, error = %e, "could not record the key's last use");
            }
        });
    }

    /// Creates a key for `owner` within its plan's limit; `created_by` is the user who made it
    /// (`None` for the operator). `terms` restrict it (an expiry must lie ahead).
    pub async fn create_key(
        &self,
        owner: Owner,
        name: &str,
        created_by: Option<UserId>,
        terms: KeyTerms,
    ) -> IdentityResult<NewKey> {
        // The HTTP layer refuses both with a 422 naming the field; the CLI cannot ask for them.
        if terms.scopes.is_empty() || terms.expires_at.is_some_and(|at| at <= self.now()) {
            return Err(IdentityError::Conflict("A key needs a scope and an expiry in the future."));
        }
        let plan = self.store.plan_of(owner).await.map_err(not_found("account"))?;
        let max = max_keys(plan.plan);
        let kind = match owner {
            Owner::User(_) => KeyKind::User,
            Owner::Org(_) => KeyKind::Org,
        };
        let key = secrets::new_api_key(kind);
        let hash = secrets::hash_secret(key.expose().to_owned()).await.map_err(IdentityError::Hashing)?;
        let record = KeyRecord {
            id: KeyId::new(),
            owner,
            name: name.to_owned(),
            lookup_prefix: key.lookup_prefix().to_owned(),
            hash,
            created_at: self.now(),
            revoked_at: None,
            created_by,
            scopes: terms.scopes,
            expires_at: terms.expires_at,
            last_used_at: None,
        };
        match self.store.insert_key_within_limit(&record, max).await {
            Ok(()) => Ok(NewKey { record, key }),
            Err(StoreError::LimitReached) => Err(IdentityError::KeyLimit { max }),
            Err(e) => Err(e.into()),
        }
    }

    /// One page of the owner's keys, newest first, revoked ones included.
    pub async fn list_keys(&self, owner: Owner, page: &PageRequest) -> IdentityResult<Page<KeyRecord>> {
        Ok(self.store.keys_of(owner, page).await?)
    }

    /// Revokes a key for ever; on this replica it stops working at once, on the others as
    /// soon as the announcement reaches them (the cache's time to live at the latest).
    pub async fn revoke_key(&self, owner: Owner, key: KeyId) -> IdentityResult<()> {
        self.store.revoke_key(owner, key, self.now()).await.map_err(not_found("API key"))?;
        self.forget_revoked(key).await;
        Ok(())
    }

    /// A revoked key leaves this replica's cache at once and the others' when they hear.
    async fn forget_revoked(&self, key: KeyId) {
        self.cache.evict_key(key);
        if let Some(bus) = self.bus.get() {
            bus.publish(Signal::KeyRevoked(key.to_string())).await;
        }
    }

    /// Whether the key exists and is not revoked.
    pub async fn key_is_live(&self, key: KeyId) -> IdentityResult<bool> {
        Ok(self.store.key_is_live(key, self.now()).await?)
    }

    /// Announces this replica's revocations on `bus` and follows the others': a key revoked
    /// on any replica leaves this one's cache when the signal arrives. A subscriber that fell
    /// behind, or whose link to the other replicas was down, may have missed one, so it
    /// forgets every key then.
    pub fn follow_revocations(self: &Arc<Self>, bus: Arc<dyn redline_ports::EventBus>) {
        let mut signals = bus.subscribe();
        if self.bus.set(bus).is_err() {
            return;
        }
        let me = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                let signal = signals.recv().await;
                let Some(identity) = me.upgrade() else { return };
                match signal {
                    Ok(Signal::KeyRevoked(id)) => match KeyId::parse(&id) {
                        Some(key) => identity.cache.evict_key(key),
                        None => identity.cache.clear(),
                    },
                    Ok(Signal::Reconnected) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        identity.cache.clear()
                    }
                    Ok(_) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
            }
        });
    }

    // -- web-app users ----------------------------------------------------------------

    /// Creates a web-app account on the free plan. Sign-ups of both kinds share one cooldown
    /// per client address (`signup_cooldown_ms`): an account is a month of free operations.
    pub async fn web_signup(&self, email: Email, password: Password, client_addr: &str) -> IdentityResult<UserRecord> {
        self.signups
            .admit(client_addr, self.now())
            .map_err(|retry_after_secs| IdentityError::Cooldown { retry_after_secs })?;
        let user = self.create_user(email, password, Plan::Free).await?;
        if let Err(e) = self.send_verification(&user, false).await {
            tracing::warn!(error = %e, "the verification mail of a new account was not sent");
        }
        Ok(user)
    }

    /// Creates a web user (also the operator's `create-user`).
    pub async fn create_user(&self, email: Email, password: Password, plan: Plan) -> IdentityResult<UserRecord> {
        let hash = secrets::hash_secret(password.expose().to_owned()).await.map_err(IdentityError::Hashing)?;
        let user = UserRecord {
            id: UserId::new(),
            kind: UserKind::Web,
            email: Some(email),
            password_hash: Some(hash),
            name: None,
            plan: PlanSettings { plan, monthly_limit_override: None },
            created_at: self.now(),
        };
        match self.store.create_user(&user).await {
            Ok(()) => Ok(user),
            Err(StoreError::Duplicate(_)) => Err(IdentityError::EmailTaken),
            Err(e) => Err(e.into()),
        }
    }

    /// Checks e-mail and password and opens a session. Unknown e-mails cost the same time
    /// as wrong passwords. Guesses are throttled per account and per client address
    /// (`client`) before any hash is computed (docs/api.md, "Sign-in throttling").
    pub async fn login(&self, email: &str, password: &str, client: &ClientInfo) -> IdentityResult<Login> {
        let (client, user_agent) = (client.address.as_str(), client.user_agent.as_deref());
        let account = throttle_scope("account", &email.trim().to_lowercase());
        let address = throttle_scope("address", client);
        self.take_throttle(
            vec![(account.clone(), throttle::ACCOUNT), (address.clone(), throttle::ADDRESS)],
            Guess::Password,
        )
        .await?;
        let user = match email.trim() {
            "" => None,
            email => self.store.user_by_email(&Email::unchecked(email)).await?,
        };
        let verified = match user.as_ref().and_then(|u| u.password_hash.clone()) {
            Some(hash) => secrets::verify_secret(password.to_owned(), hash).await,
            None => secrets::verify_nothing(password.to_owned()).await,
        };
        let user = match (user, verified) {
            (Some(user), true) => user,
            _ => return Err(IdentityError::InvalidCredentials),
        };
        // Right: the account's failures are forgotten; the address gets back only the attempt
        // it took (an attacker signing in to an own account between guesses gains nothing).
        self.store.give_back_throttle(&account, true).await?;
        self.store.give_back_throttle(&address, false).await?;
        let token = secrets::new_token(SESSION_TOKEN_PREFIX);
        let now = self.now();
        let session = WebSessionRecord {
            token_hash: secrets::sha256_hex(token.as_bytes()),
            id: format!("wss_{}", uuid::Uuid::new_v4().simple()),
            user_id: user.id,
            created_at: now,
            expires_at: now + self.config.web_session_ttl_ms,
            last_seen_at: now,
            user_agent: user_agent.map(short_user_agent).filter(|ua| !ua.is_empty()),
            address: Some(client.to_owned()),
        };
        self.store.insert_web_session(&session).await?;
        Ok(Login { user, token, expires_at: session.expires_at })
    }

    /// The user behind a web-app session token.
    pub async fn authenticate_session(&self, token: &str) -> IdentityResult<UserRecord> {
        let invalid = IdentityError::Auth(AuthFailure::InvalidToken);
        if !is_session_token_shaped(token) {
            return Err(invalid);
        }
        let hash = secrets::sha256_hex(token.as_bytes());
        let now = self.now();
        let Some(session) = self.store.web_session(&hash, now).await? else {
            return Err(invalid);
        };
        if now - session.last_seen_at >= self.config.web_session_idle_ms {
            self.store.delete_web_session(&hash).await?;
            return Err(invalid);
        }
        if now - session.last_seen_at >= TOUCH_EVERY_MS {
            self.store.touch_web_session(&hash, now).await?;
        }
        self.store.user_by_id(session.user_id).await?.ok_or(invalid)
    }

    /// The principal of a web-app session on an API-key endpoint: it acts for its user, or,
    /// with `org` (the `Redline-Organization` header), for that organization when the user is
    /// one of its members. Anything else in `org` (not an id, an unknown organization, one
    /// the user does not belong to) is `Forbidden`, the same answer for each.
    pub async fn authenticate_web(&self, token: &str, org: Option<&str>) -> IdentityResult<Principal> {
        let user = self.authenticate_session(token).await?;
        let Some(raw) = org else {
            return Ok(Principal { owner: Owner::User(user.id), key_id: None, scopes: Scopes::FULL });
        };
        let not_member = || {
            IdentityError::Forbidden(
                "You are not a member of the organization named in the Redline-Organization header.",
            )
        };
        let org = OrgId::parse(raw.trim()).ok_or_else(not_member)?;
        let member = self.store.member(org, user.id).await?.ok_or_else(not_member)?;
        // A member who does not manage the organization reads and edits its documents; its
        // webhooks and hand-offs are its owners' and admins'.
        let scopes = if member.manages() { Scopes::FULL } else { Scopes::of([Scope::Edit]) };
        Ok(Principal { owner: Owner::Org(org), key_id: None, scopes })
    }

    /// Ends a session at once.
    pub async fn logout(&self, token: &str) -> IdentityResult<()> {
        Ok(self.store.delete_web_session(&secrets::sha256_hex(token.as_bytes())).await?)
    }

    /// Takes a promotion-code guess before the code is looked up: codes are throttled per
    /// account and per client address as passwords are (docs/api.md, "Usage and billing").
    pub async fn take_promo_guess(&self, user: UserId, client: &str) -> IdentityResult<PromoGuess> {
        let guess = PromoGuess {
            account: throttle_scope("promo-account", &user.to_string()),
            address: throttle_scope("promo-address", client),
        };
        self.take_throttle(
            vec![(guess.account.clone(), throttle::ACCOUNT), (guess.address.clone(), throttle::ADDRESS)],
            Guess::PromoCode,
        )
        .await?;
        Ok(guess)
    }

    /// The code existed (redeemed, or already redeemed by this account): the guess is given
    /// back to both scopes.
    pub async fn promo_guess_found(&self, guess: PromoGuess) -> IdentityResult<()> {
        self.store.give_back_throttle(&guess.account, false).await?;
        self.store.give_back_throttle(&guess.address, false).await?;
        Ok(())
    }

    /// Takes an attempt on each scope, or answers `Throttled` with the wait.
    async fn take_throttle(&self, scopes: Vec<(String, ThrottlePolicy)>, guess: Guess) -> IdentityResult<()> {
        self.store.take_throttle(&scopes, self.now()).await?.map_err(|wait_ms| IdentityError::Throttled {
            guess,
            retry_after_secs: throttle::retry_after_secs(wait_ms),
        })
    }

    // -- organizations ----------------------------------------------------------------

    /// Creates an organization owned by `owner` (its first member). New organizations are
    /// on the free plan until an operator sets another.
    pub async fn create_org(&self, owner: UserId, name: &str) -> IdentityResult<OrgRecord> {
        let org = OrgRecord {
            id: OrgId::new(),
            name: name.to_owned(),
            owner_user_id: owner,
            plan: PlanSettings { plan: Plan::Free, monthly_limit_override: None },
            created_at: self.now(),
        };
        self.store.create_org(&org).await.map_err(not_found("user"))?;
        Ok(org)
    }

    /// The operator's `create-org --owner-email`.
    pub async fn create_org_for_email(&self, name: &str, owner_email: &Email) -> IdentityResult<OrgRecord> {
        let user = self.store.user_by_email(owner_email).await?.ok_or(IdentityError::NotFound("user"))?;
        self.create_org(user.id, name).await
    }

    /// One page of the user's organizations, oldest first.
    pub async fn orgs_of(&self, user: UserId, page: &PageRequest) -> IdentityResult<Page<OrgRecord>> {
        Ok(self.store.orgs_of_user(user, page).await?)
    }

    /// Every organization of the user, oldest first, with the user's role in it (the
    /// profile, `GET /v1/users/me`, lists them all). An organization left between the two
    /// reads is left out.
    pub async fn memberships(&self, user: UserId) -> IdentityResult<Vec<(OrgRecord, MemberRecord)>> {
        let mut out = Vec::new();
        let mut page = PageRequest::first(MEMBERSHIPS_PAGE);
        loop {
            let orgs = self.store.orgs_of_user(user, &page).await?;
            for org in orgs.items {
                if let Some(member) = self.store.member(org.id, user).await? {
                    out.push((org, member));
                }
            }
            match orgs.next {
                Some(next) => page.after = Some(next),
                None => return Ok(out),
            }
        }
    }

    /// The organization, if `user` is one of its members (else `NotFound`: the existence of
    /// other organizations is not revealed).
    pub async fn org_for_member(&self, user: UserId, org: OrgId) -> IdentityResult<(OrgRecord, MemberRecord)> {
        let record = self.store.org_by_id(org).await?.ok_or(IdentityError::NotFound("organization"))?;
        let member = self.store.member(org, user).await?.ok_or(IdentityError::NotFound("organization"))?;
        Ok((record, member))
    }

    /// Removes `user` from the organization. Its owner and admins remove any member but the
    /// owner, who is never removed (409); any member may leave (remove themselves). The
    /// member's access ends at once; with `revoke_keys`, so do the organization keys they
    /// made (answered by id), which otherwise stay the organization's.
    pub async fn remove_member(
        &self,
        actor: UserId,
        org: OrgId,
        user: UserId,
        revoke_keys: bool,
    ) -> IdentityResult<Vec<KeyId>> {
        let (_, me) = self.org_for_member(actor, org).await?;
        let target = self.store.member(org, user).await?.ok_or(IdentityError::NotFound("member"))?;
        if target.role == "owner" {
            return Err(IdentityError::Conflict("the owner of an organization cannot be removed"));
        }
        if actor != user && !me.manages() {
            return Err(IdentityError::Forbidden(
                "only an owner or admin of the organization can remove other members",
            ));
        }
        if !self.store.remove_member(org, user).await? {
            // Removed at the same moment by another request.
            return Err(IdentityError::NotFound("member"));
        }
        if !revoke_keys {
            return Ok(Vec::new());
        }
        let revoked = self.store.revoke_keys_created_by(Owner::Org(org), user, self.now()).await?;
        for key in &revoked {
            self.forget_revoked(*key).await;
        }
        Ok(revoked)
    }

    /// The e-mail addresses of these users, for listings (who made a key).
    pub async fn emails_of(&self, users: &[UserId]) -> IdentityResult<std::collections::HashMap<UserId, Email>> {
        Ok(self.store.emails_of(users).await?.into_iter().collect())
    }

    /// One page of the organization's members, oldest membership first; only a member may
    /// list them.
    /// A page of the organization's members with their e-mail addresses (fellow members see
    /// who they share it with), for a member.
    pub async fn members(&self, actor: UserId, org: OrgId, page: &PageRequest) -> IdentityResult<Page<MemberListing>> {
        self.org_for_member(actor, org).await?;
        let members = self.store.members(org, page).await?;
        let ids: Vec<UserId> = members.items.iter().map(|m| m.user_id).collect();
        let emails: std::collections::HashMap<UserId, Email> = self.store.emails_of(&ids).await?.into_iter().collect();
        Ok(members.map(|member| {
            let email = emails.get(&member.user_id).cloned();
            MemberListing { member, email }
        }))
    }

    /// Org keys managed from the web app: owners and admins only.
    pub async fn org_admin(&self, actor: UserId, org: OrgId) -> IdentityResult<Owner> {
        let (_, me) = self.org_for_member(actor, org).await?;
        if !me.manages() {
            return Err(IdentityError::Forbidden(
                "only an owner or admin of the organization can manage its keys and invitations",
            ));
        }
        Ok(Owner::Org(org))
    }

    // -- plans and promotions (operator) -------------------------------------------------

    /// Sets the plan (and optionally a monthly limit override; -1 = unlimited).
    pub async fn set_plan(&self, owner: Owner, plan: Plan, monthly_limit: Option<i64>) -> IdentityResult<PlanSettings> {
        let settings = PlanSettings { plan, monthly_limit_override: monthly_limit };
        self.store.set_plan(owner, settings).await.map_err(not_found("account"))?;
        Ok(settings)
    }

    pub async fn create_promo_code(
        &self,
        code: &str,
        name: &str,
        ops: i64,
        expires_at: Option<Millis>,
    ) -> IdentityResult<()> {
        let record =
            PromoCodeRecord { code: code.to_owned(), name: name.to_owned(), ops, expires_at, created_at: self.now() };
        match self.store.create_promo_code(&record).await {
            Ok(()) => Ok(()),
            Err(StoreError::Duplicate(_)) => Err(IdentityError::Conflict("a promotion with this code exists")),
            Err(e) => Err(e.into()),
        }
    }

    /// Grants promotion operations to an account directly.
    pub async fn grant_promo(
        &self,
        owner: Owner,
        name: &str,
        ops: i64,
        expires_at: Option<Millis>,
    ) -> IdentityResult<String> {
        self.store.plan_of(owner).await.map_err(not_found("account"))?;
        let grant = PromoGrantRecord {
            redemption_id: format!("red_{}", KeyId::new().as_uuid().simple()),
            owner,
            name: name.to_owned(),
            code: None,
            ops_granted: ops,
            ops_remaining: ops,
            expires_at,
            created_at: self.now(),
        };
        self.store.insert_promo_grant(&grant).await?;
        Ok(grant.redemption_id)
    }

    // -- agents -----------------------------------------------------------------------

    /// Creates an agent account on the free plan with its first key. One signup per
    /// client address per cooldown period.
    pub async fn agent_signup(&self, name: Option<String>, client_addr: &str) -> IdentityResult<AgentSignup> {
        self.signups
            .admit(client_addr, self.now())
            .map_err(|retry_after_secs| IdentityError::Cooldown { retry_after_secs })?;
        let user = UserRecord {
            id: UserId::new(),
            kind: UserKind::Agent,
            email: None,
            password_hash: None,
            name: name.clone(),
            plan: PlanSettings { plan: Plan::Free, monthly_limit_override: None },
            created_at: self.now(),
        };
        self.store.create_user(&user).await?;
        let key_name = name.unwrap_or_else(|| "agent".to_owned());
        let created = self.create_key(Owner::User(user.id), &key_name, Some(user.id), KeyTerms::default()).await?;
        Ok(AgentSignup { user, key: created.key, key_id: created.record.id })
    }

    /// Starts a handoff of the agent account behind `principal`.
    pub async fn start_handoff(&self, principal: &Principal) -> IdentityResult<HandoffStarted> {
        let Owner::User(user_id) = principal.owner else {
            return Err(IdentityError::Forbidden(
                "a handoff is started with the agent's own user key, not an organization key",
            ));
        };
        let user = self.store.user_by_id(user_id).await?.ok_or(IdentityError::NotFound("user"))?;
        if user.kind != UserKind::Agent {
            return Err(IdentityError::Conflict("this account already belongs to a web-app user"));
        }
        let token = secrets::new_token(HANDOFF_TOKEN_PREFIX);
        let code = secrets::new_code();
        let now = self.now();
        let record = HandoffRecord {
            token_hash: secrets::sha256_hex(token.as_bytes()),
            user_id,
            code_hash: code_hash(&token, &code),
            created_at: now,
            expires_at: now + self.config.handoff_ttl_ms,
            wrong_codes: 0,
            claimed_at: None,
        };
        self.store.insert_handoff(&record).await?;
        let url = format!("{}/v1/agents/handoff/{token}", self.config.public_base_url.trim_end_matches('/'));
        Ok(HandoffStarted { url, token, code, expires_at: record.expires_at })
    }

    /// The handoff behind `token` and its account, while it can be claimed: a link whose
    /// account was taken over through another of its links is gone too.
    async fn usable_handoff(&self, token: &str) -> IdentityResult<(HandoffRecord, UserRecord)> {
        let record =
            self.store.handoff(&secrets::sha256_hex(token.as_bytes())).await?.ok_or(IdentityError::HandoffNotFound)?;
        state_of(&record).usable(self.now()).map_err(refusal)?;
        let user = self.store.user_by_id(record.user_id).await?.ok_or(IdentityError::HandoffNotFound)?;
        if user.kind != UserKind::Agent {
            return Err(IdentityError::HandoffNotFound);
        }
        Ok((record, user))
    }

    pub async fn handoff_summary(&self, token: &str) -> IdentityResult<HandoffSummary> {
        let (record, user) = self.usable_handoff(token).await?;
        Ok(HandoffSummary {
            user_id: record.user_id,
            agent_name: user.name,
            expires_at: record.expires_at,
            attempts_left: state_of(&record).attempts_left(),
        })
    }

    /// Claims the agent account with the code: it becomes a web-app user with this e-mail
    /// and password; its keys keep working.
    pub async fn claim_handoff(
        &self,
        token: &str,
        code: &str,
        email: Email,
        password: Password,
    ) -> IdentityResult<UserId> {
        let (record, _) = self.usable_handoff(token).await?;
        // An attempt is taken before the code is compared, so codes sent at the same moment
        // get no more checks between them than the link has attempts left.
        let after = match self.store.take_attempt(&record.token_hash, self.now()).await {
            Ok(after) => after,
            Err(StoreError::NotFound) => return Err(self.handoff_refusal(&record.token_hash).await),
            Err(e) => return Err(e.into()),
        };
        if !secrets::ct_eq(&code_hash(token, code), &record.code_hash) {
            return Err(IdentityError::WrongCode { attempts_left: state_of(&after).attempts_left() });
        }
        self.store.give_back_attempt(&record.token_hash).await?;
        let hash = secrets::hash_secret(password.expose().to_owned()).await.map_err(IdentityError::Hashing)?;
        match self.store.claim_handoff(&record.token_hash, &email, &hash, self.now()).await {
            Ok(user) => {
                let claimed = self.user(user).await?;
                if let Err(e) = self.send_verification(&claimed, false).await {
                    tracing::warn!(error = %e, "the verification mail of a claimed account was not sent");
                }
                Ok(user)
            }
            Err(StoreError::Duplicate(_)) => Err(IdentityError::EmailTaken),
            // Lost a race with another claim (of this link or another of the account's) or
            // with the last wrong code.
            Err(StoreError::NotFound) => Err(self.handoff_refusal(&record.token_hash).await),
            Err(e) => Err(e.into()),
        }
    }

    /// Why a handoff that was usable a moment ago no longer is: 410 when wrong codes disabled
    /// it, else 404 (claimed, expired or gone).
    async fn handoff_refusal(&self, token_hash: &str) -> IdentityError {
        match self.store.handoff(token_hash).await {
            Ok(Some(record)) => {
                state_of(&record).usable(self.now()).map_err(refusal).err().unwrap_or(IdentityError::HandoffNotFound)
            }
            Ok(None) => IdentityError::HandoffNotFound,
            Err(e) => e.into(),
        }
    }

    pub async fn user(&self, id: UserId) -> IdentityResult<UserRecord> {
        self.store.user_by_id(id).await?.ok_or(IdentityError::NotFound("user"))
    }
}

fn not_found(what: &'static str) -> impl Fn(StoreError) -> IdentityError {
    move |e| match e {
        StoreError::NotFound => IdentityError::NotFound(what),
        e => IdentityError::Store(e),
    }
}

fn state_of(record: &HandoffRecord) -> HandoffState {
    HandoffState {
        expires_at_ms: record.expires_at,
        wrong_codes: record.wrong_codes,
        claimed: record.claimed_at.is_some(),
    }
}

fn refusal(r: HandoffRefusal) -> IdentityError {
    match r {
        HandoffRefusal::NotFound => IdentityError::HandoffNotFound,
        HandoffRefusal::Disabled => IdentityError::HandoffDisabled,
    }
}

/// The code is bound to its link: a hash of both, compared in constant time.
fn code_hash(token: &str, code: &str) -> String {
    secrets::sha256_hex(format!("{token}:{code}").as_bytes())
}

/// The credential of a `Bearer <credential>` header value; `None` when the scheme is not
/// exactly `Bearer` followed by a space (case-insensitive scheme, as RFC 6750 allows) or the
/// credential is empty.
pub fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, rest) = value.split_at_checked(7)?;
    if !scheme.eq_ignore_ascii_case("bearer ") {
        return None;
    }
    let token = rest.trim();
    (!token.is_empty()).then_some(token)
}

/// Whether a credential looks like a web-app session token.
pub fn is_session_token_shaped(token: &str) -> bool {
    token.len() == SESSION_TOKEN_PREFIX.len() + 43
        && token.starts_with(SESSION_TOKEN_PREFIX)
        && token[SESSION_TOKEN_PREFIX.len()..].bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The stored name of a throttling scope: a hash, so the table holds no e-mail or address.
fn throttle_scope(kind: &str, value: &str) -> String {
    secrets::sha256_hex(format!("{kind}:{value}").as_bytes())
}

mod invitations;
mod recovery;
mod verification;
pub use invitations::INVITATION_TTL_MS;
pub use recovery::SessionListing;
pub use verification::{EmailStatus, VERIFICATION_TTL_MS};

#[cfg(test)]
mod tests;

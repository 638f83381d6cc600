//! Idempotency keys (`Idempotency-Key`): the first answer to a request, kept for a day under
//! its owner and key, so that a retry gets it again instead of running again.

use redline_domain::time_util::Millis;
use redline_domain::Owner;

use crate::error::StoreError;

/// An answer kept for replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAnswer {
    pub status: u16,
    /// The headers that make the answer (names in lower case), in order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// What [`IdempotencyStore::claim_idempotency_key`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdempotencyClaim {
    /// The key is this caller's: run the request, then finish or release it.
    Claimed,
    /// The key's first request finished with this answer.
    Done(StoredAnswer),
    /// The key's first request is still running.
    Running,
    /// The key was used with another request (a different fingerprint).
    Mismatch,
}

/// One claim of a key: whose, which key, and the token of the request holding it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimRef<'a> {
    pub owner: Owner,
    pub key: &'a str,
    pub token: &'a str,
}

#[cfg_attr(feature = "mocks", mockall::automock)]
#[async_trait::async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// Claims `(owner, key)` for a request of `fingerprint` under `token`, atomically: of any
    /// number of concurrent calls (on any replica) exactly one gets `Claimed`. A row older
    /// than `expired_before`, or a claim whose lease ended before `now` without an answer
    /// (its replica died), counts as absent. A new claim's lease ends at `lease_until`.
    #[allow(clippy::too_many_arguments)]
    async fn claim_idempotency_key(
        &self,
        owner: Owner,
        key: &str,
        token: &str,
        fingerprint: &str,
        now: Millis,
        lease_until: Millis,
        expired_before: Millis,
    ) -> Result<IdempotencyClaim, StoreError>;

    /// Moves the lease of a claim still held by its token (no answer yet) to `lease_until`;
    /// answers whether the claim is still this token's.
    async fn renew_idempotency_key<'a>(&self, claim: ClaimRef<'a>, lease_until: Millis) -> Result<bool, StoreError>;

    /// Keeps the answer of a claim still held by its token.
    async fn finish_idempotency_key<'a>(&self, claim: ClaimRef<'a>, answer: &StoredAnswer) -> Result<(), StoreError>;

    /// Gives a claim still held by its token up without an answer (the request changed
    /// nothing): the next request with the key runs afresh.
    async fn release_idempotency_key<'a>(&self, claim: ClaimRef<'a>) -> Result<(), StoreError>;

    /// Deletes keys made before `before`, at most `limit`; answers how many went.
    async fn purge_idempotency_keys(&self, before: Millis, limit: i64) -> Result<usize, StoreError>;
}

//! Idempotency keys (`Idempotency-Key`): the first answer to a request, kept for a day under
//! its owner and key, so that a retry gets it again instead of running again.

use redline_domain::time_util::Millis;
use redline_domain::Owner;

use crate::error::StoreError;

/// An answer kept for replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAnswer {
    pub status: u16,
    pub content_type: String,
    /// `Location`, when the answer had one.
    pub location: Option<String>,
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

#[cfg_attr(feature = "mocks", mockall::automock)]
#[async_trait::async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// Claims `(owner, key)` for a request of `fingerprint`, atomically: of any number of
    /// concurrent calls (on any replica) exactly one gets `Claimed`. A row older than
    /// `expired_before`, or a claim whose lease ended before `now` without an answer (its
    /// replica died), counts as absent. A new claim's lease ends at `lease_until`.
    async fn claim_idempotency_key(
        &self,
        owner: Owner,
        key: &str,
        fingerprint: &str,
        now: Millis,
        lease_until: Millis,
        expired_before: Millis,
    ) -> Result<IdempotencyClaim, StoreError>;

    /// Keeps the answer of a claimed key.
    async fn finish_idempotency_key(&self, owner: Owner, key: &str, answer: &StoredAnswer) -> Result<(), StoreError>;

    /// Gives a claimed key up without an answer (the request changed nothing): the next
    /// request with it runs afresh.
    async fn release_idempotency_key(&self, owner: Owner, key: &str) -> Result<(), StoreError>;

    /// Deletes keys made before `before`, at most `limit`; answers how many went.
    async fn purge_idempotency_keys(&self, before: Millis, limit: i64) -> Result<usize, StoreError>;
}

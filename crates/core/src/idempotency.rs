//! Idempotent retries (`Idempotency-Key`, the IETF httpapi draft with Stripe's semantics):
//! the first request with a key runs; a retry with the same key and the same request gets the
//! first answer again, also while the first is still running (it waits for it); the same key
//! with another request is refused. Keys are the owner's and live a day.

use std::sync::Arc;
use std::time::Duration;

use redline_domain::time_util::Millis;
use redline_domain::Owner;
use redline_ports::{ClaimRef, Clock, IdempotencyClaim, IdempotencyStore, StoreError, StoredAnswer};

/// How long a key and its answer are kept.
pub const KEY_LIFETIME_MS: Millis = 24 * 60 * 60 * 1000;
/// How long a claim holds its key without being renewed: the request running renews it every
/// [`RENEW_EVERY`] for as long as it runs, so only a claim whose replica died lapses, and its
/// key is free again this long after.
pub const LEASE_MS: Millis = 5 * 60 * 1000;
/// How often a running request renews its claim's lease.
pub const RENEW_EVERY: Duration = Duration::from_secs(60);
/// The longest a retry waits for the first request's answer before answering 409.
pub const WAIT: Duration = Duration::from_secs(120);
/// The most characters a key may have.
pub const MAX_KEY_CHARS: usize = 255;

/// What to do with a request that carries a key.
#[derive(Debug)]
pub enum Begin {
    /// Run it, then [`Idempotency::finish`].
    Run(Claim),
    /// Answer this again.
    Replay(StoredAnswer),
    /// The key went with another request.
    Mismatch,
    /// The first request is still running after [`WAIT`].
    StillRunning,
}

/// A key this request holds, under a token of its own.
#[derive(Debug)]
#[must_use = "a claim is finished or released, else it holds the key until its lease ends"]
pub struct Claim {
    owner: Owner,
    key: String,
    token: String,
}

impl Claim {
    fn at(&self) -> ClaimRef<'_> {
        ClaimRef { owner: self.owner, key: &self.key, token: &self.token }
    }
}

pub struct Idempotency {
    store: Arc<dyn IdempotencyStore>,
    clock: Arc<dyn Clock>,
}

/// A key that is 1 to 255 visible ASCII characters (the draft's sf-string, without quotes).
pub fn key_is_valid(key: &str) -> bool {
    !key.is_empty() && key.len() <= MAX_KEY_CHARS && key.bytes().all(|b| (0x20..0x7f).contains(&b))
}

impl Idempotency {
    pub fn new(store: Arc<dyn IdempotencyStore>, clock: Arc<dyn Clock>) -> Self {
        Self { store, clock }
    }

    /// Claims `key` for a request of `fingerprint`, or finds what the key already answered;
    /// waits (up to [`WAIT`]) while the key's first request runs.
    pub async fn begin(&self, owner: Owner, key: &str, fingerprint: &str) -> Result<Begin, StoreError> {
        let started = tokio::time::Instant::now();
        let mut pause = Duration::from_millis(20);
        let token = uuid::Uuid::new_v4().simple().to_string();
        loop {
            let now = self.clock.now_ms();
            let claim = self
                .store
                .claim_idempotency_key(owner, key, &token, fingerprint, now, now + LEASE_MS, now - KEY_LIFETIME_MS)
                .await?;
            match claim {
                IdempotencyClaim::Claimed => return Ok(Begin::Run(Claim { owner, key: key.to_owned(), token })),
                IdempotencyClaim::Done(answer) => return Ok(Begin::Replay(answer)),
                IdempotencyClaim::Mismatch => return Ok(Begin::Mismatch),
                IdempotencyClaim::Running if started.elapsed() >= WAIT => return Ok(Begin::StillRunning),
                IdempotencyClaim::Running => {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(250));
                }
            }
        }
    }

    /// Keeps `answer` for the key's retries, or (`None`: the request changed nothing) frees
    /// the key so that a retry runs afresh.
    pub async fn finish(&self, claim: Claim, answer: Option<StoredAnswer>) -> Result<(), StoreError> {
        match answer {
            Some(answer) => self.store.finish_idempotency_key(claim.at(), &answer).await,
            None => self.store.release_idempotency_key(claim.at()).await,
        }
    }

    /// Runs `work` while renewing `claim`'s lease every [`RENEW_EVERY`], so that a request
    /// running longer than a lease keeps its key.
    pub async fn holding<T>(&self, claim: &Claim, work: impl std::future::Future<Output = T>) -> T {
        tokio::pin!(work);
        loop {
            tokio::select! {
                done = &mut work => return done,
                () = tokio::time::sleep(RENEW_EVERY) => {
                    let lease_until = self.clock.now_ms() + LEASE_MS;
                    if let Err(e) = self.store.renew_idempotency_key(claim.at(), lease_until).await {
                        tracing::warn!(error = %e, "could not renew the lease of an idempotency key");
                    }
                }
            }
        }
    }

    /// Deletes keys older than their lifetime, a batch at a time until none is left; answers
    /// how many went.
    pub async fn purge(&self) -> Result<usize, StoreError> {
        const BATCH: usize = 1_000;
        let before = self.clock.now_ms() - KEY_LIFETIME_MS;
        let mut total = 0;
        loop {
            let n = self.store.purge_idempotency_keys(before, BATCH as i64).await?;
            total += n;
            if n < BATCH {
                return Ok(total);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_visible_ascii_up_to_255() {
        assert!(key_is_valid("8e03978e-40d5-43e8-bc93-6894a57f9324"));
        assert!(key_is_valid(&"a".repeat(255)));
        assert!(!key_is_valid(""));
        assert!(!key_is_valid(&"a".repeat(256)));
        assert!(!key_is_valid("tab\there"));
        assert!(!key_is_valid("é"));
    }
}

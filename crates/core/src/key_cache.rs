//! The verified-key cache: argon2 runs once per key per minute, not once per request.
//!
//! Entries are keyed by the SHA-256 of the presented key (the key itself is never kept),
//! live at most `ttl`, and are dropped at once when their key is revoked on this replica.
//! A verification that was under way while a key was revoked (it read the key as live before
//! the revocation committed) does not put it back: every revocation moves a generation
//! counter on, and an entry is kept only if no revocation happened since its verification
//! began. Other replicas see a revocation within `ttl`. The cache holds about `capacity`
//! entries (`quick_cache`: when full, the least used go first), never unbounded memory.
//!
//! The generation is a lock of its own, held from an insert's check to its write and from a
//! revocation's step to its sweep, so neither can slip between the other's two halves; a
//! lookup takes only the cache's shard lock.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use redline_domain::time_util::Millis;
use redline_domain::KeyId;

use crate::identity::Principal;

pub struct KeyCache {
    ttl: Duration,
    /// The principal, the key's own expiry, and when it was verified.
    entries: quick_cache::sync::Cache<[u8; 32], (Principal, Option<Millis>, Instant)>,
    /// Revocations seen so far.
    generation: Mutex<u64>,
}

/// When a verification began, for [`KeyCache::insert`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Generation(u64);

impl KeyCache {
    pub fn new(ttl: Duration, capacity: usize) -> Self {
        Self { ttl, entries: quick_cache::sync::Cache::new(capacity.max(1)), generation: Mutex::new(0) }
    }

    fn generation_lock(&self) -> std::sync::MutexGuard<'_, u64> {
        // A panic while holding this lock cannot leave the counter inconsistent.
        self.generation.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Taken before a verification reads the store.
    pub fn generation(&self) -> Generation {
        Generation(*self.generation_lock())
    }

    /// The principal of a key verified less than `ttl` ago, with the key's expiry (which the
    /// caller checks against its clock).
    pub fn get(&self, digest: &[u8; 32]) -> Option<(Principal, Option<Millis>)> {
        let (principal, expires_at, at) = self.entries.get(digest)?;
        if at.elapsed() < self.ttl {
            return Some((principal, expires_at));
        }
        // Expired: gone, unless a fresh verification replaced it meanwhile.
        self.entries.remove_if(digest, |(_, _, kept)| *kept == at);
        None
    }

    /// Keeps a verified key, unless a key was revoked since `began` (it may have been this one).
    pub fn insert(&self, digest: [u8; 32], principal: Principal, expires_at: Option<Millis>, began: Generation) {
        let generation = self.generation_lock();
        if *generation != began.0 {
            return;
        }
        self.entries.insert(digest, (principal, expires_at, Instant::now()));
    }

    /// Forgets every entry of a key (revocation, once it has committed), and keeps
    /// verifications under way from putting it back.
    pub fn evict_key(&self, key: KeyId) {
        let mut generation = self.generation_lock();
        *generation += 1;
        self.entries.retain(|_, (p, _, _)| p.key_id != Some(key));
    }

    /// Forgets every entry (revocations may have been missed), with the same guard.
    pub fn clear(&self) {
        let mut generation = self.generation_lock();
        *generation += 1;
        self.entries.clear();
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redline_domain::{Owner, Scopes, UserId};

    fn principal() -> Principal {
        Principal { owner: Owner::User(UserId::new()), key_id: Some(KeyId::new()), scopes: Scopes::FULL }
    }

    #[test]
    fn expiry_eviction_and_bound() {
        let cache = KeyCache::new(Duration::from_millis(50), 3);
        let p = principal();
        cache.insert([1; 32], p.clone(), None, cache.generation());
        assert_eq!(cache.get(&[1; 32]), Some((p.clone(), None)));
        cache.evict_key(p.key_id.expect("a key"));
        assert_eq!(cache.get(&[1; 32]), None);

        cache.insert([2; 32], principal(), None, cache.generation());
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(cache.get(&[2; 32]), None);

        for i in 0..10u8 {
            cache.insert([i; 32], principal(), None, cache.generation());
            assert!(cache.len() <= 3);
        }
    }

    #[test]
    fn a_verification_under_way_during_a_revocation_is_not_kept() {
        let cache = KeyCache::new(Duration::from_secs(60), 10);
        let p = principal();
        let began = cache.generation();
        // The key is revoked (and evicted) while its verification runs.
        cache.evict_key(p.key_id.expect("a key"));
        cache.insert([1; 32], p.clone(), None, began);
        assert_eq!(cache.get(&[1; 32]), None, "the revoked key is not cached");
        // A verification that begins after it is kept.
        cache.insert([1; 32], p.clone(), None, cache.generation());
        assert_eq!(cache.get(&[1; 32]), Some((p, None)));
    }
}

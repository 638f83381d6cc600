//! The verified-key cache: argon2 runs once per key per minute, not once per request.
//!
//! Entries are keyed by the SHA-256 of the presented key (the key itself is never kept),
//! live at most `ttl`, and are dropped at once when their key is revoked on this replica.
//! A verification that was under way while a key was revoked (it read the key as live before
//! the revocation committed) does not put it back: every revocation moves a generation
//! counter on, and an entry is kept only if no revocation happened since its verification
//! began. Other replicas see a revocation within `ttl`. The map is bounded: when full, expired
//! entries are swept, and if it is still full it is cleared (a burst of misses, never
//! unbounded memory).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use redline_domain::KeyId;

use crate::identity::Principal;

pub struct KeyCache {
    ttl: Duration,
    capacity: usize,
    entries: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    map: HashMap<[u8; 32], (Principal, Instant)>,
    /// Revocations seen so far.
    generation: u64,
}

/// When a verification began, for [`KeyCache::insert`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Generation(u64);

impl KeyCache {
    pub fn new(ttl: Duration, capacity: usize) -> Self {
        Self { ttl, capacity, entries: Mutex::new(Entries::default()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        // A panic while holding this lock cannot leave the map inconsistent.
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Taken before a verification reads the store.
    pub fn generation(&self) -> Generation {
        Generation(self.lock().generation)
    }

    pub fn get(&self, digest: &[u8; 32]) -> Option<Principal> {
        let mut entries = self.lock();
        let map = &mut entries.map;
        match map.get(digest) {
            Some((p, at)) if at.elapsed() < self.ttl => Some(p.clone()),
            Some(_) => {
                map.remove(digest);
                None
            }
            None => None,
        }
    }

    /// Keeps a verified key, unless a key was revoked since `began` (it may have been this one).
    pub fn insert(&self, digest: [u8; 32], principal: Principal, began: Generation) {
        let mut entries = self.lock();
        if entries.generation != began.0 {
            return;
        }
        let map = &mut entries.map;
        if map.len() >= self.capacity {
            let ttl = self.ttl;
            map.retain(|_, (_, at)| at.elapsed() < ttl);
            if map.len() >= self.capacity {
                map.clear();
            }
        }
        map.insert(digest, (principal, Instant::now()));
    }

    /// Forgets every entry of a key (revocation, once it has committed), and keeps
    /// verifications under way from putting it back.
    pub fn evict_key(&self, key: KeyId) {
        let mut entries = self.lock();
        entries.generation += 1;
        entries.map.retain(|_, (p, _)| p.key_id != key);
    }

    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redline_domain::{Owner, UserId};

    fn principal() -> Principal {
        Principal { owner: Owner::User(UserId::new()), key_id: KeyId::new() }
    }

    #[test]
    fn expiry_eviction_and_bound() {
        let cache = KeyCache::new(Duration::from_millis(50), 3);
        let p = principal();
        cache.insert([1; 32], p.clone(), cache.generation());
        assert_eq!(cache.get(&[1; 32]), Some(p.clone()));
        cache.evict_key(p.key_id);
        assert_eq!(cache.get(&[1; 32]), None);

        cache.insert([2; 32], principal(), cache.generation());
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(cache.get(&[2; 32]), None);

        for i in 0..10u8 {
            cache.insert([i; 32], principal(), cache.generation());
            assert!(cache.len() <= 3);
        }
    }

    #[test]
    fn a_verification_under_way_during_a_revocation_is_not_kept() {
        let cache = KeyCache::new(Duration::from_secs(60), 10);
        let p = principal();
        let began = cache.generation();
        // The key is revoked (and evicted) while its verification runs.
        cache.evict_key(p.key_id);
        cache.insert([1; 32], p.clone(), began);
        assert_eq!(cache.get(&[1; 32]), None, "the revoked key is not cached");
        // A verification that begins after it is kept.
        cache.insert([1; 32], p.clone(), cache.generation());
        assert_eq!(cache.get(&[1; 32]), Some(p));
    }
}

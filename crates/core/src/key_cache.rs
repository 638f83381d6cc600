//! The verified-key cache: argon2 runs once per key per minute, not once per request.
//!
//! Entries are keyed by the SHA-256 of the presented key (the key itself is never kept),
//! live at most `ttl`, and are dropped at once when their key is revoked on this replica.
//! Other replicas see a revocation within `ttl`. The map is bounded: when full, expired
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
    entries: Mutex<HashMap<[u8; 32], (Principal, Instant)>>,
}

impl KeyCache {
    pub fn new(ttl: Duration, capacity: usize) -> Self {
        Self { ttl, capacity, entries: Mutex::new(HashMap::new()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], (Principal, Instant)>> {
        // A panic while holding this lock cannot leave the map inconsistent.
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn get(&self, digest: &[u8; 32]) -> Option<Principal> {
        let mut map = self.lock();
        match map.get(digest) {
            Some((p, at)) if at.elapsed() < self.ttl => Some(p.clone()),
            Some(_) => {
                map.remove(digest);
                None
            }
            None => None,
        }
    }

    pub fn insert(&self, digest: [u8; 32], principal: Principal) {
        let mut map = self.lock();
        if map.len() >= self.capacity {
            let ttl = self.ttl;
            map.retain(|_, (_, at)| at.elapsed() < ttl);
            if map.len() >= self.capacity {
                map.clear();
            }
        }
        map.insert(digest, (principal, Instant::now()));
    }

    /// Forgets every entry of a key (revocation).
    pub fn evict_key(&self, key: KeyId) {
        self.lock().retain(|_, (p, _)| p.key_id != key);
    }

    pub fn len(&self) -> usize {
        self.lock().len()
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
        cache.insert([1; 32], p.clone());
        assert_eq!(cache.get(&[1; 32]), Some(p.clone()));
        cache.evict_key(p.key_id);
        assert_eq!(cache.get(&[1; 32]), None);

        cache.insert([2; 32], principal());
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(cache.get(&[2; 32]), None);

        for i in 0..10u8 {
            cache.insert([i; 32], principal());
            assert!(cache.len() <= 3);
        }
    }
}

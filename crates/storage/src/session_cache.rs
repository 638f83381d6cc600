//! SQLite only: the session lists of recent owners, kept in memory (`GET /v1/sessions`).
//!
//! The list is read far more often than it changes, and on SQLite reading it cost about half
//! of the request's server CPU (docs/benchmarks.md §1). Every write to an owner's `sessions`
//! rows in this process drops that owner's entry once it has committed, and a list read
//! while a write may have been committing is not kept, so this process always sees its own
//! writes. Another process writing the same SQLite file (not a deployment Redline supports;
//! the `admin` CLI writes no sessions) is seen within [`TTL`]. PostgreSQL, where replicas
//! share the database, has no such cache.
//!
//! The lists live in a `quick_cache` of about [`MAX_OWNERS`] entries (when full, the least
//! used go first). The write generation is a lock of its own, held from a read's check to its
//! write into the cache and from a write's step to its removal, so a list read across a
//! write can never land after that write's removal; a lookup takes only the cache's shard lock.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redline_ports::records::SessionSummary;

/// How long an entry is served without reading the database again.
pub(crate) const TTL: Duration = Duration::from_secs(1);
/// Owners kept, about: the cache's bound.
const MAX_OWNERS: usize = 4096;
/// Longer lists are not kept: they are rare, and the copy would cost what the read saves.
const MAX_SESSIONS: usize = 256;

pub(crate) struct SessionLists {
    /// Each owner's list, with when its read began.
    lists: quick_cache::sync::Cache<String, (Instant, Arc<[SessionSummary]>)>,
    /// Bumped by every write: a list read across a write is not kept.
    generation: Mutex<u64>,
}

impl Default for SessionLists {
    fn default() -> Self {
        Self { lists: quick_cache::sync::Cache::new(MAX_OWNERS), generation: Mutex::new(0) }
    }
}

impl SessionLists {
    fn generation_lock(&self) -> std::sync::MutexGuard<'_, u64> {
        // A panic while holding the lock cannot leave the counter inconsistent, so a
        // poisoned lock is used as it is.
        self.generation.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The owner's list, if a fresh one is kept.
    pub(crate) fn get(&self, owner: &str) -> Option<Vec<SessionSummary>> {
        let (at, list) = self.lists.get(owner)?;
        (at.elapsed() < TTL).then(|| list.to_vec())
    }

    /// Call before reading a list from the database; pass the answer to [`Self::put`].
    pub(crate) fn generation(&self) -> u64 {
        *self.generation_lock()
    }

    /// Keeps a list read from the database, unless a write happened since `generation`.
    pub(crate) fn put(&self, owner: &str, generation: u64, list: &[SessionSummary], read_at: Instant) {
        if list.len() > MAX_SESSIONS {
            return;
        }
        let list: Arc<[SessionSummary]> = list.into();
        let current = self.generation_lock();
        if *current != generation {
            return;
        }
        self.lists.insert(owner.to_owned(), (read_at, list));
    }

    /// Call after a write to the owner's sessions has committed (or failed).
    pub(crate) fn invalidate(&self, owner: &str) {
        let mut generation = self.generation_lock();
        *generation = generation.wrapping_add(1);
        self.lists.remove(owner);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(n: usize) -> Vec<SessionSummary> {
        (0..n)
            .map(|i| SessionSummary {
                session_id: format!("s{i}"),
                title: None,
                created_at: 1,
                updated_at: 2,
                version_id: Some(format!("v{i}")),
                section_count: 3,
            })
            .collect()
    }

    #[test]
    fn a_kept_list_is_served_until_its_owner_writes() {
        let c = SessionLists::default();
        let g = c.generation();
        c.put("user:a", g, &list(2), Instant::now());
        c.put("user:b", g, &list(1), Instant::now());
        assert_eq!(c.get("user:a"), Some(list(2)));
        c.invalidate("user:a");
        assert_eq!(c.get("user:a"), None);
        assert_eq!(c.get("user:b"), Some(list(1)), "other owners keep theirs");
    }

    #[test]
    fn a_list_read_across_a_write_is_not_kept() {
        let c = SessionLists::default();
        let g = c.generation();
        c.invalidate("user:b"); // any owner's write: the read may predate it
        c.put("user:a", g, &list(2), Instant::now());
        assert_eq!(c.get("user:a"), None);
        let g = c.generation();
        c.put("user:a", g, &list(2), Instant::now());
        assert_eq!(c.get("user:a"), Some(list(2)));
    }

    #[test]
    fn old_and_long_lists_are_not_served() {
        let c = SessionLists::default();
        let g = c.generation();
        c.put("user:a", g, &list(2), Instant::now() - TTL);
        assert_eq!(c.get("user:a"), None, "older than the TTL");
        c.put("user:b", g, &list(MAX_SESSIONS + 1), Instant::now());
        assert_eq!(c.get("user:b"), None);
    }

    #[test]
    fn the_map_is_bounded() {
        let c = SessionLists::default();
        let g = c.generation();
        for i in 0..MAX_OWNERS + 10 {
            c.put(&format!("user:{i}"), g, &list(1), Instant::now());
        }
        assert!(c.lists.len() <= MAX_OWNERS);
        assert_eq!(c.get(&format!("user:{}", MAX_OWNERS + 9)), Some(list(1)), "the newest is kept");
    }
}

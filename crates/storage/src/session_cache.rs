//! The first page of the session lists of recent owners, kept in memory (`GET /v1/sessions`
//! without a cursor).
//!
//! The list is read far more often than it changes, and on SQLite reading it cost about half
//! of the request's server CPU (docs/benchmarks.md §1); on PostgreSQL the read is a round trip
//! to the server. Every write to an owner's `sessions` rows in this process drops that
//! owner's entry once it has committed, and a list read while a write may have been
//! committing is not kept, so this process always sees its own writes.
//!
//! On SQLite the cache is on from the start: one process serves the file (the `admin` CLI
//! writes no sessions; another process writing it anyway is seen within [`TTL`]). On
//! PostgreSQL, where replicas share the database, it is on once the store follows the bus
//! ([`crate::Db::follow_session_changes`]): each write then also publishes
//! `Signal::SessionsChanged(owner)`, and every replica drops that owner's entry when the
//! signal arrives, as it would for its own write. A replica that may have missed signals (its
//! subscription lagged, or its `LISTEN` connection came up again) drops every entry. A lost
//! signal (a `NOTIFY` that failed) is covered by [`TTL`].
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

/// The first rows of an owner's list, with when their read began and how many were asked
/// for: fewer rows than asked means the list is whole.
type Kept = (Instant, usize, Arc<[SessionSummary]>);

pub(crate) struct SessionLists {
    /// Each owner's first rows.
    lists: quick_cache::sync::Cache<String, Kept>,
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

    /// The owner's first `rows` rows (fewer when the list is shorter), if fresh ones are kept.
    pub(crate) fn get(&self, owner: &str, rows: usize) -> Option<Vec<SessionSummary>> {
        let (at, asked, list) = self.lists.get(owner)?;
        let whole = list.len() < asked;
        (at.elapsed() < TTL && (whole || rows <= asked)).then(|| list[..rows.min(list.len())].to_vec())
    }

    /// Call before reading a list from the database; pass the answer to [`Self::put`].
    pub(crate) fn generation(&self) -> u64 {
        *self.generation_lock()
    }

    /// Keeps the first rows of a list read from the database (`asked` rows were asked for),
    /// unless a write happened since `generation`.
    pub(crate) fn put(&self, owner: &str, generation: u64, asked: usize, list: &[SessionSummary], read_at: Instant) {
        if list.len() > MAX_SESSIONS {
            return;
        }
        let list: Arc<[SessionSummary]> = list.into();
        let current = self.generation_lock();
        if *current != generation {
            return;
        }
        self.lists.insert(owner.to_owned(), (read_at, asked, list));
    }

    /// Call after a write to the owner's sessions has committed (or failed), here or on
    /// another replica.
    pub(crate) fn invalidate(&self, owner: &str) {
        let mut generation = self.generation_lock();
        *generation = generation.wrapping_add(1);
        self.lists.remove(owner);
    }

    /// Drops every list: writes of other replicas may have gone unannounced.
    pub(crate) fn clear(&self) {
        let mut generation = self.generation_lock();
        *generation = generation.wrapping_add(1);
        self.lists.clear();
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
        c.put("user:a", g, 10, &list(2), Instant::now());
        c.put("user:b", g, 10, &list(1), Instant::now());
        assert_eq!(c.get("user:a", 10), Some(list(2)));
        c.invalidate("user:a");
        assert_eq!(c.get("user:a", 10), None);
        assert_eq!(c.get("user:b", 10), Some(list(1)), "other owners keep theirs");
    }

    #[test]
    fn a_list_read_across_a_write_is_not_kept() {
        let c = SessionLists::default();
        let g = c.generation();
        c.invalidate("user:b"); // any owner's write: the read may predate it
        c.put("user:a", g, 10, &list(2), Instant::now());
        assert_eq!(c.get("user:a", 10), None);
        let g = c.generation();
        c.put("user:a", g, 10, &list(2), Instant::now());
        assert_eq!(c.get("user:a", 10), Some(list(2)));
    }

    #[test]
    fn clearing_drops_every_list_and_reads_across_it() {
        let c = SessionLists::default();
        let g = c.generation();
        c.put("user:a", g, 10, &list(2), Instant::now());
        c.put("user:b", g, 10, &list(1), Instant::now());
        let read_before = c.generation();
        c.clear();
        assert_eq!(c.get("user:a", 10), None);
        assert_eq!(c.get("user:b", 10), None);
        c.put("user:a", read_before, 10, &list(2), Instant::now());
        assert_eq!(c.get("user:a", 10), None, "a list read across the clear is not kept");
    }

    #[test]
    fn old_and_long_lists_are_not_served() {
        let c = SessionLists::default();
        let g = c.generation();
        c.put("user:a", g, 10, &list(2), Instant::now() - TTL);
        assert_eq!(c.get("user:a", 10), None, "older than the TTL");
        c.put("user:b", g, MAX_SESSIONS + 2, &list(MAX_SESSIONS + 1), Instant::now());
        assert_eq!(c.get("user:b", 10), None);
    }

    #[test]
    fn kept_rows_serve_shorter_first_pages_and_a_whole_list_any() {
        let c = SessionLists::default();
        let g = c.generation();
        c.put("user:a", g, 3, &list(3), Instant::now());
        assert_eq!(c.get("user:a", 2), Some(list(2)));
        assert_eq!(c.get("user:a", 3), Some(list(3)));
        assert_eq!(c.get("user:a", 4), None, "the list may go on past the rows kept");
        c.put("user:b", g, 5, &list(2), Instant::now());
        assert_eq!(c.get("user:b", 50), Some(list(2)), "fewer rows than asked: the whole list");
    }

    #[test]
    fn the_map_is_bounded() {
        let c = SessionLists::default();
        let g = c.generation();
        for i in 0..MAX_OWNERS + 10 {
            c.put(&format!("user:{i}"), g, 10, &list(1), Instant::now());
        }
        assert!(c.lists.len() <= MAX_OWNERS);
        assert_eq!(c.get(&format!("user:{}", MAX_OWNERS + 9), 10), Some(list(1)), "the newest is kept");
    }
}

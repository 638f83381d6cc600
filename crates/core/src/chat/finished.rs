//! The rendered views of finished jobs, which never change: polling a finished job costs no
//! query of its events and no serialisation.
//!
//! An entry is served only while its job is younger than retention (the sweep deletes older
//! jobs, so serving them would answer for a job that is gone). Entries leave on deletion (a
//! `Job` signal from any replica, or a deleted session) and, beyond the capacity, by the
//! cache's own eviction.
//!
//! The capacity is in bytes of JSON, not in jobs: a turn on a large document renders to
//! hundreds of kilobytes or more, so a bound of 4,096 jobs alone could hold gigabytes.

use quick_cache::sync::Cache;
use quick_cache::Weighter;
use redline_domain::time_util::Millis;
use redline_domain::{Owner, SessionId};

use super::view::JobView;

/// Bytes the kept views may weigh in all (about: the cache sizes itself in shards).
const FINISHED_BYTES: u64 = 32 << 20;
/// Views expected, for the cache's table: 4,096 small jobs of 8 KiB.
const FINISHED_VIEWS: usize = 4096;
/// What an entry costs beside its JSON: its id, owner, session and the table's slot.
const ENTRY_OVERHEAD: u64 = 256;

pub(super) struct FinishedViews {
    entries: Cache<String, FinishedView, ByteWeight>,
}

/// Weighs an entry by its JSON and its fixed cost.
#[derive(Clone)]
struct ByteWeight;

impl Weighter<String, FinishedView> for ByteWeight {
    fn weight(&self, key: &String, view: &FinishedView) -> u64 {
        (key.len() + view.json.len()) as u64 + ENTRY_OVERHEAD
    }
}

#[derive(Clone)]
struct FinishedView {
    owner: Owner,
    session: SessionId,
    finished_at: Millis,
    json: bytes::Bytes,
}

impl Default for FinishedViews {
    fn default() -> Self {
        // A fixed number of shards, each of 2 MiB: the cache splits its budget between them, and
        // a view heavier than a shard is not kept (it is rendered again when polled).
        let options = quick_cache::OptionsBuilder::new()
            .estimated_items_capacity(FINISHED_VIEWS)
            .weight_capacity(FINISHED_BYTES)
            .shards(16)
            .build()
            .expect("valid cache options");
        Self { entries: Cache::with_options(options, ByteWeight, Default::default(), Default::default()) }
    }
}

impl FinishedViews {
    /// The owner and rendering of a job that finished after `fresh_after`.
    pub(super) fn get(&self, job_id: &str, fresh_after: Millis) -> Option<(Owner, bytes::Bytes)> {
        let e = self.entries.get(job_id)?;
        (e.finished_at > fresh_after).then_some((e.owner, e.json))
    }

    /// Keeps the rendering of a finished job (a job without an end is not kept).
    pub(super) fn put(&self, job: &JobView, json: bytes::Bytes) {
        let Some(finished_at) = job.finished_at else {
            return;
        };
        let view = FinishedView { owner: job.owner, session: job.session_id.clone(), finished_at, json };
        self.entries.insert(job.job_id.clone(), view);
    }

    pub(super) fn evict(&self, job_id: &str) {
        self.entries.remove(job_id);
    }

    pub(super) fn evict_session(&self, owner: Owner, session: &SessionId) {
        self.entries.retain(|_, e| !(e.owner == owner && &e.session == session));
    }
}

#[cfg(test)]
mod tests {
    use redline_domain::job::JobStatus;
    use redline_domain::UserId;

    use super::super::record::{ResponseMode, TurnMetadata};
    use super::super::view::{JobKind, TurnView};
    use super::*;

    fn finished(job_id: &str, owner: Owner, session: &str, finished_at: Option<Millis>) -> JobView {
        JobView {
            job_id: job_id.to_owned(),
            owner,
            session_id: SessionId::parse(session).unwrap(),
            status: JobStatus::Completed,
            progress: 100,
            error: None,
            created_at: 0,
            updated_at: 0,
            finished_at,
            kind: JobKind::Chat(Box::new(TurnView {
                metadata: TurnMetadata {
                    message: "m".to_owned(),
                    document_html_provided: false,
                    require_approval: false,
                    response_mode: ResponseMode::Full,
                    pending_changes: None,
                },
                result: None,
                proposal_response: None,
                proposal_version: None,
                failure: None,
            })),
            events: Vec::new(),
        }
    }

    #[test]
    fn views_are_served_while_fresh_and_leave_on_eviction() {
        let cache = FinishedViews::default();
        let (me, other) = (Owner::User(UserId::new()), Owner::User(UserId::new()));
        cache.put(&finished("j1", me, "s1", Some(100)), "one".into());
        cache.put(&finished("j2", me, "s2", Some(100)), "two".into());
        cache.put(&finished("j3", other, "s1", Some(100)), "three".into());
        cache.put(&finished("unfinished", me, "s1", None), "no".into());

        assert_eq!(cache.get("j1", 99), Some((me, "one".into())));
        assert_eq!(cache.get("j1", 100), None, "past retention");
        assert_eq!(cache.get("unfinished", 0), None);

        cache.evict("j2");
        assert_eq!(cache.get("j2", 0), None);

        cache.evict_session(me, &SessionId::parse("s1").unwrap());
        assert_eq!(cache.get("j1", 0), None);
        assert_eq!(cache.get("j3", 0), Some((other, "three".into())), "another owner's session of that name");
    }

    #[test]
    fn the_cache_stays_bounded() {
        let cache = FinishedViews::default();
        let me = Owner::User(UserId::new());
        for i in 0..FINISHED_VIEWS * 3 {
            cache.put(&finished(&format!("j{i}"), me, "s", Some(1)), "x".repeat(8 << 10).into());
        }
        assert!(cache.entries.weight() <= FINISHED_BYTES, "{} bytes", cache.entries.weight());
        assert!(cache.entries.len() > FINISHED_VIEWS / 2, "{} entries", cache.entries.len());
    }

    #[test]
    fn large_views_are_bounded_by_their_bytes() {
        let cache = FinishedViews::default();
        let me = Owner::User(UserId::new());
        let big: bytes::Bytes = "x".repeat(512 << 10).into();
        for i in 0..200 {
            cache.put(&finished(&format!("j{i}"), me, "s", Some(1)), big.clone());
        }
        // 200 views of 512 KiB would be 100 MiB; the cache keeps what fits in its budget.
        assert!(cache.entries.weight() <= FINISHED_BYTES, "{} bytes", cache.entries.weight());
        assert!(cache.entries.len() < 64, "{} entries", cache.entries.len());
        assert_eq!(cache.get("j199", 0).map(|(_, json)| json.len()), Some(512 << 10), "the newest is kept");
    }
}

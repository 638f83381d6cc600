//! The `JobStore`, `HistoryStore` and `EventBus` part of the contract suite: exclusive
//! claims under concurrency, compare-and-set updates, event sequences, the sweep (dead
//! workers, unanswered approvals, retention, archiving) and history truncation.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use redline_domain::job::{JobStatus, JobType};
use redline_domain::page::PageRequest;
use redline_domain::SessionId;
use redline_ports::documents::{CommitOutcome, NewVersion};
use redline_ports::jobs::{HistoryMessage, JobFilter, JobRecord, JobUpdate, Signal, SweepRules};
use redline_ports::{DocumentStore, EventBus, HistoryStore, JobStore};
use serde_json::json;

use super::*;

fn sid(s: &str) -> SessionId {
    SessionId::parse(s).expect("session id")
}

pub fn job(owner: Owner, id: &str, session: &str, created_at: Millis) -> JobRecord {
    JobRecord {
        job_id: id.to_owned(),
        owner,
        session_id: sid(session),
        job_type: JobType::Chat,
        status: JobStatus::Pending,
        progress: 0,
        attempts: 0,
        request: json!({"message": id}),
        result: None,
        error: None,
        metadata: json!({"message": id}),
        state: json!({}),
        created_at,
        updated_at: created_at,
        finished_at: None,
        lease_until: None,
    }
}

async fn owner(db: &Db, address: &str) -> Owner {
    Owner::User(new_user(db, web_user(address, T0)).await.id)
}

pub async fn claims_are_exclusive_and_oldest_first(db: &Db) {
    let me = owner(db, "claims@example.com").await;
    for i in 0..20 {
        db.insert_job(&job(me, &format!("j{i:02}"), "s", T0 + i)).await.unwrap();
    }
    let first = db.claim_job(T0 + 100, T0 + 30_100).await.unwrap().expect("a pending job");
    assert_eq!(first.job_id, "j00");
    assert_eq!((first.status, first.attempts, first.lease_until), (JobStatus::InProgress, 0, Some(T0 + 30_100)));
    let shared = common::shared(db);
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let db = shared.clone();
        tasks.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            while let Some(j) = db.claim_job(T0 + 200, T0 + 30_200).await.unwrap() {
                mine.push(j.job_id);
            }
            mine
        }));
    }
    let mut claimed = Vec::new();
    for t in tasks {
        claimed.extend(t.await.unwrap());
    }
    let unique: BTreeSet<&String> = claimed.iter().collect();
    assert_eq!(claimed.len(), 19, "every other job claimed once: {claimed:?}");
    assert_eq!(unique.len(), 19);
    assert!(db.claim_job(T0 + 300, T0 + 30_300).await.unwrap().is_none());
}

pub async fn updates_are_compare_and_set(db: &Db) {
    let me = owner(db, "cas@example.com").await;
    db.insert_job(&job(me, "j", "s", T0)).await.unwrap();
    let to_done = JobUpdate {
        status: Some(JobStatus::Completed),
        progress: Some(150),
        result: Some(json!({"response": "ok"})),
        ..Default::default()
    };
    assert!(
        db.update_job("j", &[JobStatus::InProgress], &to_done, T0 + 1).await.unwrap().is_none(),
        "pending is not in progress"
    );
    db.claim_job(T0 + 1, T0 + 1000).await.unwrap().unwrap();
    let done = db.update_job("j", &[JobStatus::InProgress], &to_done, T0 + 2).await.unwrap().expect("updated");
    assert_eq!(done.status, JobStatus::Completed);
    assert_eq!(done.progress, 100, "progress is clamped");
    assert_eq!(done.result, Some(json!({"response": "ok"})));
    assert_eq!((done.finished_at, done.lease_until, done.updated_at), (Some(T0 + 2), None, T0 + 2));
    let cancel = JobUpdate { status: Some(JobStatus::Cancelled), ..Default::default() };
    let from = JobStatus::sources_of(JobStatus::Cancelled);
    assert!(db.update_job("j", &from, &cancel, T0 + 3).await.unwrap().is_none(), "nothing leaves a finished state");
    assert!(db.update_job("nope", &from, &cancel, T0 + 3).await.unwrap().is_none());
    assert_eq!(db.job("j").await.unwrap().unwrap().status, JobStatus::Completed);
}

pub async fn listings_are_owner_scoped_newest_first(db: &Db) {
    let (me, other) = (owner(db, "list@example.com").await, owner(db, "other@example.com").await);
    for i in 0..5 {
        db.insert_job(&job(me, &format!("a{i}"), if i % 2 == 0 { "even" } else { "odd" }, T0 + i)).await.unwrap();
    }
    db.insert_job(&job(other, "b0", "even", T0 + 10)).await.unwrap();
    let all = db.list_jobs(me, &JobFilter::default(), &PageRequest::first(20)).await.unwrap().items;
    assert_eq!(all.iter().map(|j| j.job_id.as_str()).collect::<Vec<_>>(), ["a4", "a3", "a2", "a1", "a0"]);
    let even = JobFilter { session_id: Some(sid("even")), ..Default::default() };
    assert_eq!(
        db.list_jobs(me, &even, &PageRequest::first(2))
            .await
            .unwrap()
            .items
            .iter()
            .map(|j| j.job_id.as_str())
            .collect::<Vec<_>>(),
        ["a4", "a2"]
    );
    let done = JobFilter { status: Some(JobStatus::Completed), ..Default::default() };
    assert!(db.list_jobs(me, &done, &PageRequest::first(20)).await.unwrap().items.is_empty());
    assert!(db.has_active_chat(me, &sid("odd")).await.unwrap());
    assert!(!db.has_active_chat(me, &sid("none")).await.unwrap());
    let mut deleted: Vec<String> =
        db.delete_session_jobs(me, &sid("even")).await.unwrap().into_iter().map(|j| j.job_id).collect();
    deleted.sort_unstable();
    assert_eq!(deleted, ["a0", "a2", "a4"], "the deleted jobs are given back");
    assert!(db.job("a0").await.unwrap().is_none());
    assert!(db.job("b0").await.unwrap().is_some(), "another owner's session of the same name stays");
}

pub async fn events_are_numbered_in_order(db: &Db) {
    let me = owner(db, "events@example.com").await;
    db.insert_job(&job(me, "j", "s", T0)).await.unwrap();
    let shared = common::shared(db);
    let mut tasks = Vec::new();
    for i in 0..10 {
        let db = shared.clone();
        tasks
            .push(tokio::spawn(async move { db.append_event("j", "status", &json!({"i": i}), T0 + i).await.unwrap() }));
    }
    let mut seqs = Vec::new();
    for t in tasks {
        seqs.push(t.await.unwrap());
    }
    seqs.sort_unstable();
    assert_eq!(seqs, (1..=10).collect::<Vec<i64>>());
    let after = db.events("j", 7).await.unwrap();
    assert_eq!(after.iter().map(|e| e.sequence).collect::<Vec<_>>(), [8, 9, 10]);
    assert_eq!(after[0].kind, "status");
    let batch = vec![("tool_call".to_owned(), json!({"n": 1})), ("change".to_owned(), json!({"n": 2}))];
    assert_eq!(db.append_events("j", &batch, T0 + 20).await.unwrap(), 12);
    assert_eq!(db.append_events("j", &[], T0 + 21).await.unwrap(), 12);
    let tail = db.events("j", 10).await.unwrap();
    assert_eq!(
        tail.iter().map(|e| (e.sequence, e.kind.as_str())).collect::<Vec<_>>(),
        [(11, "tool_call"), (12, "change")]
    );
    assert_eq!(tail[1].content, json!({"n": 2}));
}

pub async fn the_sweep_requeues_fails_cancels_and_deletes(db: &Db) {
    let me = owner(db, "sweep@example.com").await;
    for (id, at) in [("dead", T0), ("deadagain", T0 + 1), ("waiting", T0 + 2), ("old", T0 + 3), ("alive", T0 + 4)] {
        let crashes = if id == "deadagain" { 2 } else { 0 };
        db.insert_job(&JobRecord { attempts: crashes, ..job(me, id, "s", at) }).await.unwrap();
    }
    // dead: claimed, lease ran out. deadagain: its worker died twice before, and now again.
    // Claims and rounds handed back to the queue do not count.
    db.claim_job(T0, T0 + 10).await.unwrap();
    for _ in 0..3 {
        db.claim_job(T0, T0 + 10).await.unwrap();
        let back = JobUpdate { status: Some(JobStatus::Pending), ..Default::default() };
        db.update_job("deadagain", &[JobStatus::InProgress], &back, T0).await.unwrap();
    }
    db.claim_job(T0, T0 + 10).await.unwrap();
    assert_eq!(db.job("deadagain").await.unwrap().unwrap().attempts, 2);
    let waiting = db.claim_job(T0, T0 + 10).await.unwrap().unwrap();
    assert_eq!(waiting.job_id, "waiting");
    db.update_job(
        "waiting",
        &[JobStatus::InProgress],
        &JobUpdate { status: Some(JobStatus::AwaitingApproval), ..Default::default() },
        T0 + 5,
    )
    .await
    .unwrap();
    db.claim_job(T0, T0 + 10).await.unwrap();
    db.update_job(
        "old",
        &[JobStatus::InProgress],
        &JobUpdate { status: Some(JobStatus::Completed), ..Default::default() },
        T0 + 6,
    )
    .await
    .unwrap();
    db.append_event("old", "status", &json!({}), T0 + 6).await.unwrap();
    db.claim_job(T0, T0 + 1_000_000).await.unwrap();
    let sweep = db
        .sweep_jobs(&SweepRules {
            now: T0 + 100,
            delete_finished_before: T0 + 50,
            cancel_awaiting_before: T0 + 50,
            max_attempts: 3,
            requeue_leases_before: T0 + 100,
        })
        .await
        .unwrap();
    assert_eq!(sweep.requeued, ["dead"]);
    assert_eq!(sweep.failed, ["deadagain"]);
    assert_eq!(sweep.cancelled, ["waiting"]);
    assert_eq!(sweep.deleted, 1);
    let dead = db.job("dead").await.unwrap().unwrap();
    assert_eq!((dead.status, dead.attempts), (JobStatus::Pending, 1), "one crash counted");
    let failed = db.job("deadagain").await.unwrap().unwrap();
    assert_eq!(failed.status, JobStatus::Failed);
    assert!(failed.error.as_deref().unwrap().contains("interrupted 3 times"), "{:?}", failed.error);
    assert_eq!(db.job("waiting").await.unwrap().unwrap().status, JobStatus::Cancelled);
    assert!(db.job("old").await.unwrap().is_none());
    assert!(db.events("old", 0).await.unwrap().is_empty());
    assert_eq!(db.job("alive").await.unwrap().unwrap().status, JobStatus::InProgress, "a live lease is left alone");

    // At the start of the only process that runs jobs, every lease found belongs to a dead
    // worker: the job is requeued at once, its times are the sweep's.
    let rules = SweepRules {
        now: T0 + 200,
        delete_finished_before: T0,
        cancel_awaiting_before: T0,
        max_attempts: 3,
        requeue_leases_before: i64::MAX,
    };
    assert_eq!(db.sweep_jobs(&rules).await.unwrap().requeued, ["alive"]);
    let alive = db.job("alive").await.unwrap().unwrap();
    assert_eq!((alive.status, alive.updated_at, alive.lease_until), (JobStatus::Pending, T0 + 200, None));
}

/// A worker renews its lease while the sweep is deciding that the lease ran out: the sweep
/// leaves the job to its worker (it re-checks the lease under the row's lock) instead of
/// queueing it again, which would run it twice. On SQLite the renewal holds the write lock
/// and the sweep reads after it; on PostgreSQL the sweep has read the job as expired and
/// waits on the row, which the renewal then commits.
pub async fn a_lease_renewed_during_the_sweep_is_kept(db: &Db) {
    let me = owner(db, "sweep-race@example.com").await;
    db.insert_job(&job(me, "slow", "s", T0)).await.unwrap();
    db.claim_job(T0, T0 + 10).await.unwrap().expect("claimed");
    let mut renewal = RawConn::open(db).await;
    let begin = if db.backend_name() == "sqlite" { "BEGIN IMMEDIATE" } else { "BEGIN" };
    renewal.execute(&format!("{begin}; UPDATE jobs SET lease_until = {} WHERE job_id = 'slow'", T0 + 1_000_000)).await;
    let rules = SweepRules {
        now: T0 + 100,
        delete_finished_before: T0 - 1,
        cancel_awaiting_before: T0 - 1,
        max_attempts: 3,
        requeue_leases_before: T0 + 100,
    };
    let (sweep, ()) = tokio::join!(db.sweep_jobs(&rules), async {
        // Until the sweep waits for the row held.
        common::until_a_lock_is_awaited(db, "the sweep").await;
        renewal.execute("COMMIT").await;
    });
    let sweep = sweep.unwrap();
    assert!(sweep.requeued.is_empty() && sweep.failed.is_empty(), "{:?} {:?}", sweep.requeued, sweep.failed);
    let job = db.job("slow").await.unwrap().unwrap();
    assert_eq!((job.status, job.lease_until, job.attempts), (JobStatus::InProgress, Some(T0 + 1_000_000), 0));
}

fn version(id: &str, html: &str, now: Millis) -> NewVersion {
    NewVersion {
        version_id: id.to_owned(),
        html: html.to_owned(),
        section_count: 1,
        source: "chat".to_owned(),
        title: None,
        now,
    }
}

/// A turn's commit and a cancel cannot both win: the commit is refused for a job that is not
/// in progress, and a job that has committed cannot be cancelled, is not run again by
/// recovery, and can be cancelled again once it is queued for another round.
pub async fn a_committed_job_cannot_be_cancelled_nor_rerun(db: &Db) {
    let me = owner(db, "commit-guard@example.com").await;
    let s = sid("guarded");
    db.commit_version(me, &s, None, &version("v1", "<p>one</p>", T0)).await.unwrap();
    let cancel = JobUpdate { status: Some(JobStatus::Cancelled), ..Default::default() };
    let cancellable = JobStatus::sources_of(JobStatus::Cancelled);

    // Cancelled first: the commit writes nothing.
    db.insert_job(&job(me, "late", "guarded", T0)).await.unwrap();
    db.claim_job(T0, T0 + 10).await.unwrap().unwrap();
    db.update_job("late", &cancellable, &cancel, T0 + 1).await.unwrap().expect("cancelled");
    let refused = db
        .commit_job_version("late", me, &s, Some(Some("v1".to_owned())), &version("v2", "<p>two</p>", T0 + 2))
        .await
        .unwrap();
    assert_eq!(refused, None);
    let doc = db.document(me, &s).await.unwrap().unwrap();
    assert_eq!((doc.version_id.as_deref(), doc.html.as_str()), (Some("v1"), "<p>one</p>"));
    assert!(db.version(me, &s, "v2").await.unwrap().is_none(), "no version row either");

    // A stale commit leaves the job cancellable.
    db.insert_job(&job(me, "turn", "guarded", T0 + 3)).await.unwrap();
    db.claim_job(T0 + 3, T0 + 10).await.unwrap().unwrap();
    let stale = db
        .commit_job_version("turn", me, &s, Some(Some("v0".to_owned())), &version("v2", "<p>two</p>", T0 + 4))
        .await
        .unwrap();
    assert_eq!(stale, Some(CommitOutcome::Stale { current_version: Some("v1".to_owned()) }));

    // Committed: cancel is refused, the job stays in progress.
    let done = db
        .commit_job_version("turn", me, &s, Some(Some("v1".to_owned())), &version("v2", "<p>two</p>", T0 + 5))
        .await
        .unwrap();
    assert!(matches!(done, Some(CommitOutcome::Committed(ref r)) if r.version_id.as_deref() == Some("v2")), "{done:?}");
    assert!(db.update_job("turn", &cancellable, &cancel, T0 + 6).await.unwrap().is_none());
    assert_eq!(db.job("turn").await.unwrap().unwrap().status, JobStatus::InProgress);

    // Queued again for another round (reviewer feedback): cancellable again.
    let requeue = JobUpdate { status: Some(JobStatus::Pending), ..Default::default() };
    db.update_job("turn", &[JobStatus::InProgress], &requeue, T0 + 7).await.unwrap().expect("requeued");
    db.claim_job(T0 + 7, T0 + 10).await.unwrap().unwrap();
    db.commit_job_version("turn", me, &s, Some(Some("v2".to_owned())), &version("v3", "<p>three</p>", T0 + 8))
        .await
        .unwrap()
        .expect("committed");

    // Its worker dies before completing it: recovery ends it instead of running it again.
    let sweep = db
        .sweep_jobs(&SweepRules {
            now: T0 + 100,
            delete_finished_before: T0,
            cancel_awaiting_before: T0,
            max_attempts: 3,
            requeue_leases_before: T0 + 100,
        })
        .await
        .unwrap();
    assert!(sweep.requeued.is_empty(), "{sweep:?}");
    assert_eq!(sweep.failed, ["turn"]);
    let ended = db.job("turn").await.unwrap().unwrap();
    assert_eq!(ended.status, JobStatus::Failed);
    let error = ended.error.unwrap();
    assert!(error.contains("saved as version v3") && error.contains("not charged"), "{error}");
    assert_eq!(db.document(me, &s).await.unwrap().unwrap().version_id.as_deref(), Some("v3"));

    // Not for another job's id, nor a finished one.
    assert_eq!(
        db.commit_job_version("turn", me, &s, None, &version("v4", "<p>four</p>", T0 + 101)).await.unwrap(),
        None
    );
    assert_eq!(
        db.commit_job_version("nope", me, &s, None, &version("v4", "<p>four</p>", T0 + 101)).await.unwrap(),
        None
    );
}

pub async fn history_truncates_from_a_message(db: &Db) {
    let me = owner(db, "history@example.com").await;
    let s = sid("h");
    db.ensure_session(me, &s, T0).await.unwrap();
    db.ensure_session(me, &s, T0 + 1).await.unwrap();
    let msg = |id: &str| HistoryMessage {
        message_id: id.to_owned(),
        role: "user".to_owned(),
        content: id.to_owned(),
        job_id: None,
        version_before: Some(format!("v_{id}")),
        version_after: None,
        created_at: T0,
    };
    db.add_messages(me, &s, &[msg("m1"), msg("m2")]).await.unwrap();
    db.add_messages(me, &s, &[msg("m3")]).await.unwrap();
    let ids = |h: Vec<HistoryMessage>| h.into_iter().map(|m| m.message_id).collect::<Vec<_>>();
    assert_eq!(ids(db.active_history(me, &s, &PageRequest::first(100)).await.unwrap().items), ["m1", "m2", "m3"]);
    assert_eq!(ids(db.recent_history(me, &s, 2).await.unwrap()), ["m2", "m3"], "the last two, oldest first");
    assert_eq!(ids(db.recent_history(me, &s, 10).await.unwrap()), ["m1", "m2", "m3"]);
    assert!(db.recent_history(me, &s, 0).await.unwrap().is_empty());
    assert!(db.truncate_history(me, &s, "m2").await.unwrap());
    assert_eq!(ids(db.recent_history(me, &s, 2).await.unwrap()), ["m1"], "only the active history");
    assert_eq!(ids(db.active_history(me, &s, &PageRequest::first(100)).await.unwrap().items), ["m1"]);
    assert!(!db.truncate_history(me, &s, "m3").await.unwrap(), "no longer in the active history");
    let other = owner(db, "stranger@example.com").await;
    assert!(!db.truncate_history(other, &s, "m1").await.unwrap());

    // Messages take their place by `created_at`: a turn that committed first but finished
    // last is listed before the one that committed after it; equal times keep arrival order.
    let at = |id: &str, t: Millis| HistoryMessage { created_at: t, ..msg(id) };
    db.add_messages(me, &s, &[at("b1", T0 + 20), at("b2", T0 + 20)]).await.unwrap();
    db.add_messages(me, &s, &[at("a1", T0 + 10), at("a2", T0 + 10)]).await.unwrap();
    db.add_messages(me, &s, &[at("c1", T0 + 20)]).await.unwrap();
    db.add_messages(me, &s, &[at("z1", T0 + 30)]).await.unwrap();
    assert_eq!(
        ids(db.active_history(me, &s, &PageRequest::first(100)).await.unwrap().items),
        ["m1", "a1", "a2", "b1", "b2", "c1", "z1"]
    );
    assert!(db.truncate_history(me, &s, "b1").await.unwrap());
    assert_eq!(
        ids(db.active_history(me, &s, &PageRequest::first(100)).await.unwrap().items),
        ["m1", "a1", "a2"],
        "b1 and all after it"
    );
}

/// The bus of the backend: in-process on SQLite, `LISTEN/NOTIFY` between two buses (two
/// replicas) on PostgreSQL.
pub async fn signals_reach_other_buses(db: &Db) {
    let url = common::url_of(db);
    if db.backend_name() != "postgres" {
        let bus = redline_storage::bus::LocalBus::default();
        let mut rx = bus.subscribe();
        bus.publish(Signal::Job("x".into())).await;
        assert_eq!(rx.recv().await.unwrap(), Signal::Job("x".into()));
        return;
    }
    let a = redline_storage::bus::PgBus::start(&url);
    let b = redline_storage::bus::PgBus::start(&url);
    let mut rx = b.subscribe();
    // The listener connects in the background: publish until it hears.
    let heard = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            a.publish(Signal::Job("from-a".into())).await;
            match tokio::time::timeout(Duration::from_millis(200), rx.recv()).await {
                Ok(Ok(Signal::Job(id))) if id == "from-a" => return true,
                _ => continue,
            }
        }
    })
    .await;
    assert_eq!(heard, Ok(true), "a signal published on one replica reaches another over LISTEN/NOTIFY");
    // Once connected, every kind of signal goes across as it was sent.
    a.publish(Signal::Events("events-of-a".into())).await;
    let events = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match rx.recv().await {
                Ok(Signal::Events(id)) => return id,
                _ => continue,
            }
        }
    })
    .await;
    assert_eq!(events.as_deref(), Ok("events-of-a"), "an events-only signal keeps its kind across replicas");
    let _ = Arc::new(a);
}

/// A replica shutting down hands its running job back: pending at once, no attempt counted;
/// a job that committed its document, or is no longer running, is left as it is.
pub async fn a_released_job_is_pending_at_once_without_an_attempt(db: &Db) {
    let me = owner(db, "release@example.com").await;
    db.insert_job(&job(me, "handed", "s", T0)).await.unwrap();
    let claimed = db.claim_job(T0 + 1, T0 + 30_000).await.unwrap().expect("claimed");
    assert_eq!(claimed.job_id, "handed");
    assert!(db.release_job("handed", T0 + 2).await.unwrap());
    let back = db.job("handed").await.unwrap().unwrap();
    assert_eq!((back.status, back.attempts, back.lease_until, back.updated_at), (JobStatus::Pending, 0, None, T0 + 2));
    assert!(!db.release_job("handed", T0 + 3).await.unwrap(), "a pending job is not released again");
    let again = db.claim_job(T0 + 4, T0 + 30_000).await.unwrap().expect("claimed again at once");
    assert_eq!((again.job_id.as_str(), again.attempts), ("handed", 0));

    // Committed: finishing it is the only way on; release leaves it running.
    let s = sid("released");
    db.insert_job(&job(me, "committed", "released", T0 + 10)).await.unwrap();
    db.claim_job(T0 + 11, T0 + 30_000).await.unwrap().expect("claimed");
    let done =
        db.commit_job_version("committed", me, &s, Some(None), &version("r1", "<p>r</p>", T0 + 11)).await.unwrap();
    assert!(matches!(done, Some(CommitOutcome::Committed(_))), "{done:?}");
    assert!(!db.release_job("committed", T0 + 12).await.unwrap());
    assert_eq!(db.job("committed").await.unwrap().unwrap().status, JobStatus::InProgress);
    assert!(!db.release_job("no-such-job", T0 + 13).await.unwrap());
}

/// The queue depth `/metrics` shows: unfinished jobs by type and status, finished ones left out.
pub async fn unfinished_jobs_are_counted_by_type_and_status(db: &Db) {
    let me = owner(db, "counts@example.com").await;
    let count = |counts: &[(JobType, JobStatus, i64)], t: JobType, s: JobStatus| {
        counts.iter().find(|c| c.0 == t && c.1 == s).map_or(0, |c| c.2)
    };
    let before = db.job_counts().await.unwrap();
    for i in 0..3 {
        db.insert_job(&job(me, &format!("count{i}"), "s", T0 + i)).await.unwrap();
    }
    let attachment = JobRecord { job_type: JobType::AttachmentProcessing, ..job(me, "count-att", "s", T0 + 9) };
    db.insert_job(&attachment).await.unwrap();
    db.claim_job(T0 + 10, T0 + 1_000).await.unwrap().expect("claimed");
    let done = JobUpdate { status: Some(JobStatus::Completed), ..Default::default() };
    db.claim_job(T0 + 11, T0 + 1_000).await.unwrap().expect("claimed");
    db.update_job("count1", &[JobStatus::InProgress], &done, T0 + 12).await.unwrap().expect("completed");
    let after = db.job_counts().await.unwrap();
    let delta = |t, s| count(&after, t, s) - count(&before, t, s);
    assert_eq!(delta(JobType::Chat, JobStatus::Pending), 1, "{after:?}");
    assert_eq!(delta(JobType::Chat, JobStatus::InProgress), 1, "{after:?}");
    assert_eq!(delta(JobType::AttachmentProcessing, JobStatus::Pending), 1, "{after:?}");
    assert!(after.iter().all(|c| !c.1.is_finished()), "{after:?}");
}

/// An internal job (an e-mailed export) runs in the same queue as the others, claimed,
/// requeued and given up alike, but no listing shows it, whatever its filter or page.
pub async fn internal_jobs_run_in_the_queue_but_are_never_listed(db: &Db) {
    let me = owner(db, "internal@example.com").await;
    let export = |id: &str, at: Millis| JobRecord {
        job_type: JobType::EmailedExport,
        request: json!({"format": 1, "export_id": id}),
        ..job(me, id, "s", at)
    };
    db.insert_job(&job(me, "c1", "s", T0)).await.unwrap();
    db.insert_job(&export("exp_1", T0 + 1)).await.unwrap();
    db.insert_job(&JobRecord { job_type: JobType::AttachmentProcessing, ..job(me, "a1", "s", T0 + 2) }).await.unwrap();
    db.insert_job(&export("exp_2", T0 + 3)).await.unwrap();
    let stored = db.job("exp_1").await.unwrap().expect("found by id");
    assert_eq!(
        (stored.job_type, &stored.request),
        (JobType::EmailedExport, &json!({"format": 1, "export_id": "exp_1"}))
    );

    let ids =
        |page: &redline_domain::page::Page<JobRecord>| page.items.iter().map(|j| j.job_id.clone()).collect::<Vec<_>>();
    let filters = [
        JobFilter::default(),
        JobFilter { session_id: Some(sid("s")), ..Default::default() },
        JobFilter { status: Some(JobStatus::Pending), ..Default::default() },
        JobFilter { session_id: Some(sid("s")), status: Some(JobStatus::Pending), ..Default::default() },
    ];
    for filter in &filters {
        let all = db.list_jobs(me, filter, &PageRequest::first(50)).await.unwrap();
        assert_eq!(ids(&all), ["a1", "c1"], "{filter:?}");
        // One a page: the pages hold the public jobs only, and end.
        let first = db.list_jobs(me, filter, &PageRequest::first(1)).await.unwrap();
        assert_eq!(ids(&first), ["a1"], "{filter:?}");
        let next = PageRequest { limit: 1, after: first.next.clone() };
        let second = db.list_jobs(me, filter, &next).await.unwrap();
        assert_eq!(ids(&second), ["c1"], "{filter:?}");
        let last = PageRequest { limit: 1, after: second.next.clone() };
        assert!(second.next.is_none() || db.list_jobs(me, filter, &last).await.unwrap().items.is_empty());
    }
    for (t, expected) in
        [(JobType::Chat, vec!["c1"]), (JobType::AttachmentProcessing, vec!["a1"]), (JobType::EmailedExport, vec![])]
    {
        let filter = JobFilter { job_type: Some(t), ..Default::default() };
        assert_eq!(ids(&db.list_jobs(me, &filter, &PageRequest::first(50)).await.unwrap()), expected, "{t:?}");
    }

    // Claimed in creation order with the others.
    let claimed: Vec<String> = {
        let mut out = Vec::new();
        while let Some(j) = db.claim_job(T0 + 10, T0 + 1_000).await.unwrap() {
            out.push(j.job_id);
        }
        out
    };
    assert_eq!(claimed, ["c1", "exp_1", "a1", "exp_2"]);
    let counts = db.job_counts().await.unwrap();
    assert!(counts.contains(&(JobType::EmailedExport, JobStatus::InProgress, 2)), "{counts:?}");

    // A dead worker's export is requeued with an attempt, then given up at the limit.
    let rules = |now: Millis| SweepRules {
        now,
        delete_finished_before: 0,
        cancel_awaiting_before: 0,
        max_attempts: 2,
        requeue_leases_before: now,
    };
    let sweep = db.sweep_jobs(&rules(T0 + 2_000)).await.unwrap();
    assert!(sweep.requeued.contains(&"exp_1".to_owned()), "{sweep:?}");
    let again = db.job("exp_1").await.unwrap().unwrap();
    assert_eq!((again.status, again.attempts, again.lease_until), (JobStatus::Pending, 1, None));
    while db.claim_job(T0 + 2_001, T0 + 3_000).await.unwrap().is_some() {}
    let sweep = db.sweep_jobs(&rules(T0 + 4_000)).await.unwrap();
    assert!(sweep.failed.contains(&"exp_1".to_owned()), "{sweep:?}");
    assert_eq!(db.job("exp_1").await.unwrap().unwrap().status, JobStatus::Failed);

    // Deleted with its session.
    let gone = db.delete_session_jobs(me, &sid("s")).await.unwrap();
    assert!(gone.iter().any(|j| j.job_id == "exp_2" && j.job_type == JobType::EmailedExport), "{gone:?}");
    assert!(db.job("exp_2").await.unwrap().is_none());
}

/// A job finished for ten seconds is archived by the sweep (one compressed value instead of
/// its JSON columns and event rows): it reads back exactly as before, alone and in listings,
/// its events too, and an event after that continues its numbering. Jobs still running or
/// finished just now are left as they are.
pub async fn finished_jobs_are_archived_and_read_back_alike(db: &Db) {
    let me = owner(db, "archive@example.com").await;
    for (id, at) in [("done", T0), ("running", T0 + 1), ("fresh", T0 + 2)] {
        db.insert_job(&job(me, id, "s", at)).await.unwrap();
        db.claim_job(at, at + 1_000_000).await.unwrap();
    }
    let events = vec![
        ("status".to_owned(), json!({"message": "Reading \"the\" document"})),
        ("change".to_owned(), json!({"old_html": "<p>é</p>", "new_html": null})),
    ];
    for id in ["done", "running", "fresh"] {
        db.append_events(id, &events, T0 + 5).await.unwrap();
    }
    let finish = JobUpdate {
        status: Some(JobStatus::Completed),
        progress: Some(100),
        result: Some(json!({"response": "ok", "document_changes": {"changes": [1, 2.5, "x"]}})),
        state: Some(json!({"format": 2, "rounds": []})),
        ..Default::default()
    };
    db.update_job("done", &[JobStatus::InProgress], &finish, T0 + 10).await.unwrap();
    db.update_job("fresh", &[JobStatus::InProgress], &finish, T0 + 20_000).await.unwrap();
    let mut before_jobs = Vec::new();
    let mut before_events = Vec::new();
    for id in ["done", "running", "fresh"] {
        before_jobs.push(db.job(id).await.unwrap().unwrap());
        before_events.push(db.events(id, 0).await.unwrap());
    }
    let page = PageRequest { limit: 10, after: None };
    let listed_before = db.list_jobs(me, &JobFilter::default(), &page).await.unwrap().items;

    let rules = SweepRules {
        now: T0 + 25_000,
        delete_finished_before: T0,
        cancel_awaiting_before: T0,
        max_attempts: 3,
        requeue_leases_before: T0,
    };
    db.sweep_jobs(&rules).await.unwrap();
    let mut raw = RawConn::open(db).await;
    assert_eq!(raw.count("SELECT COUNT(*) AS n FROM jobs WHERE archive IS NOT NULL").await, 1, "only 'done'");
    assert_eq!(raw.count("SELECT COUNT(*) AS n FROM job_events WHERE job_id = 'done'").await, 0, "no event rows");
    for (i, id) in ["done", "running", "fresh"].into_iter().enumerate() {
        assert_eq!(db.job(id).await.unwrap().unwrap(), before_jobs[i], "{id}");
        assert_eq!(db.events(id, 0).await.unwrap(), before_events[i], "{id}");
    }
    assert_eq!(db.events("done", 1).await.unwrap(), before_events[0][1..].to_vec());
    assert_eq!(db.list_jobs(me, &JobFilter::default(), &page).await.unwrap().items, listed_before);
    // Sweeping again changes nothing.
    db.sweep_jobs(&rules).await.unwrap();
    assert_eq!(db.job("done").await.unwrap().unwrap(), before_jobs[0]);
    // An event after archiving is numbered after the archived ones and read with them.
    assert_eq!(db.append_event("done", "status", &json!({"late": true}), T0 + 30_000).await.unwrap(), 3);
    let all = db.events("done", 0).await.unwrap();
    assert_eq!(all.iter().map(|e| e.sequence).collect::<Vec<_>>(), [1, 2, 3]);
    // Read together (a listing), each job's events are those read one job at a time.
    let ids: Vec<String> = ["done", "running", "fresh", "missing"].map(String::from).to_vec();
    let together = db.events_of(&ids).await.unwrap();
    assert_eq!(together.len(), 3, "a job without events is left out");
    for id in ["done", "running", "fresh"] {
        assert_eq!(together[id], db.events(id, 0).await.unwrap(), "{id}");
    }
    // Retention deletes an archived job like any other.
    let rules = SweepRules { delete_finished_before: T0 + 100, ..rules };
    db.sweep_jobs(&rules).await.unwrap();
    assert!(db.job("done").await.unwrap().is_none());
    assert!(db.events("done", 0).await.unwrap().is_empty());
}

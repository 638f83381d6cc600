//! The session listing of the contract suite: owner scope, freshness after the store's own
//! writes, and keyset paging of sessions and jobs (every item reached once, in order, while
//! new items arrive between pages).

use redline_domain::job::{JobStatus, JobType};
use redline_domain::page::{Page, PageRequest};
use redline_domain::SessionId;
use redline_ports::jobs::{JobFilter, JobRecord};
use redline_ports::JobStore;
use serde_json::json;

use super::*;

/// Every session of `owner` (the first page of a size no test reaches).
async fn all(db: &Db, owner: Owner) -> Vec<SessionSummary> {
    let page = db.list_sessions(owner, &PageRequest::first(10_000)).await.unwrap();
    assert!(page.next.is_none());
    page.items
}

pub async fn list_sessions_is_owner_scoped(db: &Db) {
    let ann = Owner::User(UserId::new());
    let bob = Owner::User(UserId::new());
    let acme = Owner::Org(OrgId::new());
    // The rows below are written behind the store's back (`RawConn`), which its SQLite list
    // cache sees only after `session_cache::TTL`: no list of these owners is read before.

    let summary = |id: &str, title: Option<&str>, updated_at: Millis| SessionSummary {
        session_id: id.to_owned(),
        title: title.map(str::to_owned),
        created_at: T0,
        updated_at,
        version_id: title.map(|t| format!("v-{t}")),
        section_count: updated_at - T0,
    };
    let a_old = summary("contract-a", Some("Ann's old"), T0 + 100);
    let a_new = summary("contract-b", None, T0 + 300);
    let a_mid = summary("shared-id", Some("Ann's shared"), T0 + 200);
    let b_shared = summary("shared-id", Some("Bob's shared"), T0 + 900);
    let c_only = summary("org-doc", Some("Acme's"), T0 + 500);

    let mut raw = RawConn::open(db).await;
    for (owner, s) in [(ann, &a_old), (ann, &a_new), (ann, &a_mid), (bob, &b_shared), (acme, &c_only)] {
        raw.insert_session(owner, s).await;
    }

    assert_eq!(all(db, ann).await, vec![a_new, a_mid, a_old], "most recently updated first");
    assert_eq!(all(db, bob).await, vec![b_shared], "the same session id, another owner's row");
    assert_eq!(all(db, acme).await, vec![c_only]);
    assert!(all(db, Owner::User(UserId::new())).await.is_empty());
    // An org with the uuid of a user is another owner.
    let ann_as_org = Owner::Org(OrgId::parse(&ann.user_id().unwrap().to_string()).unwrap());
    assert!(all(db, ann_as_org).await.is_empty());
}

/// A store as the binary opens it: its session-list cache on (on PostgreSQL, following a bus
/// of its own, as a replica does), with that bus. On SQLite the cache is on from the opening
/// and the store is `db` itself.
async fn replica(db: &Db) -> (std::sync::Arc<Db>, Option<std::sync::Arc<redline_storage::bus::PgBus>>) {
    if db.backend_name() != "postgres" {
        return (common::shared(db), None);
    }
    let url = common::url_of(db);
    let store = std::sync::Arc::new(
        Db::open(&redline_storage::DbConfig::new(url.clone())).await.unwrap_or_else(|e| panic!("open {url}: {e}")),
    );
    let bus = std::sync::Arc::new(redline_storage::bus::PgBus::start(&url));
    store.follow_session_changes(bus.clone());
    (store, Some(bus))
}

/// Lists always show what this store wrote before (the store keeps recent lists in memory
/// and must drop them on every write).
pub async fn session_lists_follow_the_stores_writes(db: &Db) {
    use redline_ports::documents::NewVersion;
    use redline_ports::DocumentStore;
    let (store, _bus) = replica(db).await;
    let db = store.as_ref();
    let ann = Owner::User(UserId::new());
    let sid = |s: &str| redline_domain::SessionId::parse(s).unwrap();
    let version = |id: &str, now: Millis| NewVersion {
        version_id: id.to_owned(),
        html: "<p>x</p>".to_owned(),
        section_count: 1,
        source: "test".to_owned(),
        title: Some("Title".to_owned()),
        now,
    };
    let listed = |list: Vec<SessionSummary>| -> Vec<(String, Option<String>)> {
        list.into_iter().map(|s| (s.session_id, s.version_id)).collect()
    };
    assert!(all(db, ann).await.is_empty());
    db.commit_version(ann, &sid("one"), None, &version("v1", T0)).await.unwrap();
    assert_eq!(listed(all(db, ann).await), [("one".to_owned(), Some("v1".to_owned()))]);
    db.commit_version(ann, &sid("one"), Some(Some("v1".to_owned())), &version("v2", T0 + 1)).await.unwrap();
    assert_eq!(listed(all(db, ann).await), [("one".to_owned(), Some("v2".to_owned()))]);
    db.ensure_session(ann, &sid("two"), T0 + 2).await.unwrap();
    assert_eq!(listed(all(db, ann).await), [("two".to_owned(), None), ("one".to_owned(), Some("v2".to_owned()))]);
    assert!(db.delete_session(ann, &sid("one")).await.unwrap());
    assert_eq!(listed(all(db, ann).await), [("two".to_owned(), None)]);
    // A job's commit too.
    let before = all(db, ann).await;
    assert_eq!(before.len(), 1);
    db.commit_version(ann, &sid("three"), Some(None), &version("v3", T0 + 3)).await.unwrap();
    assert_eq!(all(db, ann).await.len(), 2);
}

/// A rename sets the title alone: not `updated_at`, not the document; only the owner's
/// session; the list and the document show it at once; later commits keep it.
pub async fn a_rename_changes_the_title_alone(db: &Db) {
    use redline_ports::documents::NewVersion;
    use redline_ports::DocumentStore;
    let ann = Owner::User(UserId::new());
    let bob = Owner::User(UserId::new());
    let s = redline_domain::SessionId::parse("to-rename").unwrap();
    let version = |id: &str, now: Millis| NewVersion {
        version_id: id.to_owned(),
        html: "<p>x</p>".to_owned(),
        section_count: 1,
        source: "upload".to_owned(),
        title: Some("report".to_owned()),
        now,
    };
    db.commit_version(ann, &s, None, &version("v1", T0)).await.unwrap();
    let before = all(db, ann).await;
    assert_eq!(before[0].title.as_deref(), Some("report"));

    assert_eq!(db.rename_session(bob, &s, "Bob's").await.unwrap(), None, "another owner's session");
    let unknown = redline_domain::SessionId::parse("nothing-here").unwrap();
    assert_eq!(db.rename_session(ann, &unknown, "x").await.unwrap(), None);

    let renamed = db.rename_session(ann, &s, "Quarterly report — 東京").await.unwrap().unwrap();
    let expected = SessionSummary { title: Some("Quarterly report — 東京".to_owned()), ..before[0].clone() };
    assert_eq!(renamed, expected, "only the title changed");
    assert_eq!(all(db, ann).await, vec![expected.clone()], "the list shows it at once");
    let doc = db.document(ann, &s).await.unwrap().unwrap();
    assert_eq!((doc.title.as_deref(), doc.version_id.as_deref()), (Some("Quarterly report — 東京"), Some("v1")));

    // A later commit offering a title (an upload's) keeps the one given.
    db.commit_version(ann, &s, None, &version("v2", T0 + 5)).await.unwrap();
    let doc = db.document(ann, &s).await.unwrap().unwrap();
    assert_eq!(doc.title.as_deref(), Some("Quarterly report — 東京"));
}

/// Replicas on one database: a list kept by replica B shows a write of replica A right
/// after it (on PostgreSQL A announces it over `LISTEN/NOTIFY` and B drops its kept list;
/// on SQLite one process serves the file, so A and B are one store). The deadline is well
/// under the cache's 1 s TTL, which alone would also refresh B's list.
pub async fn session_lists_follow_other_replicas_writes(db: &Db) {
    use redline_ports::documents::NewVersion;
    use redline_ports::jobs::Signal;
    use redline_ports::{DocumentStore, EventBus};
    use std::time::{Duration, Instant};
    let (a, a_bus) = replica(db).await;
    let (b, b_bus) = replica(db).await;
    if let (Some(a_bus), Some(b_bus)) = (&a_bus, &b_bus) {
        // B's LISTEN connection comes up in the background: publish on A until B hears.
        let mut heard = b_bus.subscribe();
        let up = tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                a_bus.publish(Signal::Job("probe".into())).await;
                if let Ok(Ok(Signal::Job(id))) = tokio::time::timeout(Duration::from_millis(200), heard.recv()).await {
                    if id == "probe" {
                        return;
                    }
                }
            }
        })
        .await;
        assert!(up.is_ok(), "replica B never heard replica A");
    }
    let ann = Owner::User(UserId::new());
    let sid = |s: &str| SessionId::parse(s).unwrap();
    let version = |id: &str, now: Millis| NewVersion {
        version_id: id.to_owned(),
        html: "<p>x</p>".to_owned(),
        section_count: 1,
        source: "test".to_owned(),
        title: Some("Title".to_owned()),
        now,
    };
    // B lists (and keeps the list), A writes, B shows the write within the deadline.
    async fn fresh_on(b: &Db, ann: Owner, want: &[(&str, Option<&str>)], what: &str) {
        let want: Vec<(String, Option<String>)> =
            want.iter().map(|(s, v)| ((*s).to_owned(), v.map(str::to_owned))).collect();
        let deadline = Instant::now() + Duration::from_millis(600);
        loop {
            let got: Vec<(String, Option<String>)> =
                all(b, ann).await.into_iter().map(|s| (s.session_id, s.version_id)).collect();
            if got == want {
                return;
            }
            assert!(Instant::now() < deadline, "{what}: replica B still lists {got:?}, not {want:?}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    assert!(all(&b, ann).await.is_empty());
    a.commit_version(ann, &sid("one"), None, &version("v1", T0)).await.unwrap();
    fresh_on(&b, ann, &[("one", Some("v1"))], "a new session").await;
    a.commit_version(ann, &sid("one"), Some(Some("v1".to_owned())), &version("v2", T0 + 1)).await.unwrap();
    fresh_on(&b, ann, &[("one", Some("v2"))], "a new version").await;
    a.ensure_session(ann, &sid("two"), T0 + 2).await.unwrap();
    fresh_on(&b, ann, &[("two", None), ("one", Some("v2"))], "an empty session").await;
    assert!(a.delete_session(ann, &sid("one")).await.unwrap());
    fresh_on(&b, ann, &[("two", None)], "a deleted session").await;
}

fn summary(id: String, updated_at: Millis) -> SessionSummary {
    SessionSummary { session_id: id, title: None, created_at: T0, updated_at, version_id: None, section_count: 0 }
}

/// Pages through a listing with `limit`; `between` runs after each page with its number.
pub async fn page_through<T, F, Fut>(mut read: F, limit: usize, mut between: impl FnMut(usize)) -> Vec<T>
where
    F: FnMut(PageRequest) -> Fut,
    Fut: std::future::Future<Output = Page<T>>,
{
    let mut seen = Vec::new();
    let mut request = PageRequest::first(limit);
    for round in 0.. {
        let page = read(request.clone()).await;
        assert!(page.items.len() <= limit);
        seen.extend(page.items);
        between(round);
        match page.next {
            Some(next) => request = PageRequest { limit, after: Some(next) },
            None => break,
        }
        assert!(round < 10_000, "paging does not end");
    }
    seen
}

/// Sessions with equal `updated_at` (ties): every session is seen exactly once, in listing
/// order, and a session that arrives while a caller pages does not disturb the later pages.
pub async fn every_session_is_reached_by_paging(db: &Db) {
    let ann = Owner::User(UserId::new());
    let bob = Owner::User(UserId::new());
    let mut raw = RawConn::open(db).await;
    let mut expected = Vec::new();
    for i in 0..23 {
        // Three sessions share each time: ties are settled by the session id.
        let s = summary(format!("s{i:02}"), T0 + i / 3);
        raw.insert_session(ann, &s).await;
        expected.push(s);
    }
    raw.insert_session(bob, &summary("bob".to_owned(), T0 + 5)).await;
    expected.sort_by(|a, b| (b.updated_at, &b.session_id).cmp(&(a.updated_at, &a.session_id)));
    let seen = page_through(|req| async move { db.list_sessions(ann, &req).await.unwrap() }, 4, |_| {}).await;
    assert_eq!(seen, expected, "each once, most recently updated first, ties by id, nothing of Bob's");
    let one_page = db.list_sessions(ann, &PageRequest::first(100)).await.unwrap();
    assert_eq!((one_page.items, one_page.next), (expected.clone(), None));

    let first = db.list_sessions(ann, &PageRequest { limit: 3, after: None }).await.unwrap();
    assert_eq!(first.items, expected[..3]);
    raw.insert_session(ann, &summary("late".to_owned(), T0 + 5000)).await;
    let second = db.list_sessions(ann, &PageRequest { limit: 3, after: first.next }).await.unwrap();
    assert_eq!(second.items, expected[3..6], "the new session is on a new first page only");
}

fn job(owner: Owner, id: String, session: &str, job_type: JobType, created_at: Millis) -> JobRecord {
    JobRecord {
        job_id: id,
        owner,
        session_id: SessionId::parse(session).unwrap(),
        job_type,
        status: JobStatus::Pending,
        progress: 0,
        attempts: 0,
        request: json!({}),
        result: None,
        error: None,
        metadata: json!({}),
        state: json!({}),
        created_at,
        updated_at: created_at,
        finished_at: None,
        lease_until: None,
    }
}

/// Every job that passes a filter is reached once by paging, newest first (ties by id), and
/// a job that arrives between two pages does not disturb the later ones.
pub async fn every_job_is_reached_by_paging(db: &Db) {
    let me = Owner::User(UserId::new());
    let other = Owner::User(UserId::new());
    let mut expected = Vec::new();
    for i in 0..30i64 {
        let kind = if i % 3 == 0 { JobType::AttachmentProcessing } else { JobType::Chat };
        let j = job(me, format!("job-{i:02}"), if i % 2 == 0 { "even" } else { "odd" }, kind, T0 + i / 4);
        db.insert_job(&j).await.unwrap();
        expected.push(j);
    }
    db.insert_job(&job(other, "theirs".to_owned(), "even", JobType::Chat, T0 + 3)).await.unwrap();
    expected.sort_by(|a, b| (b.created_at, &b.job_id).cmp(&(a.created_at, &a.job_id)));
    let ids = |jobs: &[JobRecord]| jobs.iter().map(|j| j.job_id.clone()).collect::<Vec<_>>();

    let filters = [
        JobFilter::default(),
        JobFilter { session_id: Some(SessionId::parse("even").unwrap()), ..Default::default() },
        JobFilter { job_type: Some(JobType::AttachmentProcessing), ..Default::default() },
        JobFilter { status: Some(JobStatus::Pending), job_type: Some(JobType::Chat), ..Default::default() },
    ];
    for filter in &filters {
        let want: Vec<JobRecord> = expected
            .iter()
            .filter(|j| filter.session_id.as_ref().is_none_or(|s| &j.session_id == s))
            .filter(|j| filter.job_type.is_none_or(|t| j.job_type == t))
            .cloned()
            .collect();
        let seen = page_through(|req| async move { db.list_jobs(me, filter, &req).await.unwrap() }, 4, |_| {}).await;
        assert_eq!(ids(&seen), ids(&want), "{filter:?}");
    }
    let first = db.list_jobs(me, &JobFilter::default(), &PageRequest::first(5)).await.unwrap();
    db.insert_job(&job(me, "late".to_owned(), "even", JobType::Chat, T0 + 100)).await.unwrap();
    let second = db.list_jobs(me, &JobFilter::default(), &PageRequest { limit: 5, after: first.next }).await.unwrap();
    assert_eq!(ids(&second.items), ids(&expected[5..10]));
}

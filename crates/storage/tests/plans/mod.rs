//! Query plans: every listing an endpoint offers, with each of its filters and with a cursor,
//! reads one owner's rows through an index that starts with the owner (or with what else
//! scopes the listing: the organization, the member) and holds the sort key, so it neither
//! scans a table nor sorts. The statements checked are the ones the store runs:
//! diesel's instrumentation records them while the store answers, and the database explains
//! them (`EXPLAIN QUERY PLAN` on SQLite, the generic plan on PostgreSQL).

use std::sync::Mutex;

use diesel::connection::{set_default_instrumentation, Instrumentation, InstrumentationEvent};
use redline_domain::job::{JobStatus, JobType};
use redline_domain::page::{Cursor, PageRequest};
use redline_domain::SessionId;
use redline_ports::jobs::JobFilter;
use redline_ports::{AttachmentStore, DocumentStore, HistoryStore, JobStore, TemplateStore};
use redline_storage::DbConfig;

use super::*;

/// Statements seen while recording, with their binds; only those that name a scope of
/// [`WATCHED`] (an owner, an organization or member id) are kept (other tests of this binary
/// run at the same time).
static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());
static WATCHED: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn recorder() -> Option<Box<dyn Instrumentation>> {
    Some(Box::new(|event: InstrumentationEvent<'_>| {
        if let InstrumentationEvent::StartQuery { query, .. } = event {
            let text = query.to_string();
            let watched = WATCHED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if watched.iter().any(|owner| text.contains(owner.as_str())) {
                SEEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(text);
            }
        }
    }))
}

/// The statements the store ran for `owner` since the last call, without their binds.
fn taken(owner: Owner) -> Vec<String> {
    taken_for(&owner.to_string())
}

/// The statements the store ran naming `scope` since the last call, without their binds.
fn taken_for(owner: &str) -> Vec<String> {
    let mut seen = SEEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let (mine, others): (Vec<String>, Vec<String>) = seen.drain(..).partition(|q| q.contains(owner));
    *seen = others;
    mine.into_iter().map(|q| q.split(" -- binds: ").next().unwrap_or_default().to_owned()).collect()
}

/// What keeps `plan` from reading by an index whose condition names the owner and each of
/// `columns` without scanning a table or sorting: nothing when it does.
fn problems(backend: &str, plan: &[String], columns: &[&str]) -> Vec<String> {
    scoped_problems(backend, plan, "owner", columns)
}

/// What keeps `plan` from reading by an index whose condition names `scope` (the column that
/// scopes the listing) and each of `columns` without scanning a table or sorting: nothing when
/// it does. In a join, the first table read is the one checked.
fn scoped_problems(backend: &str, plan: &[String], scope: &str, columns: &[&str]) -> Vec<String> {
    let text = plan.join("\n");
    let mut found = Vec::new();
    let mut need = |ok: bool, what: String| {
        if !ok {
            found.push(what);
        }
    };
    if backend == "sqlite" {
        need(!plan.iter().any(|l| l.starts_with("SCAN")), "a full scan".to_owned());
        need(!text.contains("TEMP B-TREE"), "a sort".to_owned());
        let search = plan.iter().find(|l| l.starts_with("SEARCH")).map_or("", String::as_str);
        need(
            search.contains("INDEX") && search.contains(&format!("({scope}=?")),
            format!("no search by a {scope} index"),
        );
        for c in columns {
            need(search.contains(&format!("{c}=?")), format!("{c} is not in the index condition"));
        }
    } else {
        need(!text.contains("Seq Scan"), "a full scan".to_owned());
        need(!text.contains("Sort"), "a sort".to_owned());
        let cond = plan.iter().find(|l| l.contains("Index Cond:")).map_or("", String::as_str);
        need(text.contains("Index Scan") || text.contains("Index Only Scan"), "no index scan".to_owned());
        need(cond.contains(&format!("({scope} = $1)")), format!("no index condition on the {scope}"));
        for c in columns {
            need(cond.contains(&format!("({c} = $")), format!("{c} is not in the index condition"));
        }
    }
    found
}

/// Explains what the store ran for `owner` since the last call: at least one statement, each
/// read by an owner index holding `columns`.
async fn check(raw: &mut RawConn, backend: &str, owner: Owner, columns: &[&str]) {
    check_scoped(raw, backend, &owner.to_string(), "owner", columns).await;
}

/// Explains what the store ran naming `id` since the last call: at least one statement, each
/// read by an index of the `scope` column holding `columns`.
async fn check_scoped(raw: &mut RawConn, backend: &str, id: &str, scope: &str, columns: &[&str]) {
    let statements = taken_for(id);
    assert!(!statements.is_empty(), "the store ran nothing for {id} ({columns:?})");
    for sql in statements {
        let plan = raw.explain(&sql).await;
        let found = scoped_problems(backend, &plan, scope, columns);
        assert!(found.is_empty(), "{found:?} in the {backend} plan of\n  {sql}\n{}", plan.join("\n"));
    }
}

/// The check itself catches what it is for: a listing by status alone (the index walks every
/// owner's jobs) and an unindexed filter (a scan of the owner's rows, or of the table).
async fn the_check_refuses_other_owners_rows_and_scans(raw: &mut RawConn, backend: &str) {
    let p = |i: usize| if backend == "sqlite" { "?".to_owned() } else { format!("${i}") };
    let bad = [
        (format!("SELECT job_id FROM jobs WHERE status = {} ORDER BY created_at DESC LIMIT 20", p(1)), vec![]),
        (
            format!("SELECT job_id FROM jobs WHERE owner = {} AND progress = {} ORDER BY updated_at DESC", p(1), p(2)),
            vec!["progress"],
        ),
    ];
    for (sql, columns) in bad {
        let plan = raw.explain(&sql).await;
        assert!(!problems(backend, &plan, &columns).is_empty(), "{backend} accepted {sql}: {plan:?}");
    }
}

pub async fn every_listing_reads_by_an_owner_index(db: &Db) {
    set_default_instrumentation(recorder).expect("instrumentation");
    // A store of its own: its connections open after the recorder is in place.
    let store = Db::open(&DbConfig::new(common::url_of(db))).await.expect("open the store again");
    let backend = store.backend_name();
    let me = Owner::User(UserId::new());
    WATCHED.lock().unwrap().push(me.to_string());
    let mut raw = RawConn::open(db).await;
    the_check_refuses_other_owners_rows_and_scans(&mut raw, backend).await;
    let cursor = Cursor::new(T0, "z");
    let pages = [PageRequest::first(20), PageRequest { limit: 20, after: Some(cursor) }];

    for page in &pages {
        store.list_sessions(me, page).await.unwrap();
        check(&mut raw, backend, me, &[]).await;
    }
    let session = Some(SessionId::parse("s").unwrap());
    let filters: [(JobFilter, &[&str]); 5] = [
        (JobFilter::default(), &[]),
        (JobFilter { session_id: session, ..Default::default() }, &["session_id"]),
        (JobFilter { status: Some(JobStatus::Completed), ..Default::default() }, &["status"]),
        (JobFilter { job_type: Some(JobType::AttachmentProcessing), ..Default::default() }, &["job_type"]),
        (
            JobFilter { status: Some(JobStatus::Failed), job_type: Some(JobType::Chat), ..Default::default() },
            &["job_type", "status"],
        ),
    ];
    for (filter, columns) in &filters {
        for page in &pages {
            store.list_jobs(me, filter, page).await.unwrap();
            check(&mut raw, backend, me, columns).await;
        }
    }
    // The session exists, so that its attachments are read (not only the session looked up);
    // the statements that create it are no listing's.
    let s = SessionId::parse("s").unwrap();
    store.ensure_session(me, &s, T0).await.unwrap();
    taken(me);
    for page in &pages {
        store.list_attachments(me, &s, T0, page).await.unwrap();
        check(&mut raw, backend, me, &["session_id"]).await;
        store.versions(me, &s, page).await.unwrap();
        check(&mut raw, backend, me, &["session_id"]).await;
        store.active_history(me, &s, page).await.unwrap();
        check(&mut raw, backend, me, &["session_id", "active"]).await;
    }
    store.recent_history(me, &s, 10).await.unwrap();
    check(&mut raw, backend, me, &["session_id", "active"]).await;

    // The account's listings: templates and keys by their owner, a user's organizations by
    // the member, an organization's members by the organization.
    let (user, org) = (UserId::new(), OrgId::new());
    WATCHED.lock().unwrap().extend([user.to_string(), org.to_string()]);
    for page in &pages {
        store.templates_of(me, page).await.unwrap();
        check(&mut raw, backend, me, &[]).await;
        store.keys_of(me, page).await.unwrap();
        check(&mut raw, backend, me, &[]).await;
        store.orgs_of_user(user, page).await.unwrap();
        check_scoped(&mut raw, backend, &user.to_string(), "user_id", &[]).await;
        store.members(org, page).await.unwrap();
        check_scoped(&mut raw, backend, &org.to_string(), "org_id", &[]).await;
    }
}

/// The sweep (every second, in a write transaction that holds SQLite's write lock) finds the
/// jobs to archive and the jobs past retention through indexes on `finished_at`, never by a
/// scan of the job table, whose reading time would grow with the table and delay every write.
pub async fn the_sweep_reads_jobs_through_indexes(db: &Db) {
    set_default_instrumentation(recorder).expect("instrumentation");
    let store = Db::open(&DbConfig::new(common::url_of(db))).await.expect("open the store again");
    let backend = store.backend_name();
    WATCHED.lock().unwrap().push("finished_at".to_owned());
    let rules = redline_ports::jobs::SweepRules {
        now: T0 + 100_000,
        delete_finished_before: T0,
        cancel_awaiting_before: T0,
        max_attempts: 3,
        requeue_leases_before: T0,
    };
    store.sweep_jobs(&rules).await.unwrap();
    // Statements that select by `finished_at` (other tests' sweeps too: the same statements).
    let by_finish: Vec<String> = taken_for("finished_at")
        .into_iter()
        .filter(|q| q.starts_with("SELECT") && q.split(" WHERE ").nth(1).is_some_and(|w| w.contains("finished_at")))
        .collect();
    assert!(by_finish.len() >= 2, "the sweep's reads by finish time: {by_finish:?}");
    let mut raw = RawConn::open(db).await;
    for sql in by_finish {
        let plan = raw.explain(&sql).await;
        let scans = if backend == "sqlite" {
            plan.iter().any(|l| l.starts_with("SCAN"))
        } else {
            plan.iter().any(|l| l.contains("Seq Scan"))
        };
        assert!(!scans, "a scan in the {backend} plan of\n  {sql}\n{}", plan.join("\n"));
    }
}

//! Admission plus charge: one `UsageStore::hold` followed by one `UsageStore::settle` (a new
//! request id each time) for an account that already has 10,000 ledger rows.
//!
//! The requirement (docs/benchmarks.md): under 1 ms of database time on SQLite. The figure
//! measured here is the wall time of the two store calls through the real `Db` (pool checkout,
//! both transactions and the SQLite blocking-thread hop included), so it bounds the database
//! time from above.
//!
//! Run: `cargo bench -p redline-storage --bench usage`.
//!
//! SQLite runs on a fresh file in a temporary folder. PostgreSQL runs on a fresh database
//! `redline_bench_<uuid>` created through `postgres://postgres@127.0.0.1:5432/test` (override
//! with `REDLINE_TEST_PG_URL`) and dropped afterwards; when PostgreSQL cannot be reached that
//! half is skipped with a message.
//!
//! `usage/ledger_entry_read/*` times one pool checkout plus one primary-key read, for reference:
//! the fixed cost of any store call on that backend.
//!
//! Under `cargo test --benches` (criterion's test mode, no `--bench` argument) the pre-fill is
//! cut to 100 rows so that the check stays quick.

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use redline_domain::{Owner, Plan, UserId};
use redline_ports::records::{PlanSettings, UserKind, UserRecord};
use redline_ports::usage::{HoldOutcome, LedgerStatus};
use redline_ports::{IdentityStore, UsageStore};
use redline_storage::{Db, DbConfig};
use tokio::runtime::Runtime;
use uuid::Uuid;

/// Ledger rows of the account before the measured pairs.
const PREFILL_ROWS: u64 = 10_000;
/// Pre-fill under `cargo test --benches`.
const PREFILL_ROWS_TEST_MODE: u64 = 100;
/// "A huge limit": the account is never refused.
const LIMIT: Option<u64> = Some(1_000_000_000);
/// Every request is admitted on one operation and settled to three, so `settle` draws extra
/// operations (the cycle counter is written by both calls).
const TOTAL_OPS: u64 = 3;
const CYCLE: &str = "2026-11";
const DEFAULT_PG_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/test";
const PG_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Pairs timed one by one for the percentile line printed beside criterion's estimate.
const PERCENTILE_SAMPLES: usize = 2_000;

fn bench_mode() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn now_ms() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime")
}

/// One admission plus charge: the pair being measured.
async fn admit_and_charge(db: &Db, owner: Owner, request_id: &str) {
    let now = now_ms();
    match db.hold(owner, request_id, CYCLE, LIMIT, now).await.expect("hold") {
        HoldOutcome::Admitted(entry) => debug_assert_eq!(entry.status, LedgerStatus::Held),
        HoldOutcome::Refused => panic!("a hold under a huge limit was refused"),
    }
    let settled = db.settle(request_id, TOTAL_OPS, LIMIT, now).await.expect("settle");
    debug_assert_eq!(settled.ops(), i64::try_from(TOTAL_OPS).unwrap_or(i64::MAX));
    black_box(settled);
}

/// Creates the account and gives it `rows` charged ledger rows; returns its owner.
async fn prepare(db: &Db, rows: u64) -> Owner {
    let user = UserRecord {
        id: UserId::new(),
        kind: UserKind::Agent,
        email: None,
        password_hash: None,
        name: Some("bench".to_owned()),
        plan: PlanSettings { plan: Plan::Free, monthly_limit_override: None },
        created_at: now_ms(),
    };
    db.create_user(&user).await.expect("create the bench user");
    let owner = Owner::User(user.id);
    let started = Instant::now();
    for i in 0..rows {
        admit_and_charge(db, owner, &format!("prefill-{i}")).await;
    }
    eprintln!("  pre-filled {rows} ledger rows in {:.1?}", started.elapsed());
    owner
}

/// Times `PERCENTILE_SAMPLES` pairs one by one and prints p50/p90/p99/max (criterion reports
/// a mean and its confidence interval; a budget is better read against the tail too).
fn print_percentiles(rt: &Runtime, db: &Db, owner: Owner, label: &str, next_id: &AtomicU64) {
    let mut times: Vec<Duration> = Vec::with_capacity(PERCENTILE_SAMPLES);
    rt.block_on(async {
        for _ in 0..PERCENTILE_SAMPLES {
            let id = format!("pct-{}", next_id.fetch_add(1, Ordering::Relaxed));
            let started = Instant::now();
            admit_and_charge(db, owner, &id).await;
            times.push(started.elapsed());
        }
    });
    times.sort_unstable();
    let at = |q: f64| {
        let i = ((times.len() as f64 - 1.0) * q).round() as usize;
        times[i.min(times.len() - 1)]
    };
    eprintln!(
        "  {label}: {} pairs one by one: p50 {:.3?}  p90 {:.3?}  p99 {:.3?}  max {:.3?}",
        times.len(),
        at(0.50),
        at(0.90),
        at(0.99),
        at(1.0)
    );
}

fn run_backend(c: &mut Criterion, rt: &Runtime, db: &Db, label: &str) {
    let rows = if bench_mode() { PREFILL_ROWS } else { PREFILL_ROWS_TEST_MODE };
    let owner = rt.block_on(prepare(db, rows));
    let next_id = AtomicU64::new(0);
    let mut group = c.benchmark_group("usage");
    group.bench_function(format!("hold_plus_settle/{label}"), |b| {
        b.to_async(rt).iter(|| {
            let id = format!("bench-{}", next_id.fetch_add(1, Ordering::Relaxed));
            async move { admit_and_charge(db, owner, &id).await }
        });
    });
    // Reference: one pool checkout and one primary-key read, the fixed cost every store call
    // pays (the pair makes two calls, each a transaction of several statements).
    group.bench_function(format!("ledger_entry_read/{label}"), |b| {
        b.to_async(rt).iter(|| async { black_box(db.ledger_entry("prefill-0").await.expect("read")) });
    });
    group.finish();
    if bench_mode() {
        print_percentiles(rt, db, owner, label, &next_id);
    }
    let measured = next_id.load(Ordering::Relaxed);
    eprintln!("  {label}: ledger rows of the account at the end: {}", rows + measured);
}

// ---------------------------------------------------------------------------------------------
// SQLite

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.0) {
            eprintln!("warning: cannot remove {}: {e}", self.0.display());
        }
    }
}

fn bench_sqlite(c: &mut Criterion) {
    let dir = TempDir(std::env::temp_dir().join(format!("redline-bench-{}", Uuid::new_v4().simple())));
    std::fs::create_dir_all(&dir.0).expect("create the bench folder");
    let url = format!("sqlite://{}", dir.0.join("redline.sqlite3").display());
    let rt = runtime();
    let db = rt.block_on(Db::open(&DbConfig::new(url.clone()))).unwrap_or_else(|e| panic!("open {url}: {e}"));
    eprintln!("SQLite at {url}");
    run_backend(c, &rt, &db, "sqlite");
    drop(db);
    drop(dir);
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

/// `admin` with its database name replaced by `name`.
fn database_url(admin: &str, name: &str) -> String {
    let (base, query) = admin.split_once('?').map_or((admin, None), |(b, q)| (b, Some(q)));
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    let authority_end = base[authority_start..].find('/').map_or(base.len(), |i| authority_start + i);
    let mut url = format!("{}/{name}", &base[..authority_end]);
    if let Some(query) = query {
        url.push('?');
        url.push_str(query);
    }
    url
}

async fn connect_admin(admin: &str) -> Result<AsyncPgConnection, String> {
    match tokio::time::timeout(PG_CONNECT_TIMEOUT, AsyncPgConnection::establish(admin)).await {
        Ok(Ok(conn)) => Ok(conn),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("no answer within {PG_CONNECT_TIMEOUT:?}")),
    }
}

/// Drops the bench database when it goes out of scope, even when the bench panics.
struct PgDatabase<'rt> {
    rt: &'rt Runtime,
    admin: String,
    name: String,
}

impl Drop for PgDatabase<'_> {
    fn drop(&mut self) {
        let sql = format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.name);
        let outcome = self.rt.block_on(async {
            let mut conn = connect_admin(&self.admin).await?;
            conn.batch_execute(&sql).await.map_err(|e| e.to_string())
        });
        if let Err(e) = outcome {
            eprintln!("warning: cannot drop bench database {}: {e}", self.name);
        }
    }
}

fn bench_postgres(c: &mut Criterion) {
    let admin = std::env::var("REDLINE_TEST_PG_URL").unwrap_or_else(|_| DEFAULT_PG_ADMIN_URL.to_owned());
    let rt = runtime();
    let name = format!("redline_bench_{}", Uuid::new_v4().simple());
    let created = rt.block_on(async {
        let mut conn = connect_admin(&admin).await?;
        conn.batch_execute(&format!("CREATE DATABASE \"{name}\"")).await.map_err(|e| e.to_string())
    });
    if let Err(e) = created {
        eprintln!("PostgreSQL unreachable at {admin} ({e}): skipping usage/hold_plus_settle/postgres");
        return;
    }
    let guard = PgDatabase { rt: &rt, admin: admin.clone(), name: name.clone() };
    let url = database_url(&admin, &name);
    let db = rt.block_on(Db::open(&DbConfig::new(url.clone()))).unwrap_or_else(|e| panic!("open {url}: {e}"));
    eprintln!("PostgreSQL database {name}");
    run_backend(c, &rt, &db, "postgres");
    // The pool's connections must be gone before the database is dropped.
    drop(db);
    drop(guard);
}

criterion_group!(benches, bench_sqlite, bench_postgres);
criterion_main!(benches);

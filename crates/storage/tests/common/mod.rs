//! Harness of the storage contract suite: every test body runs once on a fresh SQLite file and
//! once on a fresh PostgreSQL database, and both are removed afterwards, even when the body
//! panics.
//!
//! PostgreSQL is reached through the admin URL `postgres://postgres@127.0.0.1:5432/test`
//! (override it with `REDLINE_TEST_PG_URL`). When it cannot be reached the PostgreSQL half is
//! skipped with a warning, unless `CI=true`, where the test fails.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use diesel::sql_types::{BigInt, Nullable, Text};
use diesel::{QueryableByName, SqliteConnection};
use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use redline_domain::Owner;
use redline_ports::records::{PromoCodeRecord, PromoGrantRecord, SessionSummary};
use redline_ports::usage::{LedgerEntry, LedgerStatus};
use redline_storage::{Db, DbConfig};
use uuid::Uuid;

const DEFAULT_PG_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/test";
const PG_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

fn pg_admin_url() -> String {
    std::env::var("REDLINE_TEST_PG_URL").unwrap_or_else(|_| DEFAULT_PG_ADMIN_URL.to_owned())
}

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

// ---------------------------------------------------------------------------------------------
// Databases opened by the harness, so that a body that only gets `&Db` can still reach the same
// database with a raw connection or share the `Db` with spawned tasks.

struct OpenDb {
    addr: usize,
    url: String,
    db: Weak<Db>,
}

static OPEN: Mutex<Vec<OpenDb>> = Mutex::new(Vec::new());

fn open_dbs() -> std::sync::MutexGuard<'static, Vec<OpenDb>> {
    OPEN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn addr_of(db: &Db) -> usize {
    std::ptr::from_ref(db) as usize
}

/// Keeps a `Db` findable from `&Db` while the body runs.
struct Registration(usize);

impl Registration {
    fn new(db: &Arc<Db>, url: String) -> Self {
        let addr = addr_of(db);
        open_dbs().push(OpenDb { addr, url, db: Arc::downgrade(db) });
        Self(addr)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        open_dbs().retain(|e| e.addr != self.0);
    }
}

fn lookup<T>(db: &Db, f: impl FnOnce(&OpenDb) -> T) -> T {
    let addr = addr_of(db);
    let dbs = open_dbs();
    let entry = dbs.iter().find(|e| e.addr == addr).expect("this Db was not opened by the test harness");
    f(entry)
}

/// The `Db` the body was given, as an `Arc` that spawned tasks can own.
pub fn shared(db: &Db) -> Arc<Db> {
    lookup(db, |e| e.db.upgrade()).expect("the harness still owns the Db while the body runs")
}

/// The URL the `Db` was opened with.
pub fn url_of(db: &Db) -> String {
    lookup(db, |e| e.url.clone())
}

// ---------------------------------------------------------------------------------------------
// SQLite: a fresh file in a fresh temporary folder.

struct TempDir(PathBuf);

impl TempDir {
    fn create() -> Self {
        let path = std::env::temp_dir().join(format!("redline-storage-test-{}", Uuid::new_v4().simple()));
        std::fs::create_dir_all(&path).unwrap_or_else(|e| panic!("cannot create {}: {e}", path.display()));
        Self(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.0) {
            eprintln!("warning: cannot remove {}: {e}", self.0.display());
        }
    }
}

/// Runs `body` on a fresh SQLite database.
pub async fn on_sqlite(body: impl AsyncFnOnce(&Db)) {
    let dir = TempDir::create();
    let url = format!("sqlite://{}", dir.0.join("redline.sqlite3").display());
    let db = Arc::new(
        Db::open(&DbConfig::new(url.clone())).await.unwrap_or_else(|e| panic!("cannot open SQLite at {url}: {e}")),
    );
    assert_eq!(db.backend_name(), "sqlite");
    let registration = Registration::new(&db, url);
    body(&db).await;
    drop(registration);
    drop(db);
    drop(dir);
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL: a fresh database `redline_test_<uuid>` per test, dropped by a guard.

/// `admin` with its database name replaced by `name`.
fn database_url(admin: &str, name: &str) -> String {
    let (base, query) = match admin.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (admin, None),
    };
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

/// Drops the test database when it goes out of scope, panicking body or not. `Drop` cannot
/// await, so the drop runs on a thread of its own with its own runtime.
struct PgDatabaseGuard {
    admin: String,
    name: String,
    /// A role made for the test, dropped after the database.
    role: Option<String>,
}

impl Drop for PgDatabaseGuard {
    fn drop(&mut self) {
        let admin = self.admin.clone();
        let name = self.name.clone();
        let role = self.role.clone();
        let outcome = std::thread::spawn(move || -> Result<(), String> {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
            rt.block_on(async {
                let mut conn = connect_admin(&admin).await?;
                diesel::sql_query(format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
                    .execute(&mut conn)
                    .await
                    .map_err(|e| e.to_string())?;
                if let Some(role) = role {
                    diesel::sql_query(format!("DROP ROLE IF EXISTS \"{role}\""))
                        .execute(&mut conn)
                        .await
                        .map_err(|e| e.to_string())?;
                }
                Ok(())
            })
        })
        .join();
        // Never panic here: this may run while a failed test unwinds.
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("warning: cannot drop test database {}: {e}", self.name),
            Err(_) => eprintln!("warning: the thread dropping test database {} panicked", self.name),
        }
    }
}

/// The administrator's URL and a connection to it; `None` (with a warning) when PostgreSQL is
/// unreachable outside CI, a panic under CI.
async fn admin_or_skip() -> Option<(String, AsyncPgConnection)> {
    let admin = pg_admin_url();
    match connect_admin(&admin).await {
        Ok(conn) => Some((admin, conn)),
        Err(e) if in_ci() => panic!(
            "PostgreSQL is unreachable at {admin} ({e}); with CI=true the PostgreSQL half of the storage \
             contract suite must run: start PostgreSQL or set REDLINE_TEST_PG_URL"
        ),
        Err(e) => {
            eprintln!(
                "WARNING: PostgreSQL is unreachable at {admin} ({e}); skipping the PostgreSQL half of this \
                 contract test (with CI=true this is a failure)"
            );
            None
        }
    }
}

/// Runs `body` on a fresh PostgreSQL database, or skips it (with a warning) when PostgreSQL is
/// unreachable outside CI.
pub async fn on_postgres(body: impl AsyncFnOnce(&Db)) {
    let Some((admin, mut admin_conn)) = admin_or_skip().await else { return };
    let name = format!("redline_test_{}", Uuid::new_v4().simple());
    admin_conn
        .batch_execute(&format!("CREATE DATABASE \"{name}\""))
        .await
        .unwrap_or_else(|e| panic!("cannot create database {name}: {e}"));
    // Declared before the `Db` so that it is dropped after it.
    let guard = PgDatabaseGuard { admin: admin.clone(), name: name.clone(), role: None };
    drop(admin_conn);

    let url = database_url(&admin, &name);
    let db = Arc::new(
        Db::open(&DbConfig::new(url.clone())).await.unwrap_or_else(|e| panic!("cannot open PostgreSQL {url}: {e}")),
    );
    assert_eq!(db.backend_name(), "postgres");
    let registration = Registration::new(&db, url);
    body(&db).await;
    drop(registration);
    drop(db);
    drop(guard);
}

/// Opens a fresh PostgreSQL database `opens` times at once (as replicas starting together
/// do), each `Db::open` migrating it; answers each outcome. `None` when skipped (as
/// [`on_postgres`]).
pub async fn open_postgres_at_once(opens: usize) -> Option<Vec<Result<(), String>>> {
    let (admin, mut admin_conn) = admin_or_skip().await?;
    let name = format!("redline_test_{}", Uuid::new_v4().simple());
    admin_conn.batch_execute(&format!("CREATE DATABASE \"{name}\"")).await.expect("create the database");
    let guard = PgDatabaseGuard { admin: admin.clone(), name: name.clone(), role: None };
    drop(admin_conn);
    let url = database_url(&admin, &name);
    let outcomes = futures_util::future::join_all((0..opens).map(|_| {
        let url = url.clone();
        async move { Db::open(&DbConfig::new(url)).await.map(drop).map_err(|e| e.to_string()) }
    }))
    .await;
    drop(guard);
    Some(outcomes)
}

/// Runs `body` on a fresh PostgreSQL database opened (and migrated) by a role of its own that
/// may create tables in it but not extensions: a managed database's application user, say.
/// Skipped as [`on_postgres`] is.
pub async fn on_postgres_without_extensions(body: impl AsyncFnOnce(&Db)) {
    let Some((admin, mut admin_conn)) = admin_or_skip().await else { return };
    let id = Uuid::new_v4().simple().to_string();
    let (name, role) = (format!("redline_test_{id}"), format!("redline_app_{id}"));
    let guard = PgDatabaseGuard { admin: admin.clone(), name: name.clone(), role: Some(role.clone()) };
    for sql in [format!("CREATE ROLE \"{role}\" LOGIN PASSWORD '{id}'"), format!("CREATE DATABASE \"{name}\"")] {
        admin_conn.batch_execute(&sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    drop(admin_conn);
    // In the new database: the role may create tables in `public`, nothing more (the database
    // is the administrator's, so CREATE EXTENSION is refused to it, trusted extension or not).
    let mut in_db = connect_admin(&database_url(&admin, &name)).await.expect("connect to the new database");
    in_db
        .batch_execute(&format!("GRANT USAGE, CREATE ON SCHEMA public TO \"{role}\""))
        .await
        .unwrap_or_else(|e| panic!("grant: {e}"));
    drop(in_db);

    let url = url_as(&database_url(&admin, &name), &role, &id);
    let db = Arc::new(
        Db::open(&DbConfig::new(url.clone())).await.unwrap_or_else(|e| panic!("cannot open PostgreSQL {url}: {e}")),
    );
    let registration = Registration::new(&db, url);
    body(&db).await;
    drop(registration);
    drop(db);
    drop(guard);
}

/// `url` with `user:password` as its user information.
fn url_as(url: &str, user: &str, password: &str) -> String {
    let start = url.find("://").map_or(0, |i| i + 3);
    let host_start =
        url[start..].find('@').filter(|&at| !url[start..start + at].contains('/')).map_or(start, |at| start + at + 1);
    format!("{}{user}:{password}@{}", &url[..start], &url[host_start..])
}

#[test]
fn url_as_replaces_or_adds_the_user() {
    assert_eq!(url_as("postgres://postgres@127.0.0.1:5432/db", "app", "pw"), "postgres://app:pw@127.0.0.1:5432/db");
    assert_eq!(url_as("postgres://a:b@h/db?sslmode=disable", "app", "pw"), "postgres://app:pw@h/db?sslmode=disable");
    assert_eq!(url_as("postgres://127.0.0.1/db", "app", "pw"), "postgres://app:pw@127.0.0.1/db");
}

// ---------------------------------------------------------------------------------------------
// A connection of our own to the database of a `Db`, for rows no store method writes or reads.

pub enum RawConn {
    Sqlite(SyncConnectionWrapper<SqliteConnection>),
    Pg(Box<AsyncPgConnection>),
}

macro_rules! on_raw {
    ($raw:expr, |$conn:ident| $body:expr) => {
        match $raw {
            RawConn::Sqlite($conn) => $body,
            RawConn::Pg(boxed) => {
                let $conn: &mut AsyncPgConnection = boxed;
                $body
            }
        }
    };
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(QueryableByName)]
struct PromoCodeRow {
    #[diesel(sql_type = Text)]
    code: String,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = BigInt)]
    grant_ops: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    expires_at: Option<i64>,
    #[diesel(sql_type = BigInt)]
    created_at: i64,
}

#[derive(QueryableByName)]
struct PromoGrantRow {
    #[diesel(sql_type = Text)]
    redemption_id: String,
    #[diesel(sql_type = Text)]
    owner: String,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Nullable<Text>)]
    code: Option<String>,
    #[diesel(sql_type = BigInt)]
    ops_granted: i64,
    #[diesel(sql_type = BigInt)]
    ops_remaining: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    expires_at: Option<i64>,
    #[diesel(sql_type = BigInt)]
    created_at: i64,
}

#[derive(QueryableByName)]
struct LedgerRow {
    #[diesel(sql_type = Text)]
    request_id: String,
    #[diesel(sql_type = Text)]
    owner: String,
    #[diesel(sql_type = Text)]
    cycle: String,
    #[diesel(sql_type = Text)]
    status: String,
    #[diesel(sql_type = BigInt)]
    tier_ops: i64,
    #[diesel(sql_type = BigInt)]
    promo_ops: i64,
    #[diesel(sql_type = Nullable<Text>)]
    first_redemption: Option<String>,
    #[diesel(sql_type = BigInt)]
    created_at: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    settled_at: Option<i64>,
}

#[derive(QueryableByName)]
struct TierUsedRow {
    #[diesel(sql_type = BigInt)]
    tier_used: i64,
}

/// One row of `usage_draws`: operations a request drew from a grant.
#[derive(QueryableByName, Debug, Clone, PartialEq, Eq)]
pub struct DrawRow {
    #[diesel(sql_type = Text)]
    pub request_id: String,
    #[diesel(sql_type = Text)]
    pub redemption_id: String,
    #[diesel(sql_type = BigInt)]
    pub draw_ops: i64,
}

/// Returns once another connection waits for a lock another holds (PostgreSQL; on SQLite,
/// whose writers wait in a busy handler that shows nowhere, after 200 ms), so that a test
/// can then release the lock; fails after 10 s with `what` ("the sweep", say).
pub async fn until_a_lock_is_awaited(db: &Db, what: &str) {
    if db.backend_name() != "postgres" {
        tokio::time::sleep(Duration::from_millis(200)).await;
        return;
    }
    let mut watcher = RawConn::open(db).await;
    let waiting = "SELECT count(*) AS n FROM pg_stat_activity \
                   WHERE datname = current_database() AND wait_event_type = 'Lock'";
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while watcher.count(waiting).await == 0 {
        assert!(std::time::Instant::now() < deadline, "{what} never waited for the row held");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

impl RawConn {
    /// Opens a separate connection to the database of `db`.
    pub async fn open(db: &Db) -> Self {
        let url = url_of(db);
        match db.backend_name() {
            "sqlite" => {
                let path = url.strip_prefix("sqlite://").expect("the harness opens SQLite with sqlite://");
                let mut conn = SyncConnectionWrapper::<SqliteConnection>::establish(path)
                    .await
                    .unwrap_or_else(|e| panic!("cannot open {path}: {e}"));
                conn.batch_execute("PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = ON;")
                    .await
                    .expect("configure raw SQLite connection");
                RawConn::Sqlite(conn)
            }
            "postgres" => RawConn::Pg(Box::new(
                AsyncPgConnection::establish(&url).await.unwrap_or_else(|e| panic!("cannot connect to {url}: {e}")),
            )),
            other => panic!("unknown backend {other}"),
        }
    }

    /// Bind placeholder number `i` (1-based) in this backend's syntax.
    fn placeholder(&self, i: usize) -> String {
        match self {
            RawConn::Sqlite(_) => "?".to_owned(),
            RawConn::Pg(_) => format!("${i}"),
        }
    }

    fn placeholders(&self, n: usize) -> String {
        (1..=n).map(|i| self.placeholder(i)).collect::<Vec<_>>().join(", ")
    }

    /// The plan the database makes for `sql` (its binds as placeholders), one line per step:
    /// `EXPLAIN QUERY PLAN` on SQLite; on PostgreSQL the generic plan of the prepared
    /// statement (the one that holds whatever the binds are), with sequential scans and sorts
    /// priced out, so that a plan that still has one has no index to use instead.
    pub async fn explain(&mut self, sql: &str) -> Vec<String> {
        match self {
            RawConn::Sqlite(conn) => {
                #[derive(QueryableByName)]
                struct Step {
                    #[diesel(sql_type = Text)]
                    detail: String,
                }
                let query = diesel::sql_query(format!("EXPLAIN QUERY PLAN {sql}"));
                let steps: Vec<Step> = query.load(conn).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
                steps.into_iter().map(|s| s.detail).collect()
            }
            RawConn::Pg(conn) => {
                let params = (1..).take_while(|i| sql.contains(&format!("${i}"))).count();
                let setup = format!(
                    "SET enable_seqscan = off; SET enable_sort = off; SET plan_cache_mode = force_generic_plan; \
                     DEALLOCATE ALL; PREPARE planned AS {sql}"
                );
                conn.batch_execute(&setup).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
                let nulls = vec!["NULL"; params].join(", ");
                let explain = if params == 0 {
                    "EXPLAIN EXECUTE planned".to_owned()
                } else {
                    format!("EXPLAIN EXECUTE planned({nulls})")
                };
                #[derive(QueryableByName)]
                struct Step {
                    #[diesel(sql_type = Text, column_name = "QUERY PLAN")]
                    line: String,
                }
                let steps: Vec<Step> =
                    diesel::sql_query(explain).load(&mut **conn).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
                conn.batch_execute("DEALLOCATE planned").await.expect("deallocate");
                steps.into_iter().map(|s| s.line).collect()
            }
        }
    }

    /// Inserts a row of `sessions` (no store method writes them yet).
    pub async fn insert_session(&mut self, owner: Owner, s: &SessionSummary) {
        let sql = format!(
            "INSERT INTO sessions (owner, session_id, title, created_at, updated_at, version_id, section_count) \
             VALUES ({})",
            self.placeholders(7)
        );
        let query = diesel::sql_query(sql)
            .bind::<Text, _>(owner.to_string())
            .bind::<Text, _>(s.session_id.clone())
            .bind::<Nullable<Text>, _>(s.title.clone())
            .bind::<BigInt, _>(s.created_at)
            .bind::<BigInt, _>(s.updated_at)
            .bind::<Nullable<Text>, _>(s.version_id.clone())
            .bind::<BigInt, _>(s.section_count);
        let inserted = on_raw!(self, |conn| query.execute(conn).await).expect("insert a sessions row");
        assert_eq!(inserted, 1);
    }

    /// Rows of `table` whose `owner` column is `owner`.
    pub async fn count_owned(&mut self, table: &str, owner: Owner) -> i64 {
        let sql = format!("SELECT COUNT(*) AS n FROM {table} WHERE owner = {}", self.placeholder(1));
        let query = diesel::sql_query(sql).bind::<Text, _>(owner.to_string());
        let count: Count = on_raw!(self, |conn| query.get_result(conn).await).expect("count rows");
        count.n
    }

    /// Rows of `table` whose `column` is `value`.
    pub async fn count_where(&mut self, table: &str, column: &str, value: &str) -> i64 {
        let sql = format!("SELECT COUNT(*) AS n FROM {table} WHERE {column} = {}", self.placeholder(1));
        let query = diesel::sql_query(sql).bind::<Text, _>(value.to_owned());
        let count: Count = on_raw!(self, |conn| query.get_result(conn).await).expect("count rows");
        count.n
    }

    /// The `n` of a query that counts (`SELECT count(*) AS n …`), written for this backend.
    pub async fn count(&mut self, sql: &str) -> i64 {
        let query = diesel::sql_query(sql.to_owned());
        let count: Count = on_raw!(self, |conn| query.get_result(conn).await).unwrap_or_else(|e| panic!("{sql}: {e}"));
        count.n
    }

    /// Runs statements that answer nothing (checks such as FTS5's `integrity-check`).
    pub async fn execute(&mut self, sql: &str) {
        on_raw!(self, |conn| conn.batch_execute(sql).await).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// The stored promotion code, read back without the store.
    pub async fn promo_code(&mut self, code: &str) -> Option<PromoCodeRecord> {
        let sql = format!(
            "SELECT code, name, grant_ops, expires_at, created_at FROM promo_codes WHERE code = {}",
            self.placeholder(1)
        );
        let query = diesel::sql_query(sql).bind::<Text, _>(code.to_owned());
        let rows: Vec<PromoCodeRow> = on_raw!(self, |conn| query.load(conn).await).expect("read promo_codes");
        assert!(rows.len() <= 1, "promo_codes.code is a primary key");
        rows.into_iter().next().map(|r| PromoCodeRecord {
            code: r.code,
            name: r.name,
            ops: r.grant_ops,
            expires_at: r.expires_at,
            created_at: r.created_at,
        })
    }

    /// The stored promotion grant, read back without the store.
    pub async fn promo_grant(&mut self, redemption_id: &str) -> Option<PromoGrantRecord> {
        let sql = format!(
            "SELECT redemption_id, owner, name, code, ops_granted, ops_remaining, expires_at, created_at \
             FROM promo_grants WHERE redemption_id = {}",
            self.placeholder(1)
        );
        let query = diesel::sql_query(sql).bind::<Text, _>(redemption_id.to_owned());
        let rows: Vec<PromoGrantRow> = on_raw!(self, |conn| query.load(conn).await).expect("read promo_grants");
        assert!(rows.len() <= 1, "promo_grants.redemption_id is a primary key");
        rows.into_iter().next().map(|r| PromoGrantRecord {
            redemption_id: r.redemption_id,
            owner: Owner::parse(&r.owner).expect("stored owner parses"),
            name: r.name,
            code: r.code,
            ops_granted: r.ops_granted,
            ops_remaining: r.ops_remaining,
            expires_at: r.expires_at,
            created_at: r.created_at,
        })
    }

    /// The ledger rows of `owner`, by request id, read back without the store.
    pub async fn ledger_rows(&mut self, owner: Owner) -> Vec<LedgerEntry> {
        let sql = format!(
            "SELECT request_id, owner, cycle, status, tier_ops, promo_ops, first_redemption, created_at, settled_at \
             FROM usage_ledger WHERE owner = {} ORDER BY request_id",
            self.placeholder(1)
        );
        let query = diesel::sql_query(sql).bind::<Text, _>(owner.to_string());
        let rows: Vec<LedgerRow> = on_raw!(self, |conn| query.load(conn).await).expect("read usage_ledger");
        rows.into_iter()
            .map(|r| LedgerEntry {
                request_id: r.request_id,
                owner: Owner::parse(&r.owner).expect("stored owner parses"),
                cycle: r.cycle,
                status: LedgerStatus::parse(&r.status)
                    .unwrap_or_else(|| panic!("unknown ledger status {:?}", r.status)),
                tier_ops: r.tier_ops,
                promo_ops: r.promo_ops,
                first_redemption: r.first_redemption,
                created_at: r.created_at,
                settled_at: r.settled_at,
            })
            .collect()
    }

    /// The `usage_counters` row of `owner` and `cycle`, if any.
    pub async fn usage_counter(&mut self, owner: Owner, cycle: &str) -> Option<i64> {
        let sql = format!(
            "SELECT tier_used FROM usage_counters WHERE owner = {} AND cycle = {}",
            self.placeholder(1),
            self.placeholder(2)
        );
        let query = diesel::sql_query(sql).bind::<Text, _>(owner.to_string()).bind::<Text, _>(cycle.to_owned());
        let rows: Vec<TierUsedRow> = on_raw!(self, |conn| query.load(conn).await).expect("read usage_counters");
        assert!(rows.len() <= 1, "usage_counters (owner, cycle) is a primary key");
        rows.into_iter().next().map(|r| r.tier_used)
    }

    /// The `usage_draws` rows of the ledger rows of `owner`, by request id then grant.
    pub async fn usage_draws(&mut self, owner: Owner) -> Vec<DrawRow> {
        let sql = format!(
            "SELECT d.request_id, d.redemption_id, d.draw_ops FROM usage_draws d \
             JOIN usage_ledger l ON l.request_id = d.request_id \
             WHERE l.owner = {} ORDER BY d.request_id, d.redemption_id",
            self.placeholder(1)
        );
        let query = diesel::sql_query(sql).bind::<Text, _>(owner.to_string());
        on_raw!(self, |conn| query.load(conn).await).expect("read usage_draws")
    }
}

#[test]
fn database_url_replaces_only_the_database_name() {
    assert_eq!(
        database_url("postgres://postgres@127.0.0.1:5432/test", "redline_test_x"),
        "postgres://postgres@127.0.0.1:5432/redline_test_x"
    );
    assert_eq!(database_url("postgresql://u:p@h/db?sslmode=disable", "n"), "postgresql://u:p@h/n?sslmode=disable");
    assert_eq!(database_url("postgres://h:5432", "n"), "postgres://h:5432/n");
}

//! Connection pools of both backends and the dispatch macros.

use std::path::Path;
use std::time::Duration;

use diesel::SqliteConnection;
use diesel_async::pooled_connection::deadpool::Pool;
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, ManagerConfig};
use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
use diesel_async::{AsyncConnection, AsyncMigrationHarness, AsyncPgConnection, SimpleAsyncConnection};
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};
use futures_util::FutureExt;
use redline_ports::jobs::Signal;
use redline_ports::{EventBus, StoreError};
use tokio::sync::broadcast;

use crate::error::{DbError, DbResult};

pub(crate) type SqliteConn = SyncConnectionWrapper<SqliteConnection>;
/// A read-only SQLite connection whose statements run on the calling thread (see [`Inline`]).
pub(crate) type SqliteReadConn = SyncConnectionWrapper<SqliteConnection, Inline>;
pub(crate) type PgConn = AsyncPgConnection;

const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/sqlite");
const PG_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/postgres");

/// How to open the database.
#[derive(Debug, Clone)]
pub struct DbConfig {
    /// `sqlite://path`, a bare path, or `postgres://…`/`postgresql://…`.
    pub url: String,
    /// Connections in the pool.
    pub max_connections: usize,
    /// How long a request may wait for a free connection before the store answers
    /// `Unavailable` (the HTTP layer turns that into 503).
    pub acquire_timeout: Duration,
}

impl DbConfig {
    pub fn new(url: impl Into<String>) -> Self {
        Self { url: url.into(), max_connections: 16, acquire_timeout: Duration::from_secs(10) }
    }
}

pub(crate) enum Backend {
    Sqlite(Pool<SqliteConn>),
    Pg(Pool<PgConn>),
}

/// The database: one pool of one backend. Cheap to share behind an `Arc`.
pub struct Db {
    pub(crate) backend: Backend,
    /// SQLite only: read-only connections for short point reads on the hot paths
    /// ([`with_read!`]), run on the calling thread.
    pub(crate) inline_reads: Option<Pool<SqliteReadConn>>,
    /// SQLite only: writers of this process take turns here before they ask SQLite for its
    /// write lock ([`with_tx!`], [`with_write!`]). SQLite lets one writer in at a time and
    /// makes the others poll: its busy handler sleeps 1, 2, 5, 10… ms between tries, so two
    /// writers meeting (a chat turn's event and a worker's claim) cost the second one a
    /// millisecond or more although the lock is held for tens of microseconds. Waiting here
    /// is a FIFO queue that wakes the next writer as soon as the lock is free. The busy
    /// timeout still covers writers of other processes (the `admin` CLI).
    pub(crate) write_gate: tokio::sync::Mutex<()>,
    /// Recent owners' session lists ([`crate::session_cache`]): set at opening on SQLite,
    /// by [`Db::follow_session_changes`] on PostgreSQL.
    pub(crate) session_lists: std::sync::OnceLock<crate::session_cache::SessionLists>,
    /// PostgreSQL: where writes of sessions are announced to the other replicas.
    bus: std::sync::OnceLock<std::sync::Arc<dyn EventBus>>,
}

/// Runs a SQLite statement on the thread that awaits it, instead of handing it to tokio's
/// blocking pool and back. For a read of a few rows by index on a local file in WAL mode
/// (readers never wait for the writer) the hand-off costs more than the read: about half the
/// server CPU of `GET /v1/sessions` went to waking and switching threads
/// (docs/benchmarks.md §1). Only [`with_read!`] uses it; writes, which may wait for the
/// write lock, and long reads (search) stay on the blocking pool.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Inline;

impl diesel_async::sync_connection_wrapper::SpawnBlocking for Inline {
    fn spawn_blocking<'a, R>(
        &mut self,
        task: impl FnOnce() -> R + Send + 'static,
    ) -> futures_util::future::BoxFuture<'a, Result<R, Box<dyn std::error::Error + Send + Sync + 'static>>>
    where
        R: Send + 'static,
    {
        futures_util::future::ready(Ok(task())).boxed()
    }

    fn get_runtime() -> Self {
        Inline
    }
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.backend {
            Backend::Sqlite(_) => "Db(sqlite)",
            Backend::Pg(_) => "Db(postgres)",
        })
    }
}

impl Db {
    /// After a write to the owner's `sessions` rows (committed or not): this store drops the
    /// owner's kept list and, on PostgreSQL, tells the other replicas to.
    pub(crate) async fn sessions_changed(&self, owner: &str) {
        if let Some(lists) = self.session_lists.get() {
            lists.invalidate(owner);
        }
        if let Some(bus) = self.bus.get() {
            bus.publish(Signal::SessionsChanged(owner.to_owned())).await;
        }
    }

    /// PostgreSQL: turns on the session-list cache ([`crate::session_cache`]), announcing
    /// this store's writes of sessions on `bus` and following the other replicas' there. The
    /// first call counts. On SQLite the cache is on from the opening and this does nothing.
    pub fn follow_session_changes(self: &std::sync::Arc<Self>, bus: std::sync::Arc<dyn EventBus>) {
        if !matches!(self.backend, Backend::Pg(_)) {
            return;
        }
        let mut signals = bus.subscribe();
        if self.bus.set(bus).is_err() {
            return;
        }
        let _ = self.session_lists.set(crate::session_cache::SessionLists::default());
        let me = std::sync::Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                let signal = signals.recv().await;
                let Some(db) = me.upgrade() else { return };
                let Some(lists) = db.session_lists.get() else { return };
                match signal {
                    Ok(Signal::SessionsChanged(owner)) => lists.invalidate(&owner),
                    // Signals may have been missed.
                    Ok(Signal::Reconnected) | Err(broadcast::error::RecvError::Lagged(_)) => lists.clear(),
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        });
    }
}

pub(crate) fn pool_error(e: impl std::fmt::Display) -> DbError {
    DbError::Pool(e.to_string())
}

fn sqlite_path(url: &str) -> &str {
    url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:")).unwrap_or(url)
}

impl Db {
    /// Opens the pool (creating the SQLite file and its folder when needed) and applies the
    /// pending migrations of the backend.
    pub async fn open(config: &DbConfig) -> Result<Self, StoreError> {
        let url = config.url.trim();
        let backend = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let mut mc = ManagerConfig::<PgConn>::default();
            mc.custom_setup = Box::new(|url| {
                async move {
                    let mut conn = PgConn::establish(url).await?;
                    // No JIT: it pays off only for queries costlier than any of ours, and a
                    // search over a very large session could cross its threshold (cost
                    // 100,000) and spend tens of milliseconds compiling what runs in a few.
                    conn.batch_execute(
                        "SET application_name = 'redline'; SET statement_timeout = '30s'; SET jit = off",
                    )
                    .await
                    .map_err(|e| diesel::ConnectionError::BadConnection(e.to_string()))?;
                    Ok(conn)
                }
                .boxed()
            });
            let manager = AsyncDieselConnectionManager::<PgConn>::new_with_config(url, mc);
            let pool = Pool::builder(manager)
                .max_size(config.max_connections)
                .wait_timeout(Some(config.acquire_timeout))
                .create_timeout(Some(config.acquire_timeout))
                .runtime(deadpool::Runtime::Tokio1)
                .build()
                .map_err(|e| StoreError::Unavailable(e.to_string()))?;
            Backend::Pg(pool)
        } else {
            let path = sqlite_path(url).to_owned();
            if let Some(parent) = Path::new(&path).parent() {
                if !parent.as_os_str().is_empty() {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| StoreError::Unavailable(format!("cannot create {}: {e}", parent.display())))?;
                }
            }
            let mut mc = ManagerConfig::<SqliteConn>::default();
            // A local file does not drop connections: skip the `SELECT 1` on every checkout.
            mc.recycling_method = diesel_async::pooled_connection::RecyclingMethod::Fast;
            mc.custom_setup = Box::new(|url| {
                async move {
                    let mut conn = SqliteConn::establish(url).await?;
                    // WAL lets readers run beside the one writer; the busy timeout makes a
                    // writer wait for another (this process or `redline admin`) instead of failing.
                    conn.batch_execute(
                        "PRAGMA busy_timeout = 10000; PRAGMA journal_mode = WAL; \
                         PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;",
                    )
                    .await
                    .map_err(|e| diesel::ConnectionError::BadConnection(e.to_string()))?;
                    Ok(conn)
                }
                .boxed()
            });
            let manager = AsyncDieselConnectionManager::<SqliteConn>::new_with_config(path, mc);
            let pool = Pool::builder(manager)
                // The connection used last first: each SQLite connection has its own page
                // cache, which it drops when another connection wrote since its last
                // transaction. Reusing the same few connections keeps their caches warm.
                .queue_mode(deadpool::managed::QueueMode::Lifo)
                .max_size(config.max_connections)
                .wait_timeout(Some(config.acquire_timeout))
                .create_timeout(Some(config.acquire_timeout))
                .runtime(deadpool::Runtime::Tokio1)
                .build()
                .map_err(|e| StoreError::Unavailable(e.to_string()))?;
            Backend::Sqlite(pool)
        };
        let inline_reads = match &backend {
            Backend::Sqlite(_) => Some(sqlite_read_pool(sqlite_path(url), config)?),
            Backend::Pg(_) => None,
        };
        let session_lists = std::sync::OnceLock::new();
        if let Backend::Sqlite(_) = &backend {
            let _ = session_lists.set(crate::session_cache::SessionLists::default());
        }
        let db = Self {
            backend,
            inline_reads,
            write_gate: tokio::sync::Mutex::new(()),
            session_lists,
            bus: std::sync::OnceLock::new(),
        };
        db.migrate().await?;
        Ok(db)
    }

    /// Which backend this is: `"sqlite"` or `"postgres"`.
    pub fn backend_name(&self) -> &'static str {
        match self.backend {
            Backend::Sqlite(_) => "sqlite",
            Backend::Pg(_) => "postgres",
        }
    }

    async fn migrate(&self) -> Result<(), StoreError> {
        // On PostgreSQL, replicas starting together migrate one at a time: the first takes a
        // session-level advisory lock on a connection of its own (out of the pool) and keeps
        // it until the passages are indexed again too; the others wait for it, then find
        // nothing left to do. (Without it they ran the same migrations at once, and all but
        // one failed to start.) Closing the connection releases the lock, also on an error.
        let lock_holder = match &self.backend {
            Backend::Sqlite(pool) => {
                let conn = deadpool::managed::Object::take(pool.get().await.map_err(pool_error)?);
                run_migrations(conn, SQLITE_MIGRATIONS).await.map_err(StoreError::from)?;
                None
            }
            Backend::Pg(pool) => {
                let mut conn = deadpool::managed::Object::take(pool.get().await.map_err(pool_error)?);
                let lock = diesel::sql_query("SELECT pg_advisory_lock($1)")
                    .bind::<diesel::sql_types::BigInt, _>(MIGRATION_LOCK);
                diesel_async::RunQueryDsl::execute(lock, &mut conn)
                    .await
                    .map_err(|e| StoreError::from(DbError::from(e)))?;
                Some(run_migrations(conn, PG_MIGRATIONS).await.map_err(StoreError::from)?)
            }
        };
        // Passages indexed before migration 000007 get their lexemes (computed in Rust), and
        // on SQLite those indexed before 000011 their entries without the scope column.
        let reindexed = crate::attachments::reindex_passages(self).await?;
        if reindexed > 0 {
            tracing::info!(attachments = reindexed, "attachment passages indexed again");
        }
        // Versions stored whole before migration 000021 are stored as chunks.
        let converted = crate::documents::convert_versions(self).await?;
        if converted > 0 {
            tracing::info!(versions = converted, "document versions stored as chunks");
        }
        if let Some(mut conn) = lock_holder {
            let unlock =
                diesel::sql_query("SELECT pg_advisory_unlock($1)").bind::<diesel::sql_types::BigInt, _>(MIGRATION_LOCK);
            diesel_async::RunQueryDsl::execute(unlock, &mut conn)
                .await
                .map_err(|e| StoreError::from(DbError::from(e)))?;
        }
        Ok(())
    }

    /// Writes a consistent copy of the embedded SQLite database to `to` while it serves
    /// (`VACUUM INTO`: one read transaction, so writers go on and the copy is the database
    /// as of one moment; readers of WAL mode are not blocked). `to` must not exist. On
    /// PostgreSQL this is refused: its own tools (`pg_dump`, base backups) do it.
    pub async fn backup_to(&self, to: &std::path::Path) -> Result<(), StoreError> {
        if to.exists() {
            return Err(StoreError::Other(format!("{} exists already: give a new file", to.display())));
        }
        let Backend::Sqlite(pool) = &self.backend else {
            return Err(StoreError::Other(
                "the database is PostgreSQL: back it up with pg_dump or a base backup (docs/deploy.md, \"Backups\")"
                    .to_owned(),
            ));
        };
        let target = to.to_str().ok_or_else(|| StoreError::Other(format!("{} is not UTF-8", to.display())))?;
        let mut conn = pool.get().await.map_err(pool_error)?;
        let sql = format!("VACUUM INTO '{}'", target.replace('\'', "''"));
        conn.batch_execute(&sql).await.map_err(|e| StoreError::from(DbError::from(e)))
    }

    /// Reverts the migrations after `version` (the digits of its folder name,
    /// `20261122000006`), newest first (for the migration tests).
    #[doc(hidden)]
    pub async fn revert_migrations_after(&self, version: &str) -> Result<(), StoreError> {
        if version < crate::documents::CHUNKS_MIGRATION {
            crate::documents::unconvert_versions(self).await?;
        }
        let version = version.to_owned();
        let result = match &self.backend {
            Backend::Sqlite(pool) => {
                let conn = deadpool::managed::Object::take(pool.get().await.map_err(pool_error)?);
                revert_after(conn, || SQLITE_MIGRATIONS, version).await
            }
            Backend::Pg(pool) => {
                let conn = deadpool::managed::Object::take(pool.get().await.map_err(pool_error)?);
                revert_after(conn, || PG_MIGRATIONS, version).await
            }
        };
        result.map_err(StoreError::from)
    }

    /// Reverts every migration (for the reversibility test).
    #[doc(hidden)]
    pub async fn revert_all_migrations(&self) -> Result<(), StoreError> {
        crate::documents::unconvert_versions(self).await?;
        let result = match &self.backend {
            Backend::Sqlite(pool) => {
                let conn = deadpool::managed::Object::take(pool.get().await.map_err(pool_error)?);
                revert_migrations(conn, SQLITE_MIGRATIONS).await
            }
            Backend::Pg(pool) => {
                let conn = deadpool::managed::Object::take(pool.get().await.map_err(pool_error)?);
                revert_migrations(conn, PG_MIGRATIONS).await
            }
        };
        result.map_err(StoreError::from)
    }

    /// Applies pending migrations again (for the reversibility test).
    #[doc(hidden)]
    pub async fn run_pending_migrations(&self) -> Result<(), StoreError> {
        self.migrate().await
    }
}

/// The pool of [`SqliteReadConn`]s: `query_only`, and a short busy timeout, since a reader
/// that waits blocks its thread (in WAL mode only a recovery makes a reader wait). A body run
/// inline never yields while it holds a connection, so a few connections are enough.
fn sqlite_read_pool(path: &str, config: &DbConfig) -> Result<Pool<SqliteReadConn>, StoreError> {
    let mut mc = ManagerConfig::<SqliteReadConn>::default();
    mc.recycling_method = diesel_async::pooled_connection::RecyclingMethod::Fast;
    mc.custom_setup = Box::new(|url| {
        async move {
            let mut conn = SqliteReadConn::establish(url).await?;
            conn.batch_execute("PRAGMA busy_timeout = 1000; PRAGMA query_only = 1; PRAGMA foreign_keys = ON;")
                .await
                .map_err(|e| diesel::ConnectionError::BadConnection(e.to_string()))?;
            Ok(conn)
        }
        .boxed()
    });
    let manager = AsyncDieselConnectionManager::<SqliteReadConn>::new_with_config(path, mc);
    Pool::builder(manager)
        .queue_mode(deadpool::managed::QueueMode::Lifo)
        .max_size(config.max_connections.clamp(1, 8))
        .wait_timeout(Some(config.acquire_timeout))
        .create_timeout(Some(config.acquire_timeout))
        .runtime(deadpool::Runtime::Tokio1)
        .build()
        .map_err(|e| StoreError::Unavailable(e.to_string()))
}

/// The key of the advisory lock that serialises migrations on PostgreSQL (`Db::migrate`):
/// "redline" in ASCII, beyond the 32-bit keys of the per-owner locks (`hashtext`).
const MIGRATION_LOCK: i64 = 0x0072_6564_6c69_6e65;

/// Runs the pending migrations on `conn`; answers the connection.
async fn run_migrations<C>(conn: C, migrations: EmbeddedMigrations) -> DbResult<C>
where
    C: AsyncConnection + 'static,
    AsyncMigrationHarness<C>: MigrationHarness<C::Backend>,
{
    tokio::task::spawn_blocking(move || {
        let mut harness = AsyncMigrationHarness::new(conn);
        harness.run_pending_migrations(migrations).map_err(|e| DbError::Pool(format!("migration failed: {e}")))?;
        Ok(harness.into_inner())
    })
    .await
    .map_err(|e| DbError::Pool(format!("migration task failed: {e}")))?
}

async fn revert_migrations<C>(conn: C, migrations: EmbeddedMigrations) -> DbResult<()>
where
    C: AsyncConnection + 'static,
    AsyncMigrationHarness<C>: MigrationHarness<C::Backend>,
{
    tokio::task::spawn_blocking(move || {
        let mut harness = AsyncMigrationHarness::new(conn);
        harness.revert_all_migrations(migrations).map(|_| ()).map_err(|e| DbError::Pool(format!("revert failed: {e}")))
    })
    .await
    .map_err(|e| DbError::Pool(format!("migration task failed: {e}")))?
}

async fn revert_after<C>(conn: C, migrations: fn() -> EmbeddedMigrations, version: String) -> DbResult<()>
where
    C: AsyncConnection + 'static,
    AsyncMigrationHarness<C>: MigrationHarness<C::Backend>,
{
    fn failed<T>(r: diesel::migration::Result<T>) -> DbResult<T> {
        r.map_err(|e| DbError::Pool(format!("revert failed: {e}")))
    }
    tokio::task::spawn_blocking(move || {
        let mut harness = AsyncMigrationHarness::new(conn);
        loop {
            let applied = failed(harness.applied_migrations())?;
            if !applied.iter().any(|v| v.to_string() > version) {
                return Ok(());
            }
            failed(harness.revert_last_migration(migrations()))?;
        }
    })
    .await
    .map_err(|e| DbError::Pool(format!("migration task failed: {e}")))?
}

/// Pins the error type of the blocks built by the dispatch macros.
pub(crate) async fn db_block<T>(f: impl std::future::Future<Output = DbResult<T>>) -> DbResult<T> {
    f.await
}

/// Runs `$body` with `$conn: &mut Connection` of whichever backend `$db` is, and evaluates
/// to a `DbResult`. The body is compiled once per backend, so it must be backend-neutral
/// diesel code; `?` inside it leaves the block, not the enclosing function.
macro_rules! with_conn {
    ($db:expr, |$conn:ident| $body:expr) => {
        with_conn!(@gate false; $db, |$conn| $body)
    };
    // `$gate`: whether to take the SQLite write gate first (see `with_write!`).
    (@gate $gate:expr; $db:expr, |$conn:ident| $body:expr) => {
        $crate::db::db_block(async {
            match &$db.backend {
                $crate::db::Backend::Sqlite(pool) => {
                    let _turn = if $gate { Some($db.write_gate.lock().await) } else { None };
                    let mut guard = pool.get().await.map_err($crate::db::pool_error)?;
                    let $conn: &mut $crate::db::SqliteConn = &mut *guard;
                    $body
                }
                $crate::db::Backend::Pg(pool) => {
                    let mut guard = pool.get().await.map_err($crate::db::pool_error)?;
                    let $conn: &mut $crate::db::PgConn = &mut *guard;
                    $body
                }
            }
        })
        .await
    };
}

/// [`with_conn!`] for a body that writes outside a transaction (one statement in autocommit):
/// on SQLite it first takes its turn at [`Db::write_gate`], like [`with_tx!`].
macro_rules! with_write {
    ($db:expr, |$conn:ident| $body:expr) => {
        with_conn!(@gate true; $db, |$conn| $body)
    };
}

/// Like [`with_conn!`] for a short read-only body (a point read or a few rows by index) on a
/// hot path: on SQLite it runs on the calling thread over a `query_only` connection
/// ([`Inline`]); on PostgreSQL it is [`with_conn!`]. Never for writes or long scans.
macro_rules! with_read {
    ($db:expr, |$conn:ident| $body:expr) => {
        $crate::db::db_block(async {
            match (&$db.backend, &$db.inline_reads) {
                ($crate::db::Backend::Sqlite(_), Some(pool)) => {
                    let mut guard = pool.get().await.map_err($crate::db::pool_error)?;
                    let $conn: &mut $crate::db::SqliteReadConn = &mut *guard;
                    $body
                }
                ($crate::db::Backend::Sqlite(pool), None) => {
                    let mut guard = pool.get().await.map_err($crate::db::pool_error)?;
                    let $conn: &mut $crate::db::SqliteConn = &mut *guard;
                    $body
                }
                ($crate::db::Backend::Pg(pool), _) => {
                    let mut guard = pool.get().await.map_err($crate::db::pool_error)?;
                    let $conn: &mut $crate::db::PgConn = &mut *guard;
                    $body
                }
            }
        })
        .await
    };
}

/// Like [`with_conn!`] inside a write transaction: `BEGIN IMMEDIATE` on SQLite (one writer
/// at a time, so read-then-write never loses an update), `BEGIN` on PostgreSQL (use
/// [`BackendOps::lock_owner`] where a read decides a write). An `Err` rolls back.
macro_rules! with_tx {
    ($db:expr, |$conn:ident| $body:expr) => {
        $crate::db::db_block(async {
            match &$db.backend {
                $crate::db::Backend::Sqlite(pool) => {
                    let _turn = $db.write_gate.lock().await;
                    let mut guard = pool.get().await.map_err($crate::db::pool_error)?;
                    let c: &mut $crate::db::SqliteConn = &mut *guard;
                    c.immediate_transaction(async |$conn: &mut $crate::db::SqliteConn| -> $crate::error::DbResult<_> {
                        $body
                    })
                    .await
                }
                $crate::db::Backend::Pg(pool) => {
                    let mut guard = pool.get().await.map_err($crate::db::pool_error)?;
                    let c: &mut $crate::db::PgConn = &mut *guard;
                    diesel_async::AsyncConnection::transaction(
                        c,
                        async |$conn: &mut $crate::db::PgConn| -> $crate::error::DbResult<_> { $body },
                    )
                    .await
                }
            }
        })
        .await
    };
}

/// One page of a boxed query in keyset order (docs/api.md, "Pagination"): the rows after
/// `$after` (an `&Option<Cursor>`) by (`$number`, `$id`), newest first (`desc`) or oldest
/// first (`asc`), at most `$fetch` rows (the page's `fetch()`: one more than its limit tells
/// that a next page exists). The first condition bounds the index range; the second settles
/// ties. Every listing pages through here.
macro_rules! keyset {
    ($q:expr, desc($number:expr, $id:expr), $after:expr, $fetch:expr) => {{
        let mut q = $q;
        if let Some(after) = $after {
            q = q.filter($number.le(after.number)).filter($number.lt(after.number).or($id.lt(&after.id)));
        }
        q.order(($number.desc(), $id.desc())).limit($fetch)
    }};
    ($q:expr, asc($number:expr, $id:expr), $after:expr, $fetch:expr) => {{
        let mut q = $q;
        if let Some(after) = $after {
            q = q.filter($number.ge(after.number)).filter($number.gt(after.number).or($id.gt(&after.id)));
        }
        q.order(($number.asc(), $id.asc())).limit($fetch)
    }};
}

/// The statements that differ per backend.
pub(crate) trait BackendOps {
    /// Serialises transactions that read and then write one owner's rows (key limits,
    /// usage). SQLite's `BEGIN IMMEDIATE` already does; PostgreSQL takes a transaction-scoped
    /// advisory lock on the owner.
    async fn lock_owner(&mut self, owner: &str) -> DbResult<()>;

    /// The id of the oldest pending job, locked for this transaction so that no other
    /// claimer takes it (PostgreSQL skips rows other claimers hold).
    async fn next_pending_job(&mut self) -> DbResult<Option<String>>;
}

impl BackendOps for SqliteConn {
    async fn lock_owner(&mut self, _owner: &str) -> DbResult<()> {
        Ok(())
    }

    async fn next_pending_job(&mut self) -> DbResult<Option<String>> {
        use crate::schema::jobs;
        use diesel::prelude::*;
        use diesel_async::RunQueryDsl;
        // Inside BEGIN IMMEDIATE: this connection is the only writer.
        Ok(jobs::table
            .filter(jobs::status.eq("pending"))
            .order((jobs::created_at.asc(), jobs::job_id.asc()))
            .select(jobs::job_id)
            .first(self)
            .await
            .optional()?)
    }
}

impl BackendOps for PgConn {
    async fn lock_owner(&mut self, owner: &str) -> DbResult<()> {
        use diesel::sql_types::Text;
        use diesel_async::RunQueryDsl;
        diesel::sql_query("SELECT pg_advisory_xact_lock(hashtext($1))").bind::<Text, _>(owner).execute(self).await?;
        Ok(())
    }

    async fn next_pending_job(&mut self) -> DbResult<Option<String>> {
        use crate::schema::jobs;
        use diesel::prelude::*;
        use diesel_async::RunQueryDsl;
        Ok(jobs::table
            .filter(jobs::status.eq("pending"))
            .order((jobs::created_at.asc(), jobs::job_id.asc()))
            .select(jobs::job_id)
            .for_update()
            .skip_locked()
            .first(self)
            .await
            .optional()?)
    }
}

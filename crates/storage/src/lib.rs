//! The diesel storage adapter: every store port of Redline on SQLite (embedded default) and
//! PostgreSQL (scale-out), chosen by the URL scheme.
//!
//! Invariant: this is the only crate that knows SQL. Row structs live here; the domain has no
//! diesel derives. Queries are written once and run on either backend through the
//! [`with_conn!`]/[`with_tx!`] dispatch; the few statements that differ per backend sit
//! behind [`db::BackendOps`].
//!
//! # Connections (`db.rs`)
//!
//! - SQLite: `SyncConnectionWrapper` connections in WAL mode (readers run beside the one
//!   writer), `synchronous = NORMAL`, foreign keys on, and a 10 s busy timeout, so that a
//!   writer of another process (`redline admin`) is waited for rather than failed. The pool
//!   hands out the connection used last first (a connection's page cache survives only while
//!   no other connection writes) and skips the `SELECT 1` check at checkout (a local file
//!   does not drop connections).
//! - PostgreSQL: `AsyncPgConnection`s with `application_name = 'redline'`, a 30 s
//!   `statement_timeout` and `jit = off`: JIT pays only for queries costlier than any of ours,
//!   and a search over a very large session could cross its threshold and spend tens of
//!   milliseconds compiling what runs in a few.
//! - Both are pooled by deadpool. A caller waits at most `DbConfig::acquire_timeout` for a
//!   connection; then the store answers `Unavailable`, which the HTTP shell turns into 503.
//!
//! # SQLite on the hot paths
//!
//! - Writers of this process take turns at one async gate (`Db::write_gate`, taken by
//!   `with_tx!` and `with_write!`) before they ask SQLite for its write lock: SQLite's busy
//!   handler would make a second writer sleep for milliseconds while the lock is held for
//!   microseconds. The busy timeout still covers writers of other processes.
//! - `with_read!` runs short point reads on the calling thread over a `query_only` pool
//!   (`db::Inline`): for a few rows read by index, the hand-off to the blocking pool costs
//!   more than the read. Writes and long reads (search) stay on the blocking pool.
//! - Write lookups by key with `get_result`, not `first`: SQLite plans with the value of a
//!   bound `LIMIT`, so a statement that has one is compiled again at every run.
//! - The session lists of recent owners are kept in memory (`session_cache.rs`), dropped by
//!   every write of this process to the owner's sessions. On PostgreSQL, whose replicas share
//!   the database, the cache is on once the store follows the bus
//!   (`Db::follow_session_changes`): every write is announced over `LISTEN/NOTIFY` and each
//!   replica drops that owner's list when it hears it.

//! # Versions (`documents.rs`, `chunks.rs`)
//!
//! A version is a manifest: the hashes of its content-defined chunks, in order. A session
//! keeps each chunk once (`document_chunks`, keyed by owner, session and hash), compressed
//! with LZ4, so a save stores only the chunks it changed. The current document is the
//! session's current version (`sessions.version_id`); there is no second copy. Reading any
//! version is its manifest and at most 256 chunk rows (one per 256 KiB beyond 32 MiB).
//!
//! # Transactions
//!
//! `with_tx!` opens `BEGIN IMMEDIATE` on SQLite (one writer at a time, so a read that decides
//! a write never loses an update) and `BEGIN` on PostgreSQL, where a transaction that reads
//! and then writes one owner's rows (key limits, usage) first takes an advisory lock on the
//! owner (`BackendOps::lock_owner`), and workers claim jobs with `FOR UPDATE SKIP LOCKED`. A
//! chat turn's commit marks its job (`jobs.committed_version`) in the same transaction, so a
//! commit and a cancel never both win.
//!
//! # Attachment search (`attachments.rs`)
//!
//! The one place with per-backend SQL of its own. The lexemes are computed in Rust before the
//! transaction opens (`lexemes.rs`: English Snowball stems, PostgreSQL's English stop words,
//! accents of Latin and Greek letters folded; the same for passages and queries), so both
//! backends index the same lexemes and the database only stores them.
//!
//! - SQLite: a contentless FTS5 table ranked by BM25, with `automerge` 8 (every attachment's
//!   transaction writes at least one segment; merging eight at a time rewrites each entry
//!   fewer times). FTS5 flushes a segment at the end of every statement, so an attachment's
//!   passages and their lexemes go in as two JSON arrays, one statement each, built on the
//!   blocking pool before the transaction and bound in one hand-off to the sync connection.
//!   Each (owner, session) has its own range of FTS5 rowids (the passage ids), and a search
//!   bounds the rowid.
//! - PostgreSQL: a stored `tsvector`, sent in its binary form (the SQL type `TsVector`, which
//!   the server reads without parsing text) and ranked by `ts_rank`, under one GIN index over
//!   (scope, tsv) (`btree_gin`; where the extension cannot be created, a GIN over tsv and a
//!   B-tree over scope). The passages have no foreign key, whose check per row cost a seventh
//!   of the insert: the writer locks the attachment's row, and a trigger deletes the passages
//!   of a deleted attachment.
//! - A migration that changes how passages are indexed lists the attachments in
//!   `attachment_reindex`; opening the database indexes them again before it serves.
//!
//! # Migrations
//!
//! One folder per backend (`migrations/sqlite`, `migrations/postgres`), embedded and applied
//! by [`Db::open`]; on PostgreSQL under an advisory lock, so that replicas starting together
//! migrate one at a time. `tests/contract.rs` runs one contract suite against both backends,
//! each test on a fresh SQLite file or PostgreSQL database.

#[macro_use]
mod db;
#[macro_use]
mod webhooks;
mod attachments;
pub mod bus;
mod chunks;
mod codec;
mod documents;
mod error;
mod files;
mod idempotency;
mod identity;
mod jobs;
mod lexemes;
mod rows;
mod schema;
mod session_cache;
mod sessions;
mod sql;
mod templates;
mod throttles;
mod usage;

pub use db::{Db, DbConfig};

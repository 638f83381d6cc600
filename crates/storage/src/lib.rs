//! The diesel storage adapter: every store port of Redline on SQLite (embedded default) and
//! PostgreSQL (scale-out), chosen by the URL scheme.
//!
//! Invariant: this is the only crate that knows SQL. Row structs live here; the domain has no
//! diesel derives. Queries are written once and run on either backend through the
//! [`with_conn!`]/[`with_tx!`] dispatch; the few statements that differ per backend sit
//! behind [`db::BackendOps`].

#[macro_use]
mod db;
mod attachments;
pub mod bus;
mod documents;
mod error;
mod files;
mod identity;
mod jobs;
mod lexemes;
mod rows;
mod schema;
mod session_cache;
mod sessions;
mod sql;
mod templates;
mod usage;

pub use db::{Db, DbConfig};

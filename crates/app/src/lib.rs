//! The `redline` binary's library half: configuration, wiring, the operator CLI. `main.rs`
//! only parses the command line and calls in here, so tests can start the real app.
//!
//! Invariant: this is the only crate that sees every other crate; nothing depends on it.

pub mod admin;
pub mod config;
pub mod outbound;
pub mod startup;
pub mod telemetry;

pub use config::Config;
pub use startup::{Application, Services};

//! Redline's use cases. Each module is one area; each orchestrates ports and the domain's
//! rules and owns its error enum, which `http` maps to statuses exhaustively.
//!
//! Invariant: no I/O here except through a port; CPU-heavy work (argon2) runs on the
//! blocking pool so a request never stalls the async workers.

pub mod attachments;
pub mod chat;
pub mod documents;
pub mod exports;
pub mod idempotency;
pub mod identity;
pub mod key_cache;
pub mod secrets;
pub mod sessions;
pub mod telemetry;
pub mod templates;
pub mod throttle;
pub mod usage;
pub mod webhooks;
pub mod worker;

pub use identity::{Identity, IdentityConfig, IdentityError, Principal};

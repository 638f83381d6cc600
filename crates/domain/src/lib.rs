//! The pure core of Redline: types whose constructors are the only way in ("parse, don't
//! validate") and the rules of the product. Nothing here performs I/O, spawns tasks or knows
//! about HTTP or SQL; every other crate depends on this one and it depends on none of ours.

pub mod account;
pub mod attachment;
pub mod document;
pub mod export;
pub mod formats;
pub mod handoff;
pub mod ids;
pub mod image_urls;
pub mod job;
pub mod keys;
pub mod owner;
pub mod page;
pub mod picture;
pub mod request;
pub mod session;
pub mod throttle;
pub mod time_util;
pub mod title;
pub mod usage;
pub mod webhook;

pub use account::{Email, Password, Plan};
pub use ids::{KeyId, OrgId, UserId};
pub use keys::{ApiKey, KeyKind, Scope, Scopes};
pub use owner::Owner;
pub use session::SessionId;

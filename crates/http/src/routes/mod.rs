//! The routes, one module per area. Handlers extract, convert to domain types, make one call
//! into `core`, and map the answer to a response type.

pub mod agents;
pub mod auth;
pub mod documents;
pub mod meta;
pub mod sessions;
pub mod usage;
pub mod users;

use actix_web::web;

/// Registers every route of the service.
pub fn configure(cfg: &mut web::ServiceConfig) {
    meta::configure(cfg);
    auth::configure(cfg);
    users::configure(cfg);
    agents::configure(cfg);
    sessions::configure(cfg);
    documents::configure(cfg);
    usage::configure(cfg);
}

//! The routes, one module per area. Handlers extract, convert to domain types, make one call
//! into `core`, and map the answer to a response type.

pub mod agents;
pub mod attachments;
pub mod auth;
pub mod chat;
pub mod documents;
pub mod exports;
pub mod jobs;
pub mod meta;
pub mod sessions;
pub mod templates;
pub mod usage;
pub mod users;

use actix_web::web;

/// Registers every route of the service.
pub fn configure(cfg: &mut web::ServiceConfig) {
    meta::configure(cfg);
    // The hottest authenticated reads next: actix tries routes in order, and every route with
    // a `{param}` before a match costs a regex run (about 6 % of the CPU of `GET /v1/sessions`
    // when it came after twenty others). No pattern of these two overlaps one registered later.
    sessions::configure(cfg);
    jobs::configure(cfg);
    auth::configure(cfg);
    users::configure(cfg);
    agents::configure(cfg);
    // Before `documents`: `/v1/documents/export…` must not be taken for `/v1/documents/{session_id}`.
    exports::configure(cfg);
    documents::configure(cfg);
    templates::configure(cfg);
    chat::configure(cfg);
    attachments::configure(cfg);
    usage::configure(cfg);
}

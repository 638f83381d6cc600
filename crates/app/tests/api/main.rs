//! Black-box tests of the real app: each test starts its own server (port 0, fresh data
//! folder) and talks to it over HTTP; the operator CLI and the log checks run the real
//! `redline` binary. Contract: docs/api.md, "Authentication".

mod accounts;
mod agents;
mod attachments;
mod auth_header;
mod balancer;
mod body_cap;
mod chat;
mod cli;
mod exports;
mod files;
mod handoff;
mod helpers;
mod history;
mod image_urls;
mod integrators;
mod keys;
mod listings;
mod logging;
mod misc;
mod orgs;
mod outages;
mod paging;
mod protocol;
mod protocols;
mod relevance;
mod replicas;
mod review;
mod roundtrip;
mod scans;
mod sign_in;
mod streams;
mod templates;
mod titles;
mod transport;
mod untrusted;
mod upload_pictures;
mod web_lists;
mod web_sessions;
mod web_users;
mod webhooks;

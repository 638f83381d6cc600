//! The OpenAPI 3.1 document, generated from the handlers' annotations. `cargo xtask openapi`
//! writes it to `docs/openapi.json`; `cargo xtask check` fails when that file is stale.

use serde::Serialize;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi, ToSchema};

use crate::routes::{agents, attachments, auth, chat, documents, exports, jobs, sessions, templates, usage, users};
use crate::validation::ValidationItem;

/// An error: `detail` is a string.
#[derive(Serialize, ToSchema)]
pub struct ErrorBody {
    pub detail: String,
}

/// A validation error (422): every problem of the request.
#[derive(Serialize, ToSchema)]
pub struct ValidationErrorBody {
    pub detail: Vec<ValidationItem>,
}

struct Security;

impl Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("An API key: `sk_` + 32 hex (users) or `lce_` + 32 hex (organizations)."))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "session",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("A web-app session token `ws_…` from POST /v1/auth/login (or its cookie)."))
                    .build(),
            ),
        );
    }
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Redline",
        version = "2.0.0",
        description = "AI document editing: sessions hold sectioned HTML documents that an AI reads and edits in chat."
    ),
    paths(
        sessions::list_sessions,
        auth::signup,
        auth::login,
        auth::logout,
        users::me,
        users::list_keys,
        users::create_key,
        users::revoke_key,
        users::list_orgs,
        users::create_org,
        users::get_org,
        users::list_members,
        users::add_member,
        users::remove_member,
        users::list_org_keys,
        users::create_org_key,
        users::revoke_org_key,
        agents::signup,
        agents::start_handoff,
        agents::handoff_summary,
        agents::claim,
        usage::usage,
        usage::redeem,
        documents::upload,
        documents::get_document,
        documents::save_document,
        documents::list_versions,
        documents::get_version,
        documents::delete_session,
        documents::get_image,
        attachments::upload,
        attachments::status,
        attachments::list,
        attachments::get_attachment,
        attachments::delete_attachment,
        attachments::search,
        attachments::upload_url,
        attachments::put_upload,
        exports::export,
        exports::email_request,
        exports::download,
        templates::list_templates,
        templates::create_template,
        templates::get_template,
        templates::delete_template,
        templates::apply_template,
        chat::chat,
        chat::chat_async,
        chat::approve,
        chat::history,
        chat::revert,
        jobs::list_jobs,
        jobs::session_jobs,
        jobs::get_job,
        jobs::cancel_job,
        jobs::job_events,
    ),
    components(schemas(ErrorBody, ValidationErrorBody, ValidationItem)),
    modifiers(&Security),
    tags(
        (name = "sessions", description = "Sessions: one document each"),
        (name = "auth", description = "Web-app accounts"),
        (name = "users", description = "The signed-in web-app user and their API keys"),
        (name = "organizations", description = "Organizations and their keys"),
        (name = "agents", description = "Agent self-signup and operator handoff"),
        (name = "documents", description = "Uploading, reading and saving documents; versions"),
        (name = "export", description = "Documents as DOCX, PDF, HTML, Markdown or text; e-mailed download links"),
        (name = "templates", description = "Built-in and saved templates, applied to a session's document"),
        (name = "usage", description = "Operations used against the monthly quota, and promotions"),
        (name = "chat", description = "Chat turns with the AI: answered at once, or as jobs; approval of proposed changes"),
        (name = "jobs", description = "Jobs: listings, polling, cancelling, and their server-sent event streams"),
        (name = "attachments", description = "Files attached to a session for the AI to search: processing jobs, passage search, pre-signed uploads"),
    )
)]
struct ApiDoc;

/// The document as a value.
pub fn document() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

/// The document as pretty JSON with a trailing newline (the form committed to the repo).
pub fn document_json() -> String {
    let mut s = document().to_pretty_json().unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

//! The OpenAPI 3.1 document, generated from the handlers' annotations. `cargo xtask openapi`
//! writes it to `docs/openapi.json`; `cargo xtask check` fails when that file is stale.
//!
//! Clients are generated from it, so it lists every status an operation can answer with its
//! body. The annotations say what a handler itself answers; two modifiers here add what
//! follows from the rest of the service, in one place:
//!
//! - [`CommonAnswers`]: the answers of what an operation *takes* (a credential, a body, a
//!   session id) and of the service as a whole (500, 503), written once rather than copied
//!   into fifty annotations that would each be one forgotten line from wrong;
//! - [`Links`]: which answer's ids feed which operation's parameters (OpenAPI links), so a
//!   client or a stateful tester can follow them.

use serde::Serialize;
use serde_json::json;
use utoipa::openapi::path::{Operation, Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::request_body::RequestBody;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{
    ContentBuilder, ObjectBuilder, PathItem, Ref, RefOr, Required, Response, ResponseBuilder, Schema, Type,
};
use utoipa::{Modify, OpenApi, ToSchema};

use crate::routes::{
    account, agents, attachments, auth, chat, documents, exports, invitations, jobs, sessions, templates, usage, users,
    webhooks,
};
use crate::validation::{LocStep, ValidationItem};

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

/// A request body over the service's cap (413; the contract's Errors, Details 7).
#[derive(Serialize, ToSchema)]
pub struct RequestTooLargeBody {
    /// The sizes observed and allowed, in MB and in bytes.
    pub detail: String,
    /// `request_too_large`
    pub error_code: String,
    /// Text safe to show in a UI.
    pub message_user: String,
    /// The size observed, MB (MiB), rounded up.
    pub request_size_mb: f64,
    /// The cap, MB (MiB).
    pub max_size_mb: f64,
    /// `split_request`
    pub suggested_action: String,
    pub contact_email: String,
    /// The request id (`X-Request-Id`), for support.
    pub support_event_id: String,
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
                    .description(Some(
                        "An API key: `sk_` + 32 hex (users) or `lce_` + 32 hex (organizations). Each \
                         operation names the scope it needs (`read`, `edit` or `admin`); a key made \
                         with scopes that lack it gets 403, a key made without scopes holds all three.",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "session",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "A web-app session token `ws_…` from POST /v1/auth/login (or its `redline_session` cookie, from the web app's own origin).",
                    ))
                    .build(),
            ),
        );
    }
}

/// What an API key reaches, a web-app session reaches too (`auth::ApiPrincipal`): every
/// operation secured by `bearer` also accepts `session`, and takes the optional
/// `Redline-Organization` header, with the 403 it gives a session whose user is not a member.
struct WebSessions;

impl Modify for WebSessions {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for item in openapi.paths.paths.values_mut() {
            for op in operations_mut(item) {
                let Some(security) = op.security.as_mut() else { continue };
                let by_key = security.iter().any(|r| serde_json::to_value(r).is_ok_and(|v| v.get("bearer").is_some()));
                if !by_key {
                    continue;
                }
                security.push(SecurityRequirement::new("session", Vec::<String>::new()));
                op.parameters.get_or_insert_with(Vec::new).push(organization_header());
                add_answer(op, "403", || {
                    json_response(
                        "An API key without the scope the operation needs, or a web-app session that named an organization its user is not a member of (Redline-Organization)",
                        error_ref(),
                    )
                });
            }
        }
    }
}

/// The operations of [`crate::idempotency::HONOURED`] take `Idempotency-Key`.
struct IdempotencyKeys;

impl Modify for IdempotencyKeys {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for (path, item) in openapi.paths.paths.iter_mut() {
            let methods = [
                (actix_web::http::Method::GET, &mut item.get),
                (actix_web::http::Method::PUT, &mut item.put),
                (actix_web::http::Method::POST, &mut item.post),
                (actix_web::http::Method::PATCH, &mut item.patch),
                (actix_web::http::Method::DELETE, &mut item.delete),
            ];
            for (method, op) in methods {
                let Some(op) = op.as_mut().filter(|_| crate::idempotency::honoured(&method, path)) else { continue };
                op.parameters.get_or_insert_with(Vec::new).push(
                    ParameterBuilder::new()
                        .name("Idempotency-Key")
                        .parameter_in(ParameterIn::Header)
                        .required(Required::False)
                        .description(Some(
                            "A key of the caller's (a UUID, say; 1 to 255 visible ASCII characters). A retry with the same key and the same request within 24 h gets the first answer again (header `Idempotent-Replayed: true`) without running or charging again, also while the first still runs; the same key with another request → 422.",
                        ))
                        .schema(Some(
                            ObjectBuilder::new()
                                .schema_type(Type::String)
                                .min_length(Some(1))
                                .max_length(Some(255))
                                .pattern(Some("^[!-~]([ -~]*[!-~])?$")),
                        ))
                        .build(),
                );
                add_answer(op, "400", || {
                    json_response(
                        "An Idempotency-Key that is not 1 to 255 visible ASCII characters, or sent twice",
                        error_ref(),
                    )
                });
                add_answer(op, "409", || {
                    json_response(
                        "The first request with this Idempotency-Key is still running after two minutes",
                        error_ref(),
                    )
                });
                add_answer(op, "422", || {
                    json_response("This Idempotency-Key went with another request (`loc` names the header), or the body is invalid", validation_ref())
                });
            }
        }
    }
}

fn organization_header() -> Parameter {
    ParameterBuilder::new()
        .name("Redline-Organization")
        .parameter_in(ParameterIn::Header)
        .required(Required::False)
        .description(Some(
            "With a web-app session: act for this organization (the user must be a member). API keys keep their own scope and ignore it.",
        ))
        .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
        .build()
}

/// Every operation of the document, mutable.
fn operations_mut(item: &mut PathItem) -> impl Iterator<Item = &mut Operation> {
    [&mut item.get, &mut item.put, &mut item.post, &mut item.patch, &mut item.delete]
        .into_iter()
        .filter_map(Option::as_mut)
}

fn json_response(description: &str, body: RefOr<Schema>) -> Response {
    ResponseBuilder::new()
        .description(description)
        .content("application/json", ContentBuilder::new().schema(Some(body)).build())
        .build()
}

fn error_ref() -> RefOr<Schema> {
    RefOr::Ref(Ref::from_schema_name(ErrorBody::name()))
}

fn validation_ref() -> RefOr<Schema> {
    RefOr::Ref(Ref::from_schema_name(ValidationErrorBody::name()))
}

fn too_large_ref() -> RefOr<Schema> {
    RefOr::Ref(Ref::from_schema_name(RequestTooLargeBody::name()))
}

/// Adds `status` unless the operation lists it already.
fn add_answer(op: &mut Operation, status: &str, answer: impl FnOnce() -> Response) {
    op.responses.responses.entry(status.to_owned()).or_insert_with(|| RefOr::T(answer()));
}

/// The schema of a session id: the rules [`redline_domain::SessionId::parse`] enforces.
pub fn session_id_schema() -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .max_length(Some(redline_domain::session::SESSION_ID_MAX_LEN))
        .pattern(Some(redline_domain::session::SESSION_ID_PATTERN))
        .description(Some("Letters, digits, `_`, `-` and `.` only; 1 to 256 characters."))
        .into()
}

/// The answers that follow from what an operation takes, added where its annotation does not
/// list them (an annotation's own entry, with its more precise description, wins):
///
/// - a credential (`security`): 401 from the `ApiPrincipal` or `WebUser` extractor;
/// - a request body: 400 when it cannot be read, 408 when it stalls, 413 over the cap, 415 for
///   a content type or a content coding the operation does not read, 422 when it is malformed
///   or invalid (`body::JsonBody`, `multipart`, `middleware::protocol`);
/// - a `session_id` parameter: the id's rules in its schema, and 422 when they are broken
///   (`routes::documents::path_session`);
/// - anything: 500 (a fixed text; the cause is in the log) and 503 when the database or the
///   file store cannot be reached (with `Retry-After`).
///
/// The 413 of an annotation that gives no body gets the request-size JSON.
struct CommonAnswers;

impl Modify for CommonAnswers {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for item in openapi.paths.paths.values_mut() {
            for op in operations_mut(item) {
                let secured = op.security.as_ref().is_some_and(|s| !s.is_empty());
                if secured {
                    add_answer(op, "401", || {
                        json_response("Missing, malformed, unknown or revoked credential", error_ref())
                    });
                }
                let mut validated = false;
                for parameter in op.parameters.iter_mut().flatten() {
                    validated |= constrain_session_id(parameter);
                }
                if op.request_body.is_some() {
                    validated = true;
                    add_body_answers(op);
                }
                if validated {
                    add_answer(op, "422", || json_response("A parameter or the body is invalid", validation_ref()));
                }
                add_answer(op, "500", || json_response("Unexpected error: `Internal server error`", error_ref()));
                add_answer(op, "503", || {
                    json_response(
                        "The database or the file store cannot be reached; retry after `Retry-After` seconds",
                        error_ref(),
                    )
                });
            }
        }
    }
}

/// Gives a `session_id` parameter the id's schema; whether it was one.
fn constrain_session_id(parameter: &mut Parameter) -> bool {
    let is_session =
        parameter.name == "session_id" && matches!(parameter.parameter_in, ParameterIn::Path | ParameterIn::Query);
    if is_session {
        parameter.schema = Some(session_id_schema());
    }
    is_session
}

fn add_body_answers(op: &mut Operation) {
    add_answer(op, "400", || json_response("The request body could not be read", error_ref()));
    add_answer(op, "408", || json_response("The request body stopped arriving", error_ref()));
    add_answer(op, "413", || json_response("The request body is over the cap", too_large_ref()));
    if let Some(RefOr::T(answer)) = op.responses.responses.get_mut("413") {
        if answer.content.is_empty() {
            answer
                .content
                .insert("application/json".to_owned(), ContentBuilder::new().schema(Some(too_large_ref())).build());
        }
    }
    let media = op.request_body.as_ref().map(media_types).unwrap_or_default();
    add_answer(op, "415", || {
        json_response(
            &format!("The body is not {media}, or has a `Content-Encoding` other than `identity`"),
            error_ref(),
        )
    });
}

fn media_types(body: &RequestBody) -> String {
    body.content.keys().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(" or ")
}

/// One OpenAPI link: an answer of `from` (an operation id) with `status` gives the values of
/// parameters of `to`.
struct LinkSpec {
    from: &'static str,
    status: &'static str,
    to: &'static str,
    parameters: &'static [(&'static str, &'static str)],
}

const fn link(
    from: &'static str,
    status: &'static str,
    to: &'static str,
    parameters: &'static [(&'static str, &'static str)],
) -> LinkSpec {
    LinkSpec { from, status, to, parameters }
}

const SESSION: &[(&str, &str)] = &[("session_id", "$response.body#/session_id")];
const SESSION_VERSION: &[(&str, &str)] =
    &[("session_id", "$response.body#/session_id"), ("version_id", "$response.body#/version_id")];
const JOB: &[(&str, &str)] = &[("job_id", "$response.body#/job_id")];
const ATTACHMENT: &[(&str, &str)] = &[("attachment_id", "$response.body#/attachment_id")];
const TEMPLATE: &[(&str, &str)] = &[("template_id", "$response.body#/template_id")];
const ORG: &[(&str, &str)] = &[("org_id", "$response.body#/org_id")];

/// The operations that take a session's id, fed by every answer that names a session.
const SESSION_READERS: [&str; 7] =
    ["get_document", "save_document", "list_versions", "history", "session_jobs", "list_attachments", "delete_session"];

/// Answers that name a session: (operation, status).
const SESSION_SOURCES: [(&str, &str); 5] = [
    ("upload_document", "200"),
    ("save_document", "200"),
    ("apply_template", "200"),
    ("upload_attachment", "202"),
    ("chat_async", "202"),
];

/// The other links, each an id created or listed by one operation and taken by another.
const LINKS: &[LinkSpec] = &[
    link("upload_document", "200", "get_version", SESSION_VERSION),
    link("get_document", "200", "get_version", SESSION_VERSION),
    link("save_document", "200", "get_version", SESSION_VERSION),
    link("apply_template", "200", "get_version", SESSION_VERSION),
    link(
        "list_versions",
        "200",
        "get_version",
        &[("session_id", "$response.body#/session_id"), ("version_id", "$response.body#/versions/0/version_id")],
    ),
    link("list_sessions", "200", "get_document", &[("session_id", "$response.body#/0/session_id")]),
    link("create_template", "201", "get_template", TEMPLATE),
    link("create_template", "201", "apply_template", TEMPLATE),
    link("create_template", "201", "delete_template", TEMPLATE),
    link("list_templates", "200", "get_template", &[("template_id", "$response.body#/templates/0/template_id")]),
    link("upload_attachment", "202", "attachment_status", JOB),
    link("upload_attachment", "202", "get_attachment", ATTACHMENT),
    link("upload_attachment", "202", "delete_attachment", ATTACHMENT),
    link("upload_attachment", "202", "search_attachments", SESSION),
    link("put_upload", "202", "attachment_status", JOB),
    link("put_upload", "202", "get_attachment", ATTACHMENT),
    link(
        "list_attachments",
        "200",
        "get_attachment",
        &[("attachment_id", "$response.body#/attachments/0/attachment_id")],
    ),
    link(
        "list_attachments",
        "200",
        "delete_attachment",
        &[("attachment_id", "$response.body#/attachments/0/attachment_id")],
    ),
    link("upload_url", "201", "get_attachment", ATTACHMENT),
    link("upload_url", "201", "delete_attachment", ATTACHMENT),
    link("chat", "200", "get_job", JOB),
    link("chat", "200", "history", SESSION),
    link("chat", "200", "get_document", SESSION),
    link("chat_async", "202", "get_job", JOB),
    link("chat_async", "202", "cancel_job", JOB),
    link("chat_async", "202", "job_events", JOB),
    link("create_key", "201", "revoke_key", &[("key_id", "$response.body#/key_id")]),
    link("create_org", "201", "get_org", ORG),
    link("create_org", "201", "list_members", ORG),
    link("create_org", "201", "add_member", ORG),
    link("create_org", "201", "list_org_keys", ORG),
    link("create_org", "201", "create_org_key", ORG),
    link(
        "create_org_key",
        "201",
        "revoke_org_key",
        &[("org_id", "$request.path.org_id"), ("key_id", "$response.body#/key_id")],
    ),
    link(
        "add_member",
        "201",
        "withdraw_invitation",
        &[("org_id", "$request.path.org_id"), ("invitation_id", "$response.body#/invitation_id")],
    ),
];

/// Every link of the document: [`LINKS`], and each of [`SESSION_SOURCES`] to each of
/// [`SESSION_READERS`].
fn all_links() -> Vec<LinkSpec> {
    let mut links: Vec<LinkSpec> = SESSION_SOURCES
        .iter()
        .flat_map(|(from, status)| SESSION_READERS.iter().map(move |to| link(from, status, to, SESSION)))
        .filter(|l| l.from != l.to)
        .collect();
    links.extend(LINKS.iter().map(|l| link(l.from, l.status, l.to, l.parameters)));
    links
}

/// Adds the [`all_links`] to the answers they start from, each as a `$ref` to its Link
/// object under `components.links`. (utoipa 5 writes a `Link`'s fields in snake case,
/// `operation_id`, which no tool reads; the objects are written here as JSON instead.) A
/// link whose operation or answer is missing is left out here and fails the
/// `links_name_what_exists` test.
struct Links;

impl Modify for Links {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let mut objects = serde_json::Map::new();
        for spec in all_links() {
            let Some(RefOr::T(answer)) = openapi
                .paths
                .paths
                .values_mut()
                .flat_map(operations_mut)
                .find(|op| op.operation_id.as_deref() == Some(spec.from))
                .and_then(|op| op.responses.responses.get_mut(spec.status))
            else {
                continue;
            };
            let name = format!("{}.{}.{}", spec.from, spec.status, spec.to);
            let parameters: serde_json::Map<String, serde_json::Value> =
                spec.parameters.iter().map(|(k, v)| ((*k).to_owned(), json!(v))).collect();
            objects.insert(name.clone(), json!({"operationId": spec.to, "parameters": parameters}));
            answer.links.insert(spec.to.to_owned(), RefOr::Ref(Ref::new(format!("#/components/links/{name}"))));
        }
        let components = openapi.components.get_or_insert_with(Default::default);
        components.extensions.get_or_insert_with(Default::default).insert("links".to_owned(), objects.into());
    }
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Redline",
        version = "2.0.0",
        description = "AI document editing: sessions hold sectioned HTML documents that an AI reads and edits in chat.\n\nEvery operation lists the statuses it answers. Not listed per operation, because they concern the request as a whole: 404 for a path the service does not have, 405 (with `Allow`) for a method a path does not answer, 400 for `Upgrade: websocket`, and 415 for a `Content-Encoding` other than `identity`."
    ),
    paths(
        sessions::list_sessions,
        sessions::update_session,
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
        invitations::list_invitations,
        invitations::withdraw_invitation,
        invitations::lookup_invitation,
        invitations::accept_invitation,
        invitations::decline_invitation,
        account::change_password,
        account::list_sign_in_sessions,
        account::sign_out_everywhere,
        account::sign_out_session,
        account::request_password_reset,
        account::confirm_password_reset,
        account::send_verification,
        account::verify_email,
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
        documents::restore_version,
        documents::add_image,
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
        chat::estimate,
        chat::approve,
        chat::history,
        chat::revert,
        jobs::list_jobs,
        jobs::session_jobs,
        jobs::get_job,
        jobs::cancel_job,
        jobs::job_events,
        webhooks::list,
        webhooks::create,
        webhooks::get,
        webhooks::update,
        webhooks::delete,
        webhooks::rotate,
        webhooks::deliveries,
        webhooks::resend,
    ),
    components(schemas(ErrorBody, ValidationErrorBody, ValidationItem, LocStep, RequestTooLargeBody)),
    modifiers(&Security, &WebSessions, &IdempotencyKeys, &CommonAnswers, &Links),
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
        (name = "webhooks", description = "Signed notifications of job, attachment and usage events (Standard Webhooks), their delivery log and redelivery"),
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use actix_web::body::to_bytes;
    use actix_web::ResponseError;
    use serde_json::Value;

    use super::*;
    use crate::error::ApiError;

    fn doc() -> Value {
        serde_json::to_value(document()).expect("the document as JSON")
    }

    fn operations(doc: &Value) -> Vec<(String, &Value)> {
        let mut found = Vec::new();
        for (path, item) in doc["paths"].as_object().expect("paths") {
            for (method, op) in item.as_object().expect("path item") {
                found.push((format!("{} {path}", method.to_uppercase()), op));
            }
        }
        found
    }

    #[test]
    fn operation_ids_are_unique() {
        let doc = doc();
        let mut seen = BTreeSet::new();
        for (name, op) in operations(&doc) {
            let id = op["operationId"].as_str().unwrap_or_else(|| panic!("{name} has no operationId"));
            assert!(seen.insert(id.to_owned()), "operationId {id} is used twice ({name})");
        }
    }

    /// The schema a `$ref` names, or the schema itself.
    fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
        match schema["$ref"].as_str().and_then(|r| r.strip_prefix("#/components/schemas/")) {
            Some(name) => &doc["components"]["schemas"][name],
            None => schema,
        }
    }

    #[test]
    fn links_name_what_exists() {
        let doc = doc();
        let ops = operations(&doc);
        let by_id = |id: &str| ops.iter().find(|(_, op)| op["operationId"] == id).map(|(_, op)| *op);
        for spec in all_links() {
            let from = by_id(spec.from).unwrap_or_else(|| panic!("no operation {}", spec.from));
            let to = by_id(spec.to).unwrap_or_else(|| panic!("no operation {}", spec.to));
            let answer = &from["responses"][spec.status];
            let reference = answer["links"][spec.to]["$ref"].as_str();
            let object = reference
                .and_then(|r| r.strip_prefix("#/components/links/"))
                .map(|name| &doc["components"]["links"][name])
                .unwrap_or_else(|| panic!("{} {} has no link to {}", spec.from, spec.status, spec.to));
            assert_eq!(object["operationId"], spec.to, "{reference:?}");
            let taken: Vec<&str> =
                to["parameters"].as_array().into_iter().flatten().filter_map(|p| p["name"].as_str()).collect();
            for (name, expression) in spec.parameters {
                assert!(taken.contains(name), "{} takes no parameter {name}", spec.to);
                // The first step of a body pointer is a property of the answer's schema.
                let Some(pointer) = expression.strip_prefix("$response.body#/") else { continue };
                let schema = resolve(&doc, &answer["content"]["application/json"]["schema"]);
                if schema.is_null() {
                    continue; // an answer described in prose: nothing to check against
                }
                let step = pointer.split('/').next().unwrap_or_default();
                let found = if schema["type"] == "array" {
                    step.parse::<usize>().is_ok()
                } else {
                    schema["properties"].get(step).is_some()
                };
                assert!(found, "{} {}'s body has no {step} for {}", spec.from, spec.status, spec.to);
            }
        }
    }

    #[test]
    fn secured_operations_answer_401_and_bodies_422() {
        let doc = doc();
        for (name, op) in operations(&doc) {
            let responses = &op["responses"];
            if op["security"].as_array().is_some_and(|s| !s.is_empty()) {
                assert!(responses["401"].is_object(), "{name} lacks 401");
            }
            if op["requestBody"].is_object() {
                for status in ["413", "415", "422"] {
                    assert!(responses[status]["content"].is_object(), "{name} lacks {status} with a body");
                }
            }
            for status in ["500", "503"] {
                assert!(responses[status].is_object(), "{name} lacks {status}");
            }
        }
    }

    async fn body_of(error: ApiError) -> Value {
        let bytes = to_bytes(error.error_response().into_body()).await.expect("the error's body");
        serde_json::from_slice(&bytes).expect("a JSON body")
    }

    /// The keys of `body` are the properties of the schema `name`, and its required ones.
    fn has_the_fields_of(doc: &Value, name: &str, body: &Value) {
        let schema = &doc["components"]["schemas"][name];
        let documented: BTreeSet<&str> =
            schema["properties"].as_object().expect("properties").keys().map(String::as_str).collect();
        let sent: BTreeSet<&str> = body.as_object().expect("an object").keys().map(String::as_str).collect();
        assert_eq!(sent, documented, "{name}");
    }

    #[actix_web::test]
    async fn error_bodies_are_the_documented_schemas() {
        let doc = doc();
        let too_large = ApiError::PayloadTooLarge {
            request_bytes: 11,
            max_bytes: 10,
            contact_email: "a@b.c".into(),
            support_event_id: "r".into(),
        };
        has_the_fields_of(&doc, "RequestTooLargeBody", &body_of(too_large).await);
        has_the_fields_of(&doc, "ErrorBody", &body_of(ApiError::NotFound("x".into())).await);
        let item = ValidationItem::new("json_invalid", vec![json!("body"), json!(7)], "m", json!({}))
            .with_ctx(json!({"error": "e"}));
        let body = body_of(ApiError::Validation(vec![item])).await;
        has_the_fields_of(&doc, "ValidationItem", &body["detail"][0]);
        // `loc` mixes names and positions; `input` is any JSON.
        let loc = &doc["components"]["schemas"]["ValidationItem"]["properties"]["loc"]["items"];
        assert_eq!(resolve(&doc, loc)["oneOf"].as_array().map(Vec::len), Some(2), "{loc}");
        let input = &doc["components"]["schemas"]["ValidationItem"]["properties"]["input"];
        assert!(input.get("type").is_none(), "input is any JSON: {input}");
    }
}

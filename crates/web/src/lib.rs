//! The web app: plain ES modules under `assets/` (no build step), embedded into the binary at
//! compile time, and the actix service that serves them beside the API.
//!
//! - **Pages:** every path of the app (`PAGES`) answers the same `index.html`; the app's router
//!   reads the path. It is revalidated on each load (`no-cache` and a strong `ETag`).
//! - **The API reference:** `/docs` answers `reference.html`, where Swagger UI (vendored in
//!   `assets/vendor/swagger-ui/`, see `THIRD_PARTY.md`) shows `/openapi.json`, which the API
//!   serves. It is a page of its own: its scripts (`REFERENCE_SCRIPTS`) are classic scripts that
//!   no page of the app loads or preloads, and it gets the same headers as every other answer.
//! - **Assets:** under `/assets/<version>/…`, where the version is a hash of every asset, so a
//!   URL never changes meaning: they are cached for a year as `immutable`, with strong ETags.
//!   An old version's URL answers 404 rather than another version's bytes.
//! - **Security headers** on every answer of this service: a Content-Security-Policy that runs
//!   no inline script but the import map (allowed by its hash) and no `eval`, refuses framing
//!   (`frame-ancestors 'none'`), and lets the page talk to its own origin only; plus
//!   `X-Content-Type-Options`, `Referrer-Policy: no-referrer` (a claim link's token never
//!   leaves in a `Referer`), `X-Frame-Options` and `Cross-Origin-Opener-Policy`.
//!
//! Invariant: this crate serves files; it knows nothing of the API but the paths it avoids and
//! the address of the OpenAPI document.

use std::collections::HashMap;
use std::sync::Arc;

use actix_web::http::header::{self, HeaderValue};
use actix_web::web::{self, Bytes};
use actix_web::{HttpRequest, HttpResponse};
use sha2::{Digest, Sha256};

/// Every file under `assets/`, by its path there.
static ASSETS: &[(&str, &[u8])] = include!(concat!(env!("OUT_DIR"), "/assets.rs"));

/// The paths of the app's pages (actix patterns). Each answers `index.html`.
pub const PAGES: &[&str] = &[
    "/",
    "/signin",
    "/signup",
    "/forgot-password",
    "/reset-password",
    "/verify-email",
    "/documents",
    "/documents/{session_id}",
    "/usage",
    "/settings",
    "/settings/keys",
    "/settings/organizations",
    "/settings/organizations/{org_id}",
    "/settings/security",
    "/settings/webhooks",
    "/invitations",
    "/claim/{token}",
];

/// The path of the API reference.
pub const REFERENCE_PATH: &str = "/docs";

/// The page templates under `assets/`: served as pages, never as assets.
const APP_TEMPLATE: &str = "index.html";
const REFERENCE_TEMPLATE: &str = "reference.html";

/// The scripts of the API reference page, which no page of the app preloads: Swagger UI's
/// bundle (about 1.7 MB, not an ES module) and the script that starts it.
const REFERENCE_SCRIPTS: &[&str] = &["reference.js", "vendor/swagger-ui/swagger-ui-bundle.js"];

/// The page templates' placeholder for the versioned asset base (`/assets/<version>`).
const BASE_PLACEHOLDER: &str = "{{assets}}";

/// The page template's placeholder for a `modulepreload` link to every module, so the browser
/// fetches them at once instead of one import level after another.
const PRELOAD_PLACEHOLDER: &str = "{{modulepreload}}";

/// One file as served. The body is shared, not copied, by each answer.
struct Asset {
    body: Bytes,
    etag: HeaderValue,
    content_type: &'static str,
}

impl Asset {
    fn new(body: Bytes, content_type: &'static str) -> Self {
        let digest = Sha256::digest(&body);
        let etag =
            HeaderValue::from_str(&format!("\"{}\"", &hex::encode(digest)[..32])).expect("hex is a header value");
        Self { body, etag, content_type }
    }
}

/// The web app as served: the pages, the assets and the policy, computed once at start.
pub struct WebApp {
    version: String,
    page: Asset,
    reference: Asset,
    assets: HashMap<&'static str, Asset>,
    csp: HeaderValue,
}

impl Default for WebApp {
    fn default() -> Self {
        Self::new()
    }
}

impl WebApp {
    pub fn new() -> Self {
        let mut all = Sha256::new();
        for (name, body) in ASSETS {
            all.update((name.len() as u64).to_le_bytes());
            all.update(name.as_bytes());
            all.update((body.len() as u64).to_le_bytes());
            all.update(body);
        }
        let version = hex::encode(all.finalize())[..16].to_owned();
        let base = format!("/assets/{version}");
        let preload: String = ASSETS
            .iter()
            .filter(|(name, _)| is_app_module(name))
            .map(|(name, _)| format!("<link rel=\"modulepreload\" href=\"{base}/{name}\">\n"))
            .collect();
        let page_html =
            template(APP_TEMPLATE).replace(PRELOAD_PLACEHOLDER, preload.trim_end()).replace(BASE_PLACEHOLDER, &base);
        let reference_html = template(REFERENCE_TEMPLATE).replace(BASE_PLACEHOLDER, &base);
        // The reference page has no inline script: the app's policy, import map hash and all,
        // serves it as it is.
        let csp = content_security_policy(&import_map_hashes(&page_html));
        let assets = ASSETS
            .iter()
            .filter(|(name, _)| ![APP_TEMPLATE, REFERENCE_TEMPLATE].contains(name))
            .map(|(name, body)| (*name, Asset::new(Bytes::from_static(body), content_type(name))))
            .collect();
        Self {
            version,
            page: Asset::new(Bytes::from(page_html), "text/html; charset=utf-8"),
            reference: Asset::new(Bytes::from(reference_html), "text/html; charset=utf-8"),
            assets,
            csp: HeaderValue::from_str(&csp).expect("the policy is ASCII"),
        }
    }

    /// The hash in the asset URLs.
    pub fn version(&self) -> &str {
        &self.version
    }

    fn answer(&self, req: &HttpRequest, asset: &Asset, cache_control: &'static str) -> HttpResponse {
        let mut res = if not_modified(req, &asset.etag) {
            HttpResponse::NotModified().finish()
        } else {
            HttpResponse::Ok().content_type(asset.content_type).body(asset.body.clone())
        };
        let headers = res.headers_mut();
        headers.insert(header::ETAG, asset.etag.clone());
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache_control));
        self.secure(headers);
        res
    }

    fn secure(&self, headers: &mut actix_web::http::header::HeaderMap) {
        headers.insert(header::CONTENT_SECURITY_POLICY, self.csp.clone());
        headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
        headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
        headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
        headers.insert(
            header::HeaderName::from_static("cross-origin-opener-policy"),
            HeaderValue::from_static("same-origin"),
        );
        headers.insert(
            header::HeaderName::from_static("permissions-policy"),
            HeaderValue::from_static("camera=(), microphone=(), geolocation=(), payment=()"),
        );
    }
}

/// The text of a page template under `assets/` (empty when there is none).
fn template(name: &str) -> String {
    ASSETS
        .iter()
        .find(|(asset, _)| *asset == name)
        .map(|(_, body)| String::from_utf8_lossy(body).into_owned())
        .unwrap_or_default()
}

/// Whether an asset is an ES module of the app, preloaded by its pages: every script but the
/// entry module (`app.js`, loaded by the page itself) and the API reference's.
fn is_app_module(name: &str) -> bool {
    (name.ends_with(".js") || name.ends_with(".mjs")) && name != "app.js" && !REFERENCE_SCRIPTS.contains(&name)
}

/// The policy of every answer: scripts from this origin, plus the inline import map(s) by
/// hash; no `eval`, no inline style attribute, no plugin, no framing, requests to this origin.
fn content_security_policy(import_map_hashes: &[String]) -> String {
    let mut script = String::from("'self'");
    for hash in import_map_hashes {
        script.push_str(&format!(" 'sha256-{hash}'"));
    }
    format!(
        "default-src 'none'; script-src {script}; style-src 'self'; img-src 'self' data: blob:; \
         connect-src 'self'; font-src 'self'; manifest-src 'self'; form-action 'self'; base-uri 'none'; \
         frame-ancestors 'none'"
    )
}

/// Base64 SHA-256 of the text of each `<script type="importmap">` of the page, as CSP wants it.
fn import_map_hashes(page: &str) -> Vec<String> {
    const OPEN: &str = "<script type=\"importmap\">";
    let mut hashes = Vec::new();
    let mut rest = page;
    while let Some(start) = rest.find(OPEN) {
        let after = &rest[start + OPEN.len()..];
        let Some(end) = after.find("</script>") else { break };
        hashes.push(base64(&Sha256::digest(&after.as_bytes()[..end])));
        rest = &after[end..];
    }
    hashes
}

/// Standard base64 with padding (what CSP hash sources use).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn content_type(name: &str) -> &'static str {
    match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("json") => "application/json",
        Some("txt" | "md") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// Whether `If-None-Match` names this strong ETag (or `*`).
fn not_modified(req: &HttpRequest, etag: &HeaderValue) -> bool {
    let Ok(etag) = etag.to_str() else { return false };
    req.headers()
        .get_all(header::IF_NONE_MATCH)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .any(|candidate| candidate == "*" || candidate.trim_start_matches("W/") == etag)
}

async fn page(req: HttpRequest, app: web::Data<WebApp>) -> HttpResponse {
    app.answer(&req, &app.page, "no-cache")
}

async fn reference(req: HttpRequest, app: web::Data<WebApp>) -> HttpResponse {
    app.answer(&req, &app.reference, "no-cache")
}

async fn asset(req: HttpRequest, app: web::Data<WebApp>, path: web::Path<(String, String)>) -> HttpResponse {
    let (version, name) = path.into_inner();
    match app.assets.get(name.as_str()) {
        Some(asset) if version == app.version => app.answer(&req, asset, "public, max-age=31536000, immutable"),
        _ => {
            let mut res = HttpResponse::NotFound().content_type("application/json").body(r#"{"detail":"Not Found"}"#);
            app.secure(res.headers_mut());
            res
        }
    }
}

/// Registers the pages, the API reference and the assets. The app is computed once, here, and shared by every
/// worker.
pub fn service() -> impl Fn(&mut web::ServiceConfig) + Clone + Send + Sync + 'static {
    let app = web::Data::from(Arc::new(WebApp::new()));
    move |cfg: &mut web::ServiceConfig| {
        cfg.app_data(app.clone());
        for path in PAGES {
            cfg.route(path, web::get().to(page));
        }
        cfg.route(REFERENCE_PATH, web::get().to(reference));
        cfg.route("/assets/{version}/{name:.+}", web::get().to(asset));
    }
}

#[cfg(test)]
mod tests;

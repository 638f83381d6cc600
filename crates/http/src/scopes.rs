//! What each API-key endpoint needs of a key: the scope its OpenAPI `security` requirement
//! names (`security(("bearer" = ["edit"]))` in its annotation). The annotation is the one
//! place a route's scope is written; this module reads it out of the generated document once,
//! and [`ApiPrincipal`](crate::auth::ApiPrincipal) holds every restricted key to it.

use std::collections::HashMap;
use std::sync::LazyLock;

use actix_web::http::Method;
use redline_domain::Scope;

/// `(method, path pattern)` → the scope the operation needs.
static NEEDED: LazyLock<HashMap<(String, String), Scope>> = LazyLock::new(|| {
    let doc = serde_json::to_value(crate::openapi::document()).unwrap_or_default();
    let mut needed = HashMap::new();
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        for (method, op) in item.as_object().into_iter().flatten() {
            let scope = op["security"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|requirement| requirement["bearer"].as_array())
                .flatten()
                .filter_map(|s| s.as_str().and_then(Scope::parse))
                .next();
            if let Some(scope) = scope {
                needed.insert((method.to_uppercase(), path.clone()), scope);
            }
        }
    }
    needed
});

/// The scope an API key needs for `method` on the route `pattern` (as registered, e.g.
/// `/v1/documents/{session_id}`); `None` for an operation the document names no scope for,
/// which only a key holding every scope reaches: a route that forgot its scope is closed to
/// restricted keys, not open to them.
pub fn needed(method: &Method, pattern: &str) -> Option<Scope> {
    let method = if method == Method::HEAD { "GET" } else { method.as_str() };
    NEEDED.get(&(method.to_owned(), pattern.to_owned())).copied()
}

/// Whether a credential holding `scopes` may call `method` on `pattern`; else the 403 detail.
pub fn check(scopes: redline_domain::Scopes, method: &Method, pattern: &str) -> Result<(), String> {
    match needed(method, pattern) {
        Some(scope) if scopes.allows(scope) => Ok(()),
        None if scopes.is_full() => Ok(()),
        Some(scope) => Err(lacking(scope, method, pattern)),
        None => Err(format!(
            "This API key holds only some scopes, and {} {pattern} is open only to keys holding all of them.",
            method.as_str()
        )),
    }
}

/// The 403 detail of a key without the scope it needs.
pub fn lacking(scope: Scope, method: &Method, pattern: &str) -> String {
    format!(
        "This API key lacks the '{}' scope, which {} {pattern} needs. Use a key made with it (POST /v1/users/me/api-keys {{\"scopes\": [\"{}\"]}}).",
        scope.as_str(),
        method.as_str(),
        scope.as_str()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_api_key_operation_names_one_known_scope() {
        let doc = serde_json::to_value(crate::openapi::document()).expect("the document as JSON");
        let mut seen = 0;
        for (path, item) in doc["paths"].as_object().expect("paths") {
            for (method, op) in item.as_object().expect("path item") {
                let Some(requirements) = op["security"].as_array() else { continue };
                for bearer in requirements.iter().filter_map(|r| r["bearer"].as_array()) {
                    let names: Vec<&str> = bearer.iter().filter_map(|s| s.as_str()).collect();
                    assert!(
                        names.len() == 1 && Scope::parse(names[0]).is_some(),
                        "{method} {path} names {names:?}: an API-key operation names exactly one of read, edit, admin"
                    );
                    seen += 1;
                }
            }
        }
        assert!(seen > 30, "{seen} API-key operations");
        assert_eq!(needed(&Method::GET, "/v1/documents/{session_id}"), Some(Scope::Read));
        assert_eq!(needed(&Method::HEAD, "/v1/documents/{session_id}"), Some(Scope::Read));
        assert_eq!(needed(&Method::PUT, "/v1/documents/{session_id}"), Some(Scope::Edit));
        assert_eq!(needed(&Method::POST, "/v1/nowhere"), None);
        let admin = redline_domain::Scopes::of([Scope::Admin]);
        assert!(check(admin, &Method::POST, "/v1/nowhere").is_err(), "an admin key is not every scope");
        assert!(check(redline_domain::Scopes::FULL, &Method::POST, "/v1/nowhere").is_ok());
    }
}

//! `docs/openapi.json`: generated from the handlers' annotations, committed, and checked fresh.

use std::fs;
use std::path::{Path, PathBuf};

/// Where the committed document lives, relative to the workspace root.
pub const DOCUMENT_PATH: &str = "docs/openapi.json";

/// The message of a stale (or missing) committed document.
pub const STALE_MESSAGE: &str = "docs/openapi.json is stale: run `cargo xtask openapi` and commit";

pub fn document_path(root: &Path) -> PathBuf {
    root.join(DOCUMENT_PATH)
}

/// The document as the code describes it today, refused if it is not an OpenAPI document
/// (`document_json` falls back to an `{"error": ...}` object when serialisation fails).
pub fn generate() -> Result<String, String> {
    let json = redline_http::openapi::document_json();
    validate(&json)?;
    Ok(json)
}

fn validate(json: &str) -> Result<(), String> {
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("the generated OpenAPI document is not JSON: {e}"))?;
    if value.get("openapi").and_then(serde_json::Value::as_str).is_none() {
        return Err(format!(
            "the generated OpenAPI document has no `openapi` version field: {}",
            json.lines().take(3).collect::<Vec<_>>().join(" ")
        ));
    }
    Ok(())
}

/// Writes the document to `docs/openapi.json` under `root`; returns the path written.
pub fn write(root: &Path) -> Result<PathBuf, String> {
    let json = generate()?;
    let path = document_path(root);
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    fs::write(&path, json).map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(path)
}

/// Fails with [`STALE_MESSAGE`] (and where the two first differ) when the committed document is
/// missing or differs from the generated one.
pub fn check_fresh(root: &Path) -> Result<(), String> {
    let generated = generate()?;
    let path = document_path(root);
    let committed = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => return Err(format!("{STALE_MESSAGE} ({}: {e})", path.display())),
    };
    compare(&committed, &generated)
}

/// Compares a committed document with the generated one. Line endings are normalised, so a
/// checkout with CRLF line endings is not reported stale.
pub fn compare(committed: &str, generated: &str) -> Result<(), String> {
    let committed = committed.replace("\r\n", "\n");
    if committed == generated {
        return Ok(());
    }
    Err(format!("{STALE_MESSAGE} ({})", first_difference(&committed, generated)))
}

fn first_difference(committed: &str, generated: &str) -> String {
    let mut committed_lines = committed.lines();
    let mut generated_lines = generated.lines();
    let mut number = 1;
    loop {
        match (committed_lines.next(), generated_lines.next()) {
            (Some(c), Some(g)) if c == g => number += 1,
            (Some(c), Some(g)) => {
                return format!("first difference at line {number}: committed `{}`, generated `{}`", c.trim(), g.trim())
            }
            (Some(_), None) => return format!("the committed file has extra lines from line {number}"),
            (None, Some(_)) => return format!("the committed file ends early at line {number}"),
            (None, None) => return "the files differ in their final newline".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_documents_are_fresh() {
        assert_eq!(compare("{\n  \"a\": 1\n}\n", "{\n  \"a\": 1\n}\n"), Ok(()));
    }

    #[test]
    fn crlf_checkout_is_fresh() {
        assert_eq!(compare("{\r\n  \"a\": 1\r\n}\r\n", "{\n  \"a\": 1\n}\n"), Ok(()));
    }

    #[test]
    fn a_changed_line_is_stale_and_located() {
        let err = compare("{\n  \"a\": 1\n}\n", "{\n  \"a\": 2\n}\n").unwrap_err();
        assert!(err.starts_with(STALE_MESSAGE), "{err}");
        assert!(err.contains("line 2"), "{err}");
    }

    #[test]
    fn a_missing_final_newline_is_stale() {
        let err = compare("{}", "{}\n").unwrap_err();
        assert!(err.starts_with(STALE_MESSAGE), "{err}");
    }

    #[test]
    fn added_and_removed_lines_are_stale() {
        assert!(compare("{\n}\n", "{\n  \"a\": 1\n}\n").is_err());
        assert!(compare("{\n  \"a\": 1\n}\n", "{\n}\n").is_err());
    }

    #[test]
    fn a_missing_file_is_stale() {
        let root = std::env::temp_dir().join(format!("xtask-no-openapi-{}", std::process::id()));
        let err = check_fresh(&root).unwrap_err();
        assert!(err.starts_with(STALE_MESSAGE), "{err}");
    }

    #[test]
    fn the_fallback_error_object_is_refused() {
        assert!(validate("{\"error\": \"boom\"}\n").is_err());
        assert!(validate("not json").is_err());
        assert!(validate("{\"openapi\": \"3.1.0\"}\n").is_ok());
    }

    #[test]
    fn the_generated_document_is_valid_and_ends_with_a_newline() {
        let json = generate().expect("the document generates");
        assert!(json.ends_with('\n'));
    }
}

//! `cargo xtask`: code generation and the repository's own checks.
//!
//! The logic lives here, in a library, so that the unit tests exercise it on in-memory inputs and
//! `tests/workspace.rs` runs it against the real workspace: `cargo test --release --workspace`
//! then fails on a wrong dependency arrow, a stale `docs/openapi.json`, a forbidden construct or
//! a file grown too long, the same as `cargo xtask check`. The unused-dependency check runs an
//! external tool (`cargo machete`), so it is `cargo xtask check`'s and `scripts/test.sh`'s.

pub mod arrows;
pub mod file_size;
pub mod openapi;
pub mod repo_rules;
pub mod source_rules;

use std::path::{Path, PathBuf};

/// The workspace root: the parent of this crate's directory.
pub fn workspace_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir.parent().map(Path::to_path_buf).unwrap_or_else(|| manifest_dir.to_path_buf())
}

/// The outcome of one check: its name and every problem it found (none: it passed).
#[derive(Debug)]
pub struct CheckReport {
    pub name: &'static str,
    pub problems: Vec<String>,
}

impl CheckReport {
    pub fn passed(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Runs every check of `cargo xtask check` against the workspace at `root`.
pub fn run_all_checks(root: &Path) -> Vec<CheckReport> {
    vec![
        CheckReport {
            name: "openapi: docs/openapi.json is up to date",
            problems: openapi::check_fresh(root).err().into_iter().collect(),
        },
        CheckReport {
            name: "arrows: crate dependencies follow the hexagonal architecture",
            problems: match arrows::check_workspace(root) {
                Ok(violations) => violations.iter().map(ToString::to_string).collect(),
                Err(e) => vec![e],
            },
        },
        CheckReport {
            name: "source: no ignored tests, no todo!/unimplemented! in non-test code",
            problems: match source_rules::check_workspace(root) {
                Ok(findings) => findings.iter().map(ToString::to_string).collect(),
                Err(e) => vec![e],
            },
        },
        CheckReport {
            name: "paths: no test reads a path outside the repository",
            problems: match repo_rules::check_test_paths(root) {
                Ok(escapes) => escapes.iter().map(ToString::to_string).collect(),
                Err(e) => vec![e],
            },
        },
        CheckReport {
            name: "readme: the configuration table lists every variable the binary reads",
            problems: repo_rules::check_configuration_table(root).unwrap_or_else(|e| vec![e]),
        },
        CheckReport {
            name: "file size: no .rs file over 1,000 lines but the allowlisted, which only shrink",
            problems: match file_size::check_workspace(root) {
                Ok(problems) => problems.iter().map(ToString::to_string).collect(),
                Err(e) => vec![e],
            },
        },
        CheckReport {
            name: "dependencies: no crate declares one it does not use (cargo-machete)",
            problems: unused_dependencies(root),
        },
    ]
}

/// What `cargo machete` finds in the workspace at `root`: nothing when every declared
/// dependency is used. The tool is the repository's test set-up's (`scripts/setup-tests.sh`
/// installs it); without it the check fails and says how to get it.
fn unused_dependencies(root: &Path) -> Vec<String> {
    // The tool's own binary, given the folder: run as `cargo machete` from under `cargo run`,
    // it takes its subcommand's name for the folder to analyse.
    match std::process::Command::new("cargo-machete").arg(root).output() {
        Ok(out) if out.status.success() => Vec::new(),
        Ok(out) => {
            let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            let found: Vec<String> =
                text.lines().filter(|l| !l.trim().is_empty()).map(|l| l.trim().to_owned()).collect();
            if found.is_empty() {
                vec![format!("cargo machete failed ({})", out.status)]
            } else {
                found
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => vec![
            "cargo-machete is not installed: run scripts/setup-tests.sh (or `cargo install cargo-machete --locked`)"
                .to_owned(),
        ],
        Err(e) => vec![format!("cannot run cargo-machete: {e}")],
    }
}

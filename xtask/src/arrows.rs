//! The dependency arrows of the hexagonal architecture, checked on the crates' manifests.
//!
//! | crate                 | may depend on (of ours)  |
//! |-----------------------|--------------------------|
//! | `redline-domain`      | nothing                  |
//! | `redline-ports`       | domain                   |
//! | `redline-core`        | domain, ports            |
//! | an adapter (any other, e.g. `redline-storage`, `redline-llm`) | domain, ports |
//! | `redline-http`        | domain, ports, core      |
//! | `redline-app`         | anything                 |
//! | test support ([`TEST_SUPPORT`], e.g. `redline-fake-llm`) | nothing |
//!
//! `redline-domain` also depends on no infrastructure crate ([`DOMAIN_FORBIDDEN_EXTERNAL`]).
//! No crate, not even the app, depends on test support: a fake is for tests, so only
//! `[dev-dependencies]` name it, and no shipped binary carries one.
//! Only `[dependencies]` (and their `[target.'cfg(..)'.dependencies]` variants) count:
//! a test may reach further than the code it tests.

use std::collections::BTreeSet;
use std::fmt;
use std::fs;
use std::path::Path;

use toml::{Table, Value};

pub const DOMAIN: &str = "redline-domain";
pub const PORTS: &str = "redline-ports";
pub const CORE: &str = "redline-core";
pub const HTTP: &str = "redline-http";
pub const APP: &str = "redline-app";
pub const FAKE_LLM: &str = "redline-fake-llm";

/// Test support: stand-ins for the outside world (the OpenAI-wire fake), used by tests and, as
/// binaries, by the browser tests. They are not a ring of the hexagon but outside it.
pub const TEST_SUPPORT: &[&str] = &[FAKE_LLM];

/// Why a test-support crate is nobody's normal dependency.
pub const TEST_SUPPORT_RATIONALE: &str =
    "test support is for tests: only [dev-dependencies] name it, so no shipped binary carries a fake";

/// The prefix of our crates' names.
pub const INTERNAL_PREFIX: &str = "redline-";

/// Infrastructure the domain never depends on: web, database, async runtime, network, formats.
pub const DOMAIN_FORBIDDEN_EXTERNAL: &[&str] = &[
    "actix-web",
    "actix-http",
    "diesel",
    "diesel-async",
    "tokio",
    "tokio-postgres",
    "reqwest",
    "object_store",
    "lettre",
    "html5ever",
    "pdf-extract",
    "zip",
    "quick-xml",
    "sqlx",
    "hyper",
];

/// The place of a crate in the architecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Domain,
    Ports,
    Core,
    Http,
    App,
    /// A stand-in for the outside world, for tests ([`TEST_SUPPORT`]).
    TestSupport,
    /// Any other crate of ours: storage, llm, convert, blobs, mail...
    Adapter,
}

impl Role {
    pub fn of(crate_name: &str) -> Role {
        match crate_name {
            DOMAIN => Role::Domain,
            PORTS => Role::Ports,
            CORE => Role::Core,
            HTTP => Role::Http,
            APP => Role::App,
            _ if TEST_SUPPORT.contains(&crate_name) => Role::TestSupport,
            _ => Role::Adapter,
        }
    }

    /// The crates of ours this role may depend on; `None`: any.
    pub fn allowed_internal(self) -> Option<&'static [&'static str]> {
        match self {
            Role::Domain | Role::TestSupport => Some(&[]),
            Role::Ports => Some(&[DOMAIN]),
            Role::Core | Role::Adapter => Some(&[DOMAIN, PORTS]),
            Role::Http => Some(&[DOMAIN, PORTS, CORE]),
            Role::App => None,
        }
    }

    /// Why a crate of this role may not have a given arrow.
    pub fn rationale(self) -> &'static str {
        match self {
            Role::Domain => {
                "domain depends on nothing of ours and no infrastructure: it is the pure rules and types"
            }
            Role::Ports => {
                "ports name only domain types: a port is a contract, never a use case or an implementation"
            }
            Role::Core => {
                "core orchestrates ports over domain types: it never reaches an adapter, the HTTP shell or the app"
            }
            Role::Adapter => {
                "an adapter implements ports over domain types: it never reaches core, the HTTP shell, the app or another adapter"
            }
            Role::Http => {
                "the HTTP shell calls core with domain and port types: adapters are wired in by the app only"
            }
            Role::App => "the app wires everything together and may depend on anything",
            Role::TestSupport => {
                "test support fakes the world outside Redline: it speaks the outside's protocol and knows none of our crates"
            }
        }
    }
}

/// One crate's normal dependencies, by package name (renames resolved).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CrateDeps {
    pub name: String,
    pub dependencies: BTreeSet<String>,
}

impl CrateDeps {
    pub fn new(name: &str, dependencies: &[&str]) -> CrateDeps {
        CrateDeps { name: name.to_owned(), dependencies: dependencies.iter().map(|d| (*d).to_owned()).collect() }
    }
}

/// A wrong arrow: `krate` depends on `dependency`, and why it must not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub krate: String,
    pub dependency: String,
    pub rationale: &'static str,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} -> {}: {}", self.krate, self.dependency, self.rationale)
    }
}

/// Whether a dependency is one of our crates: the `redline-` prefix, or a crate of the workspace.
fn is_internal(dependency: &str, workspace_crates: &BTreeSet<&str>) -> bool {
    dependency.starts_with(INTERNAL_PREFIX) || workspace_crates.contains(dependency)
}

/// Every wrong arrow among `crates`, in the order of the crates and their dependencies.
pub fn check(crates: &[CrateDeps]) -> Vec<Violation> {
    let workspace_crates: BTreeSet<&str> = crates.iter().map(|c| c.name.as_str()).collect();
    let mut violations = Vec::new();
    for krate in crates {
        let role = Role::of(&krate.name);
        for dependency in &krate.dependencies {
            let rationale = if TEST_SUPPORT.contains(&dependency.as_str()) {
                Some(TEST_SUPPORT_RATIONALE)
            } else if is_internal(dependency, &workspace_crates) {
                match role.allowed_internal() {
                    Some(allowed) => (!allowed.contains(&dependency.as_str())).then(|| role.rationale()),
                    None => None,
                }
            } else {
                (role == Role::Domain && DOMAIN_FORBIDDEN_EXTERNAL.contains(&dependency.as_str()))
                    .then(|| role.rationale())
            };
            if let Some(rationale) = rationale {
                violations.push(Violation { krate: krate.name.clone(), dependency: dependency.clone(), rationale });
            }
        }
    }
    violations
}

/// Parses a crate's manifest. `workspace_dependencies` is the root's `[workspace.dependencies]`,
/// to resolve a `package = ".."` rename behind `dep.workspace = true`.
pub fn parse_manifest(manifest: &str, workspace_dependencies: &Table) -> Result<CrateDeps, String> {
    let manifest: Table = manifest.parse().map_err(|e| format!("not TOML: {e}"))?;
    let name = manifest
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(Value::as_str)
        .ok_or("no [package] name")?
        .to_owned();

    let mut sections: Vec<&Table> = Vec::new();
    if let Some(deps) = manifest.get("dependencies").and_then(Value::as_table) {
        sections.push(deps);
    }
    if let Some(targets) = manifest.get("target").and_then(Value::as_table) {
        for target in targets.values() {
            if let Some(deps) = target.get("dependencies").and_then(Value::as_table) {
                sections.push(deps);
            }
        }
    }

    let mut dependencies = BTreeSet::new();
    for section in sections {
        for (key, spec) in section {
            dependencies.insert(package_name(key, spec, workspace_dependencies));
        }
    }
    Ok(CrateDeps { name, dependencies })
}

/// The package a dependency entry names: its `package` field, the workspace entry's, or its key.
fn package_name(key: &str, spec: &Value, workspace_dependencies: &Table) -> String {
    let renamed = |spec: &Value| spec.get("package").and_then(Value::as_str).map(str::to_owned);
    if let Some(name) = renamed(spec) {
        return name;
    }
    let inherits = spec.get("workspace").and_then(Value::as_bool) == Some(true);
    if inherits {
        if let Some(name) = workspace_dependencies.get(key).and_then(renamed) {
            return name;
        }
    }
    key.to_owned()
}

/// Reads `crates/*/Cargo.toml` under `root` (sorted by directory).
pub fn read_workspace(root: &Path) -> Result<Vec<CrateDeps>, String> {
    let root_manifest = root.join("Cargo.toml");
    let root_text =
        fs::read_to_string(&root_manifest).map_err(|e| format!("reading {}: {e}", root_manifest.display()))?;
    let root_table: Table = root_text.parse().map_err(|e| format!("{}: not TOML: {e}", root_manifest.display()))?;
    let workspace_dependencies = root_table
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(Value::as_table)
        .cloned()
        .unwrap_or_default();

    let crates_dir = root.join("crates");
    let entries = fs::read_dir(&crates_dir).map_err(|e| format!("reading {}: {e}", crates_dir.display()))?;
    let mut manifests: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path().join("Cargo.toml"))
        .filter(|path| path.is_file())
        .collect();
    manifests.sort();

    let mut crates = Vec::new();
    for path in manifests {
        let text = fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        crates.push(parse_manifest(&text, &workspace_dependencies).map_err(|e| format!("{}: {e}", path.display()))?);
    }
    if crates.is_empty() {
        return Err(format!("no crate manifest under {}", crates_dir.display()));
    }
    Ok(crates)
}

/// Every wrong arrow of the workspace at `root`.
pub fn check_workspace(root: &Path) -> Result<Vec<Violation>, String> {
    Ok(check(&read_workspace(root)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn the_architecture() -> Vec<CrateDeps> {
        vec![
            CrateDeps::new(DOMAIN, &["serde", "thiserror", "time", "uuid"]),
            CrateDeps::new(PORTS, &[DOMAIN, "async-trait", "mockall"]),
            CrateDeps::new(CORE, &[DOMAIN, PORTS, "tokio", "argon2"]),
            CrateDeps::new("redline-storage", &[DOMAIN, PORTS, "diesel", "tokio"]),
            CrateDeps::new("redline-llm", &[DOMAIN, PORTS, "reqwest"]),
            CrateDeps::new(HTTP, &[DOMAIN, PORTS, CORE, "actix-web"]),
            CrateDeps::new(APP, &[DOMAIN, PORTS, CORE, HTTP, "redline-storage"]),
            CrateDeps::new(FAKE_LLM, &["serde_json", "tokio"]),
        ]
    }

    fn arrows(violations: &[Violation]) -> Vec<(&str, &str)> {
        violations.iter().map(|v| (v.krate.as_str(), v.dependency.as_str())).collect()
    }

    #[test]
    fn the_allowed_arrows_pass() {
        assert_eq!(check(&the_architecture()), vec![]);
    }

    #[test]
    fn the_app_may_depend_on_anything() {
        let crates = [CrateDeps::new(APP, &[DOMAIN, "redline-storage", "redline-llm", "tokio"])];
        assert_eq!(check(&crates), vec![]);
    }

    #[test]
    fn domain_depends_on_nothing_of_ours() {
        let crates = [CrateDeps::new(DOMAIN, &[PORTS, "serde"])];
        let violations = check(&crates);
        assert_eq!(arrows(&violations), [(DOMAIN, PORTS)]);
        assert!(violations[0].rationale.starts_with("domain depends on nothing of ours"));
    }

    #[test]
    fn domain_depends_on_no_infrastructure() {
        let crates = [CrateDeps::new(DOMAIN, &["serde", "tokio", "diesel", "sqlx", "uuid"])];
        assert_eq!(arrows(&check(&crates)), [(DOMAIN, "diesel"), (DOMAIN, "sqlx"), (DOMAIN, "tokio")]);
    }

    #[test]
    fn infrastructure_is_fine_outside_the_domain() {
        let crates = [
            CrateDeps::new(CORE, &["tokio"]),
            CrateDeps::new("redline-storage", &["diesel", "diesel-async"]),
            CrateDeps::new(HTTP, &["actix-web", "hyper"]),
        ];
        assert_eq!(check(&crates), vec![]);
    }

    #[test]
    fn ports_depend_on_the_domain_only() {
        let crates = [CrateDeps::new(PORTS, &[DOMAIN, CORE])];
        assert_eq!(arrows(&check(&crates)), [(PORTS, CORE)]);
    }

    #[test]
    fn core_never_reaches_an_adapter_or_the_shell() {
        let crates = [CrateDeps::new(CORE, &[DOMAIN, PORTS, "redline-storage", HTTP])];
        assert_eq!(arrows(&check(&crates)), [(CORE, HTTP), (CORE, "redline-storage")]);
    }

    #[test]
    fn an_adapter_reaches_neither_core_nor_another_adapter() {
        let crates = [
            CrateDeps::new("redline-storage", &[DOMAIN, PORTS, CORE]),
            CrateDeps::new("redline-mail", &[DOMAIN, "redline-blobs"]),
        ];
        let violations = check(&crates);
        assert_eq!(arrows(&violations), [("redline-storage", CORE), ("redline-mail", "redline-blobs")]);
        assert!(violations[0].rationale.starts_with("an adapter implements ports"));
    }

    #[test]
    fn the_http_shell_never_reaches_an_adapter() {
        let crates = [CrateDeps::new(HTTP, &[DOMAIN, PORTS, CORE, "redline-storage"])];
        assert_eq!(arrows(&check(&crates)), [(HTTP, "redline-storage")]);
    }

    #[test]
    fn no_crate_depends_on_test_support_not_even_the_app() {
        let crates = [CrateDeps::new(APP, &[CORE, FAKE_LLM]), CrateDeps::new("redline-llm", &[PORTS, FAKE_LLM])];
        let violations = check(&crates);
        assert_eq!(arrows(&violations), [(APP, FAKE_LLM), ("redline-llm", FAKE_LLM)]);
        assert!(violations.iter().all(|v| v.rationale == TEST_SUPPORT_RATIONALE));
    }

    #[test]
    fn test_support_knows_none_of_our_crates() {
        let crates = [CrateDeps::new(FAKE_LLM, &[DOMAIN, "tokio"])];
        let violations = check(&crates);
        assert_eq!(arrows(&violations), [(FAKE_LLM, DOMAIN)]);
        assert!(violations[0].rationale.starts_with("test support fakes the world"));
    }

    #[test]
    fn test_support_is_fine_as_a_dev_dependency() {
        let workspace: Table = r#"redline-fake-llm = { path = "crates/fake-llm" }"#.parse().unwrap();
        let manifest = r#"
            [package]
            name = "redline-llm"

            [dependencies]
            redline-ports = { path = "../ports" }

            [dev-dependencies]
            redline-fake-llm.workspace = true
        "#;
        assert_eq!(check(&[parse_manifest(manifest, &workspace).unwrap()]), vec![]);
    }

    #[test]
    fn every_wrong_arrow_is_listed() {
        let mut crates = the_architecture();
        crates[0].dependencies.insert("tokio".to_owned());
        crates[2].dependencies.insert(HTTP.to_owned());
        assert_eq!(arrows(&check(&crates)), [(DOMAIN, "tokio"), (CORE, HTTP)]);
    }

    #[test]
    fn a_violation_reads_crate_arrow_dependency_and_why() {
        let crates = [CrateDeps::new(PORTS, &[CORE])];
        assert_eq!(check(&crates)[0].to_string(), format!("{PORTS} -> {CORE}: {}", Role::Ports.rationale()));
    }

    #[test]
    fn a_manifest_yields_its_normal_dependencies_only() {
        let manifest = r#"
            [package]
            name = "redline-core"

            [dependencies]
            redline-domain.workspace = true
            tokio = { workspace = true, features = ["rt"] }
            hex = "0.4"

            [target.'cfg(unix)'.dependencies]
            redline-storage = { path = "../storage" }

            [dev-dependencies]
            redline-http.workspace = true

            [build-dependencies]
            redline-app.workspace = true
        "#;
        let parsed = parse_manifest(manifest, &Table::new()).unwrap();
        assert_eq!(parsed, CrateDeps::new(CORE, &[DOMAIN, "hex", "redline-storage", "tokio"]));
        assert_eq!(arrows(&check(&[parsed])), [(CORE, "redline-storage")]);
    }

    #[test]
    fn a_renamed_dependency_is_checked_under_its_package_name() {
        let workspace: Table = r#"
            store = { package = "redline-storage", path = "crates/storage" }
        "#
        .parse()
        .unwrap();
        let manifest = r#"
            [package]
            name = "redline-ports"

            [dependencies]
            store.workspace = true
            rt = { package = "tokio", version = "1" }
        "#;
        let parsed = parse_manifest(manifest, &workspace).unwrap();
        assert_eq!(parsed, CrateDeps::new(PORTS, &["redline-storage", "tokio"]));
    }

    /// A throwaway workspace: a root manifest and `crates/<dir>/Cargo.toml` for each entry.
    fn workspace_on_disk(test: &str, root_manifest: &str, crates: &[(&str, &str)]) -> PathBuf {
        let root = std::env::temp_dir().join(format!("xtask-{test}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        for (dir, manifest) in crates {
            let dir = root.join("crates").join(dir);
            fs::create_dir_all(&dir).unwrap();
            fs::write(dir.join("Cargo.toml"), manifest).unwrap();
        }
        fs::create_dir_all(root.join("crates/not-a-crate")).unwrap();
        fs::write(root.join("Cargo.toml"), root_manifest).unwrap();
        root
    }

    #[test]
    fn a_wrong_arrow_on_disk_is_caught() {
        let root = workspace_on_disk(
            "wrong-arrow",
            "[workspace.dependencies]\n\
             redline-domain = { path = \"crates/domain\" }\n\
             db = { package = \"redline-storage\", path = \"crates/storage\" }\n",
            &[
                ("domain", "[package]\nname = \"redline-domain\"\n[dependencies]\nserde = \"1\"\n"),
                (
                    "core",
                    "[package]\nname = \"redline-core\"\n[dependencies]\n\
                     redline-domain.workspace = true\ndb.workspace = true\n",
                ),
                (
                    "storage",
                    "[package]\nname = \"redline-storage\"\n[dependencies]\n\
                     redline-domain.workspace = true\n",
                ),
            ],
        );
        let result = check_workspace(&root);
        let _ = fs::remove_dir_all(&root);
        assert_eq!(arrows(&result.unwrap()), [(CORE, "redline-storage")]);
    }

    #[test]
    fn a_workspace_without_crates_is_an_error() {
        let root = workspace_on_disk("no-crates", "[workspace]\n", &[]);
        let result = check_workspace(&root);
        let _ = fs::remove_dir_all(&root);
        assert!(result.is_err());
    }

    #[test]
    fn a_manifest_without_a_package_name_is_an_error() {
        assert!(parse_manifest("[dependencies]\n", &Table::new()).is_err());
        assert!(parse_manifest("not = = toml", &Table::new()).is_err());
    }
}

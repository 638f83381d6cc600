//! The checks of `cargo xtask check`, run against the real workspace, so that
//! `cargo test --release --workspace` fails exactly when `cargo xtask check` would.

use xtask::{arrows, file_size, openapi, repo_rules, source_rules, workspace_root};

#[test]
fn the_committed_openapi_document_is_fresh() {
    if let Err(e) = openapi::check_fresh(&workspace_root()) {
        panic!("{e}");
    }
}

#[test]
fn the_crates_dependency_arrows_are_allowed() {
    let root = workspace_root();
    let crates = arrows::read_workspace(&root).expect("the crates' manifests read");
    assert!(
        crates.iter().any(|c| c.name == arrows::DOMAIN),
        "{} not found among {crates:?}: is {} the workspace root?",
        arrows::DOMAIN,
        root.display()
    );
    let violations = arrows::check(&crates);
    assert!(
        violations.is_empty(),
        "wrong dependency arrows:\n{}",
        violations.iter().map(|v| format!("  {v}")).collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn no_ignored_tests_and_no_placeholders() {
    let findings = source_rules::check_workspace(&workspace_root()).expect("the sources read");
    assert!(
        findings.is_empty(),
        "source rules broken:\n{}",
        findings.iter().map(|f| format!("  {f}")).collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn no_test_path_leaves_the_repository() {
    let escapes = repo_rules::check_test_paths(&workspace_root()).expect("the sources read");
    assert!(
        escapes.is_empty(),
        "paths outside the repository:\n{}",
        escapes.iter().map(|e| format!("  {e}")).collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn the_readme_configuration_table_is_complete() {
    let problems = repo_rules::check_configuration_table(&workspace_root()).expect("the sources and README read");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn no_file_is_too_long() {
    let problems = file_size::check_workspace(&workspace_root()).expect("the sources read");
    assert!(
        problems.is_empty(),
        "files too long:\n{}",
        problems.iter().map(|p| format!("  {p}")).collect::<Vec<_>>().join("\n")
    );
}

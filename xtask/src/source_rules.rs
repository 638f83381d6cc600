//! Rules on the Rust sources themselves.
//!
//! - No test is ignored: the `ignore` test attribute (plain, with a reason, or behind a
//!   `cfg_attr`) appears in no `.rs` file under `crates/` and `xtask/`.
//! - No placeholder ships: `todo!(..)` and `unimplemented!(..)` appear in no non-test code under
//!   `crates/*/src`. Test code is a file named `tests.rs`, a file under a `tests/` folder, or an
//!   item marked `#[cfg(test)]` in rustfmt layout (found by its indentation, not by parsing).
//!
//! The scan is textual: `//` comments are skipped, string literals are not.

use std::fmt;
use std::fs;
use std::path::{Component, Path, PathBuf};

/// The macros that stand for unwritten code.
pub const PLACEHOLDER_MACROS: &[&str] = &["todo", "unimplemented"];

/// What a line breaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rule {
    /// An ignored test.
    IgnoredTest,
    /// A placeholder macro (its name) in non-test code.
    Placeholder(&'static str),
}

/// A broken rule: the file (relative to the workspace root), the line (1-based), the rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub path: PathBuf,
    pub line: usize,
    pub rule: Rule,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let location = format!("{}:{}", self.path.display(), self.line);
        match self.rule {
            Rule::IgnoredTest => {
                write!(f, "{location}: ignored test: we have no ignored tests; fix the test or delete it")
            }
            Rule::Placeholder(name) => {
                write!(f, "{location}: `{name}!` in non-test code: write the code or return an error")
            }
        }
    }
}

/// The line without its `//` comment (a `//` inside a string literal cuts it short too, which
/// only ever hides a match).
fn code_of(line: &str) -> &str {
    line.find("//").map_or(line, |i| &line[..i])
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Whether `text` holds `word` as a whole identifier.
fn contains_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(is_ident_char) && !after.is_some_and(is_ident_char)
    })
}

/// Whether a line of code carries the ignore attribute on an item: `#[ignore]`,
/// `#[ignore = ".."]`, or `#[cfg_attr(.., ignore)]`.
fn has_ignore_attribute(code: &str) -> bool {
    code.match_indices("#[").any(|(i, open)| {
        let rest = code[i + open.len()..].trim_start();
        let path_len = rest.find(|c: char| !(is_ident_char(c) || c == ':')).unwrap_or(rest.len());
        match &rest[..path_len] {
            "ignore" => true,
            "cfg_attr" => contains_word(&rest[path_len..], "ignore"),
            _ => false,
        }
    })
}

/// The 1-based lines of `source` with an ignore attribute.
pub fn find_ignored_tests(source: &str) -> Vec<usize> {
    source.lines().enumerate().filter(|(_, line)| has_ignore_attribute(code_of(line))).map(|(i, _)| i + 1).collect()
}

/// The placeholder macro invoked in a line of code, if any: `todo!(`, `todo! (`, `todo![`..
fn placeholder_in(code: &str) -> Option<&'static str> {
    PLACEHOLDER_MACROS.iter().copied().find(|name| {
        code.match_indices(name).any(|(i, _)| {
            if code[..i].chars().next_back().is_some_and(is_ident_char) {
                return false;
            }
            let Some(rest) = code[i + name.len()..].trim_start().strip_prefix('!') else {
                return false;
            };
            rest.trim_start().starts_with(['(', '[', '{'])
        })
    })
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The 1-based lines of `source` invoking a placeholder macro outside `#[cfg(test)]` items.
pub fn find_placeholders(source: &str) -> Vec<(usize, &'static str)> {
    let mut findings = Vec::new();
    // The indentation of the `#[cfg(test)]` attribute awaiting its item.
    let mut cfg_test_at: Option<usize> = None;
    // The indentation of the `#[cfg(test)]` item being skipped, up to its closing brace.
    let mut skipping_at: Option<usize> = None;

    for (i, line) in source.lines().enumerate() {
        let code = code_of(line);
        let trimmed = code.trim();
        let indent = indent_of(line);

        if let Some(at) = skipping_at {
            if indent == at && trimmed.starts_with('}') {
                skipping_at = None;
            }
            continue;
        }

        let item = if let Some(rest) = trimmed.strip_prefix("#[cfg(test)]") {
            cfg_test_at = Some(indent);
            rest.trim()
        } else {
            trimmed
        };
        if let Some(at) = cfg_test_at {
            if item.is_empty() || item.starts_with("#[") {
                // More attributes before the item.
            } else {
                cfg_test_at = None;
                if item.ends_with('{') {
                    skipping_at = Some(at);
                }
                // An item of one line (`mod tests;`, `use ..;`, `fn f() {}`) is skipped whole.
                continue;
            }
        }

        if let Some(name) = placeholder_in(code) {
            findings.push((i + 1, name));
        }
    }
    findings
}

/// Whether a file (relative to the workspace root) is test code as a whole.
pub fn is_test_file(relative: &Path) -> bool {
    relative.file_name().is_some_and(|n| n == "tests.rs")
        || relative.parent().is_some_and(|dir| dir.components().any(|c| c == Component::Normal("tests".as_ref())))
}

/// Whether a file (relative to the workspace root) is under `crates/*/src`.
pub fn is_crate_source(relative: &Path) -> bool {
    let mut components = relative.components();
    components.next() == Some(Component::Normal("crates".as_ref()))
        && components.next().is_some()
        && components.next() == Some(Component::Normal("src".as_ref()))
}

/// The `.rs` files under `dir`, skipping build output and hidden folders (unsorted).
pub(crate) fn rust_files(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("reading {}: {e}", dir.display()))?;
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let file_type = entry.file_type().map_err(|e| format!("reading {}: {e}", path.display()))?;
        if file_type.is_dir() {
            if name != "target" && !name.starts_with('.') {
                rust_files(&path, files)?;
            }
        } else if file_type.is_file() && name.ends_with(".rs") {
            files.push(path);
        }
    }
    Ok(())
}

/// Checks one file's text; `relative` is its path from the workspace root.
pub fn check_source(relative: &Path, source: &str) -> Vec<Finding> {
    let mut findings: Vec<Finding> = find_ignored_tests(source)
        .into_iter()
        .map(|line| Finding { path: relative.to_path_buf(), line, rule: Rule::IgnoredTest })
        .collect();
    if is_crate_source(relative) && !is_test_file(relative) {
        findings.extend(find_placeholders(source).into_iter().map(|(line, name)| Finding {
            path: relative.to_path_buf(),
            line,
            rule: Rule::Placeholder(name),
        }));
        findings.sort_by_key(|f| f.line);
    }
    findings
}

/// The `.rs` files under `crates/` and `xtask/` of the workspace at `root`, sorted.
pub fn workspace_rust_files(root: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for dir in ["crates", "xtask"] {
        rust_files(&root.join(dir), &mut files)?;
    }
    files.sort();
    if files.is_empty() {
        return Err(format!("no .rs file under {}", root.display()));
    }
    Ok(files)
}

/// Every broken rule in the `.rs` files under `crates/` and `xtask/` of the workspace at `root`.
pub fn check_workspace(root: &Path) -> Result<Vec<Finding>, String> {
    let files = workspace_rust_files(root)?;
    let mut findings = Vec::new();
    for path in files {
        let source = fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        let relative = path.strip_prefix(root).unwrap_or(&path);
        findings.extend(check_source(relative, &source));
    }
    Ok(findings)
}

#[cfg(test)]
mod tests {
    use super::*;

    // The attribute is spelled in two halves so that this file does not break its own rule.
    const IGNORE: &str = concat!("#[", "ignore]");

    #[test]
    fn an_ignored_test_is_found() {
        let source = format!("#[test]\n{IGNORE}\nfn slow() {{}}\n");
        assert_eq!(find_ignored_tests(&source), [2]);
    }

    #[test]
    fn every_spelling_of_ignore_is_found() {
        let source = [
            concat!("    #[", "ignore = \"slow\"]"),
            concat!("#[ ", "ignore]"),
            concat!("#[test] #[", "ignore] fn f() {}"),
            concat!("#[cfg_", "attr(not(feature = \"pg\"), ignore)]"),
        ]
        .join("\n");
        assert_eq!(find_ignored_tests(&source), [1, 2, 3, 4]);
    }

    #[test]
    fn comments_and_lookalikes_are_not_ignored_tests() {
        let source = [
            &format!("// never write {IGNORE}"),
            &format!("/// {IGNORE} is forbidden"),
            "#[ignored_by_nothing]",
            "#[cfg_attr(test, ignore_me)]",
            "#[test]",
            "let ignore = 1;",
        ]
        .join("\n");
        assert_eq!(find_ignored_tests(&source), Vec::<usize>::new());
    }

    #[test]
    fn placeholders_are_found() {
        let source = concat!(
            "fn a() { to",
            "do!() }\n",
            "fn b() -> u8 {\n",
            "    unimplemented",
            "!(\"later\")\n",
            "}\n",
            "fn c() { std::to",
            "do! () }\n",
        );
        assert_eq!(find_placeholders(source), [(1, "todo"), (3, "unimplemented"), (5, "todo")]);
    }

    #[test]
    fn lookalikes_and_comments_are_not_placeholders() {
        let source = concat!(
            "fn my_to",
            "do() {}\n",
            "let todo_list = my_to",
            "do!(x);\n",
            "// to",
            "do!(): later\n",
            "let todo = 1;\n",
        );
        assert_eq!(find_placeholders(source), []);
    }

    #[test]
    fn placeholders_in_cfg_test_items_are_skipped() {
        let source = concat!(
            "fn real() {}\n",
            "\n",
            "#[cfg(test)]\n",
            "mod tests {\n",
            "    fn helper() { to",
            "do!() }\n",
            "    mod inner {\n",
            "    }\n",
            "    fn other() { unimplemented",
            "!() }\n",
            "}\n",
            "\n",
            "#[cfg(test)]\n",
            "#[allow(dead_code)]\n",
            "fn test_only() {\n",
            "    to",
            "do!()\n",
            "}\n",
            "#[cfg(test)] mod more { fn f() { to",
            "do!() } }\n",
            "fn after() { to",
            "do!() }\n",
        );
        assert_eq!(find_placeholders(source), [(17, "todo")]);
    }

    #[test]
    fn a_cfg_test_declaration_skips_only_itself() {
        let source = concat!("#[cfg(test)]\n", "mod tests;\n", "fn f() { to", "do!() }\n",);
        assert_eq!(find_placeholders(source), [(3, "todo")]);
    }

    #[test]
    fn test_files_are_recognised() {
        assert!(is_test_file(Path::new("crates/core/src/identity/tests.rs")));
        assert!(is_test_file(Path::new("crates/storage/tests/contract.rs")));
        assert!(is_test_file(Path::new("crates/storage/src/tests/sqlite.rs")));
        assert!(!is_test_file(Path::new("crates/core/src/identity/mod.rs")));
        assert!(!is_test_file(Path::new("crates/core/src/tests_helpers.rs")));
    }

    #[test]
    fn crate_sources_are_recognised() {
        assert!(is_crate_source(Path::new("crates/core/src/lib.rs")));
        assert!(!is_crate_source(Path::new("crates/storage/tests/contract.rs")));
        assert!(!is_crate_source(Path::new("xtask/src/main.rs")));
    }

    #[test]
    fn placeholders_count_in_crate_sources_only() {
        let source = concat!("fn f() { to", "do!() }\n");
        let placeholder =
            |path: &str| check_source(Path::new(path), source).iter().any(|f| f.rule == Rule::Placeholder("todo"));
        assert!(placeholder("crates/core/src/lib.rs"));
        assert!(!placeholder("crates/core/src/identity/tests.rs"));
        assert!(!placeholder("crates/storage/tests/contract.rs"));
        assert!(!placeholder("xtask/src/main.rs"));
    }

    #[test]
    fn ignored_tests_count_everywhere() {
        let source = format!("#[test]\n{IGNORE}\nfn f() {{}}\n");
        for path in ["crates/storage/tests/contract.rs", "crates/core/src/identity/tests.rs", "xtask/src/lib.rs"] {
            let findings = check_source(Path::new(path), &source);
            assert_eq!(findings.len(), 1, "{path}");
            assert_eq!(findings[0].rule, Rule::IgnoredTest);
            assert_eq!(findings[0].line, 2);
        }
    }

    #[test]
    fn a_finding_reads_path_line_and_rule() {
        let finding =
            Finding { path: PathBuf::from("crates/core/src/lib.rs"), line: 7, rule: Rule::Placeholder("todo") };
        assert!(finding.to_string().starts_with("crates/core/src/lib.rs:7: `todo!` in non-test code"));
    }
}

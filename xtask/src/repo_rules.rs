//! Rules that keep the repository whole and its README true.
//!
//! - **Test paths stay inside the repository.** A fresh clone with nothing beside it must pass
//!   its own tests, so no Rust file under `crates/` or `xtask/` names a path that leaves the
//!   workspace: a string literal whose `..` segments, resolved from the crate's folder (where
//!   `CARGO_MANIFEST_DIR` points), climb above the workspace root, or one that names the
//!   sibling `shared/` folder of the development machines.
//! - **The README's configuration table lists every variable the binary reads.** Every
//!   `"REDLINE_…"` literal in `crates/app/src` is a variable of the binary; each must appear in
//!   backticks in the README's `## Configuration` section, and every variable that section
//!   names must be one the binary reads. A literal ending in `_` is a prefix (a family such as
//!   `REDLINE_EXPORT_CAP_BYTES_DOCX`): the README must name at least one member.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Component, Path, PathBuf};

use crate::source_rules::workspace_rust_files;

/// A path literal that leaves the repository: where it is and what it says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Escape {
    pub path: PathBuf,
    pub line: usize,
    pub literal: String,
}

impl std::fmt::Display for Escape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: \"{}\" leaves the repository: copy what the test needs under tests/fixtures (with its licence)",
            self.path.display(),
            self.line,
            self.literal
        )
    }
}

/// The string literals of one line (no escapes inside them are interpreted; raw strings and
/// literals spanning lines are not seen, which only ever hides a match).
fn literals(line: &str) -> Vec<&str> {
    if line.trim_start().starts_with("//") {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(start) = rest.find('"') {
        let after = &rest[start + 1..];
        let mut end = None;
        let mut escaped = false;
        for (i, c) in after.char_indices() {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => {
                    end = Some(i);
                    break;
                }
                _ => escaped = false,
            }
        }
        let Some(end) = end else { break };
        out.push(&after[..end]);
        rest = &after[end + 1..];
    }
    out
}

/// Whether `literal`, taken as a path relative to `base` (a folder `depth` levels below the
/// workspace root), climbs out of the root; or names the `shared/` folder beside the clone.
pub fn escapes(literal: &str, depth: usize) -> bool {
    if literal.contains("../shared") || literal.starts_with("/work/shared") {
        return true;
    }
    if !literal.contains("..") || literal.contains(char::is_whitespace) {
        return false;
    }
    let mut level = depth as isize;
    for component in Path::new(literal.trim_start_matches('/')).components() {
        match component {
            Component::ParentDir => level -= 1,
            Component::Normal(_) => level += 1,
            _ => {}
        }
        if level < 0 {
            return true;
        }
    }
    false
}

/// What makes a line's literals paths on disk rather than data (a zip entry named
/// `../../../etc/passwd` in a test of path resolution is data).
const FILE_SYSTEM_USE: &[&str] = &[
    "CARGO_MANIFEST_DIR",
    "Path::new(",
    "PathBuf::from(",
    ".join(",
    "fs::",
    "include_bytes!(",
    "include_str!(",
    "Command::new(",
];

/// This file: its examples name escaping paths on purpose.
const SELF: &str = "xtask/src/repo_rules.rs";

/// The escaping literals of one file's source; `depth` is its crate folder's depth below the root.
pub fn find_escapes(source: &str, depth: usize) -> Vec<(usize, String)> {
    source
        .lines()
        .enumerate()
        .filter(|(_, line)| FILE_SYSTEM_USE.iter().any(|marker| line.contains(marker)))
        .flat_map(|(i, line)| {
            literals(line).into_iter().filter(|l| escapes(l, depth)).map(move |l| (i + 1, l.to_owned()))
        })
        .collect()
}

/// Every escaping path literal of the workspace's Rust files.
pub fn check_test_paths(root: &Path) -> Result<Vec<Escape>, String> {
    let mut found = Vec::new();
    for file in workspace_rust_files(root)? {
        let relative = file.strip_prefix(root).unwrap_or(&file).to_path_buf();
        if relative == Path::new(SELF) {
            continue;
        }
        // `crates/<name>/…` resolves from `crates/<name>` (depth 2); `xtask/…` from `xtask` (1).
        let depth = if relative.starts_with("crates") { 2 } else { 1 };
        let source = fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        for (line, literal) in find_escapes(&source, depth) {
            found.push(Escape { path: relative.clone(), line, literal });
        }
    }
    Ok(found)
}

// ---------------------------------------------------------------------------------------------
// The README's configuration table
// ---------------------------------------------------------------------------------------------

/// The `REDLINE_…` names in `text`, each as written (a trailing `_` marks a prefix).
fn variable_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (i, _) in text.match_indices("REDLINE_") {
        if text[..i].chars().next_back().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let name: String =
            text[i..].chars().take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_').collect();
        names.insert(name);
    }
    names
}

/// The variables the binary reads: the `"REDLINE_…"` literals of its sources.
pub fn variables_read(sources: &[String]) -> BTreeSet<String> {
    sources
        .iter()
        .flat_map(|s| {
            s.lines()
                .flat_map(literals)
                .flat_map(|l| variable_names(l).into_iter().filter(|n| l.starts_with(n.as_str())))
        })
        .filter(|n| n != "REDLINE_")
        .collect()
}

/// The README's `## Configuration` section (up to the next `## ` heading).
pub fn configuration_section(readme: &str) -> Option<&str> {
    let start = readme.find("\n## Configuration")? + 1;
    let body = &readme[start + "## Configuration".len()..];
    let end = body.find("\n## ").map_or(body.len(), |i| i + 1);
    Some(&body[..end])
}

/// What the README's table misses or invents.
pub fn compare_table(read: &BTreeSet<String>, section: &str) -> Vec<String> {
    let documented = variable_names(section);
    let mut problems = Vec::new();
    for name in read {
        let present = if name.ends_with('_') {
            documented.iter().any(|d| d.starts_with(name.as_str()) && d.len() > name.len())
        } else {
            documented.contains(name)
        };
        if !present {
            problems.push(format!("README.md: `{name}` is read by the binary but not in the configuration table"));
        }
    }
    for name in &documented {
        let known = read.contains(name) || read.iter().any(|r| r.ends_with('_') && name.starts_with(r.as_str()));
        if !known {
            problems.push(format!("README.md: `{name}` is in the configuration table but the binary never reads it"));
        }
    }
    problems
}

/// The configuration table check against the workspace at `root`.
pub fn check_configuration_table(root: &Path) -> Result<Vec<String>, String> {
    let app = root.join("crates/app/src");
    let mut sources = Vec::new();
    for file in workspace_rust_files(root)?.into_iter().filter(|f| f.starts_with(&app)) {
        sources.push(fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?);
    }
    let read = variables_read(&sources);
    if read.is_empty() {
        return Err(format!("no REDLINE_ variable found under {}", app.display()));
    }
    let readme = fs::read_to_string(root.join("README.md")).map_err(|e| format!("README.md: {e}"))?;
    let section = configuration_section(&readme).ok_or("README.md has no `## Configuration` section")?;
    Ok(compare_table(&read, section))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_climb_out_of_the_workspace_are_found() {
        // From crates/<name> (depth 2): two levels up is the root, three is outside.
        assert!(!escapes("../../tests/fixtures/corpus", 2));
        assert!(escapes("../../../shared/corpus", 2));
        assert!(escapes("../../../elsewhere/file.txt", 2));
        assert!(escapes("/work/shared/conformance/fake_llm.py", 2));
        assert!(escapes("../shared/conformance", 1));
        assert!(!escapes("a/../../b", 2));
        assert!(escapes("a/../../../../b", 2));
        assert!(!escapes("sub/../x", 1));
        assert!(!escapes("no dots here", 2));
        assert!(!escapes("../ spaced prose, not a path", 0));
    }

    #[test]
    fn literals_are_read_from_a_line() {
        assert_eq!(literals(r#"join("a/b").join("c\"d")"#), vec!["a/b", r#"c\"d"#]);
        assert!(literals(r#"// join("../../../shared")"#).is_empty());
        let source = "let p = x.join(\"../../../shared/corpus\");\nlet q = Path::new(\"../../ok\");\n\
                      assert_eq!(resolve(\"word/\", \"../../../etc/passwd\"), \"etc/passwd\");\n";
        assert_eq!(find_escapes(source, 2), vec![(1, "../../../shared/corpus".to_owned())]);
    }

    #[test]
    fn the_configuration_table_must_match_what_is_read() {
        let sources = vec![
            r#"let a = get("REDLINE_BIND"); let b = format!("REDLINE_CAP_{}", x); let c = "REDLINE_LOG";"#.to_owned(),
            r#"// "REDLINE_IN_A_COMMENT" is not read"#.to_owned(),
        ];
        let read = variables_read(&sources);
        assert_eq!(read, BTreeSet::from(["REDLINE_BIND".into(), "REDLINE_CAP_".into(), "REDLINE_LOG".into()]));
        let good = "| `REDLINE_BIND` | x |\n| `REDLINE_CAP_PDF` | y |\n| `REDLINE_LOG` | z |\n";
        assert!(compare_table(&read, good).is_empty());
        let bad = "| `REDLINE_BIND` | x |\n| `REDLINE_GHOST` | y |\n";
        let problems = compare_table(&read, bad);
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("REDLINE_CAP_") && p.contains("not in the configuration table")));
        assert!(problems.iter().any(|p| p.contains("REDLINE_LOG") && p.contains("not in")));
        assert!(problems.iter().any(|p| p.contains("REDLINE_GHOST") && p.contains("never reads")));
    }

    #[test]
    fn the_configuration_section_ends_at_the_next_heading() {
        let readme = "# R\n\n## Configuration\n\n`REDLINE_A`\n\n## Where\n`REDLINE_B`\n";
        let section = configuration_section(readme).unwrap();
        assert!(section.contains("REDLINE_A") && !section.contains("REDLINE_B"));
    }
}

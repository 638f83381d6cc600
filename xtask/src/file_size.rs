//! No giant files: a `.rs` file under `crates/` or `xtask/` (tests included) has at most
//! [`MAX_LINES`] lines.
//!
//! A file past the limit is hard to read whole and usually does more than one job; the house
//! style splits a module at about 600 lines, and this check holds the line well above that so
//! that it never fires on a file that merely grew a test. The files already past it are on
//! [`ALLOWLIST`], each with its line count as a ceiling: an allowlisted file may shrink but
//! never grow, and once it is under the limit (or gone) its entry must go too, so the list only
//! ever gets shorter.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use crate::source_rules::rust_files;

/// The most lines a `.rs` file may have.
pub const MAX_LINES: usize = 1000;

/// The files over [`MAX_LINES`] that have yet to be split (path from the workspace root, line
/// count today as the ceiling). Lower a ceiling when a file shrinks; remove the entry when the
/// file is split.
pub const ALLOWLIST: &[(&str, usize)] = &[];

/// A file breaking the rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// Over the limit and not on the allowlist.
    TooLong { path: PathBuf, lines: usize },
    /// On the allowlist, and longer than its ceiling.
    Grew { path: PathBuf, lines: usize, ceiling: usize },
    /// On the allowlist, and now within the limit.
    Shrunk { path: PathBuf, lines: usize },
    /// On the allowlist, and not found.
    Missing { path: PathBuf },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::TooLong { path, lines } => write!(
                f,
                "{}: {lines} lines, over the limit of {MAX_LINES}: split it by concern (one idea per file)",
                path.display()
            ),
            Problem::Grew { path, lines, ceiling } => write!(
                f,
                "{}: {lines} lines, over its allowlisted {ceiling}: an allowlisted file may only shrink; \
                 split it rather than add to it",
                path.display()
            ),
            Problem::Shrunk { path, lines } => write!(
                f,
                "{}: {lines} lines, within the limit of {MAX_LINES}: remove it from the allowlist in \
                 xtask/src/file_size.rs",
                path.display()
            ),
            Problem::Missing { path } => write!(
                f,
                "{}: on the allowlist but not found: remove it from the allowlist in xtask/src/file_size.rs",
                path.display()
            ),
        }
    }
}

/// The number of lines of `source`, as an editor numbers them (a last line without its newline
/// counts).
pub fn line_count(source: &str) -> usize {
    source.lines().count()
}

/// Checks `files` (path from the workspace root, line count) against the limit and `allowlist`.
pub fn check(files: &[(PathBuf, usize)], allowlist: &[(&str, usize)]) -> Vec<Problem> {
    let mut problems = Vec::new();
    for (path, lines) in files {
        let lines = *lines;
        let listed = allowlist.iter().find(|(listed, _)| Path::new(listed) == path);
        match listed {
            None if lines > MAX_LINES => problems.push(Problem::TooLong { path: path.clone(), lines }),
            None => {}
            Some(_) if lines <= MAX_LINES => problems.push(Problem::Shrunk { path: path.clone(), lines }),
            Some(&(_, ceiling)) if lines > ceiling => {
                problems.push(Problem::Grew { path: path.clone(), lines, ceiling });
            }
            Some(_) => {}
        }
    }
    for (listed, _) in allowlist {
        if !files.iter().any(|(path, _)| path == Path::new(listed)) {
            problems.push(Problem::Missing { path: PathBuf::from(listed) });
        }
    }
    problems
}

/// Every problem with the `.rs` files under `crates/` and `xtask/` of the workspace at `root`.
pub fn check_workspace(root: &Path) -> Result<Vec<Problem>, String> {
    let mut paths = Vec::new();
    for dir in ["crates", "xtask"] {
        rust_files(&root.join(dir), &mut paths)?;
    }
    paths.sort();
    if paths.is_empty() {
        return Err(format!("no .rs file under {}", root.display()));
    }
    let mut files = Vec::with_capacity(paths.len());
    for path in paths {
        let source = fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        let relative = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
        files.push((relative, line_count(&source)));
    }
    Ok(check(&files, ALLOWLIST))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, usize)]) -> Vec<(PathBuf, usize)> {
        list.iter().map(|(path, lines)| (PathBuf::from(path), *lines)).collect()
    }

    #[test]
    fn files_within_the_limit_pass() {
        let files = files(&[("crates/a/src/lib.rs", 10), ("xtask/src/main.rs", MAX_LINES)]);
        assert_eq!(check(&files, &[]), []);
    }

    #[test]
    fn a_file_over_the_limit_fails() {
        let files = files(&[("crates/a/src/lib.rs", MAX_LINES + 1), ("crates/a/tests/api.rs", 5)]);
        assert_eq!(
            check(&files, &[]),
            [Problem::TooLong { path: PathBuf::from("crates/a/src/lib.rs"), lines: MAX_LINES + 1 }]
        );
    }

    #[test]
    fn an_allowlisted_file_may_stay_or_shrink_above_the_limit() {
        let allowlist = [("crates/a/src/big.rs", 1200)];
        assert_eq!(check(&files(&[("crates/a/src/big.rs", 1200)]), &allowlist), []);
        assert_eq!(check(&files(&[("crates/a/src/big.rs", 1100)]), &allowlist), []);
    }

    #[test]
    fn an_allowlisted_file_may_not_grow() {
        let allowlist = [("crates/a/src/big.rs", 1200)];
        assert_eq!(
            check(&files(&[("crates/a/src/big.rs", 1201)]), &allowlist),
            [Problem::Grew { path: PathBuf::from("crates/a/src/big.rs"), lines: 1201, ceiling: 1200 }]
        );
    }

    #[test]
    fn an_allowlisted_file_within_the_limit_must_leave_the_list() {
        let allowlist = [("crates/a/src/big.rs", 1200)];
        let problems = check(&files(&[("crates/a/src/big.rs", MAX_LINES)]), &allowlist);
        assert_eq!(problems, [Problem::Shrunk { path: PathBuf::from("crates/a/src/big.rs"), lines: MAX_LINES }]);
        assert!(problems[0].to_string().contains("remove it from the allowlist"));
    }

    #[test]
    fn an_allowlisted_file_that_is_gone_must_leave_the_list() {
        let allowlist = [("crates/a/src/big.rs", 1200)];
        let problems = check(&files(&[("crates/a/src/lib.rs", 3)]), &allowlist);
        assert_eq!(problems, [Problem::Missing { path: PathBuf::from("crates/a/src/big.rs") }]);
        assert!(problems[0].to_string().contains("remove it from the allowlist"));
    }

    #[test]
    fn the_allowlist_covers_only_its_own_paths() {
        let allowlist = [("crates/a/src/big.rs", 1200)];
        let files = files(&[("crates/a/src/big.rs", 1100), ("crates/b/src/big.rs", 1100)]);
        assert_eq!(
            check(&files, &allowlist),
            [Problem::TooLong { path: PathBuf::from("crates/b/src/big.rs"), lines: 1100 }]
        );
    }

    #[test]
    fn lines_are_counted_as_an_editor_numbers_them() {
        assert_eq!(line_count(""), 0);
        assert_eq!(line_count("one\n"), 1);
        assert_eq!(line_count("one\ntwo\n"), 2);
        assert_eq!(line_count("one\ntwo"), 2);
        assert_eq!(line_count("one\r\ntwo\r\n"), 2);
    }

    #[test]
    fn every_allowlist_entry_is_over_the_limit() {
        for (path, ceiling) in ALLOWLIST {
            assert!(*ceiling > MAX_LINES, "{path}: a ceiling of {ceiling} is within the limit; remove the entry");
        }
    }

    #[test]
    fn a_problem_names_the_file_and_what_to_do() {
        let problem = Problem::TooLong { path: PathBuf::from("crates/a/src/lib.rs"), lines: 1001 };
        assert!(problem.to_string().starts_with("crates/a/src/lib.rs: 1001 lines, over the limit of 1000"));
    }
}

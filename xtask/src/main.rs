//! `cargo xtask <command>`: see `USAGE`.

use std::process::ExitCode;

use xtask::{openapi, run_all_checks, workspace_root};

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  openapi   write docs/openapi.json from the handlers' annotations
  check     run every repository check; exits non-zero if one fails:
              - docs/openapi.json is up to date
              - crate dependencies follow the hexagonal architecture
              - no ignored tests; no todo!/unimplemented! in non-test code
              - no test path leaves the repository
              - README.md's configuration table lists every REDLINE_ variable
              - no .rs file over 1,000 lines (but an allowlist that only shrinks)
  help      print this message";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["openapi"] => generate_openapi(),
        ["check"] => check(),
        [] | ["help" | "-h" | "--help"] => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("unknown arguments: {}\n\n{USAGE}", args.join(" "));
            ExitCode::from(2)
        }
    }
}

fn generate_openapi() -> ExitCode {
    match openapi::write(&workspace_root()) {
        Ok(path) => {
            println!("wrote {}", path.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn check() -> ExitCode {
    let reports = run_all_checks(&workspace_root());
    for report in &reports {
        if report.passed() {
            println!("ok      {}", report.name);
        } else {
            println!("FAILED  {}", report.name);
            for problem in &report.problems {
                println!("          {problem}");
            }
        }
    }
    let failed = reports.iter().filter(|r| !r.passed()).count();
    if failed == 0 {
        println!("all {} checks passed", reports.len());
        ExitCode::SUCCESS
    } else {
        println!("{failed} of {} checks failed", reports.len());
        ExitCode::FAILURE
    }
}

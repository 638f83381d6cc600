//! `redline`: the Redline service (`redline serve`, the default) and its operator CLI
//! (`redline admin …`).

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use redline_app::admin::{self, AdminCommand};
use redline_app::{telemetry, Application, Config, Services};

#[derive(Debug, Parser)]
#[command(name = "redline", version, about = "Redline: AI document editing as an HTTP service")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serves the HTTP API (the default). Applies pending migrations first.
    Serve,
    /// Prints the effective configuration (secrets masked) and what `serve` would refuse;
    /// exits 2 when it would refuse to start.
    CheckConfig,
    /// Operator commands on the same database; each prints one JSON object.
    Admin {
        #[command(subcommand)]
        command: AdminCommand,
    },
}

/// glibc's malloc settings of `serve`, each applied unless the operator set it (or set
/// `GLIBC_TUNABLES`, which then decides everything):
/// - `MALLOC_ARENA_MAX=2`: glibc gives each thread that allocates an arena of its own, up to 8
///   per core, and an arena keeps what is freed into it; under a mixed load the server's RSS
///   reached three to four times its heap and stayed there. Two arenas keep it near the heap.
/// - `MALLOC_MMAP_THRESHOLD_=4194304`: blocks of 4 MiB or more are mapped on their own and
///   given back to the system when freed. By default glibc raises this threshold to the size
///   of the largest mapped block freed so far, so after one argon2id verification (a 19 MiB
///   block) every later one landed in an arena and its pages stayed resident: 20 MB more per
///   arena, for good (docs/deploy.md, "Memory").
///
/// glibc reads them once, before the first allocation, from the environment, so `serve` sets
/// them and executes itself again (same process, same pid).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn limit_malloc_arenas() {
    use std::os::unix::process::CommandExt;
    if std::env::var_os("GLIBC_TUNABLES").is_some() {
        return;
    }
    let settings: Vec<_> = MALLOC_SETTINGS.iter().filter(|(name, _)| std::env::var_os(name).is_none()).collect();
    if settings.is_empty() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut args = std::env::args_os();
    let mut command = std::process::Command::new(exe);
    if let Some(arg0) = args.next() {
        command.arg0(arg0);
    }
    // `exec` returns only when it failed; the server then runs with glibc's defaults.
    let e = command.args(args).envs(settings.iter().map(|(name, value)| (name, value))).exec();
    eprintln!("redline: could not set glibc's malloc settings, running with its defaults: {e}");
}

/// What [`limit_malloc_arenas`] sets, when unset.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MALLOC_SETTINGS: [(&str, &str); 2] = [("MALLOC_ARENA_MAX", "2"), ("MALLOC_MMAP_THRESHOLD_", "4194304")];

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn limit_malloc_arenas() {}

/// `redline check-config`: one `NAME=value` line per setting, then the refusals.
fn check_config(config: &Config) -> ExitCode {
    use std::io::Write;
    let mut text = String::from("# The effective configuration (secrets hidden).\n");
    for (name, value) in config.effective() {
        text.push_str(&format!("{name}={value}\n"));
    }
    let refusals = config.refusals();
    if refusals.is_empty() {
        text.push_str("# redline serve would start with this configuration.\n");
    } else {
        text.push_str("# redline serve would refuse to start:\n");
        for refusal in &refusals {
            text.push_str(&format!("# - {refusal}\n"));
        }
    }
    let mut out = std::io::stdout().lock();
    if out.write_all(text.as_bytes()).and_then(|()| out.flush()).is_err() {
        return ExitCode::FAILURE;
    }
    if refusals.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if matches!(cli.command, None | Some(Command::Serve)) {
        limit_malloc_arenas();
    }
    let config = match Config::from_env() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("redline: configuration error: {e:#}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("redline: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match cli.command.unwrap_or(Command::Serve) {
        Command::CheckConfig => check_config(&config),
        Command::Serve => {
            telemetry::init(&config.log_format);
            let result = runtime.block_on(async {
                let app = Application::build(config).await?;
                app.run_until_stopped().await?;
                anyhow::Ok(())
            });
            match result {
                Ok(()) => {
                    tracing::info!("redline stopped");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    tracing::error!(error = %format!("{e:#}"), "redline failed");
                    eprintln!("redline: {e:#}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Admin { command } => {
            let result = runtime.block_on(async {
                std::fs::create_dir_all(&config.data_dir)?;
                let public_base_url = config.public_base_url_for(config.bind);
                let services = Services::open(&config, &public_base_url).await?;
                admin::run(&services, command).await
            });
            match result {
                Ok(value) => {
                    // Not `println!`, which panics when stdout is closed or full. The change is
                    // made by now: say so, without its output (which may hold a new key).
                    use std::io::Write;
                    let mut out = std::io::stdout().lock();
                    match writeln!(out, "{value}").and_then(|()| out.flush()) {
                        Ok(()) => ExitCode::SUCCESS,
                        Err(e) => {
                            eprintln!("redline admin: the change was made, but its result could not be written to stdout: {e}");
                            ExitCode::FAILURE
                        }
                    }
                }
                Err(e) => {
                    eprintln!("redline admin: {e:#}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

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
    /// Operator commands on the same database; each prints one JSON object.
    Admin {
        #[command(subcommand)]
        command: AdminCommand,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
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

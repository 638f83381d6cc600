//! Logging: `tracing` to stdout, readable text by default, JSON with `REDLINE_LOG_FORMAT=json`.
//! The level comes from `REDLINE_LOG` (or `RUST_LOG`), default `info`.

use tracing_subscriber::EnvFilter;

pub fn init(format: &str) {
    let filter = std::env::var("REDLINE_LOG")
        .ok()
        .or_else(|| std::env::var("RUST_LOG").ok())
        .and_then(|f| EnvFilter::try_new(f).ok())
        .unwrap_or_else(|| EnvFilter::new("info,actix_server=warn"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stdout());
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_target(false).with_ansi(ansi);
    let _ = if format == "json" { builder.json().try_init() } else { builder.try_init() };
}

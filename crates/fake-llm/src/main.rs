//! `redline-fake-llm [--port N]`: the fake as a process of its own, for tests written in another
//! language (the web app's browser tests). It prints its base URL on one line, then serves until
//! SIGTERM or SIGINT; README.md gives the control endpoints and the step format.

use std::future::Future;
use std::io::Write;
use std::process::ExitCode;

use redline_fake_llm::Fake;

const USAGE: &str = "\
usage: redline-fake-llm [--port N]

Serves a scriptable fake of the OpenAI Chat Completions API on 127.0.0.1:N (0 or absent: a free
port), prints its base URL (http://127.0.0.1:PORT/v1, for REDLINE_OPENAI_BASE_URL) on one line,
and runs until SIGTERM or SIGINT. Control endpoints on the same port:
  POST /_fake/script     {\"steps\": [...], \"append\"?: bool, \"default\"?: step}  -> 204
  GET  /_fake/requests   the completion requests received, oldest first           -> 200
  POST /_fake/reset      nothing queued, the built-in default, no request         -> 204";

/// The port asked for on the command line (0: a free one), or why the arguments are wrong
/// (`None`: help was asked for).
fn port(args: &[String]) -> Result<Option<u16>, String> {
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        [] => Ok(Some(0)),
        ["-h" | "--help"] => Ok(None),
        ["--port", value] => value.parse().map(Some).map_err(|_| format!("--port {value:?}: expected 0 to 65535")),
        [flag] if flag.starts_with("--port=") => port(&["--port".to_owned(), flag["--port=".len()..].to_owned()]),
        _ => Err(format!("unexpected arguments: {}", args.join(" "))),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let port = match port(&args) {
        Ok(Some(port)) => port,
        Ok(None) => {
            // Read by `head`, say: a closed pipe is no failure of the help.
            let _ = writeln!(std::io::stdout(), "{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(problem) => {
            eprintln!("redline-fake-llm: {problem}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    // Listening for the signals before the URL is out: a parent may stop the fake as soon as
    // it has read it.
    let stopped = match stop_signal() {
        Ok(stopped) => stopped,
        Err(e) => {
            eprintln!("redline-fake-llm: cannot listen for signals: {e}");
            return ExitCode::FAILURE;
        }
    };
    let fake = match Fake::bind(port) {
        Ok(fake) => fake,
        Err(e) => {
            eprintln!("redline-fake-llm: cannot bind 127.0.0.1:{port}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = writeln!(stdout, "{}", fake.base_url).and_then(|()| stdout.flush()) {
        eprintln!("redline-fake-llm: cannot print the base URL: {e}");
        return ExitCode::FAILURE;
    }
    drop(stdout);
    stopped.await;
    drop(fake);
    ExitCode::SUCCESS
}

/// Resolves on SIGTERM or SIGINT; the handlers are in place from the call on.
#[cfg(unix)]
fn stop_signal() -> std::io::Result<impl Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let (mut terminate, mut interrupt) = (signal(SignalKind::terminate())?, signal(SignalKind::interrupt())?);
    Ok(async move {
        tokio::select! {
            _ = terminate.recv() => {}
            _ = interrupt.recv() => {}
        }
    })
}

/// Resolves on Ctrl-C.
#[cfg(not(unix))]
fn stop_signal() -> std::io::Result<impl Future<Output = ()>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}

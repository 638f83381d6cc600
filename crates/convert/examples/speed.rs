//! Conversion speed against the reference tools, both measured in one run (docs/benchmarks.md
//! section 5): DOCX against `pandoc -f docx -t html`, PDF against poppler's `pdftotext`.
//!
//! For every corpus file of the format that both sides convert, runs are interleaved (ours,
//! theirs, ours, …) and three medians are kept:
//! - `in-process`: our `DocumentConverter::convert` called in this process (bytes already in
//!   memory), what the server pays per upload;
//! - `ours (process)`: our `convert` example spawned as a process, reading the file and
//!   writing the HTML to /dev/null, so a process start is counted as for the reference tool;
//! - the reference tool spawned the same way (`pandoc -f docx -t html FILE`,
//!   `pdftotext -enc UTF-8 FILE -`), stdout to /dev/null, killed after 30 s.
//!
//! ```text
//! cargo build --release -p redline-convert --examples
//! target/release/examples/speed [docx|pdf] [--runs N]
//! ```

#[path = "../tests/support/fidelity.rs"]
#[expect(dead_code, reason = "shared with the tests, which use other parts")]
mod fidelity;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use redline_convert::Converters;
use redline_ports::DocumentConverter;

const TOOL_TIMEOUT: Duration = Duration::from_secs(30);

/// Spawns `cmd` with stdout and stderr to /dev/null; its wall time if it exited 0 in time.
fn time_process(cmd: &mut Command) -> Option<Duration> {
    let start = Instant::now();
    let mut child = cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().ok()?;
    loop {
        if let Some(status) = child.try_wait().ok()? {
            let elapsed = start.elapsed();
            return status.success().then_some(elapsed);
        }
        if start.elapsed() > TOOL_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn reference(format: &str, file: &Path) -> Command {
    let mut cmd;
    if format == "docx" {
        cmd = Command::new("pandoc");
        cmd.args(["-f", "docx", "-t", "html"]).arg(file);
    } else {
        cmd = Command::new("pdftotext");
        cmd.args(["-enc", "UTF-8"]).arg(file).arg("-");
    }
    cmd
}

fn main() {
    let mut format = "docx".to_owned();
    let mut runs = 10usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().and_then(|n| n.parse().ok()).unwrap_or(runs),
            "docx" | "pdf" => format = arg,
            other => {
                eprintln!("unknown argument {other}");
                std::process::exit(2);
            }
        }
    }
    let tool = if format == "docx" { "pandoc" } else { "pdftotext" };
    let cli: PathBuf = std::env::current_exe().expect("own path").with_file_name("convert");
    assert!(cli.is_file(), "build the `convert` example first: cargo build --release -p redline-convert --examples");
    let files: Vec<_> = fidelity::corpus(&fidelity::corpus_root()).into_iter().filter(|f| f.folder == format).collect();

    println!(
        "| file | size | Redline in-process | Redline (process) | {tool} | {tool} ÷ in-process | {tool} ÷ process |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let (mut r_in, mut r_proc, mut skipped) = (Vec::new(), Vec::new(), Vec::new());
    for file in &files {
        let bytes = std::fs::read(&file.path).expect("readable");
        let format_of = file.format().expect("known format");
        let short = file.name.split('/').next_back().unwrap_or(&file.name).to_owned();
        // One warm-up each; a file either side refuses is left out of the ratios.
        let ours_ok = Converters.convert(format_of, &bytes).is_ok();
        let theirs_ok = time_process(&mut reference(&format, &file.path)).is_some();
        if !ours_ok || !theirs_ok {
            skipped.push(format!("`{short}` (Redline {}, {tool} {})", ok(ours_ok), ok(theirs_ok)));
            continue;
        }
        let (mut t_in, mut t_proc, mut t_ref) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs {
            // In process: as many calls as fit in ~50 ms (at least one), the mean of them.
            let start = Instant::now();
            let mut n = 0u32;
            while n == 0 || start.elapsed() < Duration::from_millis(50) {
                std::hint::black_box(Converters.convert(format_of, std::hint::black_box(&bytes))).ok();
                n += 1;
            }
            t_in.push(start.elapsed().as_secs_f64() / f64::from(n));
            if let Some(d) = time_process(Command::new(&cli).arg(&file.path)) {
                t_proc.push(d.as_secs_f64());
            }
            if let Some(d) = time_process(&mut reference(&format, &file.path)) {
                t_ref.push(d.as_secs_f64());
            }
        }
        if t_proc.is_empty() || t_ref.is_empty() {
            skipped.push(format!("`{short}` (a timed run failed)"));
            continue;
        }
        let (m_in, m_proc, m_ref) = (median(t_in), median(t_proc), median(t_ref));
        r_in.push(m_ref / m_in);
        r_proc.push(m_ref / m_proc);
        println!(
            "| `{short}` | {} KB | {:.2} ms | {:.2} ms | {:.1} ms | {:.1}× | {:.1}× |",
            bytes.len() / 1024,
            m_in * 1e3,
            m_proc * 1e3,
            m_ref * 1e3,
            m_ref / m_in,
            m_ref / m_proc
        );
    }
    if r_in.is_empty() {
        println!("\nno file converted by both");
        return;
    }
    println!(
        "\n{} files, {runs} interleaved runs each. Median per-file ratio {tool} ÷ Redline: {:.1}× in-process, {:.1}× counting our process start.",
        r_in.len(),
        median(r_in.clone()),
        median(r_proc.clone())
    );
    println!(
        "Worst file: {:.1}× in-process, {:.1}× as a process.",
        r_in.iter().copied().fold(f64::INFINITY, f64::min),
        r_proc.iter().copied().fold(f64::INFINITY, f64::min)
    );
    if !skipped.is_empty() {
        println!("Left out (one side refuses or fails): {}", skipped.join(", "));
    }
}

fn ok(b: bool) -> &'static str {
    if b {
        "converts"
    } else {
        "refuses"
    }
}

//! Where the memory of an upload goes: reads a file, converts it, then sanitizes and
//! sections the HTML as `core::documents` does (in slices, into the version's HTML), then,
//! for comparison, the whole document at once, printing the process's resident high-water
//! mark (VmHWM, Linux) after each stage. A diagnostic for docs/benchmarks.md section 5.
//!
//! `target/release/examples/upload_stages FILE`

use redline_convert::Converters;
use redline_domain::document::ChunkId;
use redline_domain::formats::SourceFormat;
use redline_html::Html5everSections;
use redline_ports::{DocumentConverter, HtmlSections};

fn hwm_mb() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map_or(0, |kb| kb / 1000)
    };
    format!("VmHWM {} MB, VmRSS {} MB", field("VmHWM:"), field("VmRSS:"))
}

fn main() {
    let path = std::path::PathBuf::from(std::env::args_os().nth(1).expect("usage: upload_stages FILE"));
    let format = match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "docx" => SourceFormat::Docx,
        "pdf" => SourceFormat::Pdf,
        "rtf" => SourceFormat::Rtf,
        "md" => SourceFormat::Markdown,
        "html" | "htm" => SourceFormat::Html,
        _ => SourceFormat::Txt,
    };
    let bytes = std::fs::read(&path).expect("readable");
    println!("read {} MB: {}", bytes.len() / 1_000_000, hwm_mb());
    let converted = Converters.convert(format, &bytes).expect("converts");
    println!("converted ({} MB of HTML): {}", converted.html.len() / 1_000_000, hwm_mb());
    drop(bytes);
    let sectioner = Html5everSections::new();
    let mut n = 0u64;
    let mut new_id = || {
        n += 1;
        ChunkId::parse(&format!("c{n}")).expect("valid id")
    };
    // As an upload does (`core::documents`): sections written into the version's HTML as
    // they come, the slices of the document sanitized and sectioned one after another.
    let mut version = String::with_capacity(converted.html.len() + converted.html.len() / 8);
    let mut count = 0usize;
    sectioner
        .sectionize_each(&converted.html, &mut new_id, &mut |s| {
            version.push_str(&s.html);
            version.push('\n');
            count += 1;
            Ok(())
        })
        .expect("sections");
    println!("version HTML written in slices ({count} sections, {} MB): {}", version.len() / 1_000_000, hwm_mb());
    drop(version);
    // The whole document at once, for comparison (the figures before slicing).
    let clean = sectioner.sanitize(&converted.html).expect("sanitizes");
    println!("sanitized ({} MB): {}", clean.len() / 1_000_000, hwm_mb());
    drop(clean);
    let sections =
        Html5everSections::with_slice_bytes(usize::MAX).sectionize(&converted.html, &mut new_id).expect("sections");
    println!("whole document sectioned ({} sections): {}", sections.len(), hwm_mb());
}

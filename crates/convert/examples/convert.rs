//! A tiny CLI over the `DocumentConverter` port: `convert FILE` writes the HTML to stdout
//! (format from the extension). Used by the benchmarks to count our own process start,
//! as pandoc's and pdftotext's are counted (scripts/bench/convert_speed.sh). With
//! `REDLINE_OCR_LANGS` set (e.g. `eng`), scanned PDF pages are read by Debian's
//! `tesseract`, and the time taken is printed to stderr (the OCR figure of
//! docs/benchmarks.md).

use std::io::Write;

use redline_convert::Converters;
use redline_domain::formats::SourceFormat;
use redline_ports::DocumentConverter;

fn main() {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: convert FILE");
        std::process::exit(2);
    };
    let path = std::path::PathBuf::from(path);
    let format = match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("docx") => SourceFormat::Docx,
        Some("pdf") => SourceFormat::Pdf,
        Some("rtf") => SourceFormat::Rtf,
        Some("md") => SourceFormat::Markdown,
        Some("html" | "htm") => SourceFormat::Html,
        Some("txt") => SourceFormat::Txt,
        _ => {
            eprintln!("unsupported extension: {}", path.display());
            std::process::exit(2);
        }
    };
    let bytes = std::fs::read(&path).unwrap_or_else(|e| {
        eprintln!("{}: {e}", path.display());
        std::process::exit(1);
    });
    let started = std::time::Instant::now();
    let converted = match std::env::var("REDLINE_OCR_LANGS") {
        Ok(languages) => {
            let ocr = redline_convert::TesseractOcr::new("tesseract", &languages, redline_convert::DEFAULT_OCR_TIMEOUT);
            let converted = Converters::with_ocr(std::sync::Arc::new(ocr)).convert(format, &bytes);
            eprintln!("converted in {:.2} s", started.elapsed().as_secs_f64());
            converted
        }
        Err(_) => Converters.convert(format, &bytes),
    };
    match converted {
        Ok(converted) => {
            let _ = std::io::stdout().lock().write_all(converted.html.as_bytes());
        }
        Err(e) => {
            eprintln!("{}: {e}", path.display());
            std::process::exit(1);
        }
    }
}

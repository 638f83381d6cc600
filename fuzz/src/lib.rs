//! What every fuzz target does: the production path of an upload. The bytes go through the
//! `DocumentConverter` port (`Converters::convert`), and HTML that comes out is sanitized
//! and sectioned by the `HtmlSections` adapter, as `core::documents` does. Any panic,
//! timeout or allocation over the RSS limit is a bug.
//!
//! One exception, by design: `pdf-extract` panics on many malformed PDFs, and the PDF
//! converter runs it under `catch_unwind` (crates/convert/src/pdf/mod.rs). libFuzzer's panic
//! hook would abort on those caught panics too, so [`tolerate_caught_pdf_extract_panics`]
//! lets a panic pass silently when it is raised inside `pdf-extract` or the crates it alone
//! uses; any other panic (ours, zip, quick-xml, html5ever...) still aborts with its message,
//! and a panic that escapes `convert` aborts at the fuzz target's `extern "C"` boundary.

use redline_convert::Converters;
use redline_domain::document::ChunkId;
use redline_domain::formats::SourceFormat;
use redline_html::Html5everSections;
use redline_ports::{DocumentConverter, HtmlSections};
use std::sync::OnceLock;

fn sections() -> &'static Html5everSections {
    static SECTIONS: OnceLock<Html5everSections> = OnceLock::new();
    SECTIONS.get_or_init(Html5everSections::new)
}

/// Sanitizes and sections `html`; the ids handed out are unique and every section carries one.
pub fn sectionize(html: &str) {
    let mut n = 0u64;
    let mut new_id = || {
        n += 1;
        ChunkId::parse(&format!("f{n}")).expect("a valid chunk id")
    };
    if let Ok(sections) = sections().sectionize(html, &mut new_id) {
        let mut ids: Vec<&str> = sections.iter().map(|s| s.id.as_str()).collect();
        ids.sort_unstable();
        let total = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), total, "duplicate chunk ids");
    }
}

/// Crates whose panics the PDF converter catches: `pdf-extract` and its own dependencies
/// (lopdf 0.42 is only used through it; Redline reads PDFs with lopdf 0.47).
const CAUGHT_BY_DESIGN: &[&str] = &[
    "/pdf-extract-",
    "/lopdf-0.42.",
    "/adobe-cmap-parser-",
    "/cff-parser-",
    "/euclid-",
    "/postscript-",
    "/type1-encoding-parser-",
];

/// Installs, once, a panic hook over libFuzzer's that ignores panics raised in
/// [`CAUGHT_BY_DESIGN`] crates.
pub fn tolerate_caught_pdf_extract_panics() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let fuzzer_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let file = info.location().map(|l| l.file()).unwrap_or_default();
            if CAUGHT_BY_DESIGN.iter().any(|c| file.contains(c)) {
                return;
            }
            fuzzer_hook(info);
        }));
    });
}

/// Converts `bytes` as `format`, then sections the HTML.
pub fn convert(format: SourceFormat, bytes: &[u8]) {
    if format == SourceFormat::Pdf {
        tolerate_caught_pdf_extract_panics();
    }
    if let Ok(converted) = Converters.convert(format, bytes) {
        sectionize(&converted.html);
    }
}

/// Sections `html` whole and in slices of `slice_bytes` (`redline_html`'s cutting of large
/// documents between simple top-level blocks) with the same id generator: the results must
/// be identical, sections and errors alike.
pub fn slices_agree(html: &str, slice_bytes: usize) {
    let ids = || {
        let mut n = 0u64;
        move || {
            n += 1;
            ChunkId::parse(&format!("f{n}")).expect("a valid chunk id")
        }
    };
    let whole = Html5everSections::with_slice_bytes(usize::MAX).sectionize(html, &mut ids());
    let sliced = Html5everSections::with_slice_bytes(slice_bytes).sectionize(html, &mut ids());
    assert_eq!(whole, sliced, "slices of {slice_bytes} bytes differ from the whole document");
}

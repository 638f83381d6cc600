//! Third-party readers judge the DOCX export: pandoc (footnotes are footnotes, RTL text
//! keeps its direction, internal links reach their bookmarks), python-docx (highlights,
//! alignment, picture extents) and LibreOffice headless (opens the file and converts it).
//!
//! Each reader runs as a process. A missing reader fails the test under `CI=true`
//! (scripts/setup-tests.sh installs them there) and is skipped loudly elsewhere.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use redline_domain::export::ExportFormat;
use redline_export::FileExporter;
use redline_ports::{DocumentExporter, ImageSource};

/// A PNG of `w`×`h` opaque grey pixels.
fn png(w: u32, h: u32) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, w, h);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().expect("png header");
        writer.write_image_data(&vec![128u8; (w * h * 3) as usize]).expect("png data");
    }
    out
}

struct Images(HashMap<String, Vec<u8>>);

impl ImageSource for Images {
    fn image(&self, image_id: &str) -> Option<(String, Vec<u8>)> {
        self.0.get(image_id).map(|b| ("image/png".to_string(), b.clone()))
    }
}

/// A document as the sanitizer stores it: ids under `user-content-`, notes in a
/// `role="doc-endnotes"` section.
const HTML: &str = "<h1 data-chunk-id=\"a\" id=\"user-content-intro\">Introduction</h1>\
    <p data-chunk-id=\"b\">A claim<a href=\"#user-content-fn1\" id=\"user-content-fnref1\" role=\"doc-noteref\"><sup>1</sup></a> \
    and another<a href=\"#user-content-fn2\" id=\"user-content-fnref2\" role=\"doc-noteref\"><sup>2</sup></a>. \
    <a href=\"#user-content-intro\">Back to the top</a>.</p>\
    <p data-chunk-id=\"c\" dir=\"rtl\">שלום עולם, hello</p>\
    <p data-chunk-id=\"d\">مرحبا بالعالم</p>\
    <p data-chunk-id=\"e\" style=\"text-align: right\">Right aligned</p>\
    <p data-chunk-id=\"f\"><mark>marked</mark> <span style=\"background-color: #00ffff\">cyan</span> \
    <span style=\"background-color: #90ee90\">pale green</span></p>\
    <table data-chunk-id=\"g\"><tbody><tr><td>Item</td><td style=\"text-align: right\">12.50</td></tr>\
    <tr><td>Other</td><td align=\"center\">3</td></tr></tbody></table>\
    <p data-chunk-id=\"h\"><img src=\"/v1/documents/images/pic\" alt=\"Picture\" style=\"width: 240px\"></p>\
    <div data-chunk-id=\"i\" role=\"doc-endnotes\"><ol>\
    <li id=\"user-content-fn1\"><p>The first source. <a href=\"#user-content-fnref1\" role=\"doc-backlink\">↩</a></p></li>\
    <li id=\"user-content-fn2\"><p>The second source.</p></li></ol></div>";

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Whether `program` runs; when it does not: a failure under CI, a loud skip elsewhere.
fn reader_present(program: &Path, what: &str) -> bool {
    let ok = Command::new(program).arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        let message = format!("{what} ({}) is not installed: run scripts/setup-tests.sh", program.display());
        assert!(!ci(), "{message}");
        eprintln!("\n!! SKIPPED: {message}\n");
    }
    ok
}

/// A fresh directory holding the exported DOCX.
fn exported() -> (PathBuf, PathBuf) {
    let dir =
        std::env::temp_dir().join(format!("redline-readers-{}-{:?}", std::process::id(), std::thread::current().id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let images = Images(HashMap::from([("pic".to_string(), png(120, 60))]));
    let bytes = FileExporter::new().export(HTML, "Readers", ExportFormat::Docx, &images).expect("export");
    let file = dir.join("doc.docx");
    std::fs::write(&file, bytes).expect("write docx");
    (dir, file)
}

fn run(program: &Path, args: &[&str]) -> String {
    let out = Command::new(program).args(args).output().expect("run the reader");
    assert!(out.status.success(), "{} failed: {}", program.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("utf-8 output")
}

#[test]
fn pandoc_reads_footnotes_rtl_and_internal_links() {
    let pandoc = Path::new("pandoc");
    if !reader_present(pandoc, "pandoc (apt-get install pandoc)") {
        return;
    }
    let (dir, file) = exported();
    let file = file.to_str().expect("path");
    let md = run(pandoc, &["-f", "docx", "-t", "markdown", "--wrap=none", file]);
    assert!(md.contains("A claim[^1] and another[^2]."), "{md}");
    assert!(md.contains("[^1]: The first source."), "{md}");
    assert!(md.contains("[^2]: The second source."), "{md}");
    assert!(!md.contains('↩'), "{md}");
    let html = run(pandoc, &["-f", "docx", "-t", "html", "--wrap=none", file]);
    assert!(html.contains("<span dir=\"rtl\">שלום עולם"), "{html}");
    assert!(html.contains("<span dir=\"rtl\">مرحبا بالعالم</span>"), "{html}");
    // The link reaches the heading's bookmark (pandoc names the heading by its text and
    // points the link at that name).
    let heading_id = html.split("<h1 id=\"").nth(1).and_then(|r| r.split('"').next()).expect("an h1 with an id");
    assert!(html.contains(&format!("<a href=\"#{heading_id}\">Back to the top</a>")), "{html}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn pandoc_reads_the_markdown_notes_as_notes() {
    let pandoc = Path::new("pandoc");
    if !reader_present(pandoc, "pandoc (apt-get install pandoc)") {
        return;
    }
    let (dir, _) = exported();
    let md =
        FileExporter::new().export(HTML, "Readers", ExportFormat::Markdown, &Images(HashMap::new())).expect("export");
    let file = dir.join("doc.md");
    std::fs::write(&file, md).expect("write markdown");
    let native = run(pandoc, &["-f", "markdown", "-t", "native", file.to_str().expect("path")]);
    assert_eq!(native.matches("Note").count(), 2, "{native}");
    assert!(native.contains("Note\n") || native.contains("Note ["), "{native}");
    let html = run(pandoc, &["-f", "markdown", "-t", "html", "--wrap=none", file.to_str().expect("path")]);
    assert!(html.contains("role=\"doc-noteref\"><sup>1</sup></a>"), "{html}");
    assert!(html.contains("The first source."), "{html}");
    let _ = std::fs::remove_dir_all(dir);
}

/// What python-docx sees, one `key=value` per line.
const PYTHON_DOCX: &str = r#"
import sys
from docx import Document
d = Document(sys.argv[1])
for p in d.paragraphs:
    bidi = p._p.pPr is not None and p._p.pPr.find('{http://schemas.openxmlformats.org/wordprocessingml/2006/main}bidi') is not None
    print(f"para={p.text!r} align={p.alignment} bidi={bidi}")
    for r in p.runs:
        if r.font.highlight_color is not None:
            print(f"highlight={r.text!r} {r.font.highlight_color}")
for t in d.tables:
    for row in t.rows:
        for c in row.cells:
            print(f"cell={c.text!r} align={c.paragraphs[0].alignment}")
for s in d.inline_shapes:
    print(f"picture={s.width}x{s.height}")
"#;

#[test]
fn python_docx_sees_highlights_alignment_and_picture_size() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = root.join(".venv/bin/python");
    let has_module =
        python.exists() && Command::new(&python).args(["-c", "import docx"]).output().is_ok_and(|o| o.status.success());
    if !has_module {
        let message = "python-docx is not installed in .venv: run scripts/setup-tests.sh";
        assert!(!ci(), "{message}");
        eprintln!("\n!! SKIPPED: {message}\n");
        return;
    }
    let (dir, file) = exported();
    let out = run(&python, &["-c", PYTHON_DOCX, file.to_str().expect("path")]);
    for line in [
        "highlight='marked' YELLOW (7)",
        "highlight='cyan' TURQUOISE (3)",
        "para='Right aligned' align=RIGHT (2) bidi=False",
        "para='שלום עולם, hello' align=None bidi=True",
        "para='مرحبا بالعالم' align=None bidi=True",
        "cell='12.50' align=RIGHT (2)",
        "cell='3' align=CENTER (1)",
        "cell='Item' align=None",
        // 240 × 120 CSS pixels (the style's width, the ratio of the 120 × 60 picture).
        "picture=2286000x1143000",
    ] {
        assert!(out.lines().any(|l| l == line), "{line:?} not in:\n{out}");
    }
    assert!(!out.contains("highlight='pale green'"), "{out}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn libreoffice_opens_the_docx() {
    let soffice = Path::new("soffice");
    if !reader_present(soffice, "LibreOffice (apt-get install libreoffice-writer-nogui)") {
        return;
    }
    let (dir, file) = exported();
    let profile = format!("-env:UserInstallation=file://{}", dir.join("profile").display());
    let out_dir = dir.to_str().expect("path");
    run(soffice, &[&profile, "--headless", "--convert-to", "pdf", "--outdir", out_dir, file.to_str().expect("path")]);
    let pdf = std::fs::read(dir.join("doc.pdf")).expect("LibreOffice wrote no PDF: it could not open the DOCX");
    assert!(pdf.starts_with(b"%PDF") && pdf.len() > 1000, "{} bytes", pdf.len());
    let _ = std::fs::remove_dir_all(dir);
}

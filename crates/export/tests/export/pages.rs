//! The page header and footer (`role="doc-pageheader"`, `doc-pagefooter`) in every format:
//! DOCX header and footer parts that LibreOffice shows on every page and that read back as
//! the same sections, the PDF's margins on every page (judged by pdftotext), and the text
//! formats' reading order.

use std::io::{Cursor, Read};
use std::path::Path;
use std::process::Command;

use redline_domain::export::ExportFormat;
use redline_domain::formats::SourceFormat;
use redline_export::FileExporter;
use redline_ports::export::NoImages;
use redline_ports::{DocumentConverter, DocumentExporter};

/// Three pages or more of body text between a page header and a page footer, as stored.
fn html() -> String {
    let body: String = (1..=90)
        .map(|i| format!("<p data-chunk-id=\"p{i}\">Paragraph {i} of the body, long enough to fill a line or two of a page of text.</p>"))
        .collect();
    format!(
        "<div data-chunk-id=\"h\" role=\"doc-pageheader\"><p>ACME Ltd — <strong>Confidential</strong></p></div>\
         {body}\
         <div data-chunk-id=\"f\" role=\"doc-pagefooter\"><p>Registered in Ruritania</p></div>"
    )
}

fn export(format: ExportFormat) -> Vec<u8> {
    FileExporter::new().export(&html(), "Pages", format, &NoImages).expect("export")
}

fn part(docx: &[u8], name: &str) -> Option<String> {
    let mut zip = zip::ZipArchive::new(Cursor::new(docx)).expect("a zip");
    let mut f = zip.by_name(name).ok()?;
    let mut s = String::new();
    f.read_to_string(&mut s).expect("utf-8 part");
    Some(s)
}

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

fn present(program: &str) -> bool {
    let ok = Command::new(program).arg("-v").output().is_ok();
    if !ok {
        assert!(!ci(), "{program} is not installed: run scripts/setup-tests.sh");
        eprintln!("\n!! SKIPPED: {program} is not installed\n");
    }
    ok
}

/// pdftotext's text of each page of a PDF file.
fn pages_of(pdf: &Path) -> Vec<String> {
    let out =
        Command::new("pdftotext").args(["-layout", pdf.to_str().expect("path"), "-"]).output().expect("pdftotext");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let mut pages: Vec<String> = text.split('\u{c}').map(str::to_owned).collect();
    if pages.last().is_some_and(|p| p.trim().is_empty()) {
        pages.pop();
    }
    pages
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("redline-pages-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn docx_has_header_and_footer_parts_that_read_back_as_the_same_sections() {
    let docx = export(ExportFormat::Docx);
    let header = part(&docx, "word/header1.xml").expect("a header part");
    let footer = part(&docx, "word/footer1.xml").expect("a footer part");
    assert!(header.contains("<w:hdr ") && header.contains("ACME Ltd"), "{header}");
    assert!(footer.contains("<w:ftr ") && footer.contains("Registered in Ruritania"), "{footer}");
    let document = part(&docx, "word/document.xml").expect("the document");
    assert!(document.contains("<w:headerReference w:type=\"default\" r:id=\"rId5\"/>"), "{document}");
    assert!(document.contains("<w:footerReference w:type=\"default\" r:id=\"rId6\"/>"));
    assert!(!document.contains("ACME Ltd"), "the header is not in the body too");
    let types = part(&docx, "[Content_Types].xml").expect("content types");
    assert!(types.contains("/word/header1.xml") && types.contains("/word/footer1.xml"), "{types}");
    // Read back: the same sections, first and last.
    let back = redline_convert::Converters.convert(SourceFormat::Docx, &docx).expect("reads back");
    assert!(back.html.starts_with("<header role=\"doc-pageheader\">"), "{}", back.html);
    assert!(back.html.contains("<strong>Confidential</strong>"), "{}", back.html);
    assert!(back.html.trim_end().ends_with("</footer>"), "{}", back.html);
    assert!(back.warnings.is_empty(), "{:?}", back.warnings);
    // Without them: no parts, no references.
    let plain = FileExporter::new().export("<p>x</p>", "t", ExportFormat::Docx, &NoImages).expect("export");
    assert!(part(&plain, "word/header1.xml").is_none());
    assert!(!part(&plain, "word/document.xml").expect("document").contains("headerReference"));
}

#[test]
fn libreoffice_shows_the_docx_header_and_footer_on_every_page() {
    if !present("soffice") || !present("pdftotext") {
        return;
    }
    let dir = temp_dir("lo");
    let file = dir.join("pages.docx");
    std::fs::write(&file, export(ExportFormat::Docx)).expect("write");
    let profile = format!("-env:UserInstallation=file://{}", dir.join("profile").display());
    let out = Command::new("soffice")
        .args([&profile, "--headless", "--convert-to", "pdf", "--outdir", dir.to_str().expect("path")])
        .arg(&file)
        .output()
        .expect("soffice");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let pages = pages_of(&dir.join("pages.pdf"));
    assert!(pages.len() >= 3, "{} pages", pages.len());
    for (i, page) in pages.iter().enumerate() {
        let first = page.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let last = page.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
        assert!(first.contains("ACME Ltd — Confidential"), "page {}: {first:?}", i + 1);
        assert!(last.contains("Registered in Ruritania"), "page {}: {last:?}", i + 1);
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn pdf_sets_the_header_and_footer_in_the_margins_of_every_page() {
    if !present("pdftotext") {
        return;
    }
    let dir = temp_dir("pdf");
    let file = dir.join("pages.pdf");
    std::fs::write(&file, export(ExportFormat::Pdf)).expect("write");
    let pages = pages_of(&file);
    assert!(pages.len() >= 3, "{} pages", pages.len());
    for (i, page) in pages.iter().enumerate() {
        let lines: Vec<&str> = page.lines().filter(|l| !l.trim().is_empty()).collect();
        assert!(lines.first().is_some_and(|l| l.contains("ACME Ltd — Confidential")), "page {}: {lines:?}", i + 1);
        assert!(lines.last().is_some_and(|l| l.contains("Registered in Ruritania")), "page {}: {lines:?}", i + 1);
        assert_eq!(page.matches("ACME Ltd").count(), 1, "page {}", i + 1);
    }
    // Every paragraph is still there, once.
    let all = pages.concat();
    for n in [1, 45, 90] {
        assert_eq!(all.matches(&format!("Paragraph {n} of")).count(), 1, "paragraph {n}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn text_formats_read_the_header_first_and_the_footer_last() {
    let md = String::from_utf8(export(ExportFormat::Markdown)).expect("utf-8");
    assert!(md.starts_with("ACME Ltd — **Confidential**\n\nParagraph 1 of"), "{md}");
    assert!(md.ends_with("Paragraph 90 of the body, long enough to fill a line or two of a page of text.\n\nRegistered in Ruritania\n"), "{md}");
    let txt = String::from_utf8(export(ExportFormat::Txt)).expect("utf-8");
    assert!(txt.starts_with("ACME Ltd — Confidential\n\nParagraph 1 of"), "{txt}");
    assert!(txt.ends_with("\n\nRegistered in Ruritania\n"), "{txt}");
}

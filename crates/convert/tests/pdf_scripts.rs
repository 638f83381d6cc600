//! PDF text in every script (docs/conversion.md, "PDF text in right-to-left and CJK
//! scripts"): LibreOffice makes the PDFs (`soffice --convert-to pdf`) from HTML written here
//! in Arabic, Hebrew, Persian, mixed-direction lines, Chinese, Japanese and Korean; on each,
//! the words Redline reads back are at least as many of the source's as pdftotext (poppler)
//! reads, and right-to-left words come back in logical order (a word read mirrored does not
//! count).
//!
//! LibreOffice and pdftotext run as processes; missing, they fail the test under `CI=true`
//! and are skipped loudly elsewhere.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use redline_convert::Converters;
use redline_domain::formats::SourceFormat;
use redline_ports::DocumentConverter;

/// Each document: its name and its paragraphs (`rtl`: written right to left).
const DOCUMENTS: [(&str, &[(bool, &str)]); 7] = [
    (
        "arabic",
        &[
            (true, "إشعار متعدد اللغات"),
            (true, "يسعدنا أن نعلمكم بأن الاجتماع السنوي سيعقد في القاعة الكبرى يوم الخميس القادم."),
            (true, "رقم الفاتورة INV-2024-0042 بتاريخ 15 مارس 2024 والمبلغ 1250 دولار."),
        ],
    ),
    (
        "hebrew",
        &[
            (true, "הודעה רב לשונית"),
            (true, "אנו שמחים להודיע כי הפגישה השנתית תתקיים באולם הגדול ביום חמישי הבא."),
            (true, "מספר החשבונית INV-2024-0042 מיום 15 במרץ."),
        ],
    ),
    (
        "persian",
        &[
            (true, "اطلاعیه چند زبانه"),
            (true, "خوشحالیم به اطلاع شما برسانیم که جلسه سالانه در سالن بزرگ برگزار خواهد شد."),
        ],
    ),
    (
        "mixed",
        &[
            (false, "The invoice INV-2024-0042 (رقم الفاتورة) is due on Friday."),
            (false, "Hebrew inside English: the word שלום means peace."),
            (true, "النص العربي مع English words في المنتصف."),
        ],
    ),
    ("chinese", &[(false, "多语言通知"), (false, "我们很高兴地通知您，年度会议将于下周四在大礼堂举行。")]),
    ("japanese", &[(false, "多言語のお知らせ"), (false, "年次総会は来週の木曜日に大ホールで開催されます。")]),
    ("korean", &[(false, "다국어 안내"), (false, "연례 회의가 다음 주 목요일 대강당에서 열립니다.")]),
];

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

fn present(program: &str, args: &[&str]) -> bool {
    let ok = Command::new(program).args(args).output().is_ok_and(|o| o.status.success());
    if !ok {
        let message = format!("{program} is not installed: run scripts/setup-tests.sh");
        assert!(!ci(), "{message}");
        eprintln!("\n!! SKIPPED: {message}\n");
    }
    ok
}

/// The words of a text: runs of letters, digits and marks; CJK text (no spaces) as its
/// characters, each a word.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for w in text.split(|c: char| !(c.is_alphanumeric() || is_mark(c))).filter(|w| !w.is_empty()) {
        if w.chars().any(is_cjk) {
            out.extend(w.chars().filter(|c| c.is_alphanumeric()).map(String::from));
        } else {
            out.push(w.to_lowercase());
        }
    }
    out
}

fn is_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x0591..=0x05C7 | 0x0610..=0x061A | 0x064B..=0x065F | 0x0670 | 0x200C | 0x200D)
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x9FFF | 0xAC00..=0xD7AF | 0x1100..=0x11FF | 0xF900..=0xFAFF)
}

/// The share of the source's words (counted with repeats) that `read` has.
fn recall(source: &[String], read: &str) -> f64 {
    let mut have: HashMap<String, usize> = HashMap::new();
    for w in words(read) {
        *have.entry(w).or_insert(0) += 1;
    }
    let found = source
        .iter()
        .filter(|w| match have.get_mut(w.as_str()) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        })
        .count();
    found as f64 / source.len().max(1) as f64
}

/// Text of HTML: tags left out, entities of the escaper read back.
fn text_of(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => {
                in_tag = true;
                out.push(' ');
            }
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"")
}

/// LibreOffice's PDFs of `sources` (HTML read as Writer documents when `html`), written
/// beside them in `dir`.
fn libreoffice_pdfs(dir: &Path, sources: &[PathBuf], html: bool) {
    let profile = format!("-env:UserInstallation=file://{}", dir.join("profile").display());
    let mut command = Command::new("soffice");
    command.args([profile.as_str(), "--headless"]);
    if html {
        command.arg("--infilter=HTML (StarWriter)");
    }
    let out = command.args(["--convert-to", "pdf", "--outdir"]).arg(dir).args(sources).output().expect("soffice");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn pdfs(dir: &Path) -> Vec<(PathBuf, &'static [(bool, &'static str)])> {
    let mut sources = Vec::new();
    for (name, paragraphs) in DOCUMENTS {
        let body: String = paragraphs
            .iter()
            .map(|(rtl, text)| if *rtl { format!("<p dir=\"rtl\">{text}</p>") } else { format!("<p>{text}</p>") })
            .collect();
        let path = dir.join(format!("{name}.html"));
        std::fs::write(
            &path,
            format!("<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body>{body}</body></html>"),
        )
        .expect("write the source");
        sources.push(path);
    }
    libreoffice_pdfs(dir, &sources, true);
    DOCUMENTS.iter().map(|(name, paragraphs)| (dir.join(format!("{name}.pdf")), *paragraphs)).collect()
}

#[test]
fn every_script_reads_back_at_least_as_well_as_pdftotext_and_in_logical_order() {
    if !present("soffice", &["--version"]) || !present("pdftotext", &["-v"]) {
        return;
    }
    let dir = std::env::temp_dir().join(format!("redline-pdf-scripts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut failures = Vec::new();
    for (pdf, paragraphs) in pdfs(&dir) {
        let name = pdf.file_stem().and_then(|s| s.to_str()).unwrap_or("?").to_owned();
        let bytes = std::fs::read(&pdf).unwrap_or_else(|e| panic!("{name}: LibreOffice wrote no PDF: {e}"));
        let source: Vec<String> = paragraphs.iter().flat_map(|(_, t)| words(t)).collect();
        let converted = Converters.convert(SourceFormat::Pdf, &bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let ours = recall(&source, &text_of(&converted.html));
        let poppler = Command::new("pdftotext").arg(&pdf).arg("-").output().expect("pdftotext");
        let theirs = recall(&source, &String::from_utf8_lossy(&poppler.stdout));
        eprintln!("{name}: Redline {ours:.2}, pdftotext {theirs:.2}");
        if ours < theirs || ours < 0.9 {
            failures.push(format!("{name}: Redline {ours:.2} < pdftotext {theirs:.2} (or < 0.90): {}", converted.html));
        }
        // Right-to-left paragraphs are marked so (`dir="rtl"`), the others not.
        for (rtl, text) in paragraphs.iter() {
            let first = words(text).into_iter().next().unwrap_or_default();
            let marked = converted.html.split("<p").any(|p| p.starts_with(" dir=\"rtl\"") && p.contains(&first));
            if *rtl && !marked {
                failures.push(format!("{name}: {text:?} is not marked right to left: {}", converted.html));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let _ = std::fs::remove_dir_all(dir);
}

/// A right-to-left table (LibreOffice draws its first column rightmost, with rules) reads
/// back as a right-to-left table whose cells are in their logical order.
#[test]
fn a_right_to_left_table_keeps_its_columns_in_reading_order() {
    if !present("soffice", &["--version"]) {
        return;
    }
    let dir = std::env::temp_dir().join(format!("redline-pdf-rtl-table-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let rows = [["الاسم", "المدينة", "المبلغ"], ["أحمد", "القاهرة", "١٢٠"], ["سارة", "عمان", "٩٥"]];
    let body: String = rows
        .iter()
        .map(|row| format!("<tr>{}</tr>", row.iter().map(|c| format!("<td>{c}</td>")).collect::<String>()))
        .collect();
    let source = dir.join("table.html");
    std::fs::write(
        &source,
        format!(
            "<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body dir=\"rtl\">\
             <p dir=\"rtl\">جدول المبالغ</p><table dir=\"rtl\" border=\"1\" cellpadding=\"4\">{body}</table></body></html>"
        ),
    )
    .expect("write the source");
    libreoffice_pdfs(&dir, &[source], true);
    let bytes = std::fs::read(dir.join("table.pdf")).expect("LibreOffice wrote no PDF");
    let converted = Converters.convert(SourceFormat::Pdf, &bytes).expect("converts");
    let html = &converted.html;
    let table = html.split("<table").nth(1).unwrap_or_else(|| panic!("no table: {html}"));
    assert!(table.starts_with(" dir=\"rtl\">"), "{html}");
    for row in rows {
        let tr = table
            .split("<tr>")
            .find(|tr| tr.contains(row[1]))
            .unwrap_or_else(|| panic!("no row of {}: {html}", row[1]));
        let cells: Vec<String> =
            tr.split("<td").skip(1).map(|td| text_of(td).replace('>', "").trim().to_owned()).collect();
        assert_eq!(cells, row.iter().map(|c| (*c).to_owned()).collect::<Vec<_>>(), "{html}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Vertical Japanese (LibreOffice lays a page out top to bottom, columns right to left, from
/// a flat ODT with `style:writing-mode="tb-rl"`) reads back with each paragraph whole and in
/// order. pdftotext reads the page row by row across the columns, so its text has neither
/// paragraph (printed, not asserted).
#[test]
fn vertical_japanese_reads_in_reading_order() {
    if !present("soffice", &["--version"]) {
        return;
    }
    let dir = std::env::temp_dir().join(format!("redline-pdf-vertical-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let paragraphs = ["多言語のお知らせ", "年次総会は来週の木曜日に大ホールで開催されます。"];
    let body: String = paragraphs.iter().map(|p| format!("<text:p>{p}</text:p>")).collect();
    let source = dir.join("vertical.fodt");
    std::fs::write(
        &source,
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.text">
<office:font-face-decls><style:font-face style:name="Noto Sans CJK JP" svg:font-family="'Noto Sans CJK JP'"/></office:font-face-decls>
<office:styles><style:default-style style:family="paragraph"><style:text-properties style:font-name-asian="Noto Sans CJK JP" fo:font-size="14pt" style:font-size-asian="14pt"/></style:default-style></office:styles>
<office:automatic-styles><style:page-layout style:name="pm1"><style:page-layout-properties fo:page-width="14.8cm" fo:page-height="21cm" style:writing-mode="tb-rl" fo:margin="2cm"/></style:page-layout></office:automatic-styles>
<office:master-styles><style:master-page style:name="Standard" style:page-layout-name="pm1"/></office:master-styles>
<office:body><office:text>{body}</office:text></office:body>
</office:document>"#
        ),
    )
    .expect("write the source");
    libreoffice_pdfs(&dir, &[source], false);
    let bytes = std::fs::read(dir.join("vertical.pdf")).expect("LibreOffice wrote no PDF");
    let converted = Converters.convert(SourceFormat::Pdf, &bytes).expect("converts");
    let squeeze = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let ours = squeeze(&text_of(&converted.html));
    for p in paragraphs {
        assert!(ours.contains(p), "{p} is not whole in {}", converted.html);
    }
    if let Ok(poppler) = Command::new("pdftotext").arg(dir.join("vertical.pdf")).arg("-").output() {
        let theirs = squeeze(&String::from_utf8_lossy(&poppler.stdout));
        let whole = paragraphs.iter().filter(|p| theirs.contains(*p)).count();
        eprintln!("vertical Japanese: paragraphs whole: Redline 2 of 2, pdftotext {whole} of 2");
    }
    let _ = std::fs::remove_dir_all(dir);
}

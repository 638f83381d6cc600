//! The PDF of a mixed-script document (every script, emoji, a table, a list, footnotes) read
//! back by third-party tools: `pdftotext` gives each paragraph's and note's text back in
//! logical order, `pdffonts` shows every font embedded, and no content stream draws glyph 0
//! (`.notdef`, the empty box). These need poppler-utils and
//! Debian's fonts-noto-cjk (installed by scripts/setup-tests.sh): missing, they fail under
//! `CI=true` and are skipped loudly elsewhere. Without system fonts the uncovered
//! characters are named in the export's warnings, with the package to install.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

use redline_domain::export::ExportFormat;
use redline_export::{FileExporter, Rendered};
use redline_ports::export::NoImages;
use redline_ports::ImageSource;

/// Each script's paragraph: (script, text, whether words are space-separated).
const PARAGRAPHS: &[(&str, &str, bool)] = &[
    ("Latin", "The quick brown fox jumps over the lazy dog while the office drafts its reply", true),
    ("Greek", "Η γρήγορη καφέ αλεπού πηδά πάνω από τον τεμπέλη σκύλο στο γραφείο", true),
    ("Cyrillic", "Съешь же ещё этих мягких французских булок да выпей чаю в конторе", true),
    ("Chinese", "我们的文档编辑器支持中文排版和自动换行功能", false),
    ("Japanese", "日本語のテキストも正しく表示されて検索できます", false),
    ("Korean", "한국어 문장도 올바르게 표시되고 검색할 수 있습니다", true),
    ("Arabic", "مرحبا بالعالم هذا نص عربي لاختبار التصدير إلى ملف", true),
    ("Hebrew", "שלום עולם זהו טקסט בעברית לבדיקת הייצוא לקובץ", true),
];

const EMOJI: &str = "Party time \u{1F389} and a smile \u{1F600}";

fn document() -> String {
    let mut html = String::from("<h1>Mixed scripts</h1>");
    for (i, (_, text, _)) in PARAGRAPHS.iter().enumerate() {
        html.push_str(&format!("<p data-chunk-id=\"p{i}\">{text}</p>"));
    }
    html.push_str(&format!("<p data-chunk-id=\"emoji\">{EMOJI}</p>"));
    html.push_str(
        "<table data-chunk-id=\"t\"><thead><tr><th>Language</th><th>Greeting</th></tr></thead><tbody>\
         <tr><td>Arabic</td><td>أهلا وسهلا</td></tr>\
         <tr><td>Hebrew</td><td>ברוכים הבאים</td></tr>\
         <tr><td>Chinese</td><td>欢迎光临</td></tr></tbody></table>\
         <ul data-chunk-id=\"l\"><li>Первый пункт</li><li>Δεύτερο σημείο</li><li>三番目の項目</li></ul>",
    );
    // Footnotes whose text is in right-to-left and CJK scripts, at the page foot.
    let noteref = |n: u32| {
        format!("<a href=\"#user-content-fn{n}\" id=\"user-content-fnref{n}\" role=\"doc-noteref\"><sup>{n}</sup></a>")
    };
    html.push_str(&format!("<p data-chunk-id=\"n\">Notes here{} and here{}</p>", noteref(1), noteref(2)));
    html.push_str("<div data-chunk-id=\"notes\" role=\"doc-endnotes\"><ol>");
    for (n, (_, text)) in NOTES.iter().enumerate() {
        html.push_str(&format!("<li id=\"user-content-fn{}\"><p>{text}</p></li>", n + 1));
    }
    html.push_str("</ol></div>");
    html
}

/// The footnotes' texts: (script, text).
const NOTES: &[(&str, &str)] = &[("Arabic note", "ملاحظة مكتوبة باللغة العربية"), ("Chinese note", "这是一个中文脚注")];

fn render(exporter: &FileExporter, html: &str) -> Rendered {
    exporter.render(html, "Scripts", ExportFormat::Pdf, &NoImages as &dyn ImageSource).expect("pdf")
}

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Whether the Debian tools and fonts are here; under CI they must be.
fn tools_present(test: &str) -> bool {
    let tools = ["pdftotext", "pdffonts"].iter().all(|t| Command::new(t).arg("-v").output().is_ok());
    let cjk = std::path::Path::new("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc").exists();
    if tools && cjk {
        return true;
    }
    let what =
        "poppler-utils and fonts-noto-cjk (apt-get install poppler-utils fonts-noto-cjk; scripts/setup-tests.sh)";
    assert!(!ci(), "{test}: {what} missing under CI=true");
    eprintln!("\n!! {test} SKIPPED: {what} missing\n");
    false
}

fn temp_pdf(bytes: &[u8], name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("redline-{name}-{}.pdf", std::process::id()));
    std::fs::File::create(&path).and_then(|mut f| f.write_all(bytes)).expect("write pdf");
    path
}

/// Words separated by single spaces, without the embedding marks pdftotext puts around
/// right-to-left runs (U+202A–U+202E).
fn squash(s: &str) -> String {
    let s: String = s.chars().filter(|c| !('\u{202A}'..='\u{202E}').contains(c)).collect();
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The share of `expected`'s words (characters, for scripts without spaces) found in `got`.
fn recall(expected: &str, spaced: bool, got: &str) -> f64 {
    let words: Vec<String> = if spaced {
        expected.split_whitespace().map(str::to_string).collect()
    } else {
        expected.chars().filter(|c| !c.is_whitespace()).map(String::from).collect()
    };
    let mut have: HashMap<String, usize> = HashMap::new();
    let tokens: Vec<String> = if spaced {
        got.split_whitespace().map(str::to_string).collect()
    } else {
        got.chars().filter(|c| !c.is_whitespace()).map(String::from).collect()
    };
    for t in tokens {
        *have.entry(t).or_default() += 1;
    }
    let found = words
        .iter()
        .filter(|w| match have.get_mut(*w) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        })
        .count();
    found as f64 / words.len() as f64
}

/// Every glyph code shown by the PDF's content streams (2-byte CIDs).
fn shown_glyphs(bytes: &[u8]) -> Vec<u16> {
    let doc = lopdf::Document::load_mem(bytes).expect("lopdf reads it");
    let mut glyphs = Vec::new();
    for (_, page) in doc.get_pages() {
        let content = doc.get_and_decode_page_content(page).expect("content");
        for op in content.operations {
            let strings: Vec<&lopdf::Object> = match op.operator.as_str() {
                "Tj" => op.operands.iter().collect(),
                "TJ" => op.operands.iter().filter_map(|o| o.as_array().ok()).flatten().collect(),
                _ => continue,
            };
            for s in strings {
                if let lopdf::Object::String(b, _) = s {
                    glyphs.extend(b.chunks(2).map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])));
                }
            }
        }
    }
    glyphs
}

#[test]
fn every_script_comes_back_in_logical_order_from_pdftotext() {
    if !tools_present("every_script_comes_back_in_logical_order_from_pdftotext") {
        return;
    }
    let rendered = render(&FileExporter::new(), &document());
    let path = temp_pdf(&rendered.bytes, "scripts");
    let out = Command::new("pdftotext").arg(&path).arg("-").output().expect("pdftotext runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = squash(&String::from_utf8_lossy(&out.stdout));
    for (script, expected, spaced) in PARAGRAPHS {
        let r = recall(expected, *spaced, &text);
        assert!(r >= 0.98, "{script}: recall {r:.2} in {text}");
        assert!(text.contains(expected), "{script}: {expected:?} not in logical order in {text}");
    }
    for needle in ["Language Greeting", "أهلا وسهلا", "ברוכים הבאים", "欢迎光临", "Первый пункт", "三番目の項目"]
    {
        assert!(text.contains(needle), "{needle:?} not in {text}");
    }
    assert!(text.contains("Party time"), "{text}");
    for (script, note) in NOTES {
        assert!(text.contains(note), "{script}: {note:?} not in logical order in {text}");
    }
    assert!(text.contains("Notes here1 and here2") || text.contains("Notes here 1 and here 2"), "{text}");

    // Every font embedded (pdffonts: the `emb` column, third from the end).
    let fonts = Command::new("pdffonts").arg(&path).output().expect("pdffonts runs");
    let listing = String::from_utf8_lossy(&fonts.stdout).to_string();
    let rows: Vec<&str> = listing.lines().skip_while(|l| !l.starts_with("----")).skip(1).collect();
    assert!(rows.len() >= 5, "Latin, Arabic, Hebrew and CJK fonts at least: {listing}");
    for row in &rows {
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cols.get(cols.len().saturating_sub(5)), Some(&"yes"), "not embedded: {row}");
    }
    assert!(listing.contains("CJK"), "a CJK system font was used: {listing}");
    std::fs::remove_file(&path).ok();

    assert!(!shown_glyphs(&rendered.bytes).contains(&0), "no .notdef glyph is drawn");
    // The emoji DejaVu lacks (🎉) are the one script no installed font covers: named, not boxes.
    assert!(
        rendered.warnings.iter().all(|w| w.contains("fonts-noto-color-emoji") && w.contains("U+1F389")),
        "{:?}",
        rendered.warnings
    );
}

#[test]
fn without_cjk_fonts_the_export_names_the_package() {
    let empty = std::env::temp_dir().join(format!("redline-no-fonts-{}", std::process::id()));
    std::fs::create_dir_all(&empty).expect("empty dir");
    let rendered = render(&FileExporter::new().with_font_dirs(vec![empty.clone()]), &document());
    std::fs::remove_dir_all(&empty).ok();
    let cjk: Vec<&String> = rendered.warnings.iter().filter(|w| w.contains("fonts-noto-cjk")).collect();
    assert_eq!(cjk.len(), 1, "one warning for all the CJK characters: {:?}", rendered.warnings);
    assert!(cjk[0].contains("U+6211"), "the first one is named: {}", cjk[0]);
    assert!(rendered.warnings.iter().any(|w| w.contains("fonts-noto-color-emoji")), "{:?}", rendered.warnings);
    assert!(!shown_glyphs(&rendered.bytes).contains(&0), "left out, not drawn as boxes");
    // The bundled fonts still cover Latin, Greek, Cyrillic, Arabic and Hebrew.
    let text = squash(&pdf_extract::extract_text_from_mem(&rendered.bytes).expect("text"));
    for needle in ["The quick brown fox", "Съешь же ещё", "γρήγορη"] {
        assert!(text.contains(needle), "{needle:?} not in {text}");
    }
}

//! Every DOCX and PDF export of the corpus opens in LibreOffice. Each source of
//! `tests/fixtures/corpus` (MANIFEST.tsv) that the converter accepts is uploaded as
//! `core::documents` does it (the converter, its pictures given ids, the sanitizer and
//! sectioner), exported to DOCX and to PDF, and LibreOffice headless converts every export:
//! the DOCX files through Writer to ODT, the PDF files through Draw's PDF import to ODG, one
//! `soffice` run per format for all the files (the two runs at once). Each conversion must
//! give a file holding text or pictures, whose text holds a sample of the document's words
//! (taken from its text export; for the PDF, words of the scripts its bundled fonts draw left
//! to right, see [`bundled_ltr`]).
//!
//! Needs LibreOffice Writer and Draw (`libreoffice-writer-nogui`, `libreoffice-draw-nogui`):
//! missing, the test fails under `CI=true` and is skipped loudly elsewhere. It takes about
//! 4 minutes on the shared 2-core machine, almost all of it LibreOffice's import of the
//! 1,469 PDF pages (the DOCX files take 1.5 minutes beside it).

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use redline_convert::Converters;
use redline_domain::document::ChunkId;
use redline_domain::export::ExportFormat;
use redline_domain::formats::SourceFormat;
use redline_export::FileExporter;
use redline_html::Html5everSections;
use redline_ports::{DocumentConverter, DocumentExporter, HtmlSections, ImageSource};

/// Longest one `soffice` run may take before the test fails (a hang is a failure).
const SOFFICE_LIMIT: Duration = Duration::from_secs(900);

/// Words sampled from each document.
const SAMPLE: usize = 12;

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// The pictures of one upload, by the id its HTML names them with.
struct Pictures(HashMap<String, (String, Vec<u8>)>);

impl ImageSource for Pictures {
    fn image(&self, image_id: &str) -> Option<(String, Vec<u8>)> {
        self.0.get(image_id).cloned()
    }
}

/// One uploaded source: its stored HTML and pictures.
struct Upload {
    /// `folder-stem`, unique in the corpus.
    name: String,
    html: String,
    pictures: Pictures,
}

fn format_of(path: &Path) -> Option<SourceFormat> {
    match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
        "docx" => Some(SourceFormat::Docx),
        "pdf" => Some(SourceFormat::Pdf),
        "rtf" => Some(SourceFormat::Rtf),
        "md" => Some(SourceFormat::Markdown),
        "html" | "htm" => Some(SourceFormat::Html),
        "txt" => Some(SourceFormat::Txt),
        _ => None,
    }
}

/// The corpus files the converter accepts, uploaded: pictures pointed at
/// `/v1/documents/images/{id}`, the HTML sanitized and sectioned. Files it refuses (broken,
/// encrypted, empty) are left out, as the service answers them 422.
fn uploads(root: &Path) -> Vec<Upload> {
    let manifest = std::fs::read_to_string(root.join("MANIFEST.tsv")).expect("tests/fixtures/corpus/MANIFEST.tsv");
    let mut out = Vec::new();
    for line in manifest.lines().skip(1) {
        let Some(file) = line.split('\t').next() else { continue };
        let path = root.join(file);
        let Some(format) = format_of(&path) else { continue };
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        let Ok(mut converted) = Converters.convert(format, &bytes) else { continue };
        let mut pictures = HashMap::new();
        for (n, image) in converted.images.into_iter().enumerate() {
            let id = format!("img_{n:032x}");
            converted.html = converted.html.replace(
                &format!("src=\"{}\"", image.placeholder),
                &format!("src=\"https://redline.invalid/v1/documents/images/{id}\""),
            );
            pictures.insert(id, (image.content_type, image.bytes));
        }
        let mut next = 0u64;
        let mut new_id = || {
            next += 1;
            ChunkId::parse(&format!("c{next}")).expect("a chunk id")
        };
        let sections = Html5everSections::with_public_base_url("https://redline.invalid")
            .sectionize(&converted.html, &mut new_id)
            .unwrap_or_default();
        if !sections.iter().any(|s| s.shows_content()) {
            continue;
        }
        let html = sections.iter().map(|s| format!("{}\n", s.html)).collect();
        let name = file.replace('/', "-");
        let name = name.rsplit_once('.').map_or(name.clone(), |(stem, _)| stem.to_string());
        out.push(Upload { name, html, pictures: Pictures(pictures) });
    }
    out
}

/// Up to [`SAMPLE`] words of the document's text export for which `keep` holds, spread over
/// it: runs of at least four letters, pictures' alt text (`[…]`) left out.
fn sample_words(text: &str, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for line in text.lines() {
        let mut rest = line;
        let mut kept = String::new();
        while let Some(open) = rest.find('[') {
            kept.push_str(&rest[..open]);
            rest = rest[open..].find(']').map_or("", |close| &rest[open + close + 1..]);
        }
        kept.push_str(rest);
        for token in kept.split_whitespace() {
            let word = token.trim_matches(|c: char| !c.is_alphabetic());
            if word.chars().count() >= 4
                && word.chars().all(char::is_alphabetic)
                && keep(word)
                && !words.iter().any(|w| w == word)
            {
                words.push(word.to_string());
            }
        }
    }
    if words.len() <= SAMPLE {
        return words;
    }
    (0..SAMPLE).map(|i| words[i * (words.len() - 1) / (SAMPLE - 1)].clone()).collect()
}

/// A word of Latin, Greek or Cyrillic letters: the scripts the PDF's bundled fonts always
/// draw, left to right. The PDF's sample keeps to them: a character no font has is left out
/// of the PDF (the export warns), and LibreOffice's PDF import turns right-to-left text
/// around character by character, which reverses a shaped cluster (the lam-alef ligature
/// "لا" comes back "ال"), where poppler reads it right (`pdf_scripts.rs`).
fn bundled_ltr(word: &str) -> bool {
    word.chars().all(|c| matches!(u32::from(c), 0..=0x052F | 0x1E00..=0x1FFF))
}

/// What LibreOffice found in a document it wrote (`content.xml` of an OpenDocument file, and
/// `styles.xml`, which holds the page header and footer): its text, tags and white space
/// left out, and its number of pictures in the content.
fn open_document(path: &Path) -> Result<(String, usize), String> {
    let file = std::fs::File::open(path).map_err(|e| format!("no output: {e}"))?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| format!("not a zip: {e}"))?;
    let mut xml = String::new();
    zip.by_name("content.xml")
        .map_err(|e| format!("no content.xml: {e}"))?
        .read_to_string(&mut xml)
        .map_err(|e| format!("content.xml: {e}"))?;
    let pictures = xml.matches("<draw:image").count();
    // The page header and footer live in the master pages of `styles.xml`.
    if let Ok(mut styles) = zip.by_name("styles.xml") {
        styles.read_to_string(&mut xml).map_err(|e| format!("styles.xml: {e}"))?;
    }
    let mut text = String::with_capacity(xml.len() / 2);
    let mut in_tag = false;
    for c in xml.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag && !c.is_whitespace() => text.push(c),
            _ => {}
        }
    }
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&apos;", "'")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    Ok((text, pictures))
}

/// The absolute path of a program on `PATH`.
fn on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).map(|dir| dir.join(program)).find(|p| p.is_file())
}

/// Whether LibreOffice with Writer and Draw is installed; when not: a failure under CI, a
/// loud skip elsewhere.
fn libreoffice_present() -> bool {
    let draw = on_path("soffice")
        .and_then(|p| std::fs::canonicalize(p).ok())
        .and_then(|p| p.parent()?.parent().map(|install| install.join("share/.registry/draw.xcd")))
        .is_some_and(|p| p.is_file());
    if !draw {
        let message = "LibreOffice with Draw is not installed (apt-get install libreoffice-writer-nogui \
                       libreoffice-draw-nogui; run scripts/setup-tests.sh)";
        assert!(!ci(), "{message}");
        eprintln!("\n!! every_corpus_export_opens_in_libreoffice SKIPPED: {message}\n");
    }
    draw
}

/// Starts converting `files` to `target` in one `soffice` run, into `out`, with its own
/// profile folder (so that the two runs may go at once).
fn soffice(profile: &Path, target: &str, files: &[PathBuf], out: &Path) -> Child {
    Command::new("soffice")
        .arg(format!("-env:UserInstallation=file://{}", profile.display()))
        .args(["--headless", "--norestore", "--convert-to", target, "--outdir"])
        .arg(out)
        .args(files)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start soffice")
}

/// Waits for `child` until [`SOFFICE_LIMIT`] after `started` (a hang is a failure).
fn wait(mut child: Child, target: &str, started: Instant) {
    loop {
        if let Some(status) = child.try_wait().expect("wait for soffice") {
            assert!(status.success(), "soffice --convert-to {target} failed: {status}");
            eprintln!("LibreOffice: --convert-to {target} done after {:.0?}", started.elapsed());
            return;
        }
        if started.elapsed() > SOFFICE_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("soffice --convert-to {target} took more than {SOFFICE_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn every_corpus_export_opens_in_libreoffice() {
    if !libreoffice_present() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/corpus");
    let uploads = uploads(&root);
    assert!(uploads.len() >= 70, "only {} corpus files converted", uploads.len());

    let dir = std::env::temp_dir().join(format!("redline-corpus-lo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for sub in ["docx", "pdf", "odt", "odg"] {
        std::fs::create_dir_all(dir.join(sub)).expect("temp dir");
    }
    let exporter = FileExporter::new();
    let mut samples = HashMap::new();
    let (mut docx_files, mut pdf_files) = (Vec::new(), Vec::new());
    for upload in &uploads {
        let text = exporter.export(&upload.html, &upload.name, ExportFormat::Txt, &upload.pictures).expect("txt");
        let text = String::from_utf8(text).expect("utf-8 text");
        samples.insert((upload.name.clone(), "docx"), sample_words(&text, |_| true));
        samples.insert((upload.name.clone(), "pdf"), sample_words(&text, bundled_ltr));
        for (format, files) in [(ExportFormat::Docx, &mut docx_files), (ExportFormat::Pdf, &mut pdf_files)] {
            let bytes = exporter
                .export(&upload.html, &upload.name, format, &upload.pictures)
                .unwrap_or_else(|e| panic!("{}: {format:?}: {e}", upload.name));
            let path = dir.join(format.as_str()).join(format!("{}.{}", upload.name, format.as_str()));
            std::fs::write(&path, bytes).expect("write the export");
            files.push(path);
        }
    }

    let started = Instant::now();
    let writer = soffice(&dir.join("profile-writer"), "odt", &docx_files, &dir.join("odt"));
    let draw = soffice(&dir.join("profile-draw"), "odg", &pdf_files, &dir.join("odg"));
    wait(writer, "odt", started);
    wait(draw, "odg", started);

    let mut failures = Vec::new();
    let mut checked_words = 0;
    for upload in &uploads {
        for (export, opened) in [("docx", "odt"), ("pdf", "odg")] {
            let path = dir.join(opened).join(format!("{}.{opened}", upload.name));
            let text = match open_document(&path) {
                Ok((text, pictures)) if !text.is_empty() || pictures > 0 => text,
                Ok(_) => {
                    failures.push(format!("{}.{export}: LibreOffice found nothing in it", upload.name));
                    continue;
                }
                Err(e) => {
                    failures.push(format!("{}.{export}: LibreOffice did not open it ({e})", upload.name));
                    continue;
                }
            };
            let sample = &samples[&(upload.name.clone(), export)];
            let missing: Vec<&String> = sample.iter().filter(|w| !text.contains(w.as_str())).collect();
            checked_words += sample.len();
            if !missing.is_empty() {
                failures.push(format!(
                    "{}.{export}: {} of {} words missing: {missing:?}",
                    upload.name,
                    missing.len(),
                    sample.len()
                ));
            }
        }
    }
    eprintln!("{} sources, {checked_words} sampled words checked", uploads.len());
    assert!(failures.is_empty(), "{} of {} exports fail:\n{}", failures.len(), 2 * uploads.len(), failures.join("\n"));
    let _ = std::fs::remove_dir_all(dir);
}

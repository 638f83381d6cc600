//! Tracked DOCX exports (docs/export.md, "Tracked changes"), judged by third-party readers:
//! pandoc's `--track-changes=accept|reject|all` and LibreOffice's own "Accept All" and
//! "Reject All" (scripts/lo-revisions.py) must give exactly the document with every change
//! made, and the document without them.

use std::path::{Path, PathBuf};
use std::process::Command;

use redline_domain::export::ExportFormat;
use redline_domain::formats::SourceFormat;
use redline_export::FileExporter;
use redline_ports::export::NoImages;
use redline_ports::{DocumentConverter, DocumentExporter, TrackedChange, TrackedDocument, TrackedPart};

use super::{assert_well_formed, unzip};

pub(super) fn same(html: &str) -> TrackedPart {
    TrackedPart::Same(html.to_owned())
}

pub(super) fn changed(old: &str, new: &str, comment: &str) -> TrackedPart {
    TrackedPart::Changed(TrackedChange {
        old: old.to_owned(),
        new: new.to_owned(),
        at_ms: 1_796_000_000_000,
        comment: (!comment.is_empty()).then(|| comment.to_owned()),
    })
}

/// Every kind of change: words, formatting and links inside a paragraph, new and deleted
/// paragraphs and headings, list items (nested too), table rows and cells, merged cells,
/// right-to-left text, a change with no comment.
fn document() -> TrackedDocument {
    document_with(
        "<ul data-chunk-id=\"f\"><li>apples</li><li>pears<ul><li>green and red</li></ul></li><li>cherries</li><li>plums</li></ul>",
    )
}

/// [`document`] without revisions of one kind that touch across a paragraph end (LibreOffice
/// 7.4 joins such revisions of one author made within a minute into one, and rejecting that
/// one joins the paragraphs: docs/export.md, "Tracked changes").
fn document_for_libreoffice() -> TrackedDocument {
    document_with(
        "<ul data-chunk-id=\"f\"><li>apples</li><li>pears<ul><li>green</li></ul></li><li>cherries</li><li>plums and figs</li></ul>",
    )
}

fn document_with(new_list: &str) -> TrackedDocument {
    let parts = vec![
        same("<h1 data-chunk-id=\"a\">Supply agreement</h1><p data-chunk-id=\"b\">Between the parties below.</p>"),
        changed(
            "<p data-chunk-id=\"c\">The supplier delivers <b>ten</b> crates within 30 days of the order.</p>",
            "<p data-chunk-id=\"c\">The supplier delivers <b>twelve</b> crates within 14 days of <a href=\"https://example.com/order\">the order</a>.</p>",
            "Matches the quantity and the delivery time agreed on the call.",
        ),
        changed("", "<h2 data-chunk-id=\"n1\">Payment</h2>", "A heading for the new clause."),
        changed("", "<p data-chunk-id=\"n2\">Invoices are paid within 30 days.</p>", ""),
        same("<p data-chunk-id=\"d\">Untouched text stays as it was.</p>"),
        changed("<p data-chunk-id=\"e\">This sentence is obsolete.</p>", "", "Removed: it repeats clause 2."),
        changed(
            "<ul data-chunk-id=\"f\"><li>apples</li><li>pears<ul><li>green</li></ul></li><li>plums</li></ul>",
            new_list,
            "Cherries added; pears in both colours.",
        ),
        changed(
            "<table data-chunk-id=\"g\"><tr><th>Item</th><th>Price</th></tr><tr><td>crate</td><td>10.00</td></tr><tr><td colspan=\"2\">VAT excluded</td></tr></table>",
            "<table data-chunk-id=\"g\"><tr><th>Item</th><th>Price</th></tr><tr><td>crate</td><td>12.50</td></tr><tr><td>pallet</td><td>90.00</td></tr><tr><td colspan=\"2\">VAT excluded</td></tr></table>",
            "New prices.",
        ),
        changed(
            "<p data-chunk-id=\"h\" dir=\"rtl\">שלום עולם יפה</p>",
            "<p data-chunk-id=\"h\" dir=\"rtl\">שלום עולם גדול</p>",
            "Hebrew: one word.",
        ),
        same("<p data-chunk-id=\"i\">The end.</p>"),
    ];
    TrackedDocument { parts, author: "Redline AI".to_owned(), job_id: Some("job-1".to_owned()) }
}

/// The document with every change made (`new`) or none (`old`).
pub(super) fn resolved(doc: &TrackedDocument, new: bool) -> String {
    doc.parts
        .iter()
        .map(|p| match p {
            TrackedPart::Same(html) => html.as_str(),
            TrackedPart::Changed(c) if new => c.new.as_str(),
            TrackedPart::Changed(c) => c.old.as_str(),
        })
        .collect()
}

pub(super) fn tracked_docx(doc: &TrackedDocument) -> Vec<u8> {
    FileExporter::new().export_tracked(doc, "Agreement", &NoImages).expect("tracked export")
}

pub(super) fn plain_docx(html: &str) -> Vec<u8> {
    FileExporter::new().export(html, "Agreement", ExportFormat::Docx, &NoImages).expect("export")
}

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

pub(super) fn present(program: &str, args: &[&str], what: &str) -> bool {
    let ok = Command::new(program).args(args).output().is_ok_and(|o| o.status.success());
    if !ok {
        let message = format!("{what} is not installed: run scripts/setup-tests.sh");
        assert!(!ci(), "{message}");
        eprintln!("\n!! SKIPPED: {message}\n");
    }
    ok
}

/// Whether LibreOffice and its Python bridge are here (scripts/lo-revisions.py needs both);
/// missing, a failure under `CI=true` and a loud skip elsewhere.
pub(super) fn libreoffice_present() -> bool {
    present("soffice", &["--version"], "LibreOffice (apt-get install libreoffice-writer-nogui)")
        && present(
            "/usr/bin/python3",
            &["-c", "import uno"],
            "LibreOffice's Python bridge (apt-get install python3-uno)",
        )
}

pub(super) fn run(program: &str, args: &[&str]) -> String {
    let out = Command::new(program).args(args).output().expect("run the reader");
    assert!(out.status.success(), "{program} {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// A fresh folder for one test's files.
pub(super) fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("redline-tracked-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

pub(super) fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write");
    path.to_str().expect("path").to_owned()
}

#[test]
fn revisions_comments_and_authors_are_in_the_package() {
    let parts = unzip(&tracked_docx(&document()));
    assert_well_formed(&parts);
    let body = String::from_utf8(parts["word/document.xml"].clone()).expect("utf-8");
    for needle in [
        "<w:ins w:id=",
        "<w:del w:id=",
        "w:author=\"Redline AI\" w:date=\"2026-11-30T",
        "<w:delText xml:space=\"preserve\">ten</w:delText>",
        "<w:commentRangeStart w:id=",
        "<w:commentReference w:id=",
        "<w:trPr><w:ins w:id=",
    ] {
        assert!(body.contains(needle), "document.xml lacks {needle}");
    }
    // A paragraph inserted whole has its mark inserted; one deleted whole, its mark deleted.
    assert!(body.contains("<w:rPr><w:ins w:id="), "no inserted paragraph mark");
    assert!(body.contains("<w:rPr><w:del w:id="), "no deleted paragraph mark");
    let comments = String::from_utf8(parts["word/comments.xml"].clone()).expect("utf-8");
    assert_eq!(comments.matches("<w:comment ").count(), 6, "{comments}");
    assert!(comments.contains("Matches the quantity and the delivery time agreed on the call."));
    assert!(comments.contains("w:initials=\"RA\""));
    let types = String::from_utf8(parts["[Content_Types].xml"].clone()).expect("utf-8");
    assert!(types.contains("/word/comments.xml"));
    // The file names its turn, for the way back (docs/api.md, "The Word round trip").
    let custom = String::from_utf8(parts["docProps/custom.xml"].clone()).expect("utf-8");
    assert!(custom.contains("name=\"RedlineJobId\"><vt:lpwstr>job-1</vt:lpwstr>"), "{custom}");
    assert!(types.contains("/docProps/custom.xml"));
    let rels = String::from_utf8(parts["_rels/.rels"].clone()).expect("utf-8");
    assert!(rels.contains("Target=\"docProps/custom.xml\""), "{rels}");
}

#[test]
fn without_changes_the_tracked_export_is_the_plain_one() {
    let html = resolved(&document(), false);
    let tracked =
        unzip(&tracked_docx(&TrackedDocument { parts: vec![same(&html)], author: "x".to_owned(), job_id: None }));
    let plain = unzip(&plain_docx(&html));
    assert_eq!(tracked["word/document.xml"], plain["word/document.xml"]);
    assert!(!tracked.contains_key("word/comments.xml"));
    assert!(!tracked.contains_key("docProps/custom.xml"), "no turn, no name");
}

/// pandoc's plain text of a DOCX, with its reading of tracked changes.
pub(super) fn pandoc_text(file: &str, track: &str) -> String {
    // GitHub Markdown: tables without column widths (a tracked table's columns are sized
    // for the old and the new text both).
    // Right-to-left runs are spans, split where the revisions were: the spans are left out.
    run("pandoc", &[&format!("--track-changes={track}"), "-f", "docx", "-t", "gfm", "--wrap=none", file])
        .replace("<span dir=\"rtl\">", "")
        .replace("</span>", "")
}

#[test]
fn pandoc_accepts_into_the_new_document_and_rejects_into_the_old() {
    if !present("pandoc", &["--version"], "pandoc (apt-get install pandoc)") {
        return;
    }
    let doc = document();
    let dir = folder("pandoc");
    let tracked = write(&dir, "tracked.docx", &tracked_docx(&doc));
    let new = write(&dir, "new.docx", &plain_docx(&resolved(&doc, true)));
    let old = write(&dir, "old.docx", &plain_docx(&resolved(&doc, false)));
    assert_eq!(pandoc_text(&tracked, "accept"), pandoc_text(&new, "accept"), "accepting every change");
    // pandoc keeps the paragraphs, items and rows whose insertion it rejects, empty (Word and
    // LibreOffice remove them): those are left out.
    let without_empty = |text: String| -> String {
        text.lines()
            .filter(|l| {
                let empty_row = l.starts_with('|') && l.trim_matches(['|', ' ']).is_empty();
                !(matches!(l.trim(), "" | "#" | "##" | "-") || empty_row)
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        without_empty(pandoc_text(&tracked, "reject")),
        without_empty(pandoc_text(&old, "accept")),
        "rejecting every change"
    );
    // Every change is seen, credited to its author.
    let all = run("pandoc", &["--track-changes=all", "--wrap=none", "-f", "docx", "-t", "html", &tracked]);
    // The span a text starts in (the last one opened before it).
    let span_of = |text: &str| -> &str {
        let at = all.find(&format!(">{text}")).unwrap_or_else(|| panic!("{text} missing from {all}"));
        let open = all[..at].rfind("<span ").unwrap_or_else(|| panic!("{text} is in no span"));
        &all[open..=at]
    };
    for word in ["twelve", "14", "Payment", "cherries", "pallet", "גדול"] {
        let span = span_of(word);
        assert!(span.starts_with("<span class=\"insertion\" data-author=\"Redline AI\""), "{word}: {span}");
    }
    for word in ["ten", "30", "This sentence is obsolete.", "10.00", "יפה"] {
        let span = span_of(word);
        assert!(span.starts_with("<span class=\"deletion\" data-author=\"Redline AI\""), "{word}: {span}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// LibreOffice's text of a DOCX after it accepts or rejects every revision, or of a plain
/// DOCX (`convert`), blank lines left out.
pub(super) fn libreoffice_text(dir: &Path, file: &str, action: &str) -> String {
    let out = dir.join(format!("{action}-{}.txt", Path::new(file).file_stem().and_then(|s| s.to_str()).unwrap_or("x")));
    let out = out.to_str().expect("path");
    run(
        "/usr/bin/python3",
        &[concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/lo-revisions.py"), action, file, out],
    );
    let text = std::fs::read_to_string(out).expect("LibreOffice wrote no text");
    text.trim_start_matches('\u{feff}').lines().filter(|l| !l.trim().is_empty()).collect::<Vec<_>>().join("\n")
}

#[test]
fn libreoffice_accepts_into_the_new_document_and_rejects_into_the_old() {
    if !libreoffice_present() {
        return;
    }
    let doc = document_for_libreoffice();
    let dir = folder("libreoffice");
    let tracked = write(&dir, "tracked.docx", &tracked_docx(&doc));
    let new = write(&dir, "new.docx", &plain_docx(&resolved(&doc, true)));
    let old = write(&dir, "old.docx", &plain_docx(&resolved(&doc, false)));
    assert_eq!(libreoffice_text(&dir, &tracked, "accept"), libreoffice_text(&dir, &new, "accept"), "Accept All");
    assert_eq!(libreoffice_text(&dir, &tracked, "reject"), libreoffice_text(&dir, &old, "accept"), "Reject All");
    let listed = std::fs::read_to_string({
        let out = dir.join("list.txt");
        run(
            "/usr/bin/python3",
            &[
                concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/lo-revisions.py"),
                "list",
                &tracked,
                out.to_str().expect("path"),
            ],
        );
        out
    })
    .expect("list");
    let revisions: Vec<&str> = listed.lines().filter(|l| l.contains('\t')).collect();
    assert!(revisions.len() >= 10, "{listed}");
    assert!(revisions.iter().all(|l| l.contains("\tRedline AI\t2026-11-30\t")), "{listed}");
    // The file itself, comments and all, opens in LibreOffice (its command line).
    let profile = format!("-env:UserInstallation=file://{}", dir.join("profile").display());
    let out_dir = dir.to_str().expect("path");
    run("soffice", &[&profile, "--headless", "--convert-to", "odt", "--outdir", out_dir, &tracked]);
    let odt = std::fs::read(dir.join("tracked.odt")).expect("LibreOffice could not open the tracked DOCX");
    let content = super::unzip(&odt).remove("content.xml").expect("content.xml");
    let content = String::from_utf8(content).expect("utf-8");
    assert!(content.contains("<office:annotation"), "the comments are not in LibreOffice's reading");
    assert!(content.contains("<text:changed-region"), "the revisions are not in LibreOffice's reading");
    let _ = std::fs::remove_dir_all(dir);
}

/// A change of formatting alone: the word made bold (it was italic) and coloured.
fn reformatted() -> TrackedDocument {
    TrackedDocument {
        parts: vec![changed(
            "<p data-chunk-id=\"a\">Delivery is <i>free</i> of charge.</p>",
            "<p data-chunk-id=\"a\">Delivery is <b style=\"color: #c00000\">free</b> of charge.</p>",
            "Stress it.",
        )],
        author: "Redline AI".to_owned(),
        job_id: None,
    }
}

#[test]
fn a_change_of_formatting_is_a_formatting_revision_that_rejecting_undoes() {
    let docx = tracked_docx(&reformatted());
    let parts = unzip(&docx);
    assert_well_formed(&parts);
    let body = String::from_utf8(parts["word/document.xml"].clone()).expect("utf-8");
    assert!(!body.contains("<w:ins ") && !body.contains("<w:del "), "no text changed: {body}");
    assert!(
        body.contains("<w:b/><w:bCs/><w:color w:val=\"C00000\"/><w:rPrChange w:id=")
            && body.contains("w:author=\"Redline AI\"")
            && body
                .contains("><w:rPr><w:i/><w:iCs/></w:rPr></w:rPrChange></w:rPr><w:t xml:space=\"preserve\">free</w:t>"),
        "{body}"
    );
    // Our own reader: accepted, bold; rejected, italic again.
    let read = redline_convert::Converters.convert(SourceFormat::Docx, &docx).expect("reads back");
    assert!(read.html.contains("<strong>") && !read.html.contains("<em>"), "{}", read.html);
    let original = read.tracked.expect("a tracked change").original;
    assert!(original.html.contains("<em>free</em>"), "{}", original.html);
    if !libreoffice_present() {
        return;
    }
    let dir = folder("reformatted");
    let tracked = write(&dir, "tracked.docx", &docx);
    let html = |action: &str| {
        let out = dir.join(format!("{action}.html"));
        run(
            "/usr/bin/python3",
            &[
                concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/lo-revisions.py"),
                action,
                &tracked,
                out.to_str().expect("path"),
            ],
        );
        std::fs::read_to_string(out).expect("LibreOffice wrote no HTML")
    };
    let (accepted, rejected) = (html("accept"), html("reject"));
    let word = |html: &str| {
        html.split("free").next().map(|b| b.rsplit("Delivery is").next().unwrap_or("").to_owned()).unwrap_or_default()
    };
    assert!(word(&accepted).contains("<b>") && !word(&accepted).contains("<i>"), "Accept All: {accepted}");
    assert!(word(&rejected).contains("<i>") && !word(&rejected).contains("<b>"), "Reject All: {rejected}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_note_referenced_in_a_change_is_one_footnote_with_its_note_elsewhere() {
    let noteref = |n: u32| format!("<a href=\"#fn{n}\" role=\"doc-noteref\"><sup>{n}</sup></a>");
    let doc = TrackedDocument {
        parts: vec![
            changed(
                &format!("<p data-chunk-id=\"a\">Old claim{}.</p>", noteref(1)),
                &format!("<p data-chunk-id=\"a\">New claim{}.</p>", noteref(1)),
                "",
            ),
            same(&format!("<p data-chunk-id=\"b\">Also{}.</p>", noteref(2))),
            same(
                "<section data-chunk-id=\"n\" role=\"doc-endnotes\"><ol><li id=\"fn1\"><p>The source.</p></li><li id=\"fn2\"><p>Another.</p></li></ol></section>",
            ),
        ],
        author: "Redline AI".to_owned(),
        job_id: None,
    };
    let parts = unzip(&tracked_docx(&doc));
    assert_well_formed(&parts);
    let body = String::from_utf8(parts["word/document.xml"].clone()).expect("utf-8");
    assert_eq!(body.matches("<w:footnoteReference w:id=").count(), 2, "{body}");
    assert!(!body.contains("The source."), "the note is not left in the text: {body}");
    let notes = String::from_utf8(parts["word/footnotes.xml"].clone()).expect("utf-8");
    assert!(notes.contains("The source.") && notes.contains("Another."), "{notes}");
    // As the plain export of the document with the change made numbers them.
    let plain = unzip(&plain_docx(&resolved(&doc, true)));
    assert_eq!(parts["word/footnotes.xml"], plain["word/footnotes.xml"]);
}

/// A section the turn deleted and made again elsewhere, the same (ids aside).
fn moved() -> TrackedDocument {
    TrackedDocument {
        parts: vec![
            same("<p data-chunk-id=\"a\">First clause.</p>"),
            changed("<p data-chunk-id=\"b\">The clause that moves.</p>", "", "Moved after the last clause."),
            same("<p data-chunk-id=\"c\">Last clause.</p>"),
            changed("", "<p data-chunk-id=\"n\">The clause that moves.</p>", ""),
        ],
        author: "Redline AI".to_owned(),
        job_id: None,
    }
}

#[test]
fn a_section_moved_is_a_move_that_readers_accept_and_reject() {
    let doc = moved();
    let docx = tracked_docx(&doc);
    let parts = unzip(&docx);
    assert_well_formed(&parts);
    let body = String::from_utf8(parts["word/document.xml"].clone()).expect("utf-8");
    for needle in [
        "<w:moveFromRangeStart w:id=",
        "w:name=\"move1\"/>",
        "<w:moveFrom w:id=",
        "<w:moveToRangeStart w:id=",
        "<w:moveTo w:id=",
        "<w:moveFromRangeEnd w:id=",
        "<w:moveToRangeEnd w:id=",
    ] {
        assert!(body.contains(needle), "document.xml lacks {needle}: {body}");
    }
    assert!(!body.contains("<w:del ") && !body.contains("<w:ins "), "{body}");
    // Our own reader sees one move, and both readings.
    let read = redline_convert::Converters.convert(SourceFormat::Docx, &docx).expect("reads back");
    let tracked = read.tracked.expect("tracked changes");
    assert_eq!(tracked.summary, "1 move by Redline AI");
    let order = |html: &str| html.find("moves").unwrap_or(0) > html.find("Last").unwrap_or(0);
    assert!(order(&read.html), "accepted: after the last clause: {}", read.html);
    assert!(!order(&tracked.original.html), "rejected: where it was: {}", tracked.original.html);
    if present("pandoc", &["--version"], "pandoc (apt-get install pandoc)") {
        let dir = folder("moved-pandoc");
        let file = write(&dir, "moved.docx", &docx);
        let new = write(&dir, "new.docx", &plain_docx(&resolved(&doc, true)));
        let old = write(&dir, "old.docx", &plain_docx(&resolved(&doc, false)));
        assert_eq!(pandoc_text(&file, "accept"), pandoc_text(&new, "accept"));
        assert_eq!(pandoc_text(&file, "reject"), pandoc_text(&old, "accept"));
        let _ = std::fs::remove_dir_all(dir);
    }
    if libreoffice_present() {
        let dir = folder("moved-libreoffice");
        let file = write(&dir, "moved.docx", &docx);
        let new = write(&dir, "new.docx", &plain_docx(&resolved(&doc, true)));
        let old = write(&dir, "old.docx", &plain_docx(&resolved(&doc, false)));
        assert_eq!(libreoffice_text(&dir, &file, "accept"), libreoffice_text(&dir, &new, "accept"), "Accept All");
        assert_eq!(libreoffice_text(&dir, &file, "reject"), libreoffice_text(&dir, &old, "accept"), "Reject All");
        let _ = std::fs::remove_dir_all(dir);
    }
}

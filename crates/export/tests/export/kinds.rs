//! Each kind of tracked change Redline writes, one per DOCX, read back by Redline's own
//! reader, pandoc and LibreOffice with every revision accepted and with every one rejected
//! (docs/conversion.md, "Tracked changes": the export columns of the table). The test
//! prints the table it measured and fails on a cell that is not right.

use redline_domain::formats::SourceFormat;
use redline_ports::{DocumentConverter, TrackedDocument};

use super::tracked::{
    changed, folder, libreoffice_present, libreoffice_text, pandoc_text, plain_docx, present, resolved, run, same,
    tracked_docx, write,
};

/// Each kind: its name, the change's old and new HTML (between two untouched paragraphs).
const KINDS: [(&str, &str, &str); 10] = [
    ("inserted text", "<p data-chunk-id=\"c\">one two</p>", "<p data-chunk-id=\"c\">one new two</p>"),
    ("deleted text", "<p data-chunk-id=\"c\">one old two</p>", "<p data-chunk-id=\"c\">one two</p>"),
    ("inserted paragraph", "", "<p data-chunk-id=\"n\">A new paragraph.</p>"),
    ("deleted paragraph", "<p data-chunk-id=\"c\">An old paragraph.</p>", ""),
    (
        "inserted list item",
        "<ul data-chunk-id=\"c\"><li>apples</li></ul>",
        "<ul data-chunk-id=\"c\"><li>apples</li><li>pears</li></ul>",
    ),
    (
        "deleted list item",
        "<ul data-chunk-id=\"c\"><li>apples</li><li>pears</li></ul>",
        "<ul data-chunk-id=\"c\"><li>apples</li></ul>",
    ),
    (
        "inserted table row",
        "<table data-chunk-id=\"c\"><tr><td>a</td><td>1</td></tr></table>",
        "<table data-chunk-id=\"c\"><tr><td>a</td><td>1</td></tr><tr><td>b</td><td>2</td></tr></table>",
    ),
    (
        "deleted table row",
        "<table data-chunk-id=\"c\"><tr><td>a</td><td>1</td></tr><tr><td>b</td><td>2</td></tr></table>",
        "<table data-chunk-id=\"c\"><tr><td>a</td><td>1</td></tr></table>",
    ),
    (
        "formatting (italic made bold)",
        "<p data-chunk-id=\"c\">one <i>two</i></p>",
        "<p data-chunk-id=\"c\">one <b>two</b></p>",
    ),
    ("moved paragraph", "", ""),
];

/// The tracked document of one kind.
fn document(kind: &str, old: &str, new: &str) -> TrackedDocument {
    let mut parts = vec![same("<p data-chunk-id=\"a\">Before.</p>")];
    if kind == "moved paragraph" {
        parts.push(changed("<p data-chunk-id=\"m\">The moving one.</p>", "", ""));
        parts.push(same("<p data-chunk-id=\"b\">After.</p>"));
        parts.push(changed("", "<p data-chunk-id=\"m2\">The moving one.</p>", ""));
    } else {
        parts.push(changed(old, new, ""));
        parts.push(same("<p data-chunk-id=\"b\">After.</p>"));
    }
    TrackedDocument { parts, author: "Redline AI".to_owned(), job_id: None }
}

/// The words of a text, in order, with the emphasis of the formatting kind marked.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric() && c != '*' && c != '_')
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .map(str::to_owned)
        .collect()
}

/// Our reader's words of a reading (HTML), emphasis marked as Markdown does.
fn our_words(html: &str) -> Vec<String> {
    let marked = html.replace("<strong>", "**").replace("</strong>", "**").replace("<em>", "_").replace("</em>", "_");
    let mut text = String::new();
    let mut inside = false;
    for c in marked.chars() {
        match c {
            '<' => {
                inside = true;
                text.push(' ');
            }
            '>' => inside = false,
            c if !inside => text.push(c),
            _ => {}
        }
    }
    words(&text)
}

/// LibreOffice's reading of a DOCX after "Accept All" or "Reject All" (or of a plain DOCX,
/// `accept`) as words, bold and italic marked (from its HTML).
fn libreoffice_words(dir: &std::path::Path, file: &str, action: &str, formatting: bool) -> Vec<String> {
    if !formatting {
        return words(&libreoffice_text(dir, file, action));
    }
    let stem = std::path::Path::new(file).file_stem().and_then(|s| s.to_str()).unwrap_or("x").to_owned();
    let out = dir.join(format!("{action}-{stem}.html"));
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/lo-revisions.py");
    run("/usr/bin/python3", &[script, action, file, out.to_str().expect("path")]);
    let html = std::fs::read_to_string(out).expect("LibreOffice wrote no HTML");
    let body = html.split("<body").nth(1).unwrap_or_default().to_owned();
    our_words(
        &body.replace("<b>", "<strong>").replace("</b>", "</strong>").replace("<i>", "<em>").replace("</i>", "</em>"),
    )
}

#[test]
fn every_kind_of_tracked_change_reads_back_accepted_and_rejected() {
    let pandoc = present("pandoc", &["--version"], "pandoc (apt-get install pandoc)");
    let libreoffice = libreoffice_present();
    // mammoth (pip install mammoth) has no choice: its one reading is compared with both.
    // It is not among the test command's readers: its column is measured where it is installed.
    let mammoth = std::process::Command::new("mammoth").arg("--help").output().is_ok_and(|o| o.status.success());
    let dir = folder("kinds");
    let mut table = String::from(
        "| revision kind (export) | Redline | pandoc | LibreOffice | mammoth |\n| --- | --- | --- | --- | --- |\n",
    );
    let mut wrong = Vec::new();
    for (k, (kind, old, new)) in KINDS.iter().enumerate() {
        let doc = document(kind, old, new);
        let formatting = kind.starts_with("formatting");
        let docx = tracked_docx(&doc);
        if *kind == "moved paragraph" {
            // Written as a move, not a deletion and an insertion (their words are the same).
            let body = String::from_utf8(super::unzip(&docx)["word/document.xml"].clone()).expect("utf-8");
            assert!(body.contains("<w:moveFrom ") && !body.contains("<w:del "), "{body}");
        }
        let tracked = write(&dir, &format!("tracked{k}.docx"), &docx);
        let plain_new = write(&dir, &format!("new{k}.docx"), &plain_docx(&resolved(&doc, true)));
        let plain_old = write(&dir, &format!("old{k}.docx"), &plain_docx(&resolved(&doc, false)));
        let mut cells = Vec::new();
        // Our reader: the accepted reading and the rejected one against the plain files'.
        let read = |file: &str| {
            let bytes = std::fs::read(file).expect("read");
            redline_convert::Converters.convert(SourceFormat::Docx, &bytes).expect("reads")
        };
        let ours = read(&tracked);
        let original = ours.tracked.as_ref().map(|t| t.original.html.clone()).unwrap_or_default();
        let cell = |accept: bool, reject: bool| {
            format!("accept {} reject {}", if accept { "✓" } else { "✗" }, if reject { "✓" } else { "✗" })
        };
        let (a, r) = (
            our_words(&ours.html) == our_words(&read(&plain_new).html),
            our_words(&original) == our_words(&read(&plain_old).html),
        );
        cells.push(("Redline", a, r));
        if pandoc {
            let gfm = |file: &str, track: &str| -> Vec<String> { words(&pandoc_text(file, track)) };
            cells.push((
                "pandoc",
                gfm(&tracked, "accept") == gfm(&plain_new, "accept"),
                gfm(&tracked, "reject") == gfm(&plain_old, "accept"),
            ));
        }
        if libreoffice {
            cells.push((
                "LibreOffice",
                libreoffice_words(&dir, &tracked, "accept", formatting)
                    == libreoffice_words(&dir, &plain_new, "accept", formatting),
                libreoffice_words(&dir, &tracked, "reject", formatting)
                    == libreoffice_words(&dir, &plain_old, "accept", formatting),
            ));
        }
        let mut shown: Vec<String> = cells.iter().map(|(_, a, r)| cell(*a, *r)).collect();
        if mammoth {
            let md = |file: &str| words(&run("mammoth", &[file, "--output-format=markdown"]));
            let one = md(&tracked);
            shown.push(match (one == md(&plain_new), one == md(&plain_old)) {
                (true, true) => "its one reading: both the same".to_owned(),
                (true, false) => "its one reading: the accepted".to_owned(),
                (false, true) => "its one reading: the rejected".to_owned(),
                (false, false) => "its one reading: neither".to_owned(),
            });
        } else {
            shown.push("not installed".to_owned());
        }
        table.push_str(&format!("| {kind} | {} |\n", shown.join(" | ")));
        // pandoc does not read formatting revisions: its rejected reading keeps the new
        // formatting (measured, not a fault of the file).
        for &(reader, a, r) in &cells {
            let known = reader == "pandoc" && formatting;
            if !(a && (r || known)) {
                wrong.push(format!("{kind}: {reader} accept {a} reject {r}"));
            }
        }
    }
    eprintln!("{table}");
    assert!(wrong.is_empty(), "{}\n{table}", wrong.join("\n"));
    let _ = std::fs::remove_dir_all(dir);
}

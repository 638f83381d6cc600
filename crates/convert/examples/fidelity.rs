//! The fidelity table of docs/conversion.md.
//!
//! Converts every file of the corpus with our converter and applies the detectors of
//! `tests/support/fidelity.rs` to our HTML and, when given, to pandoc's HTML of the same
//! files; PDFs are compared with pdftotext's text (pandoc cannot read PDF). Prints Markdown.
//!
//! ```text
//! cargo run --release -p redline-convert --example fidelity -- \
//!     [--pandoc DIR] [--pdftotext DIR] [--ours DIR]
//! ```
//! `--pandoc DIR` reads `DIR/<corpus name>.html` (written by scripts/bench/fidelity.sh; a
//! missing file is a pandoc failure), `--pdftotext DIR` reads `DIR/<corpus name>.txt`, and
//! `--ours DIR` writes our HTML as `DIR/<corpus name>.html` for inspection.

#[path = "../tests/support/fidelity.rs"]
mod fidelity;

use std::collections::BTreeMap;
use std::path::PathBuf;

use fidelity::{corpus, corpus_root, detect, strip_tags, word_recall, Outcome, FEATURES, FOLDERS};

fn main() {
    let mut pandoc: Option<PathBuf> = None;
    let mut pdftotext: Option<PathBuf> = None;
    let mut ours_out: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().map(PathBuf::from);
        match arg.as_str() {
            "--pandoc" => pandoc = value,
            "--pdftotext" => pdftotext = value,
            "--ours" => ours_out = value,
            other => {
                eprintln!("unknown argument {other}");
                std::process::exit(2);
            }
        }
    }
    let root = corpus_root();
    let files = corpus(&root);
    if files.is_empty() {
        eprintln!("no corpus at {}", root.display());
        std::process::exit(1);
    }

    // (folder, feature) -> (claiming, ours, pandoc)
    let mut counts: BTreeMap<(usize, usize), (usize, usize, usize)> = BTreeMap::new();
    let mut refused = Vec::new();
    let mut pdf_rows = Vec::new();
    let mut missed = Vec::new();
    let mut only_ours = Vec::new();
    for file in &files {
        let outcome = fidelity::convert_ours(file);
        let ours = match &outcome {
            Outcome::Html(html) => html.as_str(),
            Outcome::Refused(why) => {
                refused.push(format!("`{}`: {why}", file.name));
                ""
            }
            Outcome::Panicked => {
                refused.push(format!("`{}`: PANICKED", file.name));
                ""
            }
        };
        if let Some(dir) = &ours_out {
            let path = dir.join(format!("{}.html", file.name));
            if let Some(parent) = path.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let _ = std::fs::write(path, ours);
        }
        // The reference output: pandoc's HTML, or for PDFs pdftotext's text (only the
        // script detectors `cjk` and `unicode-rtl` can see anything in it).
        let theirs = if file.folder == "pdf" {
            pdftotext.as_ref().and_then(|d| std::fs::read_to_string(d.join(format!("{}.txt", file.name))).ok())
        } else {
            pandoc.as_ref().and_then(|d| std::fs::read_to_string(d.join(format!("{}.html", file.name))).ok())
        };
        let Some(folder) = FOLDERS.iter().position(|f| *f == file.folder) else { continue };
        for (fi, feature) in FEATURES.iter().enumerate() {
            if !file.claims(feature) {
                continue;
            }
            let entry = counts.entry((folder, fi)).or_default();
            entry.0 += 1;
            let kept = detect(feature, ours);
            if kept {
                entry.1 += 1;
            }
            let pandoc_kept = theirs.as_deref().is_some_and(|h| detect(feature, h));
            if pandoc_kept {
                entry.2 += 1;
            }
            if !kept {
                missed.push(format!(
                    "`{}`: {feature}{}",
                    file.name,
                    if pandoc_kept { " (pandoc keeps it)" } else { "" }
                ));
            } else if !pandoc_kept
                && theirs.is_some()
                && (file.folder != "pdf" || matches!(*feature, "cjk" | "unicode-rtl"))
            {
                only_ours.push(format!("`{}`: {feature}", file.name));
            }
        }
        if file.folder == "pdf" {
            let reference =
                pdftotext.as_ref().and_then(|d| std::fs::read_to_string(d.join(format!("{}.txt", file.name))).ok());
            let our_text = strip_tags(ours);
            let words = |t: &str| fidelity::words(t).len();
            let recall = reference.as_deref().and_then(|r| word_recall(r, &our_text));
            let status = match &outcome {
                Outcome::Html(_) => "converted".to_owned(),
                Outcome::Refused(why) => format!("refused: {}", why.chars().take(60).collect::<String>()),
                Outcome::Panicked => "PANICKED".to_owned(),
            };
            pdf_rows.push(format!(
                "| `{}` | {} | {} | {} | {} |",
                file.name.trim_start_matches("pdf/"),
                status,
                words(&our_text),
                reference.as_deref().map_or("—".to_owned(), |r| words(r).to_string()),
                recall.map_or("—".to_owned(), |r| format!("{:.0}%", r * 100.0)),
            ));
        }
    }

    let pandoc_name = |folder: &str| if folder == "pdf" { "pdftotext" } else { "pandoc" };
    println!("## Per format\n");
    println!("| format | feature | files claiming it | kept by Redline | kept by pandoc |");
    println!("|---|---|---:|---:|---:|");
    for (&(folder, fi), &(claiming, ours, theirs)) in &counts {
        let other = match FOLDERS[folder] {
            "txt" => "n/a (no plain-text reader)".to_owned(),
            "pdf" if !matches!(FEATURES[fi], "cjk" | "unicode-rtl") => "n/a (text only)".to_owned(),
            f => format!("{theirs} ({})", pandoc_name(f)),
        };
        println!("| {} | {} | {claiming} | {ours} | {other} |", FOLDERS[folder], FEATURES[fi]);
    }
    println!("\n## All formats but PDF and TXT (the files pandoc reads)\n");
    println!("| feature | files claiming it | kept by Redline | kept by pandoc |");
    println!("|---|---:|---:|---:|");
    for (fi, feature) in FEATURES.iter().enumerate() {
        let (mut c, mut o, mut t) = (0, 0, 0);
        for (&(folder, f), &(claiming, ours, theirs)) in &counts {
            if f == fi && !matches!(FOLDERS[folder], "pdf" | "txt") {
                c += claiming;
                o += ours;
                t += theirs;
            }
        }
        if c > 0 {
            println!("| {feature} | {c} | {o} | {t} |");
        }
    }
    println!("\n## PDF text against pdftotext\n");
    println!("| file | Redline | Redline words | pdftotext words | pdftotext words found in ours |");
    println!("|---|---|---:|---:|---:|");
    for row in &pdf_rows {
        println!("{row}");
    }
    println!("\n## Files Redline refuses\n");
    for line in &refused {
        println!("- {line}");
    }
    println!("\n## Claimed features Redline's HTML does not show\n");
    for line in &missed {
        println!("- {line}");
    }
    println!("\n## Claimed features Redline keeps and the reference tool's output does not show\n");
    for line in &only_ours {
        println!("- {line}");
    }
}

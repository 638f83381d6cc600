//! Tracked changes read both ways (docs/conversion.md, "Tracked changes"), judged by pandoc:
//! on the corpus' DOCX files with revisions, the words of our accepted reading are pandoc's
//! `--track-changes=accept`, and those of our rejected reading its `--track-changes=reject`.
//!
//! pandoc runs as a process; missing, it fails the test under `CI=true` and is skipped loudly
//! elsewhere.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use redline_convert::Converters;
use redline_domain::formats::SourceFormat;
use redline_ports::DocumentConverter;

fn corpus_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/corpus/docx").join(name)
}

fn pandoc(file: &Path, mode: &str) -> Option<String> {
    let out = Command::new("pandoc")
        .args(["-f", "docx", "-t", "plain", "--wrap=none", &format!("--track-changes={mode}")])
        .arg(file)
        .output();
    match out {
        Ok(o) if o.status.success() => Some(String::from_utf8_lossy(&o.stdout).into_owned()),
        _ => {
            let message = "pandoc is not installed: run scripts/setup-tests.sh";
            assert!(std::env::var("CI").as_deref() != Ok("true"), "{message}");
            eprintln!("\n!! SKIPPED: {message}\n");
            None
        }
    }
}

/// The words of a text (letters and digits, lower-cased), counted.
fn words(text: &str) -> HashMap<String, usize> {
    let mut out = HashMap::new();
    for w in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        *out.entry(w.to_lowercase()).or_insert(0) += 1;
    }
    out
}

/// The text of converted HTML: tags out, the few entities the converter writes decoded.
fn text_of(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                out.push(' ');
            }
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&#39;", "'").replace("&quot;", "\"").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
}

/// Words of `theirs` missing from `ours` and words of `ours` missing from `theirs`, counted
/// with multiplicity.
fn differences(ours: &str, theirs: &str) -> (Vec<String>, Vec<String>) {
    let (ours, theirs) = (words(ours), words(theirs));
    let short = |a: &HashMap<String, usize>, b: &HashMap<String, usize>| {
        let mut out: Vec<String> = a
            .iter()
            .filter(|(w, n)| b.get(*w).copied().unwrap_or(0) < **n)
            .map(|(w, n)| format!("{w}×{}", n - b.get(w).copied().unwrap_or(0)))
            .collect();
        out.sort();
        out
    };
    (short(&theirs, &ours), short(&ours, &theirs))
}

#[test]
fn both_readings_have_pandocs_words() {
    for name in ["poi-delins.docx", "pandoc-track_changes_move.docx", "pandoc-track_changes_insertion.docx"] {
        let file = corpus_file(name);
        let bytes = std::fs::read(&file).expect("corpus file");
        let converted = Converters.convert(SourceFormat::Docx, &bytes).expect("converts");
        let tracked = converted.tracked.clone().unwrap_or_else(|| panic!("{name}: its tracked changes are found"));
        assert!(!tracked.summary.is_empty(), "{name}");
        let (Some(accepted), Some(rejected)) = (pandoc(&file, "accept"), pandoc(&file, "reject")) else {
            return;
        };
        for (reading, ours, theirs) in
            [("accepted", &converted.html, &accepted), ("rejected", &tracked.original.html, &rejected)]
        {
            let (missing, extra) = differences(&text_of(ours), theirs);
            assert!(missing.is_empty() && extra.is_empty(), "{name}, {reading}: missing {missing:?}, extra {extra:?}");
        }
    }
}

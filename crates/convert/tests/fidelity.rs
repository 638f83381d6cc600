//! Fidelity over the corpus of `tests/fixtures` (docs/conversion.md): no file makes a converter panic,
//! and for each format and feature, the number of files claiming the feature in
//! MANIFEST.tsv whose HTML still shows it never falls below [`FLOOR`] (today's figures).
//! The detectors live in `support/fidelity.rs`, shared with `examples/fidelity.rs`, which
//! prints the table next to pandoc's.

#[expect(dead_code, reason = "the helpers of the fidelity table (examples/fidelity.rs) are shared")]
mod support;

use support::fidelity::{convert_ours, corpus, corpus_root, detect, Outcome, FEATURES};

/// (folder, feature, files that keep it) over the repository's corpus (`tests/fixtures/corpus`,
/// which lacks two HTML pages of docs/conversion.md's table: their licence is unknown). Raise
/// a floor when a converter improves; a lower count is a regression.
const FLOOR: &[(&str, &str, usize)] = &[
    ("docx", "bold-italic", 7),
    ("docx", "cjk", 2),
    ("docx", "colors", 4),
    ("docx", "footnotes", 6),
    ("docx", "headings", 6),
    ("docx", "highlight", 3),
    ("docx", "hyperlinks", 6),
    ("docx", "images", 4),
    ("docx", "lists", 9),
    ("docx", "merged-cells", 4),
    ("docx", "nested-lists", 3),
    ("docx", "tables", 9),
    ("html", "bold-italic", 6),
    ("html", "cjk", 1),
    ("html", "colors", 3),
    ("html", "footnotes", 3),
    ("html", "headings", 5),
    ("html", "hyperlinks", 7),
    ("html", "images", 7),
    ("html", "lists", 4),
    ("html", "merged-cells", 3),
    ("html", "nested-lists", 4),
    ("html", "tables", 7),
    ("html", "unicode-rtl", 2),
    ("md", "bold-italic", 7),
    ("md", "cjk", 1),
    ("md", "footnotes", 3),
    ("md", "headings", 10),
    ("md", "hyperlinks", 9),
    ("md", "images", 4),
    ("md", "lists", 9),
    ("md", "nested-lists", 8),
    ("md", "tables", 3),
    ("md", "unicode-rtl", 2),
    ("pdf", "cjk", 4),
    ("pdf", "footnotes", 2),
    ("pdf", "headings", 6),
    ("pdf", "images", 8),
    ("pdf", "lists", 2),
    ("pdf", "merged-cells", 1),
    ("pdf", "tables", 2),
    ("pdf", "unicode-rtl", 2),
    ("rtf", "bold-italic", 10),
    ("rtf", "cjk", 5),
    ("rtf", "colors", 10),
    ("rtf", "footnotes", 3),
    ("rtf", "headings", 2),
    ("rtf", "highlight", 1),
    ("rtf", "hyperlinks", 5),
    ("rtf", "images", 2),
    ("rtf", "lists", 5),
    ("rtf", "nested-lists", 2),
    ("rtf", "tables", 6),
    ("txt", "cjk", 2),
    ("txt", "unicode-rtl", 1),
];

#[test]
fn no_corpus_file_panics_and_no_feature_count_regresses() {
    let root = corpus_root();
    let files = corpus(&root);
    assert!(!files.is_empty(), "no corpus at {}", root.display());
    let mut panics = Vec::new();
    let mut kept = std::collections::BTreeMap::<(String, &str), usize>::new();
    for file in &files {
        let html = match convert_ours(file) {
            Outcome::Html(html) => html,
            Outcome::Refused(_) => String::new(),
            Outcome::Panicked => {
                panics.push(file.name.clone());
                continue;
            }
        };
        for feature in FEATURES {
            if file.claims(feature) && detect(feature, &html) {
                *kept.entry((file.folder.clone(), feature)).or_default() += 1;
            }
        }
    }
    assert!(panics.is_empty(), "converters panicked on {panics:?}");
    for ((folder, feature), count) in &kept {
        eprintln!("now: (\"{folder}\", \"{feature}\", {count}),");
    }
    for ((folder, feature), count) in &kept {
        let floor = FLOOR.iter().find(|f| f.0 == folder && f.1 == *feature).map_or(0, |f| f.2);
        if *count > floor {
            eprintln!("{folder} {feature}: {count} files keep it, above the floor of {floor}: raise it");
        }
    }
    let regressions: Vec<String> = FLOOR
        .iter()
        .filter_map(|&(folder, feature, floor)| {
            let now = kept.get(&(folder.to_owned(), feature)).copied().unwrap_or(0);
            (now < floor).then(|| format!("{folder} {feature}: {now} files keep it, the floor is {floor}"))
        })
        .collect();
    assert!(regressions.is_empty(), "fidelity regressed:\n{}", regressions.join("\n"));
}

/// The detectors on both markups they must read: ours and pandoc's.
#[test]
fn detectors_read_our_markup_and_pandocs() {
    use support::fidelity::detect;
    let cases: &[(&str, &str, bool)] = &[
        ("headings", "<h2 data-chunk-id=\"a\">T</h2>", true),
        ("headings", "<header>T</header>", false),
        ("merged-cells", "<table><tr><td colspan=\"2\">x</td></tr></table>", true),
        ("merged-cells", "<table><tr><td colspan=\"1\" rowspan=1>x</td></tr></table>", false),
        ("nested-lists", "<ul><li>a<ol><li>b</li></ol></li></ul>", true),
        ("nested-lists", "<ul><li>a</li></ul><ol><li>b</li></ol>", false),
        ("colors", "<span style=\"color: #ff0000\">r</span>", true),
        ("colors", "<span style=\"background-color: #ffff00\">y</span>", false),
        ("highlight", "<span style=\"background-color: #ffff00\">y</span>", true),
        ("highlight", "<mark>y</mark>", true),
        ("bold-italic", "<p><b>x</b></p>", true),
        ("bold-italic", "<p><br><blockquote>x</blockquote></p>", false),
        ("hyperlinks", "<a href=\"https://example.org\">x</a>", true),
        ("hyperlinks", "<a href=\"#fn1\" class=\"footnote-ref\"><sup>1</sup></a>", false),
        ("footnotes", "text<sup>[1]</sup>", true),
        (
            "footnotes",
            "<a href=\"#fn1\" class=\"footnote-ref\" id=\"fnref1\" role=\"doc-noteref\"><sup>1</sup></a>",
            true,
        ),
        ("footnotes", "<sup class=\"footnote-reference\"><a href=\"#1\">1</a></sup>", true),
        ("footnotes", "E = mc<sup>two</sup>", false),
        ("cjk", "<p>日本語</p>", true),
        ("unicode-rtl", "<p>שלום</p>", true),
        ("unicode-rtl", "<p dir=\"rtl\">abc</p>", false),
    ];
    for &(feature, html, expected) in cases {
        assert_eq!(detect(feature, html), expected, "{feature} on {html}");
    }
}

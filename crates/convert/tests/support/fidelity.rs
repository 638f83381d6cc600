//! The fidelity check of docs/conversion.md, shared by `tests/fidelity.rs` (the regression
//! floor) and `examples/fidelity.rs` (the table, next to pandoc's and pdftotext's output).
//!
//! One set of feature detectors reads any HTML, ours or pandoc's, so both are judged alike.
//! A detector looks at tags and attributes only (a small tag scanner, no HTML parser), except
//! `cjk` and `unicode-rtl`, which look for characters of those scripts anywhere in the output.

use std::path::{Path, PathBuf};

use redline_convert::Converters;
use redline_domain::document::ChunkId;
use redline_domain::formats::SourceFormat;
use redline_html::Html5everSections;
use redline_ports::{DocumentConverter, HtmlSections};

/// The features of MANIFEST.tsv that a detector can see in HTML, in table order.
pub const FEATURES: &[&str] = &[
    "headings",
    "tables",
    "merged-cells",
    "lists",
    "nested-lists",
    "images",
    "colors",
    "highlight",
    "bold-italic",
    "hyperlinks",
    "footnotes",
    "cjk",
    "unicode-rtl",
];

/// Folders of the corpus, in table order.
pub const FOLDERS: &[&str] = &["docx", "rtf", "md", "html", "txt", "pdf"];

/// One file of the corpus and the features MANIFEST.tsv says it has.
#[derive(Debug, Clone)]
pub struct CorpusFile {
    /// `docx/name.docx`, as in the MANIFEST.
    pub name: String,
    pub path: PathBuf,
    pub folder: String,
    pub features: Vec<String>,
}

impl CorpusFile {
    pub fn claims(&self, feature: &str) -> bool {
        self.features.iter().any(|f| f == feature)
    }

    pub fn format(&self) -> Option<SourceFormat> {
        format_of(&self.path)
    }
}

/// The repository's corpus (`tests/fixtures/corpus`), or `REDLINE_CORPUS`.
pub fn corpus_root() -> PathBuf {
    std::env::var_os("REDLINE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/corpus"))
}

/// The files of MANIFEST.tsv that exist under `root`, in MANIFEST order; empty when there
/// is no corpus.
pub fn corpus(root: &Path) -> Vec<CorpusFile> {
    let Ok(text) = std::fs::read_to_string(root.join("MANIFEST.tsv")) else { return Vec::new() };
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            let name = (*cols.first()?).to_owned();
            let folder = name.split('/').next()?.to_owned();
            let path = root.join(&name);
            let features = cols.get(5).unwrap_or(&"").split(',').filter(|f| !f.is_empty()).map(str::to_owned).collect();
            path.is_file().then_some(CorpusFile { name, path, folder, features })
        })
        .collect()
}

pub fn format_of(path: &Path) -> Option<SourceFormat> {
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

/// What an upload of one file becomes.
#[derive(Debug)]
pub enum Outcome {
    /// The document's HTML: its sections, one per line.
    Html(String),
    /// A refusal (`ConvertError` or `HtmlError`), as text.
    Refused(String),
    Panicked,
}

/// An upload as `core::documents` does it: the `DocumentConverter` port, extracted images
/// pointed at their URL, then the `HtmlSections` adapter (sanitize, section). What is
/// measured is therefore what a user gets, not the converter's raw HTML (which for HTML
/// uploads is the input itself). Panics are caught.
pub fn convert_ours(file: &CorpusFile) -> Outcome {
    let Some(format) = file.format() else { return Outcome::Refused("unsupported extension".into()) };
    let Ok(bytes) = std::fs::read(&file.path) else { return Outcome::Refused("unreadable".into()) };
    let upload = || -> Result<String, String> {
        let mut converted = Converters.convert(format, &bytes).map_err(|e| e.to_string())?;
        for (n, image) in converted.images.iter().enumerate() {
            converted.html = converted.html.replace(
                &format!("src=\"{}\"", image.placeholder),
                &format!("src=\"https://redline.invalid/v1/documents/images/img_{n:032x}\""),
            );
        }
        let mut next = 0u64;
        let mut new_id = || {
            next += 1;
            ChunkId::parse(&format!("c{next}")).expect("a valid chunk id")
        };
        let sections = Html5everSections::with_public_base_url("https://redline.invalid")
            .sectionize(&converted.html, &mut new_id)
            .map_err(|e| e.to_string())?;
        Ok(sections.iter().map(|s| format!("{}\n", s.html)).collect())
    };
    match std::panic::catch_unwind(upload) {
        Ok(Ok(html)) => Outcome::Html(html),
        Ok(Err(e)) => Outcome::Refused(e),
        Err(_) => Outcome::Panicked,
    }
}

/// Whether `html` shows `feature` (one of [`FEATURES`]).
pub fn detect(feature: &str, html: &str) -> bool {
    let tags = || Tags { rest: html };
    match feature {
        "headings" => tags().any(|t| matches!(t.name.as_str(), "h1" | "h2" | "h3" | "h4" | "h5" | "h6")),
        "tables" => tags().any(|t| t.name == "table"),
        "merged-cells" => tags().any(|t| {
            (t.name == "td" || t.name == "th")
                && ["colspan", "rowspan"].iter().any(|a| t.attr(a).and_then(|v| v.trim().parse::<u32>().ok()) > Some(1))
        }),
        "lists" => tags().any(|t| t.name == "ul" || t.name == "ol"),
        "nested-lists" => max_list_depth(html) >= 2,
        // A picture from another address is kept as a placeholder naming it (the sanitizer
        // shows no remote picture, docs/api.md): the converter kept it.
        "images" => tags().any(|t| {
            t.name == "img" || (t.name == "span" && t.attr("class").as_deref() == Some("remote-image"))
        }),
        "colors" => tags().any(|t| {
            t.attr("style").is_some_and(|s| has_property(&s, "color")) || (t.name == "font" && t.attr("color").is_some())
        }),
        "highlight" => tags().any(|t| {
            t.name == "mark"
                || t.attr("style").is_some_and(|s| has_property(&s, "background-color") || has_property(&s, "background"))
        }),
        "bold-italic" => tags().any(|t| matches!(t.name.as_str(), "strong" | "em" | "b" | "i")),
        "hyperlinks" => tags().any(|t| t.name == "a" && t.attr("href").is_some_and(|h| !h.is_empty() && !h.starts_with('#'))),
        "footnotes" => has_note_reference(html),
        "cjk" => html.chars().any(|c| matches!(c, '\u{3040}'..='\u{30FF}' | '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{AC00}'..='\u{D7AF}')),
        "unicode-rtl" => html.chars().any(|c| matches!(c, '\u{0590}'..='\u{08FF}' | '\u{FB1D}'..='\u{FDFF}' | '\u{FE70}'..='\u{FEFF}')),
        _ => false,
    }
}

/// A style declaration of `property` (`color` does not match inside `background-color`).
fn has_property(style: &str, property: &str) -> bool {
    style.split(';').any(|decl| {
        decl.split(':').next().is_some_and(|p| p.trim().eq_ignore_ascii_case(property)) && decl.contains(':')
    })
}

/// A note reference: a `<sup>` whose text is a number, bare or in brackets (`<sup>[1]</sup>`,
/// pandoc's `<a class="footnote-ref"><sup>1</sup></a>`, pulldown-cmark's
/// `<sup class="footnote-reference"><a href="#1">1</a></sup>`).
fn has_note_reference(html: &str) -> bool {
    let lower = html.to_ascii_lowercase();
    let mut rest = lower.as_str();
    while let Some(i) = rest.find("<sup") {
        rest = &rest[i + 4..];
        if !rest.starts_with(['>', ' ', '\t', '\n', '\r']) {
            continue;
        }
        let Some(end) = rest.find("</sup>") else { return false };
        let inner = strip_tags(&rest[rest.find('>').map_or(0, |g| g + 1).min(end)..end]);
        let number = inner.trim().trim_start_matches('[').trim_end_matches(']');
        if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) {
            return true;
        }
    }
    false
}

/// The text of an HTML fragment: tags dropped (a space for each), a few entities decoded.
pub fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&nbsp;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

fn max_list_depth(html: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for t in (Tags { rest: html }) {
        match t.name.as_str() {
            "ul" | "ol" => {
                depth += 1;
                max = max.max(depth);
            }
            "/ul" | "/ol" => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// The words of a text for comparing extractions: runs of letters and digits, lower case;
/// each CJK character is a word of its own.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        let cjk = matches!(c, '\u{3040}'..='\u{30FF}' | '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}');
        if c.is_alphanumeric() && !cjk {
            word.extend(c.to_lowercase());
            continue;
        }
        if !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
        if cjk {
            out.push(c.to_string());
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// The share of `reference`'s words (with multiplicity) found in `candidate`.
pub fn word_recall(reference: &str, candidate: &str) -> Option<f64> {
    let reference = words(reference);
    if reference.is_empty() {
        return None;
    }
    let mut bag = std::collections::HashMap::<String, usize>::new();
    for w in words(candidate) {
        *bag.entry(w).or_default() += 1;
    }
    let found = reference
        .iter()
        .filter(|w| match bag.get_mut(*w) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        })
        .count();
    Some(found as f64 / reference.len() as f64)
}

/// One start tag (`name` lower case) or end tag (`/name`), with its raw attribute text.
struct Tag<'a> {
    name: String,
    attrs: &'a str,
}

impl Tag<'_> {
    /// The value of attribute `name` (quoted or not), if present.
    fn attr(&self, name: &str) -> Option<String> {
        let lower = self.attrs.to_ascii_lowercase();
        let bytes = lower.as_bytes();
        let mut from = 0;
        while let Some(i) = lower[from..].find(name).map(|i| i + from) {
            from = i + name.len();
            let boundary = i == 0 || bytes[i - 1].is_ascii_whitespace();
            let after = lower[from..].trim_start();
            if !boundary || !after.starts_with('=') {
                continue;
            }
            let value = self.attrs[self.attrs.len() - after.len() + 1..].trim_start();
            let value = match value.chars().next() {
                Some(q @ ('"' | '\'')) => value[1..].split(q).next().unwrap_or(""),
                _ => value.split(|c: char| c.is_whitespace() || c == '>').next().unwrap_or(""),
            };
            return Some(value.to_owned());
        }
        None
    }
}

struct Tags<'a> {
    rest: &'a str,
}

impl<'a> Iterator for Tags<'a> {
    type Item = Tag<'a>;

    fn next(&mut self) -> Option<Tag<'a>> {
        loop {
            let i = self.rest.find('<')?;
            let after = &self.rest[i + 1..];
            let end = after.find('>').unwrap_or(after.len());
            let inside = &after[..end];
            self.rest = &after[end.min(after.len())..];
            let name_len = inside
                .char_indices()
                .find(|&(j, c)| !(c.is_ascii_alphanumeric() || (j == 0 && c == '/')))
                .map_or(inside.len(), |(j, _)| j);
            if name_len == 0 || inside.starts_with("/") && name_len == 1 {
                continue;
            }
            return Some(Tag { name: inside[..name_len].to_ascii_lowercase(), attrs: &inside[name_len..] });
        }
    }
}

//! Markdown (CommonMark with GitHub tables, strikethrough, task lists and footnotes).
//! Footnotes are written as DPUB-ARIA notes (docs/conversion.md, "Footnotes"): references
//! `<a href="#fnN" role="doc-noteref">`, the definitions in a `role="doc-endnotes"` section
//! at the end, numbered in the order of their first reference. Front matter (a YAML block
//! between `---` lines, or TOML between `+++`, at the very start) is metadata, not text: its
//! `title` becomes the document's title.

use std::collections::HashMap;

use pulldown_cmark::{html, CowStr, Event, Options, Parser, Tag, TagEnd};
use redline_ports::documents::{ConvertError, Converted};

use crate::decode;

pub(crate) fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let text = decode(bytes, "Markdown", None)?;
    let text = text.as_ref();
    crate::refuse_binary(text, "Markdown")?;
    if text.trim().is_empty() {
        return Err(ConvertError::Empty);
    }
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS
        | Options::ENABLE_PLUSES_DELIMITED_METADATA_BLOCKS;
    let mut out = String::with_capacity(text.len() * 2);
    let mut notes = Notes::default();
    let mut body: Vec<Event<'_>> = Vec::new();
    // The definition being read, and its events.
    let mut defining: Option<(CowStr<'_>, Vec<Event<'_>>)> = None;
    let mut in_metadata = false;
    let mut title = None;
    for event in Parser::new_ext(text, options) {
        match event {
            Event::Start(Tag::MetadataBlock(_)) => in_metadata = true,
            Event::End(TagEnd::MetadataBlock(_)) => in_metadata = false,
            Event::Text(block) if in_metadata => title = title.or_else(|| front_matter_title(&block)),
            Event::Start(Tag::FootnoteDefinition(label)) if defining.is_none() => defining = Some((label, Vec::new())),
            Event::End(TagEnd::FootnoteDefinition) if defining.is_some() => {
                if let Some((label, events)) = defining.take() {
                    notes.definitions.entry(label.to_string()).or_insert(events);
                }
            }
            Event::FootnoteReference(label) => {
                let (n, first) = notes.number(&label);
                let id = if first { format!(" id=\"fnref{n}\"") } else { String::new() };
                let html = format!("<a href=\"#fn{n}\"{id} role=\"doc-noteref\"><sup>{n}</sup></a>");
                match &mut defining {
                    Some((_, events)) => events.push(Event::InlineHtml(html.into())),
                    None => body.push(Event::InlineHtml(html.into())),
                }
            }
            other => match &mut defining {
                Some((_, events)) => events.push(other),
                None => body.push(other),
            },
        }
    }
    html::push_html(&mut out, body.into_iter());
    notes.write(&mut out);
    Ok(Converted { html: out, title, ..Converted::default() })
}

/// The `title` of front matter: `title: …` (YAML, the value plain or quoted) or `title = "…"`
/// (TOML), on a line of its own at the top level.
fn front_matter_title(block: &str) -> Option<String> {
    block.lines().find_map(|line| {
        let rest = line.strip_prefix("title")?.trim_start();
        let value = rest.strip_prefix(':').or_else(|| rest.strip_prefix('='))?.trim();
        let unquoted = match value.chars().next() {
            Some(q @ ('"' | '\'')) => value[1..].strip_suffix(q)?.to_owned(),
            // A YAML comment ends a plain value.
            _ => value.split(" #").next().unwrap_or(value).trim().to_owned(),
        };
        let unescaped = unquoted.replace("\\\"", "\"").replace("''", "'");
        (!unescaped.trim().is_empty()).then_some(unescaped)
    })
}

/// Footnotes met while reading: numbers by label (in order of first reference) and the
/// events of each definition.
#[derive(Default)]
struct Notes<'a> {
    numbers: HashMap<String, usize>,
    order: Vec<String>,
    definitions: HashMap<String, Vec<Event<'a>>>,
}

impl<'a> Notes<'a> {
    /// The number of the note `label`, and whether this is its first reference.
    fn number(&mut self, label: &str) -> (usize, bool) {
        if let Some(&n) = self.numbers.get(label) {
            return (n, false);
        }
        self.order.push(label.to_string());
        let n = self.order.len();
        self.numbers.insert(label.to_string(), n);
        (n, true)
    }

    /// The notes section: referenced notes in order, then definitions never referenced.
    fn write(mut self, out: &mut String) {
        let mut unreferenced: Vec<String> =
            self.definitions.keys().filter(|l| !self.numbers.contains_key(*l)).cloned().collect();
        unreferenced.sort();
        for label in unreferenced {
            self.number(&label);
        }
        if self.order.is_empty() {
            return;
        }
        out.push_str("<section role=\"doc-endnotes\"><ol>\n");
        for (i, label) in self.order.iter().enumerate() {
            out.push_str(&format!("<li id=\"fn{}\">", i + 1));
            if let Some(events) = self.definitions.remove(label) {
                html::push_html(out, events.into_iter());
            }
            out.push_str("</li>\n");
        }
        out.push_str("</ol></section>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_bytes_are_refused() {
        let zip = b"PK\x03\x04\x14\x00\x00\x00\x08\x00word/document.xml";
        let Err(ConvertError::Corrupt { format, reason }) = convert(zip) else { panic!("a zip as Markdown was taken") };
        assert_eq!((format.as_str(), reason.as_str()), ("Markdown", "the file holds binary data"));
        assert!(convert(b"# Title\n\nplain text").is_ok());
    }

    #[test]
    fn front_matter_is_metadata_and_names_the_document() {
        let yaml =
            convert(b"---\nauthor: Ann\ntitle: \"Q3 plan: draft\"\ntags: [a, b]\n---\n\n# Heading\n\nBody.\n").unwrap();
        assert_eq!(yaml.title.as_deref(), Some("Q3 plan: draft"));
        assert!(!yaml.html.contains("author") && !yaml.html.contains("tags"), "{}", yaml.html);
        assert!(yaml.html.starts_with("<h1>Heading</h1>"), "{}", yaml.html);
        let toml = convert(b"+++\ntitle = 'Notes'\n+++\nText.\n").unwrap();
        assert_eq!((toml.title.as_deref(), toml.html.as_str()), (Some("Notes"), "<p>Text.</p>\n"));
        let plain = convert(b"---\ntitle: Plain words # a comment\n---\nx\n").unwrap();
        assert_eq!(plain.title.as_deref(), Some("Plain words"));
        // No title in the front matter, and a rule that is not front matter.
        assert_eq!(convert(b"---\nauthor: Ann\n---\nx\n").unwrap().title, None);
        let rule = convert(b"Para.\n\n---\n\ntitle: not metadata\n").unwrap();
        assert_eq!(rule.title, None);
        assert!(rule.html.contains("title: not metadata"), "{}", rule.html);
    }

    #[test]
    fn headings_lists_tables() {
        let out = convert(b"# Title\n\n- a\n- b\n\n| x | y |\n|---|---|\n| 1 | 2 |\n\n~~gone~~").unwrap().html;
        assert!(out.contains("<h1>Title</h1>"));
        assert!(out.contains("<ul>") && out.contains("<li>a</li>"));
        assert!(out.contains("<table>") && out.contains("<td>1</td>"));
        assert!(out.contains("<del>gone</del>"));
    }

    #[test]
    fn markdown_in_windows_1252_is_read() {
        let out = convert(b"# Caf\xe9\n\n- cr\xe8me br\xfbl\xe9e \x96 \x80 4\n").unwrap().html;
        assert!(out.contains("<h1>Café</h1>"), "{out}");
        assert!(out.contains("<li>crème brûlée \u{2013} \u{20ac} 4</li>"), "{out}");
    }

    #[test]
    fn footnotes_are_dpub_notes() {
        let out =
            convert(b"Claim.[^src] Again.[^src] Other.[^b]\n\n[^b]: Bee.\n\n[^src]: The *source*.\n\n[^x]: Loose.\n")
                .unwrap()
                .html;
        assert!(out.contains("Claim.<a href=\"#fn1\" id=\"fnref1\" role=\"doc-noteref\"><sup>1</sup></a>"), "{out}");
        assert!(out.contains("Again.<a href=\"#fn1\" role=\"doc-noteref\"><sup>1</sup></a>"), "{out}");
        assert!(out.contains("<a href=\"#fn2\" id=\"fnref2\" role=\"doc-noteref\"><sup>2</sup></a>"), "{out}");
        let notes = out.split("<section role=\"doc-endnotes\">").nth(1).expect("a notes section");
        assert!(notes.contains("<li id=\"fn1\"><p>The <em>source</em>.</p>\n</li>"), "{out}");
        assert!(notes.contains("<li id=\"fn2\"><p>Bee.</p>\n</li>"), "{out}");
        assert!(notes.contains("<li id=\"fn3\"><p>Loose.</p>\n</li>"), "{out}");
        assert!(!out.contains("footnote-definition"), "{out}");
    }
}

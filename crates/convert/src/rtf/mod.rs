//! RTF: a tokenizer and a group-stack interpreter producing paragraphs with bold, italic,
//! underline, strike, super/subscript, colours, highlights and links, plus line breaks, tabs,
//! tables (flattened when nested), headings from `\outlinelevel`, and footnotes (`\footnote`:
//! a DPUB-ARIA note reference where `\chftn` or the note's group is, the notes in a
//! `role="doc-endnotes"` section at the end).
//!
//! Text is decoded with the code page of its font (`\fcharset`) or of the document
//! (`\ansicpg`, Windows-1252 by default); `\uN` escapes with their `\ucN` fallbacks and
//! UTF-16 surrogate pairs are understood. Destinations that hold no body text (font and
//! style tables, document info, pictures, headers and footers, field instructions,
//! annotations…) are skipped. Group nesting is capped; the output is bounded by a small
//! multiple of the input (formatting tags are opened and closed only where they change).
//!
//! - [`lexer`]: the bytes as tokens (groups, control words and symbols, hex bytes, text).
//! - [`codepage`]: which encoding a `\ansicpg`, `\cpg` or `\fcharset` names.
//! - [`parser`]: the group stack, destinations and formatting; what each control word does
//!   (`parser/words.rs`); paragraphs, lists, tables and footnotes as HTML (`parser/blocks.rs`).
//! - [`paragraph`]: a paragraph's runs of text and their inline HTML; table rows.

mod codepage;
mod lexer;
mod paragraph;
mod parser;

use redline_ports::documents::{ConvertError, Converted};

use parser::Parser;

/// The deepest group nesting accepted. (Real files go deep: one in the corpus, converted
/// from HTML, nests 2,714 groups. The stack is explicit, a group costs some 64 bytes.)
pub(crate) const MAX_DEPTH: usize = 5000;
/// The longest link target kept.
const MAX_URL: usize = 2048;

pub(crate) fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let start = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let start = &start[start.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(start.len())..];
    if !start.starts_with(b"{\\rtf") {
        return Err(ConvertError::Corrupt { format: "RTF".into(), reason: "it does not start with {\\rtf".into() });
    }
    let mut parser = Parser::new(start);
    parser.run()?;
    let images = std::mem::take(&mut parser.pictures.images);
    let (html, warnings, has_text) = parser.finish();
    if !has_text {
        return Err(ConvertError::NoText("the RTF document has no text".into()));
    }
    Ok(Converted { html, images, warnings, title: None, tracked: None, origin_job: None })
}

#[cfg(test)]
mod tests;

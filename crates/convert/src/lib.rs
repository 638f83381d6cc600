//! Converters of uploaded files to HTML, one module per format, behind
//! [`redline_ports::DocumentConverter`]. The HTML they produce is not trusted: the caller
//! sanitizes and sections it (`redline-html`).
//!
//! Invariant: no converter panics or allocates more than a small multiple of its input,
//! whatever the bytes (zip bombs, deep nesting, entity tricks are refused early).

mod docx;
mod markdown;
mod pdf;
mod rtf;
mod text;

use redline_domain::formats::SourceFormat;
use redline_ports::documents::{ConvertError, Converted};
use redline_ports::DocumentConverter;

/// The converter of every supported format.
#[derive(Debug, Default, Clone, Copy)]
pub struct Converters;

impl DocumentConverter for Converters {
    fn convert(&self, format: SourceFormat, bytes: &[u8]) -> Result<Converted, ConvertError> {
        if bytes.is_empty() {
            return Err(ConvertError::Empty);
        }
        match format {
            SourceFormat::Txt => text::convert(bytes),
            SourceFormat::Markdown => markdown::convert(bytes),
            SourceFormat::Html => text::convert_html(bytes),
            SourceFormat::Docx => docx::convert(bytes),
            SourceFormat::Pdf => pdf::convert(bytes),
            SourceFormat::Rtf => rtf::convert(bytes),
        }
    }
}

/// Reads text as UTF-8 without copying it (a BOM is dropped); invalid UTF-8 is a corrupt file.
pub(crate) fn utf8<'a>(bytes: &'a [u8], format: &str) -> Result<&'a str, ConvertError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    std::str::from_utf8(bytes)
        .map_err(|e| ConvertError::Corrupt { format: format.to_owned(), reason: format!("not valid UTF-8 text ({e})") })
}

/// Escapes text for HTML.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    escape_into(&mut out, text);
    out
}

/// Escapes text for HTML onto `out`.
pub(crate) fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

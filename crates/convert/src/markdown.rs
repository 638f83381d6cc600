//! Markdown (CommonMark with GitHub tables, strikethrough, task lists and footnotes).

use pulldown_cmark::{html, Options, Parser};
use redline_ports::documents::{ConvertError, Converted};

use crate::decode;

pub(crate) fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let text = decode(bytes, "Markdown", None)?;
    let text = text.as_ref();
    crate::refuse_binary(text, "Markdown")?;
    if text.trim().is_empty() {
        return Err(ConvertError::Empty);
    }
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS | Options::ENABLE_FOOTNOTES;
    let mut out = String::with_capacity(text.len() * 2);
    html::push_html(&mut out, Parser::new_ext(text, options));
    Ok(Converted { html: out, ..Converted::default() })
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
    fn footnotes_get_a_reference_and_a_definition() {
        let out = convert(b"Claim.[^src]\n\n[^src]: The source.\n").unwrap().html;
        assert!(out.contains("<sup class=\"footnote-reference\"><a href=\"#src\">1</a></sup>"), "{out}");
        assert!(out.contains("The source."), "{out}");
    }
}

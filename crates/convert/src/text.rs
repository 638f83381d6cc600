//! Plain text and HTML uploads.

use redline_ports::documents::{ConvertError, Converted};

use crate::{escape, utf8};

/// Paragraphs are separated by blank lines; single line breaks inside a paragraph are kept
/// as `<br>`.
pub(crate) fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let text = utf8(bytes, "text")?;
    if text.contains('\0') {
        return Err(ConvertError::Corrupt { format: "text".into(), reason: "the file holds binary data".into() });
    }
    let normalised = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut html = String::with_capacity(normalised.len() + 64);
    for para in normalised.split("\n\n").map(str::trim).filter(|p| !p.is_empty()) {
        html.push_str("<p>");
        let lines: Vec<String> = para.lines().map(|l| escape(l.trim_end())).collect();
        html.push_str(&lines.join("<br>"));
        html.push_str("</p>\n");
    }
    if html.is_empty() {
        return Err(ConvertError::Empty);
    }
    Ok(Converted { html, ..Converted::default() })
}

/// HTML is passed on as it is (the caller sanitizes it); it must be text.
pub(crate) fn convert_html(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let html = utf8(bytes, "HTML")?;
    if html.contains('\0') {
        return Err(ConvertError::Corrupt { format: "HTML".into(), reason: "the file holds binary data".into() });
    }
    if html.trim().is_empty() {
        return Err(ConvertError::Empty);
    }
    Ok(Converted { html, ..Converted::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_and_escaping() {
        let out = convert(b"Hello <world> & co\nsecond line\r\n\r\nNext para\n\n\n").unwrap();
        assert_eq!(out.html, "<p>Hello &lt;world&gt; &amp; co<br>second line</p>\n<p>Next para</p>\n");
        assert_eq!(convert(b"   \n\n "), Err(ConvertError::Empty));
        assert!(matches!(convert(b"\xff\xfe bad"), Err(ConvertError::Corrupt { .. })));
        assert!(matches!(convert(b"PK\x03\x04\0\0binary"), Err(ConvertError::Corrupt { .. })));
        assert_eq!(convert("\u{feff}שלום".as_bytes()).unwrap().html, "<p>שלום</p>\n");
    }
}

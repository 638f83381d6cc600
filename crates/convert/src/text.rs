//! Plain text and HTML uploads.

use redline_ports::documents::{ConvertError, Converted};

use crate::{escape_into, utf8};

/// Paragraphs are separated by blank lines; single line breaks inside a paragraph are kept
/// as `<br>`. Line ends may be `\n`, `\r\n` or `\r`. The text is read in place: the only
/// allocation is the HTML (a 50 MB upload costs one 50 MB string, not four).
pub(crate) fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let text = utf8(bytes, "text")?;
    if text.contains('\0') {
        return Err(ConvertError::Corrupt { format: "text".into(), reason: "the file holds binary data".into() });
    }
    let mut html = String::with_capacity(text.len() + text.len() / 16 + 64);
    // The lines of the paragraph in progress (a paragraph ends at an empty line).
    let mut paragraph: Vec<&str> = Vec::new();
    for line in lines(text) {
        if line.is_empty() {
            push_paragraph(&mut html, &paragraph);
            paragraph.clear();
        } else {
            paragraph.push(line);
        }
    }
    push_paragraph(&mut html, &paragraph);
    if html.is_empty() {
        return Err(ConvertError::Empty);
    }
    Ok(Converted { html, ..Converted::default() })
}

/// The lines of `text`, split at `\r\n`, `\n` or a lone `\r`.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let current = rest?;
        match current.find(['\r', '\n']) {
            Some(i) => {
                let skip = if current[i..].starts_with("\r\n") { 2 } else { 1 };
                rest = Some(&current[i + skip..]);
                Some(&current[..i])
            }
            None => {
                rest = None;
                Some(current)
            }
        }
    })
}

/// A paragraph without its blank first and last lines, its first line's leading and every
/// line's trailing white space; nothing when it is blank.
fn push_paragraph(html: &mut String, lines: &[&str]) {
    let Some(first) = lines.iter().position(|l| !l.trim().is_empty()) else { return };
    let last = lines.iter().rposition(|l| !l.trim().is_empty()).unwrap_or(first);
    html.push_str("<p>");
    for (n, line) in lines[first..=last].iter().enumerate() {
        let line = if n == 0 { line.trim() } else { line.trim_end() };
        if n > 0 {
            html.push_str("<br>");
        }
        escape_into(html, line);
    }
    html.push_str("</p>\n");
}

/// HTML is passed on as it is (the caller sanitizes it); it must be text.
pub(crate) fn convert_html(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let html = utf8(bytes, "HTML")?.to_owned();
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
        assert_eq!(convert(b"a\rb\r\rc").unwrap().html, "<p>a<br>b</p>\n<p>c</p>\n");
    }

    /// The conversion before it read the text in place, kept to check the new one against.
    fn by_copies(bytes: &[u8]) -> Option<String> {
        let text = String::from_utf8(bytes.to_vec()).ok()?;
        let normalised = text.replace("\r\n", "\n").replace('\r', "\n");
        let mut html = String::new();
        for para in normalised.split("\n\n").map(str::trim).filter(|p| !p.is_empty()) {
            let lines: Vec<String> = para.lines().map(|l| crate::escape(l.trim_end())).collect();
            html.push_str(&format!("<p>{}</p>\n", lines.join("<br>")));
        }
        Some(html)
    }

    proptest::proptest! {
        #[test]
        fn reading_in_place_gives_what_the_copies_gave(text in "[a \t\r\n<&é]{0,40}") {
            let expected = by_copies(text.as_bytes()).unwrap();
            match convert(text.as_bytes()) {
                Ok(out) => proptest::prop_assert_eq!(out.html, expected),
                Err(e) => {
                    proptest::prop_assert_eq!(e, ConvertError::Empty);
                    proptest::prop_assert_eq!(expected, "");
                }
            }
        }
    }
}

//! The encoding an HTML file declares in its first kilobyte (`<meta charset>`, or the
//! `http-equiv="Content-Type"` pragma), found the way browsers look for it before parsing:
//! the WHATWG's "prescan a byte stream to determine its encoding", on the bytes.

use encoding_rs::Encoding;

/// How far browsers look for the declaration.
const PRESCAN_BYTES: usize = 1024;

/// The encoding declared by the first `<meta>` that declares one, if its label is known.
///
/// As browsers do, a UTF-16 label is read as UTF-8 (a page that can be prescanned in ASCII
/// is not UTF-16) and `x-user-defined` as Windows-1252. Comments, other tags' attribute
/// values and `<!…>`, `</…>`, `<?…>` are skipped, so a `<meta` inside them does not count.
pub(crate) fn declared_encoding(bytes: &[u8]) -> Option<&'static Encoding> {
    let bytes = &bytes[..bytes.len().min(PRESCAN_BYTES)];
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        if rest.starts_with(b"<!--") {
            at += 4 + find(&rest[4..], b"-->").map_or(rest.len(), |end| end + 3);
        } else if starts_with_ignore_case(rest, b"<meta") && rest.get(5).is_some_and(|&b| is_space(b) || b == b'/') {
            at += 5;
            if let Some(encoding) = meta(bytes, &mut at) {
                return Some(match encoding {
                    e if e == encoding_rs::UTF_16BE || e == encoding_rs::UTF_16LE => encoding_rs::UTF_8,
                    e if e == encoding_rs::X_USER_DEFINED => encoding_rs::WINDOWS_1252,
                    e => e,
                });
            }
        } else if rest.len() > 1
            && rest[0] == b'<'
            && (rest[1].is_ascii_alphabetic() || rest[1] == b'/' && rest.get(2).is_some_and(u8::is_ascii_alphabetic))
        {
            // Another tag: its name, then its attributes, whose values may hold a '>'.
            at += rest[1..].iter().position(|&b| is_space(b) || b == b'>').map_or(rest.len(), |n| n + 1);
            while attribute(bytes, &mut at).is_some() {}
        } else if rest.starts_with(b"<!") || rest.starts_with(b"</") || rest.starts_with(b"<?") {
            at += rest.iter().position(|&b| b == b'>').map_or(rest.len(), |n| n + 1);
        } else {
            at += 1;
        }
    }
    None
}

/// The attributes of one `<meta>` (after its name): the encoding it declares, if any.
fn meta(bytes: &[u8], at: &mut usize) -> Option<&'static Encoding> {
    let (mut pragma, mut charset, mut from_content) = (false, None, None);
    while let Some((name, value)) = attribute(bytes, at) {
        match name.as_slice() {
            b"http-equiv" => pragma |= value.eq_ignore_ascii_case(b"content-type"),
            b"content" if from_content.is_none() => from_content = charset_in_content(&value).map(<[u8]>::to_vec),
            b"charset" if charset.is_none() => charset = Some(Encoding::for_label(&value)),
            _ => {}
        }
    }
    // A `charset` attribute decides (also when its label is unknown: then nothing is declared);
    // a `content`'s charset only with the pragma.
    match charset {
        Some(declared) => declared,
        None if pragma => from_content.as_deref().and_then(Encoding::for_label),
        None => None,
    }
}

/// The next attribute of a tag as (lower-cased name, value), or `None` at the tag's end.
fn attribute(bytes: &[u8], at: &mut usize) -> Option<(Vec<u8>, Vec<u8>)> {
    while *at < bytes.len() && (is_space(bytes[*at]) || bytes[*at] == b'/') {
        *at += 1;
    }
    if *at >= bytes.len() || bytes[*at] == b'>' {
        *at += 1;
        return None;
    }
    let mut name = vec![bytes[*at].to_ascii_lowercase()];
    *at += 1;
    while *at < bytes.len() && !matches!(bytes[*at], b'=' | b'/' | b'>') && !is_space(bytes[*at]) {
        name.push(bytes[*at].to_ascii_lowercase());
        *at += 1;
    }
    while *at < bytes.len() && is_space(bytes[*at]) {
        *at += 1;
    }
    if bytes.get(*at) != Some(&b'=') {
        return Some((name, Vec::new()));
    }
    *at += 1;
    while *at < bytes.len() && is_space(bytes[*at]) {
        *at += 1;
    }
    let value = match bytes.get(*at) {
        Some(&quote @ (b'"' | b'\'')) => {
            let start = *at + 1;
            let end = bytes[start..].iter().position(|&b| b == quote).map_or(bytes.len(), |n| start + n);
            *at = end + 1;
            bytes[start..end].to_vec()
        }
        _ => {
            let start = *at;
            while *at < bytes.len() && bytes[*at] != b'>' && !is_space(bytes[*at]) {
                *at += 1;
            }
            bytes[start..*at].to_vec()
        }
    };
    Some((name, value))
}

/// The label after `charset=` in a `content` value such as `text/html; charset=windows-1251`.
fn charset_in_content(content: &[u8]) -> Option<&[u8]> {
    let mut rest = content;
    loop {
        let found = find_ignore_case(rest, b"charset")?;
        rest = trim_start(&rest[found + 7..]);
        if let Some(value) = rest.strip_prefix(b"=") {
            let value = trim_start(value);
            return match value.first() {
                Some(&quote @ (b'"' | b'\'')) => {
                    let end = value[1..].iter().position(|&b| b == quote)?;
                    Some(&value[1..1 + end])
                }
                Some(_) => {
                    let end = value.iter().position(|&b| b == b';' || is_space(b)).unwrap_or(value.len());
                    Some(&value[..end])
                }
                None => None,
            };
        }
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
}

fn trim_start(bytes: &[u8]) -> &[u8] {
    let n = bytes.iter().position(|&b| !is_space(b)).unwrap_or(bytes.len());
    &bytes[n..]
}

fn starts_with_ignore_case(bytes: &[u8], prefix: &[u8]) -> bool {
    bytes.len() >= prefix.len() && bytes[..prefix.len()].eq_ignore_ascii_case(prefix)
}

fn find(bytes: &[u8], needle: &[u8]) -> Option<usize> {
    bytes.windows(needle.len()).position(|w| w == needle)
}

fn find_ignore_case(bytes: &[u8], needle: &[u8]) -> Option<usize> {
    bytes.windows(needle.len()).position(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared(html: &str) -> Option<&'static str> {
        declared_encoding(html.as_bytes()).map(Encoding::name)
    }

    #[test]
    fn the_first_declaration_is_found() {
        assert_eq!(declared(r#"<!doctype html><html><head><meta charset="windows-1251">"#), Some("windows-1251"));
        assert_eq!(declared("<META CHARSET=koi8-r>"), Some("KOI8-R"));
        assert_eq!(declared("<meta charset='latin1'/>"), Some("windows-1252"));
        assert_eq!(
            declared(r#"<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-2">"#),
            Some("ISO-8859-2")
        );
        assert_eq!(
            declared(r#"<meta content='text/html;charset="shift_jis"' http-equiv=content-type>"#),
            Some("Shift_JIS")
        );
        // The first declaring <meta> wins; one without a declaration is passed over.
        assert_eq!(
            declared(r#"<meta name="viewport" content="width=device-width"><meta charset="gbk"><meta charset="big5">"#),
            Some("GBK")
        );
        // As browsers do: UTF-16 means UTF-8 here, x-user-defined means Windows-1252.
        assert_eq!(declared(r#"<meta charset="utf-16le">"#), Some("UTF-8"));
        assert_eq!(declared(r#"<meta charset="x-user-defined">"#), Some("windows-1252"));
    }

    #[test]
    fn what_is_not_a_declaration_is_not_taken_for_one() {
        // Without the pragma, content's charset does not count.
        assert_eq!(declared(r#"<meta content="text/html; charset=koi8-r">"#), None);
        // Unknown labels declare nothing.
        assert_eq!(declared(r#"<meta charset="no-such-thing">"#), None);
        // In a comment, in another tag's attribute, in <!…> or a script-like tag name.
        assert_eq!(declared(r#"<!-- <meta charset="koi8-r"> --><p>"#), None);
        assert_eq!(declared(r#"<a title='<meta charset="koi8-r">'>x</a>"#), None);
        assert_eq!(declared(r#"<metadata charset="koi8-r">"#), None);
        assert_eq!(declared(r#"<?xml version="1.0" encoding="koi8-r"?>"#), None);
        // Past the first kilobyte.
        let late = format!("<p>{}</p><meta charset=\"koi8-r\">", "x".repeat(1100));
        assert_eq!(declared(&late), None);
        // Cut off anywhere: no panic.
        let full = r#"<!--c--><a href='x'><meta http-equiv="content-type" content="text/html; charset='koi8-r'">"#;
        for end in 0..=full.len() {
            let _ = declared_encoding(&full.as_bytes()[..end]);
        }
        assert_eq!(declared(full), Some("KOI8-R"));
    }

    proptest::proptest! {
        /// Any bytes: an answer or none, never a panic; an answer only where something
        /// says "charset".
        #[test]
        fn any_bytes_are_scanned(parts in proptest::collection::vec(proptest::sample::select(vec![
            &b"<"[..], b">", b"<!--", b"-->", b"<meta", b"<a", b"</", b"<!", b"<?", b" ", b"/", b"=",
            b"'", b"\"", b"charset", b"CHARSET", b"content", b"http-equiv", b"content-type",
            b"text/html;", b"koi8-r", b"utf-16le", b"x", b"\xff",
        ]), 0..80)) {
            let bytes = parts.concat();
            if declared_encoding(&bytes).is_some() {
                proptest::prop_assert!(find_ignore_case(&bytes, b"charset").is_some());
            }
        }
    }
}

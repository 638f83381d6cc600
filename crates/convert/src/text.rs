//! Plain text and HTML uploads.

use redline_ports::documents::{ConvertError, Converted};

use crate::{decode, escape_into, refuse_binary};

/// Paragraphs are separated by blank lines; single line breaks inside a paragraph are kept
/// as `<br>`. Line ends may be `\n`, `\r\n` or `\r`. UTF-8 text is read in place: the only
/// allocation is the HTML (a 50 MB upload costs one 50 MB string, not four); text in another
/// encoding ([`decode`]) costs one more copy.
pub(crate) fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let text = decode(bytes, "text", None)?;
    let text = text.as_ref();
    refuse_binary(text, "text")?;
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
    let html = decode(bytes, "HTML", crate::prescan::declared_encoding(bytes))?.into_owned();
    refuse_binary(&html, "HTML")?;
    if html.trim().is_empty() {
        return Err(ConvertError::Empty);
    }
    let title = page_title(&html);
    Ok(Converted { html, title, ..Converted::default() })
}

/// How far into an HTML file its `<title>` is looked for: it belongs in the `<head>`.
const TITLE_SCAN: usize = 64 * 1024;

/// The text of a page's `<title>` (its character references resolved), when the head has one.
fn page_title(html: &str) -> Option<String> {
    let mut end = html.len().min(TITLE_SCAN);
    while !html.is_char_boundary(end) {
        end -= 1;
    }
    let head = &html[..end];
    let lower = head.to_ascii_lowercase();
    let open = lower.find("<title")?;
    if lower[..open].contains("<body") {
        return None;
    }
    let start = open + lower[open..].find('>')? + 1;
    let close = start + lower[start..].find("</title")?;
    let text = unescape(&head[start..close]);
    (!text.trim().is_empty()).then_some(text)
}

/// Resolves the character references a title holds in practice: `&amp; &lt; &gt; &quot;
/// &apos; &nbsp;` and numeric ones. Others stay as written.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let Some(semi) = rest[..rest.len().min(12)].find(';') else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let name = &rest[1..semi];
        let resolved = match name {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            "nbsp" => Some('\u{a0}'),
            _ => {
                let number = match name.strip_prefix("#x").or_else(|| name.strip_prefix("#X")) {
                    Some(hex) => u32::from_str_radix(hex, 16).ok(),
                    None => name.strip_prefix('#').and_then(|d| d.parse().ok()),
                };
                number.and_then(char::from_u32)
            }
        };
        match resolved {
            Some(c) => {
                out.push(c);
                rest = &rest[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_html_pages_title_names_the_document() {
        let page = |html: &str| convert_html(html.as_bytes()).unwrap().title;
        assert_eq!(
            page("<html><head><TITLE>Q3 &amp; Q4 &#8212; plan&#x21;</TITLE></head><body>x</body></html>"),
            Some("Q3 & Q4 \u{2014} plan!".into())
        );
        assert_eq!(page("<title lang=\"ja\">東京 &bogus; & co</title><p>x</p>"), Some("東京 &bogus; & co".into()));
        assert_eq!(page("<p>No head.</p>"), None);
        assert_eq!(page("<title> </title><p>x</p>"), None);
        assert_eq!(page("<body><svg><title>A shape</title></svg></body>"), None, "not the page's title");
        assert_eq!(page("<title>never closed"), None);
    }

    #[test]
    fn paragraphs_and_escaping() {
        let out = convert(b"Hello <world> & co\nsecond line\r\n\r\nNext para\n\n\n").unwrap();
        assert_eq!(out.html, "<p>Hello &lt;world&gt; &amp; co<br>second line</p>\n<p>Next para</p>\n");
        assert_eq!(convert(b"   \n\n "), Err(ConvertError::Empty));
        // A UTF-16 byte order mark, then an odd number of bytes: cut inside a character.
        assert!(matches!(convert(b"\xff\xfe bad!"), Err(ConvertError::Corrupt { .. })));
        assert!(matches!(convert(b"\xef\xbb\xbfok \xff"), Err(ConvertError::Corrupt { .. })));
        assert!(matches!(convert(b"PK\x03\x04\0\0binary"), Err(ConvertError::Corrupt { .. })));
        assert_eq!(convert("\u{feff}שלום".as_bytes()).unwrap().html, "<p>שלום</p>\n");
        assert_eq!(convert(b"a\rb\r\rc").unwrap().html, "<p>a<br>b</p>\n<p>c</p>\n");
    }

    #[test]
    fn text_in_legacy_encodings_is_read() {
        // Windows-1252 ("ANSI" on Western Windows): smart quotes, an accent, the euro sign.
        let ansi = b"\x93Caf\xe9 cr\xe8me\x94 costs 3 \x80.\r\n\r\nThe na\xefve \x91r\xe9sum\xe9\x92 \x96 fine.";
        assert_eq!(
            convert(ansi).unwrap().html,
            "<p>\u{201c}Café crème\u{201d} costs 3 \u{20ac}.</p>\n<p>The naïve \u{2018}résumé\u{2019} \u{2013} fine.</p>\n"
        );
        // UTF-16 in either byte order, told by its byte order mark.
        let text = "Grüße, 世界.\n\nZweiter Absatz.";
        let le: Vec<u8> = [0xFF, 0xFE].into_iter().chain(text.encode_utf16().flat_map(u16::to_le_bytes)).collect();
        let be: Vec<u8> = [0xFE, 0xFF].into_iter().chain(text.encode_utf16().flat_map(u16::to_be_bytes)).collect();
        let expected = "<p>Grüße, 世界.</p>\n<p>Zweiter Absatz.</p>\n";
        assert_eq!(convert(&le).unwrap().html, expected);
        assert_eq!(convert(&be).unwrap().html, expected);
        // Shift_JIS and Cyrillic Windows-1251, guessed from the bytes.
        let japanese = "これは日本語のテキストです。ファイルはシフトJISで保存されました。東京と大阪の天気は晴れです。";
        let (sjis, _, _) = encoding_rs::SHIFT_JIS.encode(japanese);
        assert_eq!(convert(&sjis).unwrap().html, format!("<p>{japanese}</p>\n"));
        let russian = "Привет, мир! Это текстовый файл в кодировке Windows-1251, сохранённый в Блокноте.";
        let (cp1251, _, _) = encoding_rs::WINDOWS_1251.encode(russian);
        assert_eq!(convert(&cp1251).unwrap().html, format!("<p>{russian}</p>\n"));
        // The same for HTML.
        let html = convert_html(b"<p>\x93Caf\xe9\x94</p>").unwrap().html;
        assert_eq!(html, "<p>\u{201c}Café\u{201d}</p>");
        // The guess reads the first megabyte only: plain ASCII there, Windows-1252 after it.
        let mut long = b"Plain words in plain ASCII. ".repeat(40_000);
        long.extend_from_slice(b"\n\nThe caf\xe9 at the end.");
        assert!(long.len() > crate::DETECTION_SAMPLE);
        assert!(convert(&long).unwrap().html.ends_with("<p>The café at the end.</p>\n"));
        // An encoding no guess knows (EBCDIC, code page 500) is refused, not read as symbols.
        let ebcdic = b"\xe3\x88\x89\xa2\x40\x89\xa2\x40\x81\x95\x40\x96\x99\x84\x89\x95\x81\x99\xa8\x40\xc5\x95\x87\x93\x89\xa2\x88\x40\xa2\x85\x95\xa3\x85\x95\x83\x85\x6b\x40\xa2\x81\xa5\x85\x84\x40\x96\x95\x40\x81\x40\x94\x81\x89\x95\x86\x99\x81\x94\x85\x40\x89\x95\x40\xc5\xc2\xc3\xc4\xc9\xc3\x4b";
        let Err(ConvertError::Corrupt { reason, .. }) = convert(ebcdic) else { panic!("EBCDIC read as text") };
        assert!(reason.contains("not text in an encoding Redline reads"), "{reason}");
        // Binary data is still refused, whatever the encoding guessed.
        assert!(matches!(convert(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\xff\xd8"), Err(ConvertError::Corrupt { .. })));
    }

    #[test]
    fn an_html_page_is_read_in_the_encoding_it_declares() {
        let page = |meta: &str, body: &str, encoding: &'static encoding_rs::Encoding| {
            let html = format!("<html><head>{meta}<title>t</title></head><body><p>{body}</p></body></html>");
            encoding.encode(&html).0.into_owned()
        };
        let body_of = |bytes: &[u8]| {
            let html = convert_html(bytes).unwrap().html;
            html.split("<p>").nth(1).and_then(|rest| rest.split("</p>").next()).unwrap_or_default().to_owned()
        };
        // Short Hungarian and Hebrew: the bytes alone are guessed as Windows-1252.
        for (text, encoding, label) in [
            ("Árvíztűrő tükörfúrógép.", encoding_rs::WINDOWS_1250, "windows-1250"),
            ("אבג דהו", encoding_rs::WINDOWS_1255, "windows-1255"),
        ] {
            let guessed = page("", text, encoding);
            assert_ne!(body_of(&guessed), text, "the guess alone reads this page right: pick a harder one");
            assert_eq!(body_of(&page(&format!(r#"<meta charset="{label}">"#), text, encoding)), text);
        }
        // The pragma form, and a label browsers map (latin1 is Windows-1252).
        let pragma = r#"<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">"#;
        assert_eq!(
            body_of(&page(pragma, "Съешь же ещё этих мягких булок", encoding_rs::KOI8_R)),
            "Съешь же ещё этих мягких булок"
        );
        assert_eq!(body_of(&page("<meta charset=latin1>", "“Café” – 3 €", encoding_rs::WINDOWS_1252)), "“Café” – 3 €");
        // Bytes that are UTF-8 are UTF-8, whatever the label says.
        assert_eq!(body_of(&page(r#"<meta charset="koi8-r">"#, "Grüße", encoding_rs::UTF_8)), "Grüße");
        // A page that says UTF-8 and is not: the bytes are guessed (the corpus has one).
        let russian = "Привет, мир! Это страница в кодировке Windows-1251, а в ней написано UTF-8.";
        assert_eq!(body_of(&page(r#"<meta charset="utf-8">"#, russian, encoding_rs::WINDOWS_1251)), russian);
        // A label its bytes cannot be read in (ISO-2022-JP, seven bits, declared; Windows-1252
        // written): guessed too.
        let ansi = b"<meta charset=\"iso-2022-jp\"><p>\x93Caf\xe9 cr\xe8me\x94 costs 3 \x80 at the caf\xe9.</p>";
        assert_eq!(body_of(ansi), "“Café crème” costs 3 € at the café.");
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

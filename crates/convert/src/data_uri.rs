//! Pictures written into HTML (and Markdown's HTML) as `data:` URLs: each `<img>` whose `src`
//! is a base64 `data:image/…` URL of a format browsers show (PNG, JPEG, GIF, WebP, BMP,
//! sniffed from the decoded bytes) is moved out of the HTML into an [`ExtractedImage`], its
//! `src` replaced by the picture's placeholder, as pictures of DOCX files are. Anything else
//! (SVG, a damaged or oversized URL, one past the caps of [`crate::images`]) stays as it was.

use redline_ports::documents::Converted;

use crate::images::{Pictures, MAX_PICTURE_BYTES};

/// Finds `needle` (ASCII, lower case) in `hay` from `from`, ignoring ASCII case.
fn find_ci(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if from >= hay.len() {
        return None;
    }
    hay[from..].windows(needle.len()).position(|w| w.eq_ignore_ascii_case(needle)).map(|p| p + from)
}

/// The end of the tag that starts at `start` (`<`): the index after its `>`, quotes respected.
fn tag_end(html: &[u8], start: usize) -> Option<usize> {
    let mut quote = None;
    for (i, b) in html.iter().enumerate().skip(start + 1) {
        match (quote, *b) {
            (Some(q), b) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(*b),
            (None, b'>') => return Some(i + 1),
            _ => {}
        }
    }
    None
}

/// The `src` attribute in a tag's bytes: where the attribute starts, where its value starts
/// and ends (exclusive), and where the attribute ends (after a closing quote).
fn src_value(tag: &[u8]) -> Option<(usize, usize, usize, usize)> {
    let mut at = 0;
    while let Some(found) = find_ci(tag, b"src", at) {
        at = found + 3;
        // An attribute name starts after white space; `srcset` and `data-src` are others.
        if !tag.get(found.wrapping_sub(1)).is_some_and(u8::is_ascii_whitespace) {
            continue;
        }
        let mut i = found + 3;
        while tag.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        if tag.get(i) != Some(&b'=') {
            continue;
        }
        i += 1;
        while tag.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        return match tag.get(i) {
            Some(q @ (b'"' | b'\'')) => {
                let end = tag[i + 1..].iter().position(|b| b == q)? + i + 1;
                Some((found, i + 1, end, end + 1))
            }
            Some(_) => {
                let end =
                    tag[i..].iter().position(|b| b.is_ascii_whitespace() || *b == b'>').map_or(tag.len(), |p| p + i);
                Some((found, i, end, end))
            }
            None => None,
        };
    }
    None
}

fn base64_value(b: u8) -> Option<u8> {
    Some(match b {
        b'A'..=b'Z' => b - b'A',
        b'a'..=b'z' => b - b'a' + 26,
        b'0'..=b'9' => b - b'0' + 52,
        b'+' | b'-' => 62,
        b'/' | b'_' => 63,
        _ => return None,
    })
}

/// Decodes base64 (standard or URL-safe alphabet; white space, `&#10;`-free), padding
/// optional. `None` on a character outside the alphabet.
fn base64(text: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &b in text {
        if b.is_ascii_whitespace() {
            continue;
        }
        if b == b'=' {
            break;
        }
        acc = acc << 6 | u32::from(base64_value(b)?);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

/// The picture of a `data:` URL, if it is a base64 picture of a format browsers show.
fn picture(url: &[u8]) -> Option<Vec<u8>> {
    let rest = url.get(..11).filter(|p| p.eq_ignore_ascii_case(b"data:image/")).map(|_| &url[11..])?;
    let comma = rest.iter().position(|b| *b == b',')?;
    let (meta, data) = (&rest[..comma], &rest[comma + 1..]);
    if !meta.to_ascii_lowercase().ends_with(b";base64") || data.len() / 4 * 3 > MAX_PICTURE_BYTES {
        return None;
    }
    let bytes = base64(data)?;
    crate::images::sniff(&bytes).is_some().then_some(bytes)
}

/// Moves the `data:` pictures of `converted.html` into `converted.images`.
pub(crate) fn extract(mut converted: Converted) -> Converted {
    let html = converted.html.as_bytes();
    if find_ci(html, b"data:image/", 0).is_none() {
        return converted;
    }
    let mut pictures = Pictures::default();
    let mut out = String::with_capacity(converted.html.len());
    let mut copied = 0;
    let mut at = 0;
    let mut refused = None;
    while let Some(start) = find_ci(html, b"<img", at) {
        let Some(end) = tag_end(html, start) else { break };
        at = end;
        let tag = &html[start..end];
        let Some((attribute, from, to, attribute_end)) = src_value(tag) else { continue };
        let Some(bytes) = picture(&tag[from..to]) else { continue };
        match pictures.add(bytes) {
            Ok(placeholder) => {
                // The attribute is written as the caller looks for it: `src="…"`. Its ends
                // sit on ASCII bytes, so the slices are on character boundaries.
                out.push_str(&converted.html[copied..start + attribute]);
                out.push_str("src=\"");
                out.push_str(&placeholder);
                out.push('"');
                copied = start + attribute_end;
            }
            Err(r) => refused = Some(r),
        }
    }
    if pictures.images.is_empty() {
        return converted;
    }
    out.push_str(&converted.html[copied..]);
    converted.html = out;
    converted.images = pictures.images;
    if let Some(refused) = refused {
        converted.warnings.push(refused.warning("embedded pictures"));
    }
    converted
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    fn b64(bytes: &[u8]) -> String {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
            for i in 0..=chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            }
            for _ in chunk.len()..3 {
                out.push('=');
            }
        }
        out
    }

    fn html(html: &str) -> Converted {
        extract(Converted { html: html.to_owned(), ..Converted::default() })
    }

    #[test]
    fn base64_pictures_become_placeholders() {
        let source = format!(
            "<p>Ünïcode <IMG alt='x' SRC=\"data:image/png;base64,{}\"> and <img src='DATA:image/jpeg;BASE64,{}'/></p>",
            b64(PNG),
            b64(b"\xFF\xD8\xFF\xE0jpeg")
        );
        let out = html(&source);
        assert_eq!(out.html, "<p>Ünïcode <IMG alt='x' src=\"redline-image:0\"> and <img src=\"redline-image:1\"/></p>");
        assert_eq!(out.images.len(), 2);
        assert_eq!(out.images[0].bytes, PNG);
        assert_eq!(out.images[0].content_type, "image/png");
        assert_eq!(out.images[1].content_type, "image/jpeg");
    }

    #[test]
    fn other_urls_and_formats_stay_as_they_are() {
        for source in [
            "<img src=\"https://example.com/a.png\">".to_owned(),
            format!("<img src=\"data:image/svg+xml;base64,{}\">", b64(b"<svg/>")),
            "<img src=\"data:image/png,%89PNG\">".to_owned(),
            "<img src=\"data:image/png;base64,!!!!\">".to_owned(),
            format!("<img data-src=\"data:image/png;base64,{}\">", b64(PNG)),
            format!("<p>data:image/png;base64,{}</p>", b64(PNG)),
            "<img src=\"data:image/png;base64,".to_owned(),
        ] {
            let out = html(&source);
            assert_eq!(out.html, source);
            assert!(out.images.is_empty());
        }
    }

    #[test]
    fn unquoted_values_and_line_breaks_in_the_data_are_read() {
        let encoded = b64(PNG);
        let (a, b) = encoded.split_at(8);
        let out = html(&format!(
            "<img src=\"data:image/png;base64,{a}\n{b}\" alt=\"\"><img src=data:image/png;base64,{encoded}>"
        ));
        assert_eq!(out.html, "<img src=\"redline-image:0\" alt=\"\"><img src=\"redline-image:1\">");
        assert_eq!(out.images[1].bytes, PNG);
    }
}

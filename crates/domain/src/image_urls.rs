//! The addresses of the service's own pictures in a document's HTML.
//!
//! Stored HTML names a picture by its path, `/v1/documents/images/{image_id}`, never under an
//! origin: a document outlives the address it came in through (a replica, a host name that
//! changes). The HTML the API answers names each picture under the public base URL
//! ([`public_image_urls`]), so that it displays in any editor. HTML stored before this rule
//! holds absolute addresses under whatever origin served the upload; they are answered under
//! the public base URL too.

use std::borrow::Cow;

/// The path under which pictures are served, followed by an image id.
pub const IMAGE_PATH: &str = "/v1/documents/images/";

/// `img_` and 32 hex digits.
pub fn is_image_id(s: &str) -> bool {
    s.strip_prefix("img_").is_some_and(|h| h.len() == 32 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The image id of `src` when it is `/v1/documents/images/{id}`, exactly (no query, no
/// fragment).
pub fn relative_image_id(src: &str) -> Option<&str> {
    src.strip_prefix(IMAGE_PATH).filter(|id| is_image_id(id))
}

/// The image id of a picture address stored in a document: relative, or absolute under any
/// `http(s)` origin and path prefix. Only for HTML the service has sanitized, where every
/// other picture has become a placeholder: an address of this shape there is the service's.
pub fn stored_image_id(src: &str) -> Option<&str> {
    if let Some(id) = relative_image_id(src) {
        return Some(id);
    }
    let rest = src.strip_prefix("https://").or_else(|| src.strip_prefix("http://"))?;
    let at = rest.rfind(IMAGE_PATH)?;
    let (origin_and_prefix, id) = (&rest[..at], &rest[at + IMAGE_PATH.len()..]);
    let plain = |c: char| !(c.is_whitespace() || matches!(c, '?' | '#' | '"' | '\'' | '<' | '>' | '\\'));
    (!origin_and_prefix.is_empty() && origin_and_prefix.chars().all(plain) && is_image_id(id)).then_some(id)
}

/// Elements whose content is text up to their end tag, where a `<` starts no tag.
const RAW_TEXT: [&str; 4] = ["script", "style", "textarea", "title"];

/// `html` (as the service serializes it) with the `src` of every own picture written as
/// `{public_base_url}/v1/documents/images/{id}`: relative ones and absolute ones under any
/// origin alike. Borrowed when nothing changes. An empty base writes them relative.
pub fn public_image_urls<'a>(html: &'a str, public_base_url: &str) -> Cow<'a, str> {
    let base = public_base_url.trim_end_matches('/');
    let mut out = String::new();
    let mut copied = 0;
    for (start, end, id) in own_picture_sources(html) {
        let wanted_len = base.len() + IMAGE_PATH.len() + id.len();
        if end - start == wanted_len && html[start..end].starts_with(base) && html[start..end].ends_with(id) {
            let middle = &html[start + base.len()..end - id.len()];
            if middle == IMAGE_PATH {
                continue;
            }
        }
        if out.is_empty() {
            out.reserve(html.len() + 64);
        }
        out.push_str(&html[copied..start]);
        out.push_str(base);
        out.push_str(IMAGE_PATH);
        out.push_str(id);
        copied = end;
    }
    if copied == 0 {
        return Cow::Borrowed(html);
    }
    out.push_str(&html[copied..]);
    Cow::Owned(out)
}

/// The byte ranges of the `src` values of `<img>` elements that are own pictures
/// ([`stored_image_id`]), with their ids, in order. Reads the tags as the serializer writes
/// them: attribute values quoted (or not), comments and raw-text elements skipped.
fn own_picture_sources(html: &str) -> Vec<(usize, usize, &str)> {
    let bytes = html.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(lt) = html[i..].find('<').map(|p| p + i) {
        i = lt + 1;
        if html[i..].starts_with("!--") {
            i = html[i..].find("-->").map_or(bytes.len(), |p| i + p + 3);
            continue;
        }
        if !bytes.get(i).is_some_and(u8::is_ascii_alphabetic) {
            // An end tag, a doctype or a stray `<`: nothing of ours in it.
            continue;
        }
        let name_end = html[i..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == ':'))
            .map_or(bytes.len(), |p| i + p);
        let name = &html[i..name_end];
        let is_img = name.eq_ignore_ascii_case("img");
        i = name_end;
        // Attributes, up to the tag's `>`.
        loop {
            while bytes.get(i).is_some_and(|b| b.is_ascii_whitespace() || *b == b'/') {
                i += 1;
            }
            match bytes.get(i) {
                None => return found,
                Some(b'>') => {
                    i += 1;
                    break;
                }
                Some(_) => {}
            }
            let attr_start = i;
            while bytes.get(i).is_some_and(|b| !(b.is_ascii_whitespace() || matches!(b, b'=' | b'>' | b'/'))) {
                i += 1;
            }
            let attr = &html[attr_start..i];
            if attr.is_empty() {
                // A lone `=`: skip it.
                i += 1;
                continue;
            }
            while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
                i += 1;
            }
            if bytes.get(i) != Some(&b'=') {
                continue;
            }
            i += 1;
            while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
                i += 1;
            }
            let (value_start, value_end) = match bytes.get(i) {
                Some(&q @ (b'"' | b'\'')) => {
                    let start = i + 1;
                    let end = html[start..].find(q as char).map_or(bytes.len(), |p| start + p);
                    i = (end + 1).min(bytes.len());
                    (start, end)
                }
                _ => {
                    let start = i;
                    while bytes.get(i).is_some_and(|b| !(b.is_ascii_whitespace() || *b == b'>')) {
                        i += 1;
                    }
                    (start, i)
                }
            };
            if is_img && attr.eq_ignore_ascii_case("src") {
                if let Some(id) = stored_image_id(&html[value_start..value_end]) {
                    found.push((value_start, value_end, id));
                }
            }
        }
        if let Some(raw) = RAW_TEXT.iter().find(|r| name.eq_ignore_ascii_case(r)) {
            let close = format!("</{raw}");
            i = find_ignore_case(&html[i..], &close).map_or(bytes.len(), |p| i + p);
        }
    }
    found
}

fn find_ignore_case(haystack: &str, needle: &str) -> Option<usize> {
    haystack.as_bytes().windows(needle.len()).position(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "img_0123456789abcdef0123456789abcdef";
    const BASE: &str = "https://redline.example";

    fn public(html: &str) -> String {
        public_image_urls(html, BASE).into_owned()
    }

    #[test]
    fn relative_pictures_are_answered_under_the_public_base_url() {
        let html = format!(r#"<p>a <img alt="x" src="/v1/documents/images/{ID}"> b</p>"#);
        assert_eq!(public(&html), format!(r#"<p>a <img alt="x" src="{BASE}/v1/documents/images/{ID}"> b</p>"#));
    }

    #[test]
    fn absolute_pictures_of_any_origin_are_answered_under_the_public_base_url() {
        for old in ["http://10.0.0.7:8080", "https://old.example/redline", "http://127.0.0.1:4000"] {
            let html =
                format!(r#"<img src="{old}/v1/documents/images/{ID}"><img src='{old}/v1/documents/images/{ID}'>"#);
            let want =
                format!(r#"<img src="{BASE}/v1/documents/images/{ID}"><img src='{BASE}/v1/documents/images/{ID}'>"#);
            assert_eq!(public(&html), want, "{old}");
        }
    }

    #[test]
    fn html_without_own_pictures_is_borrowed_as_it_is() {
        for html in [
            "<p>no pictures</p>",
            &format!(r#"<img src="{BASE}/v1/documents/images/{ID}">"#),
            "<img src=\"data:image/png;base64,AAAA\">",
            &format!(r#"<img src="/v1/documents/images/{ID}?x=1"><img src="/v1/documents/images/img_short">"#),
            &format!(r#"<img src="ftp://host/v1/documents/images/{ID}">"#),
        ] {
            assert!(matches!(public_image_urls(html, BASE), Cow::Borrowed(_)), "{html}");
        }
    }

    #[test]
    fn only_the_src_of_pictures_changes() {
        let path = format!("/v1/documents/images/{ID}");
        let html = format!(
            r#"<a href="{path}">link</a><p title="<img src=&quot;{path}&quot;>">src="{path}"</p><!-- <img src="{path}"> --><img data-src="{path}"><style>a<img src="{path}"></style>"#
        );
        assert_eq!(public(&html), html);
    }

    #[test]
    fn an_attribute_value_holding_a_tag_does_not_hide_the_picture_after_it() {
        let html = format!(r#"<img alt="a > b <img" src="/v1/documents/images/{ID}" width="3">"#);
        assert_eq!(public(&html), format!(r#"<img alt="a > b <img" src="{BASE}/v1/documents/images/{ID}" width="3">"#));
    }

    #[test]
    fn an_empty_base_writes_pictures_relative() {
        let html = format!(r#"<img src="http://10.0.0.7:8080/v1/documents/images/{ID}">"#);
        assert_eq!(public_image_urls(&html, ""), format!(r#"<img src="/v1/documents/images/{ID}">"#));
    }

    #[test]
    fn cut_html_ends_without_a_panic() {
        let html = format!(r#"<p>x</p><img alt="y" src="/v1/documents/images/{ID}"#);
        for end in 0..=html.len() {
            let _ = public_image_urls(&html[..end], BASE);
        }
        assert_eq!(stored_image_id(&format!("https:///v1/documents/images/{ID}")), None);
        assert_eq!(stored_image_id(&format!("https://h x/v1/documents/images/{ID}")), None);
    }
}

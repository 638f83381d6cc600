//! The sanitizer: an ammonia allow-list, plus the checks ammonia cannot express: which data
//! URLs an image may use, and the `style` attribute (ammonia 3 passes it as is; ammonia 4
//! filters it with cssparser, whose MPL-2.0 licence the project does not allow), whose
//! lengths are bounded (`bounds.rs`). Pictures from elsewhere than the service become
//! placeholders after ammonia (`images.rs`).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use ammonia::url::ParseError;
use ammonia::{Builder, Url, UrlRelative};
use maplit::{hashmap, hashset};
use redline_domain::document::{SECTION_TAGS, WHOLE_SECTION_ROLES};

use crate::bounds::bound;
use crate::images::REMOTE_IMAGE_CLASS;
use crate::sections::{CONTAINERS, RENAMED_BLOCKS};

/// Elements kept besides the section elements.
const OTHER_TAGS: [&str; 31] = [
    "li",
    "thead",
    "tbody",
    "tfoot",
    "tr",
    "td",
    "th",
    "caption",
    "colgroup",
    "col",
    "a",
    "b",
    "strong",
    "i",
    "em",
    "u",
    "s",
    "strike",
    "del",
    "ins",
    "sub",
    "sup",
    "mark",
    "small",
    "span",
    "br",
    "code",
    "kbd",
    "img",
    "figcaption",
    "font",
];

/// Elements removed with everything inside them. Every other element not allowed is
/// unwrapped: its children take its place, so no text is lost.
const DROPPED_WITH_CONTENT: [&str; 21] = [
    "script", "style", "title", "template", "iframe", "frame", "frameset", "object", "embed", "applet", "svg", "math",
    "noscript", "noembed", "noframes", "textarea", "select", "datalist", "head", "audio", "video",
];

/// CSS properties a `style` attribute may keep.
pub(crate) const STYLE_PROPERTIES: [&str; 54] = [
    "color",
    "background-color",
    "background",
    "font-weight",
    "font-style",
    "font-size",
    "font-family",
    "text-decoration",
    "text-align",
    "vertical-align",
    "border",
    "border-top",
    "border-right",
    "border-bottom",
    "border-left",
    "border-width",
    "border-style",
    "border-color",
    "border-collapse",
    "border-spacing",
    "border-radius",
    "border-top-width",
    "border-top-style",
    "border-top-color",
    "border-right-width",
    "border-right-style",
    "border-right-color",
    "border-bottom-width",
    "border-bottom-style",
    "border-bottom-color",
    "border-left-width",
    "border-left-style",
    "border-left-color",
    "border-top-left-radius",
    "border-top-right-radius",
    "border-bottom-left-radius",
    "border-bottom-right-radius",
    "width",
    "height",
    "padding",
    "padding-top",
    "padding-right",
    "padding-bottom",
    "padding-left",
    "margin",
    "margin-top",
    "margin-right",
    "margin-bottom",
    "margin-left",
    "list-style-type",
    "white-space",
    "text-indent",
    "line-height",
    "text-decoration-line",
];

/// Functions a CSS value may call (no `url()`, `expression()`, `var()`, …).
const CSS_FUNCTIONS: [&str; 4] = ["rgb", "rgba", "hsl", "hsla"];

/// Words that make a CSS value suspect wherever they appear.
const CSS_BAD_WORDS: [&str; 5] = ["expression", "javascript", "vbscript", "behavior", "binding"];

/// Image types allowed in `data:` URLs of `img src`.
const DATA_IMAGE_TYPES: [&str; 5] = ["image/png", "image/jpeg", "image/jpg", "image/gif", "image/webp"];

/// The ammonia configuration of Redline.
pub(crate) fn builder() -> Builder<'static> {
    // Containers and other blocks pass so that their boundaries still separate words; the
    // sectioning unwraps or renames them.
    let tags: HashSet<&'static str> = SECTION_TAGS
        .iter()
        .chain(OTHER_TAGS.iter())
        .chain(CONTAINERS.iter())
        .chain(RENAMED_BLOCKS.iter())
        .copied()
        .collect();
    let tag_attributes: HashMap<&'static str, HashSet<&'static str>> = hashmap![
        "a" => hashset!["href", "title"],
        "img" => hashset!["src", "alt", "width", "height", "title"],
        "td" => hashset!["colspan", "rowspan"],
        "th" => hashset!["colspan", "rowspan"],
        "col" => hashset!["span"],
        "colgroup" => hashset!["span"],
        "ol" => hashset!["start", "type"],
        "font" => hashset!["color"],
    ];
    let mut b = Builder::empty();
    b.tags(tags)
        .clean_content_tags(DROPPED_WITH_CONTENT.iter().copied().collect())
        .tag_attributes(tag_attributes)
        .tag_attribute_values(HashMap::new())
        .set_tag_attribute_values(HashMap::new())
        .generic_attributes(hashset!["dir", "lang", "style", "data-chunk-id", "id", "role"])
        // The placeholder of a remote picture keeps its class through a second sanitizing.
        .allowed_classes(hashmap!["span" => hashset![REMOTE_IMAGE_CLASS]])
        // `data` only for `img src` (checked in `filter_attribute`).
        .url_schemes(hashset!["http", "https", "mailto", "tel", "data"])
        .url_relative(UrlRelative::PassThrough)
        .link_rel(Some("noopener noreferrer"))
        .strip_comments(true)
        .id_prefix(None)
        .attribute_filter(filter_attribute);
    b
}

/// Runs after ammonia's own checks (scheme allow-list) on every kept attribute.
fn filter_attribute<'u>(element: &str, attribute: &str, value: &'u str) -> Option<Cow<'u, str>> {
    let ok = match attribute {
        "href" => {
            if let Some(fragment) = trim_url(value).strip_prefix('#') {
                return Some(Cow::Owned(format!("#{}", prefixed_id(fragment)?)));
            }
            url_ok(value, &["http", "https", "mailto", "tel"])
        }
        "id" => return prefixed_id(value).map(Cow::Owned),
        "role" => {
            let role = value.trim();
            return (NOTE_ROLES.contains(&role) || WHOLE_SECTION_ROLES.contains(&role))
                .then(|| Cow::Owned(role.to_owned()));
        }
        "color" => element == "font" && safe_color(value),
        // A picture from elsewhere (`//host/…` and `\\host\…` too) keeps its address here:
        // `images::fix_images` turns it into a placeholder that shows it.
        "src" => {
            element == "img"
                && (url_ok(value, &["http", "https"]) || leaves_the_host(trim_url(value)) || data_image_ok(value))
        }
        "style" => {
            let style = filter_style(value);
            return (!style.is_empty()).then_some(Cow::Owned(style));
        }
        _ => true,
    };
    ok.then_some(Cow::Borrowed(value))
}

/// The prefix of every kept `id` (and of the `#…` links to them), so that a document's ids
/// cannot clobber the page's own (GitHub's `user-content-`).
pub const ID_PREFIX: &str = "user-content-";

/// The longest `id` kept (without the prefix).
const MAX_ID_LEN: usize = 128;

/// The DPUB-ARIA roles of footnotes kept on any element (docs/conversion.md, "Footnotes").
pub const NOTE_ROLES: [&str; 5] = ["doc-noteref", "doc-endnotes", "doc-endnote", "doc-footnote", "doc-backlink"];

/// An id under [`ID_PREFIX`]: added once, never twice (a stored document is sanitized again
/// on every save). Ids with white space, control characters or more than [`MAX_ID_LEN`]
/// characters are dropped.
pub(crate) fn prefixed_id(id: &str) -> Option<String> {
    let bare = id.strip_prefix(ID_PREFIX).unwrap_or(id);
    let ok = !bare.is_empty()
        && bare.chars().count() <= MAX_ID_LEN
        && !bare.chars().any(|c| c.is_whitespace() || c.is_control());
    ok.then(|| format!("{ID_PREFIX}{bare}"))
}

/// `<font color>`: a `#hex` colour or a colour name.
fn safe_color(value: &str) -> bool {
    let v = value.trim();
    let hex = v.strip_prefix('#').is_some_and(|h| matches!(h.len(), 3 | 6) && h.bytes().all(|b| b.is_ascii_hexdigit()));
    hex || (!v.is_empty() && v.len() <= 32 && v.bytes().all(|b| b.is_ascii_alphabetic()))
}

/// What the URL parser (and browsers) ignore around a URL.
pub(crate) fn trim_url(value: &str) -> &str {
    value.trim_matches(|c: char| c <= ' ')
}

/// An absolute URL of one of `schemes`, or a relative URL that stays on the page's host.
fn url_ok(value: &str, schemes: &[&str]) -> bool {
    let v = trim_url(value);
    match Url::parse(v) {
        Ok(url) => schemes.contains(&url.scheme()),
        Err(ParseError::RelativeUrlWithoutBase) => !leaves_the_host(v),
        Err(_) => false,
    }
}

/// A relative URL that names another host: scheme-relative (`//host/…`) or UNC
/// (`\\host\share`), or a mix (`/\host`): browsers read `\` as `/` and drop tabs and
/// line breaks inside a URL.
fn leaves_the_host(v: &str) -> bool {
    let mut c = v.chars().filter(|c| !matches!(c, '\t' | '\n' | '\r'));
    matches!((c.next(), c.next()), (Some('/' | '\\'), Some('/' | '\\')))
}

/// `data:image/(png|jpeg|gif|webp);base64,<base64>`.
pub(crate) fn data_image_ok(value: &str) -> bool {
    let v = trim_url(value);
    let Some(rest) = v.get(..5).filter(|p| p.eq_ignore_ascii_case("data:")).map(|_| &v[5..]) else {
        return false;
    };
    let Some((meta, payload)) = rest.split_once(',') else {
        return false;
    };
    let Some((mime, encoding)) = meta.split_once(';') else {
        return false;
    };
    DATA_IMAGE_TYPES.iter().any(|t| t.eq_ignore_ascii_case(mime.trim()))
        && encoding.trim().eq_ignore_ascii_case("base64")
        && payload
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=') || b.is_ascii_whitespace())
}

/// Filters a `style` attribute: keeps the declarations of allowed properties whose values
/// are plainly harmless (keywords, numbers, colours, quoted font names, `rgb()`-like
/// functions; no `url()`, no escapes, no comments), with their lengths within bounds
/// (`bounds::bound`), and writes them as `name: value; name: value`. Idempotent.
pub(crate) fn filter_style(style: &str) -> String {
    let mut out = String::with_capacity(style.len() + 8);
    for declaration in split_declarations(style) {
        let Some((name, value)) = declaration.split_once(':') else { continue };
        let name = name.trim().to_ascii_lowercase();
        if !STYLE_PROPERTIES.contains(&name.as_str()) {
            continue;
        }
        let Some(value) = safe_css_value(value).and_then(|v| bound(&name, &v)) else { continue };
        if !out.is_empty() {
            out.push_str("; ");
        }
        out.push_str(&name);
        out.push_str(": ");
        out.push_str(&value);
    }
    out
}

/// The value with its white space collapsed, when it is harmless.
fn safe_css_value(value: &str) -> Option<String> {
    let value = value.split_ascii_whitespace().collect::<Vec<_>>().join(" ");
    if value.is_empty() {
        return None;
    }
    let mut quote: Option<char> = None;
    let mut in_function = false;
    // The identifier just before the current character (a function name before `(`).
    let mut ident = String::new();
    for c in value.chars() {
        let plain = c.is_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.' | ',' | '#' | '%' | '+' | '/' | '!');
        if let Some(q) = quote {
            if c == q {
                quote = None;
            } else if !plain {
                return None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '(' => {
                if in_function || !CSS_FUNCTIONS.contains(&ident.to_ascii_lowercase().as_str()) {
                    return None;
                }
                in_function = true;
            }
            ')' if in_function => in_function = false,
            _ if plain => {}
            _ => return None,
        }
        if c.is_ascii_alphabetic() || c == '-' {
            ident.push(c);
        } else {
            ident.clear();
        }
    }
    if quote.is_some() || in_function {
        return None;
    }
    let lower = value.to_ascii_lowercase();
    if CSS_BAD_WORDS.iter().any(|w| lower.contains(w)) {
        return None;
    }
    Some(value)
}

/// Splits at `;` outside quoted strings.
fn split_declarations(style: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in style.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match (quote, c) {
            (_, '\\') => escaped = true,
            (Some(q), c) if c == q => quote = None,
            (None, '"' | '\'') => quote = Some(c),
            (None, ';') => {
                parts.push(&style[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&style[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_images() {
        assert!(data_image_ok("data:image/png;base64,iVBORw0KGgo="));
        assert!(data_image_ok(" DATA:image/JPEG;BASE64,/9j/4AAQ"));
        assert!(!data_image_ok("data:image/svg+xml;base64,PHN2Zz4="));
        assert!(!data_image_ok("data:text/html;base64,PHNjcmlwdD4="));
        assert!(!data_image_ok("data:image/png,<svg onload=alert(1)>"));
        assert!(!data_image_ok("data:image/png;base64,<script>"));
        assert!(!data_image_ok("https://x/y.png"));
    }

    #[test]
    fn ids_are_prefixed_once() {
        assert_eq!(prefixed_id("fn1").as_deref(), Some("user-content-fn1"));
        assert_eq!(prefixed_id("user-content-fn1").as_deref(), Some("user-content-fn1"));
        assert_eq!(prefixed_id("a b"), None);
        assert_eq!(prefixed_id(""), None);
        assert_eq!(prefixed_id("user-content-"), None);
        assert_eq!(prefixed_id(&"x".repeat(129)), None);
        assert!(safe_color("#ff0000") && safe_color("Red") && !safe_color("red;x") && !safe_color("#ff00"));
    }

    #[test]
    fn urls() {
        assert!(url_ok("/v1/documents/images/abc", &["http", "https"]));
        assert!(url_ok("https://example.com/a?b=c", &["http", "https"]));
        assert!(url_ok("mailto:a@b.c", &["http", "https", "mailto"]));
        assert!(!url_ok(" JaVaScRiPt:alert(1)", &["http", "https", "mailto"]));
        assert!(!url_ok("data:text/html,x", &["http", "https", "mailto"]));
        assert!(!url_ok("vbscript:msgbox", &["http", "https", "mailto"]));
        for elsewhere in ["//evil.example/x", "\\\\evil\\share", "/\\evil.example", " \\/evil", "/\t/evil.example"] {
            assert!(!url_ok(elsewhere, &["http", "https"]), "{elsewhere:?}");
        }
        assert!(url_ok("./a/b", &["http", "https"]));
        assert!(url_ok("/a//b", &["http", "https"]));
    }

    #[test]
    fn styles() {
        assert_eq!(filter_style("color:#ff0000;font-weight:bold"), "color: #ff0000; font-weight: bold");
        assert_eq!(filter_style("  COLOR : Red ;; ; font-size:12px  "), "color: Red; font-size: 12px");
        assert_eq!(filter_style("width:expression(alert(1));color:red"), "color: red");
        assert_eq!(filter_style("width:e xpression(alert(1))"), "");
        assert_eq!(filter_style("width: expr\\65ssion(alert(1))"), "");
        assert_eq!(filter_style("background:url(javascript:alert(1))"), "");
        assert_eq!(filter_style("background:URL('https://x/a.png')"), "");
        assert_eq!(filter_style("background-image:url(x)"), "");
        assert_eq!(filter_style("color: red /* c */"), "");
        assert_eq!(filter_style("font-family:\"a;b\";color:red"), "color: red");
        assert_eq!(filter_style("font-family: 'Times New Roman', serif"), "font-family: 'Times New Roman', serif");
        assert_eq!(filter_style("font-family: \"微软雅黑\""), "font-family: \"微软雅黑\"");
        assert_eq!(
            filter_style("border: 1px solid rgb(0, 0, 0) !important; background-color: hsla(0, 50%, 50%, .5)"),
            "border: 1px solid rgb(0, 0, 0) !important; background-color: hsla(0, 50%, 50%, .5)"
        );
        assert_eq!(filter_style("width: calc(100% - 2px)"), "");
        assert_eq!(filter_style("color: rgb(rgb(1))"), "");
        assert_eq!(filter_style("color: red)"), "");
        assert_eq!(filter_style("color: \"unclosed"), "");
        assert_eq!(filter_style("position:fixed"), "");
        assert_eq!(filter_style("color:red;}body{color:blue"), "color: red");
        assert_eq!(filter_style(""), "");
        for s in ["color:#ff0000;font-weight:bold", "font-family: 'A' , serif ; margin : 0  auto"] {
            assert_eq!(filter_style(&filter_style(s)), filter_style(s));
        }
    }

    #[test]
    fn bounded_styles() {
        for (style, kept) in [
            ("padding:5000px;margin:-5000px;color:transparent", "padding: 24px; margin: 0px; color: transparent"),
            ("margin: -1em auto 2em", "margin: 0em auto 2em"),
            ("width: 30cm; height: 1e4PX", "width: 25.4cm; height: 960px"),
            ("font-size: 3em; line-height: 9", "font-size: 3rem; line-height: 4"),
            (
                "border: thick double rgb(1, 2, 3); border-top: 1in solid",
                "border: thick double rgb(1, 2, 3); border-top: 0.16in solid",
            ),
            ("width: 50vw; width: 50%", "width: 50%"),
            ("text-indent: -2em; vertical-align: -0.5em", "text-indent: 0em; vertical-align: -0.5em"),
            (
                "border-radius: 9999px; background: red 5000px 5000px",
                "border-radius: 9999px; background: red 5000px 5000px",
            ),
        ] {
            let once = filter_style(style);
            assert_eq!(once, kept, "{style}");
            assert_eq!(filter_style(&once), once, "idempotent: {style}");
        }
    }
}

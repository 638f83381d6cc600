mod common;

use std::collections::HashSet;

use common::{ids, to_html};
use proptest::prelude::*;
use redline_domain::document::is_section_tag;
use redline_html::Html5everSections;
use redline_ports::HtmlSections;

const TAGS: &[&str] = &[
    "p",
    "div",
    "span",
    "b",
    "i",
    "em",
    "strong",
    "u",
    "s",
    "a",
    "ul",
    "ol",
    "li",
    "table",
    "thead",
    "tbody",
    "tfoot",
    "tr",
    "td",
    "th",
    "caption",
    "colgroup",
    "col",
    "h1",
    "h2",
    "h3",
    "h6",
    "blockquote",
    "pre",
    "figure",
    "figcaption",
    "hr",
    "br",
    "img",
    "code",
    "kbd",
    "sub",
    "sup",
    "mark",
    "small",
    "del",
    "ins",
    "section",
    "article",
    "header",
    "footer",
    "nav",
    "aside",
    "main",
    "body",
    "html",
    "head",
    "title",
    "script",
    "style",
    "iframe",
    "svg",
    "math",
    "mtext",
    "mglyph",
    "foreignObject",
    "form",
    "input",
    "button",
    "font",
    "center",
    "dl",
    "dt",
    "dd",
    "menu",
    "textarea",
    "select",
    "option",
    "template",
    "noscript",
    "xmp",
    "listing",
    "object",
    "embed",
    "details",
    "summary",
    "custom-el",
    "P",
    "DIV",
    "Li",
];

const ATTRS: &[&str] = &[
    "data-chunk-id=\"a\"",
    "data-chunk-id=\"b-2\"",
    "data-chunk-id='c_3'",
    "data-chunk-id=\"bad id\"",
    "data-chunk-id=\"\"",
    "data-chunk-id=n1",
    "style=\"color: #ff0000\"",
    "style=\"color:red;font-weight:bold;position:absolute\"",
    "style=\"background:url(javascript:alert(1))\"",
    "style=\"width: expression(alert(1))\"",
    "style=\"font-family: 'A;B', serif; margin: 0 auto\"",
    "style=\"border: 1px solid rgb(0, 0, 0) !important\"",
    "style=\"background: url('/img.png') no-repeat\"",
    "style=\"background: url(data:image/png;base64,AAAA)\"",
    "style=\"font-size: 12.50px; line-height: 1.5em\"",
    "style=\"color: red; color: blue;; ;\"",
    "style='x'",
    "href=\"https://example.com/?a=1&b=2\"",
    "href=\"javascript:alert(1)\"",
    "href=\" JaVaScRiPt:alert(1)\"",
    "href=\"/relative\"",
    "href=\"mailto:x@y.z\"",
    "href=\"data:text/html,<b>\"",
    "src=\"x\"",
    "src=\"/v1/documents/images/abc\"",
    "src=\"data:image/png;base64,iVBORw0KGgo=\"",
    "onerror=\"alert(1)\"",
    "onclick=alert(1)",
    "colspan=\"2\"",
    "rowspan=3",
    "start=\"4\"",
    "type=\"a\"",
    "dir=\"rtl\"",
    "lang=\"he\"",
    "title=\"t &amp; \\\"q\\\"\"",
    "class=\"c\"",
    "id=\"i\"",
    "rel=\"opener\"",
    "alt=\"\"",
];

const TEXTS: &[&str] = &[
    "hello",
    "two words",
    " ",
    "\n",
    "\n\n",
    "\t",
    "שלום עולם",
    "مرحبا",
    "👩\u{200D}👩\u{200D}👧",
    "\u{200F}",
    "e\u{0301}",
    "&amp;",
    "&",
    "<",
    ">",
    "a < b",
    "&nbsp;",
    "\u{a0}",
    "&lt;script&gt;",
    "&#x27;",
    "&bogus;",
    "<!-- comment -->",
    "<!--",
    "-->",
    "<!DOCTYPE html>",
    "<![CDATA[x]]>",
    "</",
    "<?pi?>",
    "\r\n",
    "\u{0}",
    "\"",
    "'",
    "=",
];

#[derive(Debug, Clone)]
enum Token {
    Open(usize, Vec<usize>, bool),
    Close(usize),
    Text(usize),
    Word(String),
}

fn token() -> impl Strategy<Value = Token> {
    prop_oneof![
        4 => (0..TAGS.len(), prop::collection::vec(0..ATTRS.len(), 0..3), any::<bool>())
            .prop_map(|(t, a, self_closing)| Token::Open(t, a, self_closing)),
        3 => (0..TAGS.len()).prop_map(Token::Close),
        4 => (0..TEXTS.len()).prop_map(Token::Text),
        1 => "[a-zA-Z0-9 <>&\"'=/;:\u{5d0}-\u{5ea}\u{627}-\u{64a}]{0,12}".prop_map(Token::Word),
    ]
}

fn render(tokens: &[Token]) -> String {
    let mut s = String::new();
    for t in tokens {
        match t {
            Token::Open(tag, attrs, self_closing) => {
                s.push('<');
                s.push_str(TAGS[*tag]);
                for a in attrs {
                    s.push(' ');
                    s.push_str(ATTRS[*a]);
                }
                s.push_str(if *self_closing { "/>" } else { ">" });
            }
            Token::Close(tag) => {
                s.push_str("</");
                s.push_str(TAGS[*tag]);
                s.push('>');
            }
            Token::Text(i) => s.push_str(TEXTS[*i]),
            Token::Word(w) => s.push_str(w),
        }
    }
    s
}

fn html_ish() -> impl Strategy<Value = String> {
    prop::collection::vec(token(), 0..80).prop_map(|t| render(&t))
}

/// The tags of serialized HTML (text never holds a raw `<`: the serializer escapes it).
fn tags_of(html: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    let mut quote = false;
    for (i, c) in html.char_indices() {
        match (start, c) {
            (None, '<') => start = Some(i),
            (Some(_), '"') => quote = !quote,
            (Some(b), '>') if !quote => {
                out.push(&html[b..=i]);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(b) = start {
        out.push(&html[b..]);
    }
    out
}

/// What must never be in a tag of the output (lower case).
const FORBIDDEN: &[&str] = &[
    "<script",
    "<style",
    "<iframe",
    "<svg",
    "<math",
    "<form",
    "<input",
    "<object",
    "<embed",
    "<textarea",
    "<template",
    " on",
    "javascript:",
    "expression(",
    "data:text",
    "<title",
    "<!--",
    "<font",
    "<section",
    "<body",
    "<html",
];

proptest! {
    // PROPTEST_CASES=100000 for a longer search.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000),
        ..ProptestConfig::default()
    })]

    #[test]
    fn sectioning_is_idempotent_and_safe(html in html_ish()) {
        let adapter = Html5everSections::new();
        let first = adapter.sectionize(&html, &mut ids("n")).expect("shallow input");
        let mut seen = HashSet::new();
        for s in &first {
            prop_assert!(seen.insert(s.id.clone()), "duplicate id {}", s.id);
            prop_assert!(is_section_tag(&s.tag), "tag {}", s.tag);
            let open = format!("<{} data-chunk-id=\"{}\"", s.tag, s.id);
            prop_assert!(s.html.starts_with(&open), "{} does not start with {}", s.html, open);
            let ids_in_tags: usize = tags_of(&s.html).iter().map(|t| t.matches("data-chunk-id").count()).sum();
            prop_assert_eq!(ids_in_tags, 1, "{}", &s.html);
            for tag in tags_of(&s.html) {
                let lower = tag.to_lowercase();
                for f in FORBIDDEN {
                    prop_assert!(!lower.contains(f), "{:?} in {} of {}", f, tag, s.html);
                }
            }
            prop_assert_eq!(s.text.split_whitespace().collect::<Vec<_>>().join(" "), s.text.clone());
        }
        let again = adapter.sectionize(&to_html(&first), &mut ids("m")).expect("second pass");
        prop_assert_eq!(&first, &again, "input {:?}", html);
    }

    #[test]
    fn never_panics_on_any_string(html in any::<String>()) {
        let adapter = Html5everSections::new();
        if let Ok(first) = adapter.sectionize(&html, &mut ids("n")) {
            let again = adapter.sectionize(&to_html(&first), &mut ids("m")).expect("second pass");
            prop_assert_eq!(first, again);
        }
        let _ = redline_html::text_of(&html);
    }

    #[test]
    fn never_panics_on_tag_soup(html in "[<>/a-z\"'= &;!\\-\n]{0,200}") {
        let adapter = Html5everSections::new();
        if let Ok(first) = adapter.sectionize(&html, &mut ids("n")) {
            let again = adapter.sectionize(&to_html(&first), &mut ids("m")).expect("second pass");
            prop_assert_eq!(first, again);
        }
    }

    #[test]
    fn plain_words_survive(words in prop::collection::vec("[a-zA-Z0-9\u{5d0}-\u{5ea}]{1,8}", 1..20),
                           wrappers in prop::collection::vec(0usize..14, 1..20)) {
        // Words in any mix of blocks, containers and inline elements all come out, in order.
        const WRAP: [(&str, &str); 14] = [
            ("<p>", "</p>"), ("<section>", "</section>"), ("<b>", "</b>"), ("", ""),
            ("<li>", "</li>"), ("<div><span>", "</span></div>"), ("<table><tr><td>", "</td></tr></table>"),
            ("<h2>", "</h2>"), ("<div><section>", "</section></div>"), ("<dl><dt>", "</dt></dl>"),
            ("<center>", "</center>"), ("<li><center>", "</center></li>"), ("<blockquote><article>", "</article></blockquote>"),
            ("<font color=red>", "</font>"),
        ];
        let mut html = String::new();
        for (i, w) in words.iter().enumerate() {
            let (open, close) = WRAP[wrappers[i % wrappers.len()]];
            html.push_str(&format!("{open}{w}{close} "));
        }
        let sections = Html5everSections::new().sectionize(&html, &mut ids("n")).unwrap();
        let text = sections.iter().map(|s| s.text.as_str()).collect::<Vec<_>>().join(" ");
        prop_assert_eq!(text, words.join(" "));
    }
}

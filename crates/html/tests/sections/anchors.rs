//! Ids, internal links and footnotes through the sanitizer: ids live under `user-content-`
//! (once, however often a document is sanitized), `#…` links follow them, the DPUB-ARIA
//! roles of footnotes are kept, and the notes are one section of their own.

use crate::common::{all_html, round_trip, sections, to_html};

#[test]
fn ids_and_their_links_are_prefixed_once() {
    let s = round_trip(
        "<h2 id=\"intro\">Intro</h2><p><a href=\"#intro\">back</a> <a href=\"#user-content-intro\">again</a></p>",
    );
    let html = all_html(&s);
    assert!(html.contains("id=\"user-content-intro\""), "{html}");
    assert_eq!(html.matches("href=\"#user-content-intro\"").count(), 2, "{html}");
    assert!(!html.contains("user-content-user-content"), "{html}");
    // Sanitized again (as on every save): unchanged.
    let again = sections(&to_html(&s));
    assert_eq!(all_html(&again), html);
}

#[test]
fn unsafe_ids_and_roles_are_dropped() {
    let html = all_html(&sections("<p id=\"a b\" role=\"button\">x</p><p role=\"doc-noteref\">y</p>"));
    assert!(!html.contains(" id="), "{html}");
    assert!(!html.contains("button"), "{html}");
    assert!(html.contains("role=\"doc-noteref\""), "{html}");
}

#[test]
fn tel_links_and_font_colours_are_kept() {
    let html = all_html(&round_trip(
        "<p><a href=\"tel:+15550100\">call</a> <font color=\"#ff0000\">red</font> <font color=\"red;x\">y</font></p>",
    ));
    assert!(html.contains("href=\"tel:+15550100\""), "{html}");
    assert!(html.contains("<span style=\"color: #ff0000\">red</span>"), "{html}");
    assert!(html.contains("<span>y</span>"), "{html}");
    let html = all_html(&round_trip("<p><font color=\"blue\" style=\"color: red; font-weight: bold\">x</font></p>"));
    assert!(html.contains("<span style=\"color: blue; color: red; font-weight: bold\">x</span>"), "{html}");
}

#[test]
fn footnotes_are_kept_and_their_notes_are_one_section() {
    let input = "<p>Claim<a href=\"#fn1\" id=\"fnref1\" role=\"doc-noteref\"><sup>1</sup></a>.</p>\
                 <section role=\"doc-endnotes\"><hr><ol><li id=\"fn1\"><p>The source. \
                 <a href=\"#fnref1\" role=\"doc-backlink\">↩</a></p></li></ol></section>";
    let s = round_trip(input);
    assert_eq!(s.len(), 2, "{s:?}");
    assert!(
        s[0].html.contains(
            "<a href=\"#user-content-fn1\" id=\"user-content-fnref1\" rel=\"noopener noreferrer\" role=\"doc-noteref\"><sup>1</sup></a>"
        ),
        "{}",
        s[0].html
    );
    assert_eq!(s[1].tag, "div");
    assert!(s[1].html.contains("role=\"doc-endnotes\""), "{}", s[1].html);
    assert!(s[1].html.contains("<li id=\"user-content-fn1\">"), "{}", s[1].html);
    assert!(s[1].html.contains("href=\"#user-content-fnref1\""), "{}", s[1].html);
}

#[test]
fn a_page_header_and_footer_are_one_section_each_and_a_plain_header_is_unwrapped() {
    let input = "<header role=\"doc-pageheader\"><p>ACME Ltd</p><p>Confidential</p></header>\
                 <header><h1>Title</h1><p>Intro</p></header>\
                 <p>Body</p>\
                 <footer role=\"doc-pagefooter\"><p>Page footer</p></footer>";
    let s = round_trip(input);
    let tags: Vec<&str> = s.iter().map(|x| x.tag.as_str()).collect();
    assert_eq!(tags, ["div", "h1", "p", "p", "div"], "{s:?}");
    assert!(s[0].html.contains("role=\"doc-pageheader\""), "{}", s[0].html);
    assert!(s[0].html.contains("<p>ACME Ltd</p><p>Confidential</p>"), "{}", s[0].html);
    assert!(s[4].html.contains("role=\"doc-pagefooter\""), "{}", s[4].html);
    // Other roles are still dropped.
    let s = round_trip("<div role=\"banner\"><p>x</p></div>");
    assert!(!s[0].html.contains("role"), "{}", s[0].html);
}

//! Cutting a large document into slices that are sanitized and sectioned one after another,
//! so that memory holds the DOM of one slice rather than of the whole document (about four
//! times its HTML).
//!
//! A cut is made only between two top-level blocks of a small grammar that html5ever's tree
//! builder builds exactly as written, whatever came before, and after which it is back in
//! the state it starts a fragment in (in body, no open element below the root, no active
//! formatting element, tokenizer in its data state):
//!
//! ```text
//! document := ws* (block ws*)* rest
//! block    := "<" T attrs ">" (text | "<br>" | "<br/>" | "<br />")* "</" T ">"   T: p, h1–h6 (lower case)
//! attrs    := (" " name "=" ("\"" [^"]* "\"" | "'" [^']* "'"))*                   name: [a-z][a-z0-9-]*
//! text     := any character but "<" and NUL
//! ws       := " " | "\t" | "\n" | "\r" | "\x0C"
//! ```
//!
//! `rest` starts at the first thing outside the grammar (another tag, a comment, text between
//! blocks, an unclosed or misnested block…) and is never cut: it stays in the last slice.
//! White space between blocks goes to the next slice, where, as in the whole document, it is
//! blank text at the top (dropped by the sectioning). A document that holds
//! `data-chunk-id` anywhere is not cut: which ids it keeps depends on the whole document
//! (an id is kept at its first valid use, and fresh ids avoid ids kept later).
//! `tests/slices.rs` checks that the sections of the slices are those of the whole document.

use crate::text::is_html_space;

/// The slices of `html`, in order, each (but the last) ending at a cut at least `target`
/// bytes after the previous one. Their concatenation is `html`.
pub(crate) fn slices(html: &str, target: usize) -> Vec<&str> {
    if target == usize::MAX || contains_ignore_ascii_case(html.as_bytes(), b"data-chunk-id") {
        return vec![html];
    }
    let bytes = html.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut at = 0;
    loop {
        while at < bytes.len() && is_html_space(bytes[at] as char) {
            at += 1;
        }
        let Some(end) = block_end(bytes, at) else { break };
        at = end;
        if at - start >= target {
            out.push(&html[start..at]);
            start = at;
        }
    }
    if start < html.len() || out.is_empty() {
        out.push(&html[start..]);
    }
    out
}

fn contains_ignore_ascii_case(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle))
}

/// The tags a block of the grammar may have.
fn block_tag(name: &[u8]) -> bool {
    matches!(name, b"p" | b"h1" | b"h2" | b"h3" | b"h4" | b"h5" | b"h6")
}

/// Where the block of the grammar that starts at `at` ends (just after its end tag), if one
/// starts there.
fn block_end(b: &[u8], at: usize) -> Option<usize> {
    let mut i = at;
    if b.get(i) != Some(&b'<') {
        return None;
    }
    i += 1;
    let name_start = i;
    while i < b.len() && (b[i].is_ascii_lowercase() || b[i].is_ascii_digit()) {
        i += 1;
    }
    let name = &b[name_start..i];
    if !block_tag(name) {
        return None;
    }
    i = attributes_end(b, i)?;
    // The content, up to the matching end tag.
    loop {
        match b.get(i)? {
            0 => return None,
            b'<' => {
                let rest = &b[i..];
                if let Some(len) =
                    [&b"<br>"[..], b"<br/>", b"<br />"].iter().find(|t| rest.starts_with(t)).map(|t| t.len())
                {
                    i += len;
                } else if rest.starts_with(b"</")
                    && rest[2..].starts_with(name)
                    && rest.get(2 + name.len()) == Some(&b'>')
                {
                    return Some(i + 3 + name.len());
                } else {
                    return None;
                }
            }
            _ => i += 1,
        }
    }
}

/// Just after the `>` that ends the attributes starting at `i` (right after the tag name).
fn attributes_end(b: &[u8], mut i: usize) -> Option<usize> {
    loop {
        match b.get(i)? {
            b'>' => return Some(i + 1),
            b' ' => {
                i += 1;
                if !b.get(i)?.is_ascii_lowercase() {
                    return None;
                }
                while b.get(i).is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-') {
                    i += 1;
                }
                if b.get(i)? != &b'=' {
                    return None;
                }
                i += 1;
                let quote = *b.get(i)?;
                if quote != b'"' && quote != b'\'' {
                    return None;
                }
                i += 1;
                while b.get(i)? != &quote {
                    if b[i] == 0 {
                        return None;
                    }
                    i += 1;
                }
                i += 1;
            }
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_only_between_blocks_of_the_grammar() {
        let html = "<p>a &amp; b<br>c</p>\n\n<h2 style=\"color: red\">t</h2><p>x</p> <div>y</div><p>z</p>";
        assert_eq!(
            slices(html, 1),
            ["<p>a &amp; b<br>c</p>", "\n\n<h2 style=\"color: red\">t</h2>", "<p>x</p>", " <div>y</div><p>z</p>"]
        );
        assert_eq!(
            slices(html, 30),
            ["<p>a &amp; b<br>c</p>\n\n<h2 style=\"color: red\">t</h2>", "<p>x</p> <div>y</div><p>z</p>"]
        );
        assert_eq!(slices(html, usize::MAX), [html]);
        assert_eq!(slices("", 1), [""]);
        assert_eq!(slices("<p>a</p>", 1), ["<p>a</p>"]);
    }

    #[test]
    fn does_not_cut_outside_the_grammar() {
        for html in [
            "<p>a<b>b</b></p><p>c</p>",
            "<p>a</h1><p>c</p>",
            "<p>a<p>b</p><p>c</p>",
            "<P>a</P><p>c</p>",
            "<p class=x>a</p><p>c</p>",
            "<p>a</p >",
            "<p>a<!-- c --></p><p>c</p>",
            "text<p>a</p><p>c</p>",
            "<p data-chunk-id=\"a\">a</p><p>c</p>",
            "<p>a</p><p DATA-CHUNK-ID=a>c</p><p>d</p>",
        ] {
            let s = slices(html, 1);
            assert_eq!(s.concat(), html);
            assert!(s.len() <= 2 && (s.len() == 1 || s[0] == "<p>a</p>"), "{html}: {s:?}");
        }
    }
}

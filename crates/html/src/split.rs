//! Cutting a large document into slices of top-level blocks that can be sanitized and
//! sectioned one at a time, so that the parsers' trees (several times the size of the HTML)
//! are as big as one slice, not as the whole document.
//!
//! A cut is only made where the slice after it parses exactly as it does in the whole
//! document: the parser is back at the top with nothing open, nothing to reconstruct and
//! nothing to merge with. This module does not run the parser to know it; it reads the tags
//! and makes no cut after anything it cannot vouch for:
//! - only the elements the sanitizer keeps in place (section elements and their inline and
//!   table content, `sanitize::OTHER_TAGS`), so no raw text (`script`, `textarea`, …), no
//!   foreign content, no `form` and nothing renamed or unwrapped by the sectioning;
//! - every element closed by its own end tag, in order (strict nesting); only void elements
//!   (`br`, `hr`, `img`, `col`) have none and none is written self-closing;
//! - no comment, doctype, processing instruction or `data-chunk-id` (the caller checks
//!   that: which ids are kept depends on the whole document).
//!
//! With strict nesting every element, including a formatting element (`b`, `a`, …), is
//! closed before the top-level block that holds it ends, so the parser's stack of open
//! elements and its list of active formatting elements are empty after it, however the
//! parser treated what was inside. A cut is made before the start tag of a section element
//! at the top level when the top-level node before it (white space aside) is a section
//! element: nothing is pending there, since a section element ends any run of inline content
//! being gathered into a `<p>`.
//!
//! At the first thing outside these rules no further cut is made: the rest of the document
//! is one slice. Converter output (made by us, a sequence of blocks) meets them;
//! `tests/props.rs` checks that slicing never changes the sections.

use redline_domain::document::is_section_tag;

use crate::sanitize::OTHER_TAGS;
use crate::text::is_html_space;

/// Elements without an end tag among those accepted.
const VOID: [&str; 4] = ["br", "hr", "img", "col"];

fn accepted(tag: &str) -> bool {
    is_section_tag(tag) || OTHER_TAGS.contains(&tag)
}

/// Offsets in `html` where a slice may start, each at least `target` bytes after the
/// previous one (or the start). Empty when the document cannot be cut.
pub(crate) fn cuts(html: &str, target: usize) -> Vec<usize> {
    let b = html.as_bytes();
    let mut cuts = Vec::new();
    let mut open: Vec<String> = Vec::new();
    let mut last_cut = 0usize;
    // Whether the last top-level node (white space aside) is a section element.
    let mut after_block = true;
    let mut i = 0usize;
    while let Some(found) = b[i..].iter().position(|&c| c == b'<') {
        let lt = i + found;
        if open.is_empty() && b[i..lt].iter().any(|&c| !is_html_space(c as char)) {
            after_block = false;
        }
        let Some(&next) = b.get(lt + 1) else { break };
        if next == b'/' {
            let Some((name, end)) = tag_name(b, lt + 2) else { return cuts };
            let Some((after, _)) = tag_end(b, end) else { return cuts };
            if open.pop().as_deref() != Some(name.as_str()) {
                return cuts;
            }
            if open.is_empty() {
                after_block = is_section_tag(&name);
            }
            i = after;
        } else if next.is_ascii_alphabetic() {
            let Some((name, end)) = tag_name(b, lt + 1) else { return cuts };
            let Some((after, self_closing)) = tag_end(b, end) else { return cuts };
            if !accepted(&name) {
                return cuts;
            }
            if open.is_empty() && after_block && is_section_tag(&name) && lt > last_cut && lt - last_cut >= target {
                cuts.push(lt);
                last_cut = lt;
            }
            if VOID.contains(&name.as_str()) {
                if open.is_empty() {
                    after_block = is_section_tag(&name);
                }
            } else if self_closing {
                return cuts;
            } else {
                open.push(name);
            }
            i = after;
        } else if next == b'!' || next == b'?' {
            return cuts;
        } else {
            // A `<` that starts no tag is text.
            if open.is_empty() {
                after_block = false;
            }
            i = lt + 1;
        }
    }
    cuts
}

/// The lower-case tag name starting at `at` (its first character must be a letter) and
/// where it ends, as the tokenizer reads it: up to white space, `/` or `>`.
fn tag_name(b: &[u8], at: usize) -> Option<(String, usize)> {
    if !b.get(at)?.is_ascii_alphabetic() {
        return None;
    }
    let len = b[at..].iter().position(|&c| is_html_space(c as char) || c == b'/' || c == b'>')?;
    let name = std::str::from_utf8(&b[at..at + len]).ok()?.to_ascii_lowercase();
    Some((name, at + len))
}

/// Where the tag whose name ends at `at` ends (just after its `>`), and whether it is
/// written self-closing, following the tokenizer's attribute states. `None` at the end of
/// the input.
fn tag_end(b: &[u8], mut j: usize) -> Option<(usize, bool)> {
    let space = |c: u8| is_html_space(c as char);
    loop {
        match *b.get(j)? {
            b'>' => return Some((j + 1, false)),
            b'/' if b.get(j + 1) == Some(&b'>') => return Some((j + 2, true)),
            c if c == b'/' || space(c) => j += 1,
            _ => {
                // An attribute name (its first character may be `=`), then maybe a value.
                j += 1;
                while !matches!(b.get(j), None | Some(b'/' | b'>' | b'=')) && !space(b[j]) {
                    j += 1;
                }
                while b.get(j).is_some_and(|&c| space(c)) {
                    j += 1;
                }
                if b.get(j) == Some(&b'=') {
                    j += 1;
                    while b.get(j).is_some_and(|&c| space(c)) {
                        j += 1;
                    }
                    match *b.get(j)? {
                        q @ (b'"' | b'\'') => j += 1 + b[j + 1..].iter().position(|&c| c == q)? + 1,
                        b'>' => {}
                        _ => {
                            while !matches!(b.get(j), None | Some(b'>')) && !space(b[j]) {
                                j += 1;
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::cuts;

    #[test]
    fn cuts_between_top_level_blocks_only() {
        let html = "<p>a<br>b</p>\n<h1 class=\"x>y\">t</h1><ul><li>i</li></ul><hr><p>z</p>";
        assert_eq!(cuts(html, 0), [14, 36, 55, 59]);
        assert_eq!(cuts(html, 30), [36]);
        // Inline content at the top level holds the cut back until a block ends.
        assert_eq!(cuts("<p>a</p>x<p>b</p><p>c</p>", 0), [17]);
        assert_eq!(cuts("<p>a</p><b>x</b> <p>b</p> <p>c</p>", 0), [26]);
    }

    #[test]
    fn stops_at_what_it_cannot_vouch_for() {
        // A cut before the block that breaks a rule is still good; none comes after it.
        for stop in ["<p><b>x</p>", "<p/>", "<p>a</b></p>", "<p>a<form></form></p>"] {
            let html = format!("<p>a</p><p>b</p>{stop}<p>c</p><p>d</p>");
            assert_eq!(cuts(&html, 0), [8, 16], "{stop}");
        }
        for stop in ["<!-- c -->", "<script>a</script>", "<section>s</section>", "x</p>"] {
            let html = format!("<p>a</p><p>b</p>{stop}<p>c</p><p>d</p>");
            assert_eq!(cuts(&html, 0), [8], "{stop}");
        }
        assert_eq!(cuts("<p>a</p><p title='x", 0), Vec::<usize>::new());
    }
}

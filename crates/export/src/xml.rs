//! Escaping text for XML and HTML.

/// Whether XML 1.0 allows the character.
fn xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// Text or an attribute value for XML: markup characters escaped, characters XML cannot
/// carry dropped.
pub(crate) fn escape_xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    push_xml(&mut out, s);
    out
}

pub(crate) fn push_xml(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if xml_char(c) => out.push(c),
            _ => {}
        }
    }
}

/// Text or an attribute value for HTML.
pub(crate) fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && !matches!(c, '\t' | '\n') => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(escape_xml("a<b>&\"'\u{1}\u{FFFF}é"), "a&lt;b&gt;&amp;&quot;&apos;é");
        assert_eq!(escape_html("<t>\u{7}"), "&lt;t&gt;");
    }
}

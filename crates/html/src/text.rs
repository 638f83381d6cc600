//! Text content of a DOM subtree.

use html5ever::{namespace_url, ns};
use markup5ever_rcdom::{Handle, NodeData};

/// HTML's ASCII white space (what the parser and the serializer treat as white space).
pub(crate) fn is_html_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{c}' | '\r')
}

/// Elements whose boundaries separate words: blocks, list items, table parts, `br`.
fn separates(tag: &str) -> bool {
    matches!(
        tag,
        "br" | "hr"
            | "p"
            | "div"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "ul"
            | "ol"
            | "li"
            | "dl"
            | "dt"
            | "dd"
            | "table"
            | "thead"
            | "tbody"
            | "tfoot"
            | "tr"
            | "td"
            | "th"
            | "caption"
            | "blockquote"
            | "pre"
            | "figure"
            | "figcaption"
            | "section"
            | "article"
            | "main"
            | "header"
            | "footer"
            | "aside"
            | "nav"
            | "address"
            | "img"
    )
}

/// Elements whose content is not text a reader sees.
fn hidden(tag: &str) -> bool {
    matches!(
        tag,
        "script"
            | "style"
            | "template"
            | "title"
            | "head"
            | "noscript"
            | "noembed"
            | "noframes"
            | "iframe"
            | "object"
            | "embed"
            | "svg"
            | "textarea"
            | "select"
    )
}

enum Step {
    Enter(Handle),
    Leave(bool),
}

/// The text of `root` and its descendants, white space collapsed.
pub(crate) fn text_of_node(root: &Handle) -> String {
    collect(vec![Step::Enter(root.clone())])
}

/// The text of the children of `root`, white space collapsed.
pub(crate) fn text_of_children(root: &Handle) -> String {
    collect(root.children.borrow().iter().rev().map(|c| Step::Enter(c.clone())).collect())
}

fn collect(mut stack: Vec<Step>) -> String {
    let mut raw = String::new();
    while let Some(step) = stack.pop() {
        match step {
            Step::Leave(sep) => {
                if sep {
                    raw.push(' ');
                }
            }
            Step::Enter(node) => match &node.data {
                NodeData::Text { contents } => raw.push_str(&contents.borrow()),
                NodeData::Element { name, .. } => {
                    let html = name.ns == ns!(html);
                    if html && hidden(&name.local) {
                        continue;
                    }
                    let sep = html && separates(&name.local);
                    if sep {
                        raw.push(' ');
                    }
                    stack.push(Step::Leave(sep));
                    stack.extend(node.children.borrow().iter().rev().map(|c| Step::Enter(c.clone())));
                }
                _ => {}
            },
        }
    }
    collapse(&raw)
}

/// White space runs as single spaces, trimmed.
pub(crate) fn collapse(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

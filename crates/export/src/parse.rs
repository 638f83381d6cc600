//! Parsing the document's HTML with html5ever into an `RcDom`, with the work bounded.
//!
//! The stored HTML is already sanitized and nested at most 256 deep, but the exporter must
//! never hang or overflow on any input. html5ever's tree builder scans its stack of open
//! elements on most start tags, so `n` unclosed elements cost O(n²). The sink below wraps
//! `RcDom`, remembers each element's depth, and the input is fed in chunks: once an element
//! deeper than [`MAX_PARSE_DEPTH`] is opened, the rest of the input is not parsed. Everything
//! before that point is exported.

use std::borrow::Cow;
use std::collections::HashMap;
use std::rc::Rc;

use html5ever::interface::{ElementFlags, NodeOrText, QuirksMode, TreeSink};
use html5ever::tendril::{StrTendril, TendrilSink};
use html5ever::{local_name, namespace_url, ns, Attribute, ExpandedName, QualName};
use markup5ever_rcdom::{Handle, RcDom};

/// Elements nested deeper than this end the parse (twice what the product stores).
pub(crate) const MAX_PARSE_DEPTH: usize = 512;

/// Bytes fed to the parser between two depth checks.
const CHUNK: usize = 8192;

/// An `RcDom` that also tracks element depths.
struct BoundedDom {
    dom: RcDom,
    /// Depth of each node by address (the dom keeps the nodes alive while they are in it).
    depths: HashMap<usize, usize>,
    too_deep: bool,
}

fn key(handle: &Handle) -> usize {
    Rc::as_ptr(handle) as usize
}

impl BoundedDom {
    fn depth_of(&self, handle: &Handle) -> usize {
        self.depths.get(&key(handle)).copied().unwrap_or(0)
    }

    fn placed(&mut self, parent_depth: usize, child: &NodeOrText<Handle>) {
        if let NodeOrText::AppendNode(node) = child {
            let depth = parent_depth + 1;
            self.depths.insert(key(node), depth);
            if depth > MAX_PARSE_DEPTH {
                self.too_deep = true;
            }
        }
    }
}

impl TreeSink for BoundedDom {
    type Handle = Handle;
    type Output = RcDom;

    fn finish(self) -> RcDom {
        self.dom
    }

    fn parse_error(&mut self, _msg: Cow<'static, str>) {}

    fn get_document(&mut self) -> Handle {
        self.dom.get_document()
    }

    fn elem_name<'a>(&'a self, target: &'a Handle) -> ExpandedName<'a> {
        self.dom.elem_name(target)
    }

    fn create_element(&mut self, name: QualName, attrs: Vec<Attribute>, flags: ElementFlags) -> Handle {
        self.dom.create_element(name, attrs, flags)
    }

    fn create_comment(&mut self, text: StrTendril) -> Handle {
        self.dom.create_comment(text)
    }

    fn create_pi(&mut self, target: StrTendril, data: StrTendril) -> Handle {
        self.dom.create_pi(target, data)
    }

    fn append(&mut self, parent: &Handle, child: NodeOrText<Handle>) {
        self.placed(self.depth_of(parent), &child);
        self.dom.append(parent, child);
    }

    fn append_based_on_parent_node(&mut self, element: &Handle, prev_element: &Handle, child: NodeOrText<Handle>) {
        let depth = self.depth_of(element).max(self.depth_of(prev_element));
        self.placed(depth, &child);
        self.dom.append_based_on_parent_node(element, prev_element, child);
    }

    fn append_doctype_to_document(&mut self, name: StrTendril, public_id: StrTendril, system_id: StrTendril) {
        self.dom.append_doctype_to_document(name, public_id, system_id);
    }

    fn get_template_contents(&mut self, target: &Handle) -> Handle {
        let contents = self.dom.get_template_contents(target);
        let depth = self.depth_of(target);
        self.depths.insert(key(&contents), depth);
        contents
    }

    fn same_node(&self, x: &Handle, y: &Handle) -> bool {
        self.dom.same_node(x, y)
    }

    fn set_quirks_mode(&mut self, mode: QuirksMode) {
        self.dom.set_quirks_mode(mode);
    }

    fn append_before_sibling(&mut self, sibling: &Handle, new_node: NodeOrText<Handle>) {
        // A sibling's depth is the new node's depth.
        self.placed(self.depth_of(sibling).saturating_sub(1), &new_node);
        self.dom.append_before_sibling(sibling, new_node);
    }

    fn add_attrs_if_missing(&mut self, target: &Handle, attrs: Vec<Attribute>) {
        self.dom.add_attrs_if_missing(target, attrs);
    }

    fn remove_from_parent(&mut self, target: &Handle) {
        self.dom.remove_from_parent(target);
    }

    fn reparent_children(&mut self, node: &Handle, new_parent: &Handle) {
        self.dom.reparent_children(node, new_parent);
    }
}

/// A parsed fragment. The dom must outlive every handle into it: dropping a node empties
/// the children of all the nodes below it (rcdom's drop does not recurse).
pub(crate) struct Fragment {
    dom: RcDom,
}

impl Fragment {
    /// The fragment's root: an `html` element holding the top-level nodes.
    pub(crate) fn root(&self) -> Handle {
        self.dom.document.children.borrow().first().cloned().unwrap_or_else(|| self.dom.document.clone())
    }
}

/// Parses `html` as the children of a `div`, how the product parses sections.
pub(crate) fn parse_fragment(html: &str) -> Fragment {
    let sink = BoundedDom { dom: RcDom::default(), depths: HashMap::new(), too_deep: false };
    let mut parser = html5ever::parse_fragment(
        sink,
        html5ever::ParseOpts::default(),
        QualName::new(None, ns!(html), local_name!("div")),
        Vec::new(),
    );
    let mut rest = html;
    while !rest.is_empty() && !parser.tokenizer.sink.sink.too_deep {
        let mut cut = rest.len().min(CHUNK);
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        let (chunk, tail) = rest.split_at(cut);
        parser.process(StrTendril::from_slice(chunk));
        rest = tail;
    }
    Fragment { dom: parser.finish() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use markup5ever_rcdom::NodeData;

    fn depth_of_tree(root: &Handle) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(root.clone(), 0usize)];
        while let Some((node, d)) = stack.pop() {
            deepest = deepest.max(d);
            for c in node.children.borrow().iter() {
                stack.push((c.clone(), d + 1));
            }
        }
        deepest
    }

    #[test]
    fn fragments_parse_as_in_a_div() {
        let fragment = parse_fragment("<p>a</p><ul><li>b</li></ul>");
        let root = fragment.root();
        let names: Vec<String> = root
            .children
            .borrow()
            .iter()
            .filter_map(|c| match &c.data {
                NodeData::Element { name, .. } => Some(name.local.to_string()),
                _ => None,
            })
            .collect();
        assert_eq!(names, ["p", "ul"]);
    }

    #[test]
    fn a_nesting_bomb_is_cut_short_quickly() {
        let bomb = "<div>".repeat(60_000) + "deep";
        let started = std::time::Instant::now();
        let fragment = parse_fragment(&format!("<p>before</p>{bomb}"));
        let root = fragment.root();
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "{:?}", started.elapsed());
        let depth = depth_of_tree(&root);
        assert!(depth > 100 && depth <= MAX_PARSE_DEPTH + CHUNK, "{depth}");
    }
}

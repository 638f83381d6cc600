//! A cheap first parse that only measures nesting, so that an HTML bomb is refused before
//! the real parsers see it.
//!
//! html5ever's tree builder scans its stack of open elements on most start tags, so a
//! document of `n` unclosed `<div>`s costs O(n²) (50,000 of them take about 20 s). This
//! parse uses a tree sink that keeps no tree, only each element's depth, and feeds the input
//! in small chunks: it stops at the first chunk that opens an element deeper than the limit,
//! which bounds its own cost too.

use std::borrow::Cow;
use std::cell::Cell;
use std::rc::Rc;

use html5ever::interface::{ElementFlags, NodeOrText, QuirksMode, TreeSink};
use html5ever::tendril::{StrTendril, TendrilSink};
use html5ever::{local_name, namespace_url, ns, Attribute, ExpandedName, QualName};

/// Bytes fed to the parser between two checks.
const CHUNK: usize = 4096;

struct DepthNode {
    name: QualName,
    /// Depth below the document node: the fragment's `html` root is 1, top-level elements 2.
    depth: Cell<usize>,
    attached: Cell<bool>,
    template_contents: Option<Rc<DepthNode>>,
    mathml_integration_point: bool,
}

impl DepthNode {
    fn new(name: QualName) -> Rc<Self> {
        Rc::new(Self {
            name,
            depth: Cell::new(0),
            attached: Cell::new(false),
            template_contents: None,
            mathml_integration_point: false,
        })
    }

    fn other() -> Rc<Self> {
        Self::new(QualName::new(None, ns!(), local_name!("")))
    }
}

/// A tree sink that remembers only depths. Re-parenting (the adoption agency) is not
/// tracked, so the measure is approximate there; the sectioning walk checks the exact depth
/// of what it outputs.
struct DepthSink {
    document: Rc<DepthNode>,
    /// Largest depth an element may have (below the document node).
    limit: usize,
    too_deep: Cell<bool>,
}

impl DepthSink {
    fn place(&mut self, child: NodeOrText<Rc<DepthNode>>, depth: usize) {
        if let NodeOrText::AppendNode(node) = child {
            node.depth.set(depth);
            node.attached.set(true);
            if depth > self.limit {
                self.too_deep.set(true);
            }
        }
    }
}

impl TreeSink for DepthSink {
    type Handle = Rc<DepthNode>;
    type Output = bool;

    fn finish(self) -> bool {
        self.too_deep.get()
    }

    fn parse_error(&mut self, _msg: Cow<'static, str>) {}

    fn get_document(&mut self) -> Self::Handle {
        self.document.clone()
    }

    fn elem_name<'a>(&'a self, target: &'a Self::Handle) -> ExpandedName<'a> {
        target.name.expanded()
    }

    fn create_element(&mut self, name: QualName, _attrs: Vec<Attribute>, flags: ElementFlags) -> Self::Handle {
        Rc::new(DepthNode {
            name,
            depth: Cell::new(0),
            attached: Cell::new(false),
            template_contents: flags.template.then(DepthNode::other),
            mathml_integration_point: flags.mathml_annotation_xml_integration_point,
        })
    }

    fn create_comment(&mut self, _text: StrTendril) -> Self::Handle {
        DepthNode::other()
    }

    fn create_pi(&mut self, _target: StrTendril, _data: StrTendril) -> Self::Handle {
        DepthNode::other()
    }

    fn append(&mut self, parent: &Self::Handle, child: NodeOrText<Self::Handle>) {
        self.place(child, parent.depth.get() + 1);
    }

    fn append_based_on_parent_node(
        &mut self,
        element: &Self::Handle,
        prev_element: &Self::Handle,
        child: NodeOrText<Self::Handle>,
    ) {
        if element.attached.get() {
            self.append_before_sibling(element, child);
        } else {
            self.append(prev_element, child);
        }
    }

    fn append_doctype_to_document(&mut self, _name: StrTendril, _public_id: StrTendril, _system_id: StrTendril) {}

    fn get_template_contents(&mut self, target: &Self::Handle) -> Self::Handle {
        match &target.template_contents {
            Some(contents) => {
                contents.depth.set(target.depth.get());
                contents.clone()
            }
            None => target.clone(),
        }
    }

    fn same_node(&self, x: &Self::Handle, y: &Self::Handle) -> bool {
        Rc::ptr_eq(x, y)
    }

    fn set_quirks_mode(&mut self, _mode: QuirksMode) {}

    fn append_before_sibling(&mut self, sibling: &Self::Handle, new_node: NodeOrText<Self::Handle>) {
        self.place(new_node, sibling.depth.get());
    }

    fn add_attrs_if_missing(&mut self, _target: &Self::Handle, _attrs: Vec<Attribute>) {}

    fn remove_from_parent(&mut self, target: &Self::Handle) {
        target.attached.set(false);
    }

    fn reparent_children(&mut self, _node: &Self::Handle, _new_parent: &Self::Handle) {}

    fn is_mathml_annotation_xml_integration_point(&self, handle: &Self::Handle) -> bool {
        handle.mathml_integration_point
    }
}

/// The input split into chunks of about `CHUNK` bytes, on character boundaries.
pub(crate) fn chunks(html: &str) -> impl Iterator<Item = &str> {
    let mut rest = html;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut end = rest.len().min(CHUNK);
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        let (chunk, tail) = rest.split_at(end);
        rest = tail;
        Some(chunk)
    })
}

/// The length of the longest prefix of `html` (a whole number of chunks) whose parse as a
/// `div` fragment nests no element deeper than `max_depth` (top-level elements have depth 1);
/// `html.len()` when the whole input is within the limit.
pub(crate) fn within_limit_prefix(html: &str, max_depth: usize) -> usize {
    let sink = DepthSink {
        document: DepthNode::other(),
        // The document node is depth 0 and the fragment's `html` root depth 1.
        limit: max_depth + 1,
        too_deep: Cell::new(false),
    };
    let mut parser = crate::fragment_parser(sink);
    let mut fed = 0;
    let mut last = 0;
    for chunk in chunks(html) {
        parser.process(StrTendril::from_slice(chunk));
        if parser.tokenizer.sink.sink.too_deep.get() {
            return fed;
        }
        fed += chunk.len();
        last = chunk.len();
    }
    if parser.finish() {
        // Only the end of the input (flushing the tokenizer) went too deep: refuse the last chunk.
        fed - last
    } else {
        html.len()
    }
}

/// Whether `html` nests elements deeper than `max_depth`.
pub(crate) fn too_deep(html: &str, max_depth: usize) -> bool {
    within_limit_prefix(html, max_depth) < html.len()
}

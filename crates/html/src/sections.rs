//! Splitting sanitized HTML into sections.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashSet};

use html5ever::serialize::{SerializeOpts, TraversalScope};
use html5ever::tendril::StrTendril;
use html5ever::{namespace_url, ns, Attribute, LocalName, QualName};
use markup5ever_rcdom::{Handle, Node, NodeData, SerializableHandle};
use redline_domain::document::{is_section_tag, ChunkId, Section, CHUNK_ID_MAX_LEN, WHOLE_SECTION_ROLES};
use redline_ports::documents::HtmlError;

use crate::images::{fix_images, OwnImages};
use crate::text::{is_html_space, text_of_node};
use crate::{parse_fragment, sanitize, MAX_DEPTH};

const CHUNK_ID_ATTR: &str = "data-chunk-id";

/// Elements unwrapped at the top level: their children are walked in their place (a run of
/// inline content does not continue across their boundaries). Deeper down they become `div`s.
pub(crate) const CONTAINERS: [&str; 9] =
    ["section", "article", "main", "header", "footer", "aside", "nav", "body", "html"];

/// Block elements outside the document model that the sanitizer lets through so that their
/// boundaries still separate words; they are renamed (see `renamed`).
pub(crate) const RENAMED_BLOCKS: [&str; 14] = [
    "dl", "dt", "dd", "address", "center", "details", "summary", "fieldset", "legend", "hgroup", "search", "dialog",
    "menu", "dir",
];

/// What a container or other block outside the model becomes.
fn renamed(tag: &str) -> Option<&'static str> {
    if tag == "menu" || tag == "dir" {
        Some("ul")
    } else if CONTAINERS.contains(&tag) || RENAMED_BLOCKS.contains(&tag) {
        Some("div")
    } else {
        None
    }
}

/// Elements whose start tag closes an open `<p>`: a run holding one of them (at any depth)
/// cannot be wrapped in a `<p>` without the HTML parsing differently.
fn closes_p(tag: &str) -> bool {
    is_section_tag(tag)
        || matches!(
            tag,
            "li" | "dd"
                | "dt"
                | "dl"
                | "figcaption"
                | "address"
                | "article"
                | "aside"
                | "center"
                | "details"
                | "dialog"
                | "dir"
                | "fieldset"
                | "footer"
                | "header"
                | "hgroup"
                | "main"
                | "menu"
                | "nav"
                | "search"
                | "section"
                | "summary"
                | "listing"
                | "xmp"
                | "plaintext"
                | "form"
        )
}

/// A section root before its id is settled.
struct Block {
    root: Handle,
    /// Whether the root came from the input (and may carry a `data-chunk-id`), rather than
    /// being a wrapper made here.
    from_input: bool,
}

/// What is being gathered between two sections.
enum Pending {
    Nothing,
    /// Inline content and text, to wrap in a `<p>` (or `<div>`).
    Run(Vec<Handle>),
    /// `li`s outside a list, to wrap in a `<ul>`.
    Items(Vec<Handle>),
}

struct Collector {
    blocks: Vec<Block>,
    pending: Pending,
}

impl Collector {
    fn flush(&mut self) {
        match std::mem::replace(&mut self.pending, Pending::Nothing) {
            Pending::Nothing => {}
            Pending::Items(items) => {
                self.blocks.push(Block { root: element("ul", Vec::new(), items), from_input: false })
            }
            Pending::Run(run) => {
                let run = trim_run(run);
                if !run.is_empty() {
                    let tag = if run.iter().any(holds_block) { "div" } else { "p" };
                    self.blocks.push(Block { root: element(tag, Vec::new(), run), from_input: false });
                }
            }
        }
    }

    fn push_run(&mut self, node: Handle) {
        if !matches!(self.pending, Pending::Run(_)) {
            self.flush();
            self.pending = Pending::Run(Vec::new());
        }
        if let Pending::Run(run) = &mut self.pending {
            run.push(node);
        }
    }

    fn push_item(&mut self, node: Handle) {
        if !matches!(self.pending, Pending::Items(_)) {
            self.flush();
            self.pending = Pending::Items(Vec::new());
        }
        if let Pending::Items(items) = &mut self.pending {
            items.push(node);
        }
    }
}

/// A new HTML element with these children (the children keep their old parent link, which
/// nothing here reads). Wrappers share their children with the parsed tree: both are
/// dropped together, after serialization.
pub(crate) fn element(tag: &str, attrs: Vec<Attribute>, children: Vec<Handle>) -> Handle {
    let node = Node::new(NodeData::Element {
        name: QualName::new(None, ns!(html), LocalName::from(tag)),
        attrs: RefCell::new(attrs),
        template_contents: RefCell::new(None),
        mathml_annotation_xml_integration_point: false,
    });
    *node.children.borrow_mut() = children;
    node
}

fn is_blank_text(node: &Handle) -> bool {
    matches!(&node.data, NodeData::Text { contents } if contents.borrow().chars().all(is_html_space))
}

/// `node` renamed to `tag`: a new element that takes its attributes and children.
///
/// The children are moved, not shared: dropping an rcdom node empties the child lists of its
/// whole subtree (to drop deep trees without recursion).
fn rename(node: &Handle, tag: &str) -> Handle {
    let attrs = match &node.data {
        NodeData::Element { attrs, .. } => std::mem::take(&mut *attrs.borrow_mut()),
        _ => Vec::new(),
    };
    element(tag, attrs, std::mem::take(&mut *node.children.borrow_mut()))
}

/// Renames, in place, the containers and other blocks outside the model (`renamed`), except
/// the containers at the top (whose ancestors are all containers: `collect_blocks` unwraps
/// those). Whether anything was renamed.
///
/// A renamed element can parse differently from the original (`<li><center><li>` nests the
/// second item, `<li><div><li>` does not), so the caller parses the result again.
fn rename_blocks(root: &Handle) -> bool {
    let mut changed = false;
    let mut stack = vec![(root.clone(), true)];
    while let Some((node, top)) = stack.pop() {
        let mut children = node.children.borrow_mut();
        for child in children.iter_mut() {
            let NodeData::Element { name, .. } = &child.data else { continue };
            let tag = &*name.local;
            if name.ns != ns!(html) {
                stack.push((child.clone(), false));
            } else if tag == "font" {
                *child = font_to_span(child);
                changed = true;
                stack.push((child.clone(), false));
            } else if top && CONTAINERS.contains(&tag) && !kept_whole(child) {
                stack.push((child.clone(), true));
            } else if let Some(new_tag) = renamed(tag) {
                *child = rename(child, new_tag);
                changed = true;
                stack.push((child.clone(), false));
            } else {
                stack.push((child.clone(), false));
            }
        }
    }
    changed
}

/// A `<font>` as a `<span>`: its `color` (checked by the sanitizer) becomes the first
/// declaration of its `style` (where a `color` of the style itself still wins).
fn font_to_span(node: &Handle) -> Handle {
    let span = rename(node, "span");
    if let NodeData::Element { attrs, .. } = &span.data {
        let mut attrs = attrs.borrow_mut();
        let color = attrs.iter().position(|a| &*a.name.local == "color").map(|i| attrs.remove(i).value);
        if let Some(color) = color.filter(|c| !c.trim().is_empty()) {
            let style = match attrs.iter().position(|a| &*a.name.local == "style") {
                Some(i) => format!("color: {}; {}", color.trim(), attrs.remove(i).value),
                None => format!("color: {}", color.trim()),
            };
            attrs.push(Attribute {
                name: QualName::new(None, ns!(), LocalName::from("style")),
                value: StrTendril::from(sanitize::filter_style(&style)),
            });
        }
    }
    span
}

/// Whether `node` is the notes of the document (`role="doc-endnotes"`) or its page header or
/// footer (`doc-pageheader`, `doc-pagefooter`): at the top it is not unwrapped but kept
/// whole, as one section (a `div`), so that it stays together and recognisable
/// (docs/conversion.md, "Footnotes" and "Page headers and footers").
fn kept_whole(node: &Handle) -> bool {
    let NodeData::Element { attrs, .. } = &node.data else { return false };
    let found =
        attrs.borrow().iter().any(|a| &*a.name.local == "role" && WHOLE_SECTION_ROLES.contains(&a.value.trim()));
    found
}

/// Drops white space at both ends of a run.
fn trim_run(mut run: Vec<Handle>) -> Vec<Handle> {
    while run.first().is_some_and(is_blank_text) {
        run.remove(0);
    }
    while run.last().is_some_and(is_blank_text) {
        run.pop();
    }
    if let Some(NodeData::Text { contents }) = run.first().map(|n| &n.data) {
        let trimmed = StrTendril::from_slice(contents.borrow().trim_start_matches(is_html_space));
        *contents.borrow_mut() = trimmed;
    }
    if let Some(NodeData::Text { contents }) = run.last().map(|n| &n.data) {
        let trimmed = StrTendril::from_slice(contents.borrow().trim_end_matches(is_html_space));
        *contents.borrow_mut() = trimmed;
    }
    run
}

/// Whether `node` is or holds an element that closes a `<p>`.
fn holds_block(node: &Handle) -> bool {
    let mut stack = vec![node.clone()];
    while let Some(n) = stack.pop() {
        if let NodeData::Element { name, .. } = &n.data {
            if name.ns != ns!(html) || closes_p(&name.local) || renamed(&name.local).is_some() {
                return true;
            }
            stack.extend(n.children.borrow().iter().cloned());
        }
    }
    false
}

/// The section roots among the children of `root`, in order.
fn collect_blocks(root: &Handle) -> Vec<Block> {
    let mut c = Collector { blocks: Vec::new(), pending: Pending::Nothing };
    let mut stack = vec![root.children.borrow().clone().into_iter()];
    while let Some(level) = stack.last_mut() {
        let Some(node) = level.next() else {
            // The end of a container ends the run inside it.
            c.flush();
            stack.pop();
            continue;
        };
        match &node.data {
            NodeData::Text { .. } if is_blank_text(&node) => {
                // White space between blocks goes; inside a run it is kept (trimmed at its ends).
                if matches!(c.pending, Pending::Run(_)) {
                    c.push_run(node);
                }
            }
            NodeData::Text { .. } => c.push_run(node),
            NodeData::Element { name, .. } if name.ns == ns!(html) => {
                let tag = &*name.local;
                if is_section_tag(tag) {
                    c.flush();
                    c.blocks.push(Block { root: node, from_input: true });
                } else if CONTAINERS.contains(&tag) {
                    c.flush();
                    let children = node.children.borrow().clone();
                    stack.push(children.into_iter());
                } else if tag == "li" {
                    c.push_item(node);
                } else {
                    c.push_run(node);
                }
            }
            NodeData::Element { .. } => c.push_run(node),
            _ => {}
        }
    }
    c.flush();
    c.blocks
}

/// Tidies a section's subtree in place: removes `data-chunk-id` below the root, tidies
/// `style`, sorts attributes by name, keeps a `<pre>`'s leading newline from being eaten by the next parse. Fails when
/// the subtree nests deeper than `MAX_DEPTH` (the root has depth 1).
fn tidy_subtree(root: &Handle) -> Result<(), HtmlError> {
    let mut stack = vec![(root.clone(), 1usize)];
    while let Some((node, depth)) = stack.pop() {
        let NodeData::Element { name, attrs, .. } = &node.data else { continue };
        if depth > MAX_DEPTH {
            return Err(HtmlError::TooDeep);
        }
        {
            let mut attrs = attrs.borrow_mut();
            if depth > 1 {
                attrs.retain(|a| &*a.name.local != CHUNK_ID_ATTR);
            }
            // The sanitizer filtered styles already; the filter is idempotent, so this only
            // guards against a change in the sanitizer.
            for a in attrs.iter_mut().filter(|a| &*a.name.local == "style") {
                a.value = StrTendril::from(sanitize::filter_style(&a.value));
            }
            attrs.retain(|a| &*a.name.local != "style" || !a.value.is_empty());
            // A canonical order: ammonia's attribute removal reorders attributes, so the
            // order would otherwise depend on what was removed.
            attrs.sort_by(|a, b| str::cmp(&a.name.local, &b.name.local));
        }
        if name.ns == ns!(html) && &*name.local == "pre" {
            strip_pre_newlines(&node);
        }
        stack.extend(node.children.borrow().iter().map(|c| (c.clone(), depth + 1)));
    }
    Ok(())
}

/// The parser drops a newline right after `<pre>` and html5ever's serializer does not add
/// one back, so a leading newline would be lost one round trip later: drop them now.
fn strip_pre_newlines(pre: &Handle) {
    let first = pre.children.borrow().first().cloned();
    if let Some(NodeData::Text { contents }) = first.as_ref().map(|n| &n.data) {
        if contents.borrow().starts_with('\n') {
            let trimmed = StrTendril::from_slice(contents.borrow().trim_start_matches('\n'));
            *contents.borrow_mut() = trimmed;
        }
    }
}

/// The `data-chunk-id` of a root, when it is a valid id.
fn input_id(root: &Handle) -> Option<ChunkId> {
    let NodeData::Element { attrs, .. } = &root.data else { return None };
    let attrs = attrs.borrow();
    attrs.iter().find(|a| &*a.name.local == CHUNK_ID_ATTR).and_then(|a| ChunkId::parse(&a.value))
}

/// A fresh id not in `used`: `new_id()` (a few tries), else a suffixed variant of its answer.
fn fresh_id(used: &IdSet, new_id: &mut dyn FnMut() -> ChunkId) -> ChunkId {
    let mut last = None;
    for _ in 0..8 {
        let id = new_id();
        if !used.contains(id.as_str()) {
            return id;
        }
        last = Some(id);
    }
    let base = last.map(|id| id.as_str().to_owned()).unwrap_or_default();
    let mut n = 1u64;
    loop {
        let suffix = format!("-{n}");
        let keep = base.len().min(CHUNK_ID_MAX_LEN - suffix.len());
        if let Some(id) = ChunkId::parse(&format!("{}{suffix}", &base[..keep])).filter(|id| !used.contains(id.as_str()))
        {
            return id;
        }
        n += 1;
    }
}

/// The ids used so far in a document, compact: an id of up to 21 characters (every fresh id)
/// is packed in 128 bits (6 bits a character, after a leading 1 bit), so a document of
/// 150,000 sections costs a few MB here instead of a `String` per id. A B-tree rather than a
/// hash table: it grows by small nodes, where a table doubling in size leaves its smaller
/// copies behind in the allocator.
#[derive(Default)]
pub(crate) struct IdSet {
    packed: BTreeSet<(u64, u64)>,
    long: HashSet<String>,
}

impl IdSet {
    fn pack(id: &str) -> Option<(u64, u64)> {
        if id.len() > 21 {
            return None;
        }
        let mut v: u128 = 1;
        for b in id.bytes() {
            let code = match b {
                b'A'..=b'Z' => b - b'A',
                b'a'..=b'z' => b - b'a' + 26,
                b'0'..=b'9' => b - b'0' + 52,
                b'_' => 62,
                b'-' => 63,
                _ => return None,
            };
            v = (v << 6) | u128::from(code);
        }
        Some(((v >> 64) as u64, v as u64))
    }

    pub(crate) fn contains(&self, id: &str) -> bool {
        match Self::pack(id) {
            Some(k) => self.packed.contains(&k),
            None => self.long.contains(id),
        }
    }

    /// Whether `id` was not in the set.
    pub(crate) fn insert(&mut self, id: &str) -> bool {
        match Self::pack(id) {
            Some(k) => self.packed.insert(k),
            None => self.long.insert(id.to_owned()),
        }
    }
}

/// Puts `data-chunk-id="<id>"` first on the root.
fn set_id(root: &Handle, id: &ChunkId) {
    if let NodeData::Element { attrs, .. } = &root.data {
        let mut attrs = attrs.borrow_mut();
        attrs.retain(|a| &*a.name.local != CHUNK_ID_ATTR);
        attrs.insert(
            0,
            Attribute {
                name: QualName::new(None, ns!(), LocalName::from(CHUNK_ID_ATTR)),
                value: StrTendril::from_slice(id.as_str()),
            },
        );
    }
}

fn outer_html(root: &Handle) -> String {
    serialize(root, TraversalScope::IncludeNode)
}

pub(crate) fn serialize(root: &Handle, traversal_scope: TraversalScope) -> String {
    let mut buf = Vec::new();
    let opts = SerializeOpts { traversal_scope, ..SerializeOpts::default() };
    // Writing to a Vec cannot fail; the serializer writes UTF-8.
    let _ = html5ever::serialize(&mut buf, &SerializableHandle::from(root.clone()), opts);
    String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn tag_of(root: &Handle) -> String {
    match &root.data {
        NodeData::Element { name, .. } => name.local.to_string(),
        _ => String::new(),
    }
}

/// Sections of HTML that ammonia already sanitized, handed to `each` in order, with its
/// remote pictures replaced (`images::fix_images`; answers how many). `used` holds the ids
/// of the sections of the document before this HTML (a slice of it), and gets theirs.
pub(crate) fn sections_of_clean(
    clean: &str,
    own_images: &OwnImages,
    new_id: &mut dyn FnMut() -> ChunkId,
    used: &mut IdSet,
    each: &mut dyn FnMut(Section) -> Result<(), HtmlError>,
) -> Result<usize, HtmlError> {
    let mut dom = parse_fragment(clean);
    let Some(mut root) = dom.document.children.borrow().first().cloned() else { return Ok(0) };
    if rename_blocks(&root) {
        dom = parse_fragment(&serialize(&root, TraversalScope::ChildrenOnly(None)));
        let Some(again) = dom.document.children.borrow().first().cloned() else { return Ok(0) };
        root = again;
    }
    // A placeholder is inline like the picture it replaces: the tree parses back the same.
    let remote_images = fix_images(&root, own_images);
    let blocks = collect_blocks(&root);
    for b in &blocks {
        tidy_subtree(&b.root)?;
    }

    // Ids: the first valid use of an input id keeps it; every other block gets a fresh id
    // that no kept id uses, even a later one.
    let kept: Vec<Option<ChunkId>> = blocks
        .iter()
        .map(|b| if b.from_input { input_id(&b.root).filter(|id| used.insert(id.as_str())) } else { None })
        .collect();
    for (b, kept) in blocks.iter().zip(kept) {
        let id = match kept {
            Some(id) => id,
            None => {
                let id = fresh_id(used, new_id);
                used.insert(id.as_str());
                id
            }
        };
        set_id(&b.root, &id);
        each(Section { id, tag: tag_of(&b.root), html: outer_html(&b.root), text: text_of_node(&b.root) })?;
    }
    Ok(remote_images)
}

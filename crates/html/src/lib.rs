//! The `HtmlSections` adapter: sanitizes HTML with ammonia and splits it into the sections of
//! a document (decisions.md §4) with html5ever.
//!
//! The steps of [`Html5everSections::sectionize`]:
//! 1. a cheap parse that only measures nesting refuses HTML bombs ([`MAX_DEPTH`]);
//! 2. ammonia sanitizes with Redline's allow-list (see `sanitize.rs`);
//! 3. html5ever parses the sanitized HTML as the children of a `div`. Blocks outside the
//!    model (`dl`, `center`, …, and containers below the top) become `div`s (`menu`/`dir`:
//!    `ul`), and the result is parsed once more if anything was renamed;
//! 4. the top-level nodes are walked: section elements are sections, containers are
//!    unwrapped, runs of inline content are wrapped in a `<p>` (a `<div>` when they hold
//!    block content, which a `<p>` cannot hold), stray `li`s in a `<ul>`;
//! 5. each section gets its id and is serialized with html5ever.
//!
//! A large document is taken through these steps in slices of top-level blocks where it can
//! be cut without changing the result (see `split.rs`), so the parsers' trees are as big as a
//! slice, not as the document; an owned document is freed as its slices are done.
//!
//! Idempotence (the port's contract) rests on html5ever's serialize-then-parse giving the
//! same tree, on every change made after the last parse being one that parses back the same,
//! and on a canonical attribute order; `tests/props.rs` checks it on generated tag soup.
//!
//! Nothing recurses on the document's structure: every walk keeps an explicit stack.

mod depth;
mod sanitize;
mod sections;
mod split;
mod text;

use std::borrow::Cow;
use std::collections::HashSet;

use html5ever::tendril::TendrilSink;
use html5ever::{local_name, namespace_url, ns, Parser, QualName};
use markup5ever_rcdom::RcDom;
use redline_domain::document::{ChunkId, Section};
use redline_ports::documents::HtmlError;
use redline_ports::HtmlSections;

/// The deepest nesting of elements accepted: a top-level element has depth 1. Deeper input
/// (or output, counting the `<p>`/`<ul>` a run or stray item is wrapped in) is
/// [`HtmlError::TooDeep`].
pub const MAX_DEPTH: usize = 256;

/// A document longer than this is cut into slices of about this size, when it can be.
const SLICE_BYTES: usize = 256 * 1024;

/// The part of an owned document already sectioned is freed whenever it reaches this size
/// (freeing moves the rest to the front of the buffer, so not after every slice).
const RELEASE_BYTES: usize = 4 * 1024 * 1024;

/// Sanitizes and sections HTML with ammonia and html5ever.
pub struct Html5everSections {
    cleaner: ammonia::Builder<'static>,
}

impl Html5everSections {
    pub fn new() -> Self {
        Self { cleaner: sanitize::builder() }
    }

    /// The sanitized HTML, before sectioning (same allow-list as `sectionize`).
    pub fn sanitize(&self, html: &str) -> Result<String, HtmlError> {
        if depth::too_deep(html, MAX_DEPTH) {
            return Err(HtmlError::TooDeep);
        }
        Ok(self.cleaner.clean(html).to_string())
    }
}

impl Default for Html5everSections {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Html5everSections {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Html5everSections").finish_non_exhaustive()
    }
}

impl Html5everSections {
    /// The sections of `html`, in slices of about `slice_bytes` where it can be cut. Which
    /// input ids are kept depends on the whole document, so a document that has any is not
    /// cut.
    fn each_section(
        &self,
        mut html: Cow<'_, str>,
        slice_bytes: usize,
        new_id: &mut dyn FnMut() -> ChunkId,
        each: &mut dyn FnMut(Section),
    ) -> Result<(), HtmlError> {
        if html.bytes().all(|b| text::is_html_space(b as char)) {
            return Ok(());
        }
        let cuts = if html.len() <= slice_bytes || has_chunk_ids(&html) {
            Vec::new()
        } else {
            split::cuts(&html, slice_bytes)
        };
        let mut used = HashSet::new();
        // Offsets are in the whole document; the first `freed` bytes of an owned one are gone.
        let (mut start, mut freed) = (0, 0);
        for end in cuts.into_iter().chain(std::iter::once(html.len())) {
            if let Cow::Owned(owned) = &mut html {
                if start - freed >= RELEASE_BYTES {
                    owned.drain(..start - freed);
                    owned.shrink_to_fit();
                    freed = start;
                }
            }
            let clean = self.sanitize(&html[start - freed..end - freed])?;
            sections::sections_of_clean(&clean, &mut used, new_id, each)?;
            start = end;
        }
        Ok(())
    }
}

/// Whether `html` may hold a `data-chunk-id` attribute (ASCII case-insensitive, as the
/// parser reads attribute names).
fn has_chunk_ids(html: &str) -> bool {
    const NAME: &[u8] = b"data-chunk-id";
    let b = html.as_bytes();
    (0..b.len()).any(|i| b[i] | 0x20 == b'd' && b[i..].get(..NAME.len()).is_some_and(|w| w.eq_ignore_ascii_case(NAME)))
}

impl HtmlSections for Html5everSections {
    fn sectionize(&self, html: &str, new_id: &mut dyn FnMut() -> ChunkId) -> Result<Vec<Section>, HtmlError> {
        let mut sections = Vec::new();
        self.each_section(Cow::Borrowed(html), SLICE_BYTES, new_id, &mut |s| sections.push(s))?;
        Ok(sections)
    }

    fn sectionize_each(
        &self,
        html: String,
        new_id: &mut dyn FnMut() -> ChunkId,
        each: &mut dyn FnMut(Section),
    ) -> Result<(), HtmlError> {
        self.each_section(Cow::Owned(html), SLICE_BYTES, new_id, each)
    }
}

/// [`HtmlSections::sectionize`] with slices of about `slice_bytes` instead of the default
/// 256 KB: for tests that compare cut and uncut documents (`usize::MAX` never cuts).
#[doc(hidden)]
pub fn sectionize_in_slices(
    sectioner: &Html5everSections,
    html: &str,
    slice_bytes: usize,
    new_id: &mut dyn FnMut() -> ChunkId,
) -> Result<Vec<Section>, HtmlError> {
    let mut sections = Vec::new();
    sectioner.each_section(Cow::Borrowed(html), slice_bytes, new_id, &mut |s| sections.push(s))?;
    Ok(sections)
}

/// The text content of an HTML fragment, as in [`Section::text`]: white space collapsed to
/// single spaces, a space between blocks, items, cells and at `<br>`; the content of
/// `script`, `style`, `template` and similar elements left out. Nothing is sanitized (the
/// result is plain text). Input nested deeper than [`MAX_DEPTH`] is read only up to there.
pub fn text_of(html: &str) -> String {
    let prefix = html.get(..depth::within_limit_prefix(html, MAX_DEPTH)).unwrap_or_default();
    let dom = parse_fragment(prefix);
    let root = dom.document.children.borrow().first().cloned();
    root.map(|root| text::text_of_children(&root)).unwrap_or_default()
}

/// An html5ever parser of a fragment in a `div` (the context ammonia uses too).
fn fragment_parser<S: html5ever::interface::TreeSink>(sink: S) -> Parser<S> {
    html5ever::parse_fragment(
        sink,
        html5ever::ParseOpts::default(),
        QualName::new(None, ns!(html), local_name!("div")),
        Vec::new(),
    )
}

/// Parses `html` as the children of a `div`: the document's only child is an `html`
/// element holding the fragment's top-level nodes.
fn parse_fragment(html: &str) -> RcDom {
    fragment_parser(RcDom::default()).one(html)
}

//! The `HtmlSections` adapter: sanitizes HTML with ammonia and splits it into the sections of
//! a document (docs/api.md, "Documents") with html5ever.
//!
//! The steps of [`Html5everSections::sectionize`]:
//! 1. a cheap parse that only measures nesting refuses HTML bombs ([`MAX_DEPTH`]);
//! 2. ammonia sanitizes with Redline's allow-list (see `sanitize.rs`; `style` lengths are
//!    bounded by `bounds.rs`);
//! 3. html5ever parses the sanitized HTML as the children of a `div`. Blocks outside the
//!    model (`dl`, `center`, …, and containers below the top) become `div`s (`menu`/`dir`:
//!    `ul`), and the result is parsed once more if anything was renamed. Pictures that are
//!    not the service's own images (under the public base URL given to
//!    [`Html5everSections::with_public_base_url`]) or `data:` images become placeholders
//!    naming their address (`images.rs`);
//! 4. the top-level nodes are walked: section elements are sections, containers are
//!    unwrapped, runs of inline content are wrapped in a `<p>` (a `<div>` when they hold
//!    block content, which a `<p>` cannot hold), stray `li`s in a `<ul>`;
//! 5. each section gets its id and is serialized with html5ever.
//!
//! Idempotence (the port's contract) rests on html5ever's serialize-then-parse giving the
//! same tree, on every change made after the last parse being one that parses back the same,
//! and on a canonical attribute order; `tests/props.rs` checks it on generated tag soup.
//!
//! A large document is cut into slices between top-level blocks of a grammar that
//! html5ever builds as written (`slices.rs`), and the steps run on one slice after another:
//! the sections are the same, and memory holds the DOM of one slice instead of the whole
//! document's (about four times its HTML). [`HtmlSections::sectionize_each`] hands the
//! sections over one by one, so that a caller need not keep them all.
//!
//! Nothing recurses on the document's structure: every walk keeps an explicit stack.

mod bounds;
mod depth;
mod images;
mod sanitize;
mod sections;
mod slices;
mod text;

use html5ever::tendril::TendrilSink;
use html5ever::{local_name, namespace_url, ns, Parser, QualName};
use markup5ever_rcdom::RcDom;
use redline_domain::document::{ChunkId, Section};
use redline_ports::documents::{HtmlError, SanitizeReport};
use redline_ports::HtmlSections;

/// The deepest nesting of elements accepted: a top-level element has depth 1. Deeper input
/// (or output, counting the `<p>`/`<ul>` a run or stray item is wrapped in) is
/// [`HtmlError::TooDeep`].
pub const MAX_DEPTH: usize = 256;

/// Bytes of HTML sanitized and sectioned at a time, when the document can be cut.
pub const SLICE_BYTES: usize = 256 * 1024;

/// Sanitizes and sections HTML with ammonia and html5ever.
pub struct Html5everSections {
    cleaner: ammonia::Builder<'static>,
    slice_bytes: usize,
    own_images: images::OwnImages,
}

impl Html5everSections {
    /// Keeps the service's images only by their relative URL (`/v1/documents/images/{id}`);
    /// the service itself uses [`Self::with_public_base_url`].
    pub fn new() -> Self {
        Self::with_slice_bytes(SLICE_BYTES)
    }

    /// Also keeps the service's images given by their absolute URL under `public_base_url`
    /// (scheme://host[:port][/path], as the API answers them), storing them by their path.
    pub fn with_public_base_url(public_base_url: &str) -> Self {
        Self { own_images: images::OwnImages::at(public_base_url), ..Self::new() }
    }

    /// Cuts documents into slices of at least `slice_bytes` (`usize::MAX`: never), for tests
    /// and measurements; [`Self::new`] uses [`SLICE_BYTES`]. The sections do not depend on it.
    pub fn with_slice_bytes(slice_bytes: usize) -> Self {
        Self { cleaner: sanitize::builder(), slice_bytes: slice_bytes.max(1), own_images: Default::default() }
    }

    /// The sanitized HTML, before sectioning (same rules as `sectionize`).
    pub fn sanitize(&self, html: &str) -> Result<String, HtmlError> {
        let clean = self.clean(html)?;
        if !clean.contains("<img") {
            return Ok(clean);
        }
        let dom = parse_fragment(&clean);
        let Some(root) = dom.document.children.borrow().first().cloned() else { return Ok(clean) };
        images::fix_images(&root, &self.own_images);
        Ok(sections::serialize(&root, html5ever::serialize::TraversalScope::ChildrenOnly(None)))
    }

    /// Ammonia's part of sanitizing.
    fn clean(&self, html: &str) -> Result<String, HtmlError> {
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

impl HtmlSections for Html5everSections {
    fn sectionize(&self, html: &str, new_id: &mut dyn FnMut() -> ChunkId) -> Result<Vec<Section>, HtmlError> {
        let mut out = Vec::new();
        self.sectionize_each(html, new_id, &mut |s| {
            out.push(s);
            Ok(())
        })?;
        Ok(out)
    }

    fn sectionize_each(
        &self,
        html: &str,
        new_id: &mut dyn FnMut() -> ChunkId,
        each: &mut dyn FnMut(Section) -> Result<(), HtmlError>,
    ) -> Result<(), HtmlError> {
        self.sectionize_reporting(html, new_id, each).map(|_| ())
    }

    fn sectionize_reporting(
        &self,
        html: &str,
        new_id: &mut dyn FnMut() -> ChunkId,
        each: &mut dyn FnMut(Section) -> Result<(), HtmlError>,
    ) -> Result<SanitizeReport, HtmlError> {
        let mut used = sections::IdSet::default();
        let mut report = SanitizeReport::default();
        for slice in slices::slices(html, self.slice_bytes) {
            if slice.bytes().all(|b| text::is_html_space(b as char)) {
                continue;
            }
            let clean = self.clean(slice)?;
            report.remote_images += sections::sections_of_clean(&clean, &self.own_images, new_id, &mut used, each)?;
        }
        Ok(report)
    }
}

/// The slices `html` is sanitized and sectioned in with slices of at least `slice_bytes`
/// (see [`Html5everSections::with_slice_bytes`]), for tests.
#[doc(hidden)]
pub fn slices_of(html: &str, slice_bytes: usize) -> Vec<&str> {
    slices::slices(html, slice_bytes.max(1))
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

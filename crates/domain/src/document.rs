//! The sectioned document (docs/api.md, "Documents"): HTML whose every top-level block carries a
//! unique, stable `data-chunk-id`. Edits address sections by id and keep every other id.
//!
//! Parsing HTML into sections and sanitizing it is an adapter's job (html5ever, ammonia);
//! this module holds the sections as the adapter produced them and the rules of editing.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::OnceLock;

/// Top-level block elements that are sections.
pub const SECTION_TAGS: [&str; 15] =
    ["h1", "h2", "h3", "h4", "h5", "h6", "p", "ul", "ol", "table", "blockquote", "pre", "figure", "hr", "div"];

/// The DPUB-ARIA role of the page header: a top-level block with it is one section, shown at
/// the top of every page of a DOCX or PDF export (docs/conversion.md, "Page headers and
/// footers").
pub const PAGE_HEADER_ROLE: &str = "doc-pageheader";
/// The role of the page footer, shown at the foot of every page.
pub const PAGE_FOOTER_ROLE: &str = "doc-pagefooter";
/// The role of the document's notes (footnotes and endnotes), kept together as one section.
pub const ENDNOTES_ROLE: &str = "doc-endnotes";

/// Roles whose top-level element is kept whole as one section.
pub const WHOLE_SECTION_ROLES: [&str; 3] = [ENDNOTES_ROLE, PAGE_HEADER_ROLE, PAGE_FOOTER_ROLE];

/// Whether `tag` (lower case) is a section element.
pub fn is_section_tag(tag: &str) -> bool {
    SECTION_TAGS.contains(&tag)
}

/// The longest chunk id accepted.
/// `html` with every ` data-chunk-id="…"` attribute left out: sections compared by what they
/// hold, whatever their ids.
pub fn without_chunk_ids(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(at) = rest.find(" data-chunk-id=\"") {
        out.push_str(&rest[..at]);
        let after = &rest[at + " data-chunk-id=\"".len()..];
        rest = after.find('"').map_or("", |end| &after[end + 1..]);
    }
    out.push_str(rest);
    out
}

pub const CHUNK_ID_MAX_LEN: usize = 64;

/// A section id: 1 to 64 of `A-Z a-z 0-9 _ -`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChunkId(String);

impl ChunkId {
    pub fn parse(s: &str) -> Option<Self> {
        let ok = !s.is_empty()
            && s.len() <= CHUNK_ID_MAX_LEN
            && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        ok.then(|| Self(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ChunkId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One top-level block. `html` is its outer HTML, already sanitized, carrying
/// `data-chunk-id="<id>"` on its root element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub id: ChunkId,
    /// The root element's tag, lower case.
    pub tag: String,
    pub html: String,
    /// The text content (for outlines, search and diffs), whitespace collapsed.
    pub text: String,
}

impl Section {
    /// Whether the section shows anything (text, an image, a rule or a table).
    pub fn shows_content(&self) -> bool {
        !self.text.trim().is_empty() || self.tag == "hr" || self.html.contains("<img") || self.tag == "table"
    }
}

/// The most sections a document may have. New HTML (an upload, a save, a template, the AI's
/// edits) that would make more is refused; documents stored before the limit stay readable.
/// It bounds what one document costs everywhere: an export renders every section (about a
/// kilobyte of memory each), and an upload answers with all of them.
pub const MAX_SECTIONS: usize = 100_000;

/// What can go wrong editing a document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocumentError {
    #[error("unknown chunk id {0}")]
    UnknownChunk(String),
    #[error("duplicate chunk id {0}")]
    DuplicateChunk(String),
}

/// A document: its sections in order. Ids are unique (checked on every change).
///
/// Finding a section by id costs the same however long the document is: an index of the ids
/// is built on the first lookup, kept up to date by edits and appends, and dropped (to be
/// built again when needed) by a change that moves sections.
#[derive(Clone, Default)]
pub struct Document {
    sections: Vec<Section>,
    index: OnceLock<HashMap<ChunkId, usize>>,
}

impl PartialEq for Document {
    fn eq(&self, other: &Self) -> bool {
        self.sections == other.sections
    }
}

impl Eq for Document {}

impl fmt::Debug for Document {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Document").field("sections", &self.sections).finish()
    }
}

/// One line of the outline given to the AI instead of the whole document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutlineEntry {
    pub chunk_id: ChunkId,
    pub tag: String,
    /// The text of a heading, else `None`.
    pub heading: Option<String>,
    /// The first words of the section.
    pub first_words: String,
    /// Characters of text.
    pub chars: usize,
}

/// Words of a section shown in the outline.
const OUTLINE_WORDS: usize = 12;

impl Document {
    /// A document of these sections; `DuplicateChunk` if two share an id.
    pub fn new(sections: Vec<Section>) -> Result<Self, DocumentError> {
        let mut seen = HashSet::with_capacity(sections.len());
        for s in &sections {
            if !seen.insert(s.id.as_str()) {
                return Err(DocumentError::DuplicateChunk(s.id.to_string()));
            }
        }
        Ok(Self { sections, index: OnceLock::new() })
    }

    pub fn sections(&self) -> &[Section] {
        &self.sections
    }

    /// The sections, giving the document up.
    pub fn into_sections(self) -> Vec<Section> {
        self.sections
    }

    pub fn len(&self) -> usize {
        self.sections.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sections.is_empty()
    }

    /// Whether the document has any visible content (text, an image, a rule or a table).
    pub fn has_content(&self) -> bool {
        self.sections.iter().any(Section::shows_content)
    }

    fn index(&self) -> &HashMap<ChunkId, usize> {
        self.index.get_or_init(|| self.sections.iter().enumerate().map(|(i, s)| (s.id.clone(), i)).collect())
    }

    /// Where sections now sit differently: the index is built again on the next lookup.
    fn moved(&mut self) {
        self.index = OnceLock::new();
    }

    pub fn position(&self, id: &ChunkId) -> Option<usize> {
        self.index().get(id).copied()
    }

    pub fn get(&self, id: &ChunkId) -> Option<&Section> {
        self.position(id).map(|i| &self.sections[i])
    }

    fn ensure_new_ids(&self, new: &[Section], replacing: Option<&ChunkId>) -> Result<(), DocumentError> {
        let mut seen = HashSet::with_capacity(new.len());
        for s in new {
            let taken = Some(&s.id) != replacing && self.index().contains_key(&s.id);
            if taken || !seen.insert(&s.id) {
                return Err(DocumentError::DuplicateChunk(s.id.to_string()));
            }
        }
        Ok(())
    }

    /// Replaces the section `id` with `replacement` (one or more sections; the first usually
    /// keeps `id`). Returns the old section.
    pub fn replace(&mut self, id: &ChunkId, replacement: Vec<Section>) -> Result<Section, DocumentError> {
        let at = self.position(id).ok_or_else(|| DocumentError::UnknownChunk(id.to_string()))?;
        self.ensure_new_ids(&replacement, Some(id))?;
        let one = replacement.len() == 1;
        let old = self.sections.splice(at..=at, replacement).next();
        match self.index.get_mut() {
            Some(index) if one => {
                index.remove(id);
                index.insert(self.sections[at].id.clone(), at);
            }
            _ => self.moved(),
        }
        old.ok_or_else(|| DocumentError::UnknownChunk(id.to_string()))
    }

    /// Inserts sections after `after` (`None` = at the start).
    pub fn insert_after(&mut self, after: Option<&ChunkId>, new: Vec<Section>) -> Result<(), DocumentError> {
        let at = match after {
            None => 0,
            Some(id) => self.position(id).ok_or_else(|| DocumentError::UnknownChunk(id.to_string()))? + 1,
        };
        if at == self.sections.len() {
            return self.append(new);
        }
        self.ensure_new_ids(&new, None)?;
        self.sections.splice(at..at, new);
        self.moved();
        Ok(())
    }

    /// Appends sections at the end.
    pub fn append(&mut self, new: Vec<Section>) -> Result<(), DocumentError> {
        self.ensure_new_ids(&new, None)?;
        let from = self.sections.len();
        if let Some(index) = self.index.get_mut() {
            index.extend(new.iter().enumerate().map(|(i, s)| (s.id.clone(), from + i)));
        }
        self.sections.extend(new);
        Ok(())
    }

    /// Removes the section `id` and returns it.
    pub fn delete(&mut self, id: &ChunkId) -> Result<Section, DocumentError> {
        let at = self.position(id).ok_or_else(|| DocumentError::UnknownChunk(id.to_string()))?;
        let last = at + 1 == self.sections.len();
        match self.index.get_mut() {
            Some(index) if last => {
                index.remove(id);
            }
            _ => self.moved(),
        }
        Ok(self.sections.remove(at))
    }

    /// The document as HTML: the sections' outer HTML, one per line.
    pub fn to_html(&self) -> String {
        let mut out = String::with_capacity(self.sections.iter().map(|s| s.html.len() + 1).sum());
        for s in &self.sections {
            out.push_str(&s.html);
            out.push('\n');
        }
        out
    }

    /// The text of the whole document, a section per paragraph.
    pub fn to_text(&self) -> String {
        self.sections.iter().map(|s| s.text.as_str()).filter(|t| !t.is_empty()).collect::<Vec<_>>().join("\n\n")
    }

    /// The outline given to the AI: ids, headings, first words and sizes.
    pub fn outline(&self) -> Vec<OutlineEntry> {
        self.sections
            .iter()
            .map(|s| {
                let is_heading = s.tag.len() == 2 && s.tag.starts_with('h') && s.tag.as_bytes()[1].is_ascii_digit();
                OutlineEntry {
                    chunk_id: s.id.clone(),
                    tag: s.tag.clone(),
                    heading: is_heading.then(|| s.text.clone()),
                    first_words: s.text.split_whitespace().take(OUTLINE_WORDS).collect::<Vec<_>>().join(" "),
                    chars: s.text.chars().count(),
                }
            })
            .collect()
    }

    /// Gives `sections`, about to enter this document, ids that clash with none of its own
    /// (but `keep` for the first, when given: an edit keeps the section's id) nor with each
    /// other, drawing new ones from `fresh`; each section's `data-chunk-id` follows its id.
    pub fn settle_ids(&self, sections: &mut [Section], keep: Option<&ChunkId>, fresh: &mut dyn FnMut() -> ChunkId) {
        // Taken: the document's ids but `keep`, and the ids given so far in this call.
        let mut given: HashSet<ChunkId> = HashSet::new();
        let taken =
            |id: &ChunkId, given: &HashSet<ChunkId>| (Some(id) != keep && self.get(id).is_some()) || given.contains(id);
        for (i, s) in sections.iter_mut().enumerate() {
            let wanted = match (i, keep) {
                (0, Some(k)) => k.clone(),
                _ if taken(&s.id, &given) || Some(&s.id) == keep => {
                    let mut id = fresh();
                    while taken(&id, &given) {
                        id = fresh();
                    }
                    id
                }
                _ => s.id.clone(),
            };
            if wanted != s.id {
                s.html = s.html.replacen(
                    &format!("data-chunk-id=\"{}\"", s.id.as_str()),
                    &format!("data-chunk-id=\"{}\"", wanted.as_str()),
                    1,
                );
                s.id = wanted;
            }
            given.insert(s.id.clone());
        }
    }
}

/// The change of one section between two documents (`old_html`/`new_html` of a
/// PendingChange or chunk diff).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SectionDiff {
    Edited { id: ChunkId, old_html: String, new_html: String },
    Created { id: ChunkId, after: Option<ChunkId>, new_html: String },
    Deleted { id: ChunkId, old_html: String },
}

/// Per-section differences from `before` to `after`, in the order of `after` (deletions
/// last, in the order of `before`).
pub fn diff(before: &Document, after: &Document) -> Vec<SectionDiff> {
    let mut out = Vec::new();
    let mut previous: Option<ChunkId> = None;
    for s in after.sections() {
        match before.get(&s.id) {
            Some(old) if old.html != s.html => {
                out.push(SectionDiff::Edited { id: s.id.clone(), old_html: old.html.clone(), new_html: s.html.clone() })
            }
            Some(_) => {}
            None => {
                out.push(SectionDiff::Created { id: s.id.clone(), after: previous.clone(), new_html: s.html.clone() })
            }
        }
        previous = Some(s.id.clone());
    }
    for s in before.sections() {
        if after.get(&s.id).is_none() {
            out.push(SectionDiff::Deleted { id: s.id.clone(), old_html: s.html.clone() });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sec(id: &str, text: &str) -> Section {
        Section {
            id: ChunkId::parse(id).unwrap(),
            tag: "p".into(),
            html: format!("<p data-chunk-id=\"{id}\">{text}</p>"),
            text: text.into(),
        }
    }

    #[test]
    fn new_sections_never_take_an_existing_id() {
        let doc = Document::new(vec![sec("a", "one"), sec("b", "two")]).unwrap();
        let mut n = 0;
        let mut fresh = || {
            n += 1;
            ChunkId::parse(&format!("n{n}")).unwrap()
        };
        let mut edited = vec![sec("b", "x"), sec("zz", "y")];
        doc.settle_ids(&mut edited, Some(&ChunkId::parse("a").unwrap()), &mut fresh);
        assert_eq!(edited.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), ["a", "zz"]);
        assert!(edited[0].html.contains("data-chunk-id=\"a\""));
        let mut created = vec![sec("a", "x")];
        doc.settle_ids(&mut created, None, &mut fresh);
        assert_eq!(created[0].id.as_str(), "n1");
    }

    fn ids(d: &Document) -> Vec<&str> {
        d.sections().iter().map(|s| s.id.as_str()).collect()
    }

    #[test]
    fn chunk_ids() {
        assert!(ChunkId::parse("c-1a2b").is_some());
        assert!(ChunkId::parse("").is_none());
        assert!(ChunkId::parse("has space").is_none());
        assert!(ChunkId::parse("\"><script>").is_none());
        assert!(ChunkId::parse(&"a".repeat(65)).is_none());
    }

    #[test]
    fn edits_keep_other_ids() {
        let mut d = Document::new(vec![sec("a", "one"), sec("b", "two"), sec("c", "three")]).unwrap();
        let old = d.replace(&ChunkId::parse("b").unwrap(), vec![sec("b", "TWO")]).unwrap();
        assert_eq!(old.text, "two");
        d.insert_after(Some(&ChunkId::parse("a").unwrap()), vec![sec("n", "new")]).unwrap();
        d.insert_after(None, vec![sec("s", "start")]).unwrap();
        d.delete(&ChunkId::parse("c").unwrap()).unwrap();
        assert_eq!(ids(&d), ["s", "a", "n", "b"]);
        assert_eq!(d.insert_after(None, vec![sec("a", "dup")]), Err(DocumentError::DuplicateChunk("a".into())));
        assert_eq!(d.delete(&ChunkId::parse("zz").unwrap()), Err(DocumentError::UnknownChunk("zz".into())));
        assert!(Document::new(vec![sec("a", "x"), sec("a", "y")]).is_err());
    }

    #[test]
    fn outline_and_content() {
        let mut h = sec("h", "Title here");
        h.tag = "h1".into();
        let d =
            Document::new(vec![h, sec("p", "one two three four five six seven eight nine ten eleven twelve thirteen")])
                .unwrap();
        let o = d.outline();
        assert_eq!(o[0].heading.as_deref(), Some("Title here"));
        assert_eq!(o[1].heading, None);
        assert_eq!(o[1].first_words.split(' ').count(), 12);
        assert!(d.has_content());
        assert!(!Document::new(vec![sec("e", "  ")]).unwrap().has_content());
    }

    #[test]
    fn diffs() {
        let before = Document::new(vec![sec("a", "one"), sec("b", "two"), sec("c", "three")]).unwrap();
        let after = Document::new(vec![sec("a", "one"), sec("n", "new"), sec("b", "TWO")]).unwrap();
        let d = diff(&before, &after);
        assert_eq!(d.len(), 3);
        assert!(
            matches!(&d[0], SectionDiff::Created { id, after: Some(a), .. } if id.as_str() == "n" && a.as_str() == "a")
        );
        assert!(matches!(&d[1], SectionDiff::Edited { id, .. } if id.as_str() == "b"));
        assert!(matches!(&d[2], SectionDiff::Deleted { id, .. } if id.as_str() == "c"));
    }

    #[derive(Debug, Clone)]
    enum Op {
        Edit(usize),
        InsertAfter(Option<usize>),
        Delete(usize),
        /// Replaced by a section of another id.
        Rename(usize),
        /// Replaced by two sections.
        Split(usize),
        Append,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0usize..50).prop_map(Op::Edit),
            prop::option::of(0usize..50).prop_map(Op::InsertAfter),
            (0usize..50).prop_map(Op::Delete),
            (0usize..50).prop_map(Op::Rename),
            (0usize..50).prop_map(Op::Split),
            Just(Op::Append),
        ]
    }

    proptest! {
        #[test]
        fn ids_stay_unique_and_stable_under_any_edits(ops in prop::collection::vec(op(), 0..60)) {
            let mut d = Document::new((0..5).map(|i| sec(&format!("s{i}"), "x")).collect()).unwrap();
            let mut next = 100;
            for op in ops {
                let before: Vec<String> = d.sections().iter().map(|s| s.id.to_string()).collect();
                let n = d.len();
                match op {
                    Op::Edit(i) if n > 0 => {
                        let id = d.sections()[i % n].id.clone();
                        d.replace(&id, vec![sec(id.as_str(), "edited")]).unwrap();
                        let after: Vec<String> = d.sections().iter().map(|s| s.id.to_string()).collect();
                        prop_assert_eq!(before, after);
                    }
                    Op::InsertAfter(at) => {
                        let after_id = if n == 0 { None } else { at.map(|i| d.sections()[i % n].id.clone()) };
                        next += 1;
                        d.insert_after(after_id.as_ref(), vec![sec(&format!("n{next}"), "new")]).unwrap();
                        let kept: Vec<String> = d.sections().iter().map(|s| s.id.to_string()).filter(|i| before.contains(i)).collect();
                        prop_assert_eq!(before, kept);
                    }
                    Op::Delete(i) if n > 0 => {
                        let id = d.sections()[i % n].id.clone();
                        d.delete(&id).unwrap();
                        prop_assert!(d.get(&id).is_none());
                    }
                    Op::Rename(i) if n > 0 => {
                        let id = d.sections()[i % n].id.clone();
                        next += 1;
                        d.replace(&id, vec![sec(&format!("r{next}"), "renamed")]).unwrap();
                        prop_assert!(d.get(&id).is_none());
                    }
                    Op::Split(i) if n > 0 => {
                        let id = d.sections()[i % n].id.clone();
                        next += 1;
                        d.replace(&id, vec![sec(id.as_str(), "one"), sec(&format!("p{next}"), "two")]).unwrap();
                    }
                    Op::Append => {
                        next += 1;
                        d.append(vec![sec(&format!("e{next}"), "end")]).unwrap();
                    }
                    _ => {}
                }
                let mut seen = HashSet::new();
                for (i, s) in d.sections().iter().enumerate() {
                    prop_assert!(seen.insert(s.id.clone()), "duplicate id {}", s.id);
                    // Every lookup finds the section where it is.
                    prop_assert_eq!(d.position(&s.id), Some(i));
                    prop_assert_eq!(d.get(&s.id), Some(s));
                }
                prop_assert_eq!(d.position(&ChunkId::parse("absent").unwrap()), None);
                // An existing id is refused as a new one; a copy finds the same.
                if let Some(first) = d.sections().first().cloned() {
                    prop_assert!(d.clone().append(vec![first.clone()]).is_err());
                    prop_assert_eq!(d.clone().position(&first.id), Some(0));
                }
            }
        }
    }
}

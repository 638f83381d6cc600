//! Documents: turning HTML into sections, converting uploaded files, and storing documents
//! with their versions.

use redline_domain::document::{ChunkId, Section};
use redline_domain::page::{Page, PageRequest};
use redline_domain::time_util::Millis;
use redline_domain::{Owner, SessionId};

use crate::error::StoreError;

/// Why HTML could not be made into sections.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HtmlError {
    /// Nesting deeper than the parser accepts (an HTML bomb).
    #[error("the HTML is nested too deeply")]
    TooDeep,
    /// More sections than a document may have (`each` refused one past the limit).
    #[error("the document has more than {limit} sections")]
    TooManySections { limit: usize },
}

/// What sanitizing changed that a reader would miss, for an upload's warnings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SanitizeReport {
    /// Pictures from another address than the service's own images, replaced by a
    /// placeholder that names the address.
    pub remote_images: usize,
}

/// Sanitizes and sections HTML. CPU-bound and synchronous; callers run it on the blocking
/// pool for large inputs. (No mockall mock: its callback argument defeats the macro; tests
/// use the real adapter or a small fake.)
pub trait HtmlSections: Send + Sync {
    /// Sanitizes `html` (no script, no event handlers, no `javascript:` URLs, only safe
    /// styles with bounded lengths, pictures only from the service itself or `data:` URLs,
    /// any other one replaced by a placeholder naming its address) and splits it into sections: every top-level block (`h1`–`h6`, `p`, `ul`,
    /// `ol`, `table`, `blockquote`, `pre`, `figure`, `hr`, `div`) is one; runs of inline
    /// content and bare text between blocks are wrapped in a `<p>`; container elements
    /// (`section`, `article`, `main`, `header`, `footer`, `aside`, `nav`, `body`, `html`) are
    /// unwrapped. A block keeps its `data-chunk-id` when it is a valid `ChunkId` not already
    /// used earlier in the document; every other block gets `new_id()` (asked again, or
    /// suffixed, while its answer is taken): the ids of the result are unique, which callers
    /// writing the sections out one by one rely on. `data-chunk-id` on
    /// anything but a section's root is removed. Whitespace-only input gives no sections.
    /// MUST be idempotent: sectioning the `to_html()` of its own output gives the same
    /// sections.
    fn sectionize(&self, html: &str, new_id: &mut dyn FnMut() -> ChunkId) -> Result<Vec<Section>, HtmlError>;

    /// `sectionize`, handing each section to `each` in document order instead of returning
    /// them all, so that a caller that consumes them (writes a version's HTML) never holds
    /// them all. The sections MUST be those `sectionize` returns (with the same answers of `new_id`). On an
    /// error, the sections already handed over are not a document: the caller drops them.
    /// An error from `each` stops the work at once and is returned.
    fn sectionize_each(
        &self,
        html: &str,
        new_id: &mut dyn FnMut() -> ChunkId,
        each: &mut dyn FnMut(Section) -> Result<(), HtmlError>,
    ) -> Result<(), HtmlError> {
        for s in self.sectionize(html, new_id)? {
            each(s)?;
        }
        Ok(())
    }

    /// `sectionize_each`, answering what sanitizing changed that a reader would miss (the
    /// default reports nothing).
    fn sectionize_reporting(
        &self,
        html: &str,
        new_id: &mut dyn FnMut() -> ChunkId,
        each: &mut dyn FnMut(Section) -> Result<(), HtmlError>,
    ) -> Result<SanitizeReport, HtmlError> {
        self.sectionize_each(html, new_id, each).map(|()| SanitizeReport::default())
    }
}

/// The current state of a session's document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentRecord {
    pub owner: Owner,
    pub session_id: SessionId,
    pub html: String,
    pub version_id: Option<String>,
    pub section_count: i64,
    /// The session's title, when it has one.
    pub title: Option<String>,
    pub created_at: Millis,
    pub updated_at: Millis,
}

/// A stored version of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionRecord {
    pub version_id: String,
    pub html: String,
    pub section_count: i64,
    /// What made it: `upload`, `save`, `chat`, `revert`, `template`.
    pub source: String,
    pub created_at: Millis,
}

/// A new version to store as the document's current state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewVersion {
    pub version_id: String,
    pub html: String,
    pub section_count: i64,
    pub source: String,
    /// A title for the session when it has none yet (e.g. the uploaded file's name).
    pub title: Option<String>,
    pub now: Millis,
}

/// What `commit_version` answers when the document moved on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommitOutcome {
    Committed(DocumentRecord),
    /// `expected_version` was given and is not the current version.
    Stale {
        current_version: Option<String>,
    },
}

#[cfg_attr(feature = "mocks", mockall::automock)]
#[async_trait::async_trait]
pub trait DocumentStore: Send + Sync {
    /// The session's document; `None` when the session does not exist for this owner.
    async fn document(&self, owner: Owner, session: &SessionId) -> Result<Option<DocumentRecord>, StoreError>;

    /// In one transaction: creates the session on first use, stores `version` as a new
    /// version and makes it current. With `expected_version = Some(v)` it MUST commit only
    /// when the current version is `v` (compare-and-swap; `Some(None)` means "the session
    /// has no document yet"), else answer `Stale` and change nothing.
    async fn commit_version(
        &self,
        owner: Owner,
        session: &SessionId,
        expected_version: Option<Option<String>>,
        version: &NewVersion,
    ) -> Result<CommitOutcome, StoreError>;

    /// `commit_version` taking the version by value: the committed record's `html` is the
    /// version's own string, not a copy, and the adapter SHOULD write it without copying it
    /// either (a 50 MB upload). Same contract as `commit_version`.
    async fn commit_new_version(
        &self,
        owner: Owner,
        session: &SessionId,
        expected_version: Option<Option<String>>,
        version: NewVersion,
    ) -> Result<CommitOutcome, StoreError> {
        self.commit_version(owner, session, expected_version, &version).await
    }

    /// `commit_version` for a chat job's turn. In the same transaction, and only while the
    /// job is in progress, it records `version` as the job's commit; `None` when the job is
    /// not in progress (cancelled, or taken away), and then nothing is written. Once this has
    /// committed, `JobStore::update_job` MUST refuse to cancel the job, and recovery MUST NOT
    /// run its turn again (that would apply the changes twice).
    async fn commit_job_version(
        &self,
        job_id: &str,
        owner: Owner,
        session: &SessionId,
        expected_version: Option<Option<String>>,
        version: &NewVersion,
    ) -> Result<Option<CommitOutcome>, StoreError>;

    /// One page of the versions of the session's document, newest first (ties by version id,
    /// descending), without their HTML, starting after `page.after` (its number a
    /// `created_at`, its id a version id). MUST read through an index that starts with the
    /// owner and the session.
    async fn versions(
        &self,
        owner: Owner,
        session: &SessionId,
        page: &PageRequest,
    ) -> Result<Page<VersionRecord>, StoreError>;

    async fn version(
        &self,
        owner: Owner,
        session: &SessionId,
        version_id: &str,
    ) -> Result<Option<VersionRecord>, StoreError>;

    /// The HTML of several versions of the owner's sessions, by version id (a version not
    /// found is left out): what a listing of jobs shows, read in a few queries rather than a
    /// few per job. The default reads them one by one.
    async fn versions_html(
        &self,
        owner: Owner,
        versions: &[(SessionId, String)],
    ) -> Result<std::collections::HashMap<String, String>, StoreError> {
        let mut out = std::collections::HashMap::with_capacity(versions.len());
        for (session, id) in versions {
            if let Some(v) = self.version(owner, session, id).await? {
                out.insert(v.version_id, v.html);
            }
        }
        Ok(out)
    }

    /// Deletes the session and everything stored with it. `false` when it did not exist.
    async fn delete_session(&self, owner: Owner, session: &SessionId) -> Result<bool, StoreError>;
}

/// An image found in a converted file. The HTML refers to it as `src="{placeholder}"`; the
/// caller stores the bytes and rewrites the reference to the image's URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractedImage {
    pub placeholder: String,
    pub content_type: String,
    pub bytes: Vec<u8>,
}

/// A converted file: HTML (not yet sanitized or sectioned), its images, and what was lost.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Converted {
    pub html: String,
    pub images: Vec<ExtractedImage>,
    pub warnings: Vec<String>,
    /// The title the file states of itself (DOCX core properties, Markdown front matter,
    /// an HTML `<title>`), as written; the caller cleans it.
    pub title: Option<String>,
    /// The file's tracked changes (DOCX revisions), when it has any: `html` and `images` are
    /// the document with all of them accepted, this the other reading.
    pub tracked: Option<TrackedChanges>,
    /// The Redline job whose pending changes this file is the tracked export of (the DOCX
    /// custom property `RedlineJobId`, docs/api.md, "The Word round trip"): uploaded back, it
    /// settles that job.
    pub origin_job: Option<String>,
}

/// A file's tracked changes, read the other way (docs/conversion.md, "Tracked changes").
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TrackedChanges {
    /// The document with every change rejected: as it was before them.
    pub original: Box<Converted>,
    /// What they are, in words: "2 insertions and 1 deletion by Ann Lee".
    pub summary: String,
    /// Who made them, paragraph by paragraph.
    pub who: Authorship,
}

/// Who made a file's tracked changes, paragraph by paragraph: each paragraph that has any,
/// read with them accepted and read with them rejected. A change proposed from the file
/// names the authors and dates of the paragraphs it shows (docs/api.md, "Upload").
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Authorship {
    pub accepted: Vec<Attributed>,
    pub original: Vec<Attributed>,
}

/// The tracked changes of one paragraph.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Attributed {
    /// The paragraph's text, whitespace collapsed.
    pub text: String,
    /// Who made its tracked changes and when, each once, in the order met.
    pub by: Vec<Reviser>,
}

/// The author and date a revision carries (`w:author`, `w:date`), as written.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Reviser {
    pub author: Option<String>,
    pub date: Option<String>,
}

/// Why a file could not be converted (all answered with 422 and the reason).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    /// The bytes are not what the extension says, or the file is damaged.
    #[error("the file is corrupt or not a valid {format} file: {reason}")]
    Corrupt { format: String, reason: String },
    #[error("the file is encrypted or password-protected")]
    Encrypted,
    #[error("the file is empty")]
    Empty,
    /// e.g. a PDF made only of scanned images.
    #[error("no text could be extracted: {0}")]
    NoText(String),
    /// A zip bomb, too many entries, too deep nesting: refused before it costs memory.
    #[error("the file is too complex to process safely: {0}")]
    TooComplex(String),
}

/// Converts uploaded files to HTML. CPU-bound and synchronous: callers run it on the
/// blocking pool.
#[cfg_attr(feature = "mocks", mockall::automock)]
pub trait DocumentConverter: Send + Sync {
    /// MUST never panic and MUST bound its memory by a small multiple of the input size.
    fn convert(&self, format: redline_domain::formats::SourceFormat, bytes: &[u8]) -> Result<Converted, ConvertError>;
}

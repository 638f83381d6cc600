//! Documents: uploads (convert → sanitize → section), reads, saves from the editor with
//! optimistic concurrency, versions, and deleting a session.

use std::sync::Arc;

use rand::RngCore;
use redline_domain::attachment::TextBlock;
use redline_domain::document::{ChunkId, Document, Section, MAX_SECTIONS};
use redline_domain::formats::{SourceFormat, UnsupportedExtension};
use redline_domain::page::{Page, PageRequest};
use redline_domain::{title, Owner, SessionId};
use redline_ports::documents::{
    Authorship, CommitOutcome, ConvertError, Converted, DocumentRecord, HtmlError, NewVersion, SanitizeReport,
    VersionRecord,
};
use redline_ports::files::ImageRecord;
use redline_ports::{
    BlobError, BlobStore, Clock, DocumentConverter, DocumentStore, FileIndex, HtmlSections, StoreError,
};

/// How an upload meets the session's document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// The upload becomes the document (the default).
    Replace,
    /// The upload's sections are added after the existing ones.
    Append,
}

/// What an upload does with the file's tracked changes (DOCX revisions); either way the
/// upload's warnings say what they were and what was done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TrackedChoice {
    /// The document with every change accepted (the default).
    #[default]
    Accept,
    /// The document as it was before the changes.
    Reject,
    /// The document as it was before the changes, and the changes proposed for review
    /// ([`Uploaded::revised`]; the chat's `propose_revisions` makes them a turn awaiting
    /// approval). Replace mode only.
    Review,
}

/// How an upload is loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UploadOptions {
    pub mode: OpenMode,
    /// Index the document for search at once.
    pub index: bool,
    pub tracked: TrackedChoice,
}

#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    #[error("session not found")]
    NotFound,
    #[error("version not found")]
    VersionNotFound,
    #[error(transparent)]
    Unsupported(#[from] UnsupportedExtension),
    #[error(transparent)]
    Convert(#[from] ConvertError),
    #[error("the HTML is nested too deeply")]
    TooDeep,
    /// The document would have more than `limit` sections (`MAX_SECTIONS`).
    #[error("the document would have more than {limit} sections")]
    TooManySections { limit: usize },
    /// Saving no content over a document that has content (400, document unchanged).
    #[error("refusing to empty a document that has content")]
    WouldEmpty,
    /// `base_version_id` is not the current version (409).
    #[error("stale base version")]
    Stale { current_version: Option<String> },
    /// An append was built again [`APPEND_ATTEMPTS`] times and each time another change was
    /// committed first (409).
    #[error("the document kept changing during the append")]
    KeptChanging,
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The blob store failed (images of an upload, files of a deleted session).
    #[error(transparent)]
    Blob(#[from] BlobError),
    /// No image has this id (or its bytes are gone).
    #[error("image not found")]
    ImageNotFound,
    /// A picture added by hand in a format browsers do not show (415).
    #[error("not a picture browsers show")]
    NotAPicture,
    #[error("worker failed: {0}")]
    Worker(String),
}

pub type DocumentResult<T> = Result<T, DocumentError>;

impl From<HtmlError> for DocumentError {
    fn from(e: HtmlError) -> Self {
        match e {
            HtmlError::TooDeep => DocumentError::TooDeep,
            HtmlError::TooManySections { limit } => DocumentError::TooManySections { limit },
        }
    }
}

/// The path under which images are served: `GET {IMAGE_PATH}{image_id}`, without
/// authorization (the id is the capability). Stored HTML names them by this path alone.
pub use redline_domain::image_urls::{is_image_id, IMAGE_PATH};

/// Builds of an appending upload before a document that keeps changing under it gives 409.
/// Appends to one session at the same moment each win one round, so this many land
/// together; each retry waits a little, at random, to let the others through.
pub const APPEND_ATTEMPTS: u32 = 16;

/// Where extracted images go: their bytes to the blob store under `images/<id>`, their owner
/// and session to the file index; the HTML refers to them as `/v1/documents/images/{id}`
/// (the API answers them under the public base URL).
pub struct ImageStorage {
    pub blobs: Arc<dyn BlobStore>,
    pub files: Arc<dyn FileIndex>,
}

/// A stored image, ready to serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageBytes {
    pub content_type: String,
    pub bytes: bytes::Bytes,
}

/// The blob key of an image.
pub fn image_key(image_id: &str) -> String {
    format!("images/{image_id}")
}

/// The blob key of a rendered export.
pub fn export_key(export_id: &str) -> String {
    format!("exports/{export_id}")
}

/// A fresh image id: `img_` + 32 hex characters (128 random bits, an unguessable capability).
pub fn new_image_id() -> String {
    let mut bytes = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("img_{}", hex::encode(bytes))
}

/// An image found in an uploaded file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageInfo {
    pub content_type: String,
    pub size_bytes: usize,
}

/// What an upload produced.
#[derive(Debug)]
pub struct Uploaded {
    pub document: DocumentRecord,
    pub images: Vec<ImageInfo>,
    pub warnings: Vec<String>,
    /// The text of the uploaded file's sections (for indexing it with `?index=true`).
    pub blocks: Vec<TextBlock>,
    /// Under [`TrackedChoice::Review`], the file with its tracked changes accepted; `None`
    /// when it had none.
    pub revised: Option<Revised>,
}

/// A file with its tracked changes accepted, and what they were.
#[derive(Debug, Clone)]
pub struct Revised {
    /// Sanitized sections.
    pub sections: Vec<Section>,
    /// The changes in words.
    pub summary: String,
    /// Who made them, paragraph by paragraph.
    pub who: Authorship,
}

pub struct Documents {
    store: Arc<dyn DocumentStore>,
    html: Arc<dyn HtmlSections>,
    converter: Arc<dyn DocumentConverter>,
    clock: Arc<dyn Clock>,
    images: ImageStorage,
}

/// A fresh chunk id: `c` + 12 hex characters.
pub fn new_chunk_id() -> ChunkId {
    let mut bytes = [0u8; 6];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    ChunkId::parse(&format!("c{}", hex::encode(bytes))).unwrap_or_else(new_chunk_id)
}

/// A fresh version id.
pub fn new_version_id() -> String {
    let mut bytes = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("v_{}", hex::encode(bytes))
}

impl Documents {
    pub fn new(
        store: Arc<dyn DocumentStore>,
        html: Arc<dyn HtmlSections>,
        converter: Arc<dyn DocumentConverter>,
        clock: Arc<dyn Clock>,
        images: ImageStorage,
    ) -> Self {
        Self { store, html, converter, clock, images }
    }

    /// Sanitizes and sections new HTML on the blocking pool: more than [`MAX_SECTIONS`]
    /// sections is refused (as soon as the next one is found).
    pub async fn sectionize(&self, html: String) -> DocumentResult<Vec<Section>> {
        self.sectionize_at_most(html, MAX_SECTIONS).await
    }

    /// Checks that `html` makes a document this service keeps (at most `MAX_SECTIONS`
    /// sections, not nested too deeply) without keeping its sections; gives it back.
    pub async fn check(&self, html: String) -> DocumentResult<String> {
        Ok(self.sectionize_into(html, MAX_SECTIONS, (), |(), _| {}).await?.0)
    }

    /// How many sections `html` makes, refusing what [`Documents::check`] refuses.
    pub async fn count_sections(&self, html: String) -> DocumentResult<usize> {
        Ok(self.sectionize_into(html, MAX_SECTIONS, 0usize, |n, _| *n += 1).await?.1)
    }

    /// `sectionize`, with what sanitizing changed (for an upload's warnings).
    async fn sectionize_reported(&self, html: String) -> DocumentResult<(Vec<Section>, SanitizeReport)> {
        let (_, sections, report) = self.sectionize_into(html, MAX_SECTIONS, Vec::new(), Vec::push).await?;
        Ok((sections, report))
    }

    /// Sections a stored version: any number (it may predate the limit).
    async fn sectionize_stored(&self, html: String) -> DocumentResult<Vec<Section>> {
        self.sectionize_at_most(html, usize::MAX).await
    }

    async fn sectionize_at_most(&self, html: String, limit: usize) -> DocumentResult<Vec<Section>> {
        Ok(self.sectionize_into(html, limit, Vec::new(), Vec::push).await?.1)
    }

    /// Sections `html` on the blocking pool, giving each section to `add` and refusing a
    /// document of more than `limit`; gives back the HTML, what `add` made and what
    /// sanitizing changed.
    async fn sectionize_into<S: Send + 'static>(
        &self,
        html: String,
        limit: usize,
        mut into: S,
        add: fn(&mut S, Section),
    ) -> DocumentResult<(String, S, SanitizeReport)> {
        let sectioner = self.html.clone();
        tokio::task::spawn_blocking(move || {
            let mut count = 0usize;
            sectioner
                .sectionize_reporting(&html, &mut new_chunk_id, &mut |s| {
                    if count >= limit {
                        return Err(HtmlError::TooManySections { limit });
                    }
                    count += 1;
                    add(&mut into, s);
                    Ok(())
                })
                .map(|report| (html, into, report))
        })
        .await
        .map_err(|e| DocumentError::Worker(e.to_string()))?
        .map_err(DocumentError::from)
    }

    pub async fn get(&self, owner: Owner, session: &SessionId) -> DocumentResult<DocumentRecord> {
        self.store.document(owner, session).await?.ok_or(DocumentError::NotFound)
    }

    /// The current document as sections (an empty document when the session is new).
    pub async fn current(
        &self,
        owner: Owner,
        session: &SessionId,
    ) -> DocumentResult<(Option<DocumentRecord>, Document)> {
        let record = self.store.document(owner, session).await?;
        let sections = match &record {
            Some(r) if !r.html.trim().is_empty() => self.sectionize_stored(r.html.clone()).await?,
            _ => Vec::new(),
        };
        let doc = Document::new(sections).map_err(|e| DocumentError::Worker(e.to_string()))?;
        Ok((record, doc))
    }

    /// Converts an uploaded file and loads it into the session's document. `index`: the
    /// text of the file's sections is wanted (`Uploaded::blocks`, else empty).
    ///
    /// Memory: the file is dropped once converted, and on `Replace` the sections are written
    /// into the version's HTML one by one as the sectioner hands them over, so the upload
    /// never holds the converted HTML, the sections and the version's HTML together.
    pub async fn upload(
        &self,
        owner: Owner,
        session: &SessionId,
        filename: &str,
        bytes: Vec<u8>,
        options: UploadOptions,
    ) -> DocumentResult<Uploaded> {
        let converted = self.convert(filename, bytes).await?;
        self.load(owner, session, filename, converted, options).await
    }

    /// Converts an uploaded file on the blocking pool; nothing is stored.
    pub async fn convert(&self, filename: &str, bytes: Vec<u8>) -> DocumentResult<Converted> {
        let format = SourceFormat::from_filename(filename)?;
        let converter = self.converter.clone();
        Ok(tokio::task::spawn_blocking(move || {
            let converted = converter.convert(format, &bytes);
            drop(bytes);
            converted
        })
        .await
        .map_err(|e| DocumentError::Worker(e.to_string()))??)
    }

    /// Loads a converted upload into the session's document ([`Documents::upload`]).
    pub async fn load(
        &self,
        owner: Owner,
        session: &SessionId,
        filename: &str,
        mut converted: Converted,
        options: UploadOptions,
    ) -> DocumentResult<Uploaded> {
        let UploadOptions { mode, index, tracked } = options;
        // Never a silent merge: what the tracked changes were, and which reading was loaded.
        let mut said = None;
        let mut revised = None;
        if let Some(changes) = converted.tracked.take() {
            let (summary, who) = (changes.summary, changes.who);
            match tracked {
                TrackedChoice::Review if mode == OpenMode::Replace => {
                    revised = Some((std::mem::replace(&mut converted, *changes.original), summary, who));
                }
                TrackedChoice::Accept => said = Some(format!(
                    "The file has tracked changes ({summary}): they are accepted in the document. Upload it with track_changes=reject for the document as it was before them."
                )),
                TrackedChoice::Reject | TrackedChoice::Review => {
                    converted = *changes.original;
                    said = Some(format!(
                        "The file has tracked changes ({summary}): they are rejected, so the document is as it was before them. Upload it with track_changes=accept to take them."
                    ));
                }
            }
        }
        let images = converted
            .images
            .iter()
            .map(|i| ImageInfo { content_type: i.content_type.clone(), size_bytes: i.bytes.len() })
            .collect();
        let (Converted { html, mut warnings, title, .. }, mut pending) = link_images(converted, Vec::new());
        warnings.extend(said);
        // The reading with the changes accepted: its pictures are the document's where they
        // are the same bytes, sectioned now so that nothing is stored if it cannot be.
        let revised = match revised {
            Some((accepted, summary, who)) => {
                let (accepted, all) = link_images(accepted, pending);
                pending = all;
                let (sections, _) = self.sectionize_reported(accepted.html).await?;
                Some(Revised { sections, summary, who })
            }
            _ => None,
        };
        // The file's own title, else its name.
        let title = title.as_deref().and_then(title::clean).or_else(|| title::from_file_name(filename));
        // Everything that can be checked before is checked: then the images are stored, then
        // the version that shows them. A failure on the way removes what was stored.
        let (committed, blocks, report) = match mode {
            OpenMode::Replace => {
                let built = self.build_version(html, index).await?;
                if !built.has_content {
                    return Err(DocumentError::Convert(ConvertError::Empty));
                }
                self.put_images(&pending).await?;
                let version = self.upload_version(built.html, built.count, title.as_deref());
                (self.commit_upload(owner, session, None, version).await, built.blocks, built.report)
            }
            OpenMode::Append => {
                let (new, report) = self.sectionize_reported(html).await?;
                let blocks = if index { TextBlock::of_sections(&new) } else { Vec::new() };
                self.put_images(&pending).await?;
                (self.append(owner, session, new, title.as_deref()).await, blocks, report)
            }
        };
        warnings.extend(sanitize_warning(report));
        let document = match committed {
            Ok(document) => document,
            Err(e) => {
                self.discard_images(&pending).await;
                return Err(e);
            }
        };
        self.record_images(owner, session, &pending).await?;
        Ok(Uploaded { document, images, warnings, blocks, revised })
    }

    /// Both readings of a converted DOCX reviewed in Word (its remaining tracked changes
    /// rejected, and accepted), sectioned; its pictures that are the bytes of one the session's
    /// document `doc` shows take that picture's id. Nothing is stored: [`Documents::keep_images`]
    /// stores the new pictures once the readings are used.
    pub async fn readings(
        &self,
        owner: Owner,
        session: &SessionId,
        doc: &Document,
        converted: Converted,
    ) -> DocumentResult<Readings> {
        let mut known = Vec::new();
        for image_id in crate::exports::referenced_image_ids(&doc.to_html()) {
            let Some(record) = self.images.files.image(&image_id).await? else { continue };
            if record.owner != owner || record.session_id != *session {
                continue;
            }
            match self.images.blobs.get(&image_key(&image_id)).await {
                Ok(bytes) => known.push(PendingImage { image_id, content_type: record.content_type, bytes }),
                Err(BlobError::NotFound) => {}
                Err(e) => return Err(e.into()),
            }
        }
        let shown = known.len();
        let images = converted
            .images
            .iter()
            .map(|i| ImageInfo { content_type: i.content_type.clone(), size_bytes: i.bytes.len() })
            .collect();
        let (mut accepted, tracked) = {
            let mut c = converted;
            let t = c.tracked.take();
            (c, t)
        };
        let (original, summary, who) = match tracked {
            Some(t) => (Some(*t.original), Some(t.summary), t.who),
            None => (None, None, Authorship::default()),
        };
        let warnings = std::mem::take(&mut accepted.warnings);
        let (accepted, pending) = link_images(accepted, known);
        let (original, pending) = match original {
            Some(o) => {
                let (o, p) = link_images(o, pending);
                (Some(o), p)
            }
            None => (None, pending),
        };
        let (accepted, _) = self.sectionize_reported(accepted.html).await?;
        let original = match original {
            Some(o) if !o.html.trim().is_empty() => self.sectionize_reported(o.html).await?.0,
            Some(_) => Vec::new(),
            None => accepted.clone(),
        };
        Ok(Readings {
            original,
            accepted,
            summary,
            who,
            images,
            warnings,
            new_images: pending.into_iter().skip(shown).collect(),
        })
    }

    /// Stores the new pictures of `readings` for the session (before a version shows them).
    pub async fn keep_images(
        &self,
        owner: Owner,
        session: &SessionId,
        readings: &Readings,
        used: &[&[Section]],
    ) -> DocumentResult<()> {
        // A picture only a reading left unused shows is not stored.
        let shown: std::collections::HashSet<String> =
            used.iter().flat_map(|r| r.iter()).flat_map(|s| crate::exports::referenced_image_ids(&s.html)).collect();
        let pending: Vec<PendingImage> =
            readings.new_images.iter().filter(|p| shown.contains(&p.image_id)).cloned().collect();
        self.put_images(&pending).await?;
        self.record_images(owner, session, &pending).await?;
        Ok(())
    }

    /// Records stored pictures as the session's (a session that does not exist: `NotFound`);
    /// when that fails their blobs are removed.
    async fn record_images(
        &self,
        owner: Owner,
        session: &SessionId,
        pending: &[PendingImage],
    ) -> DocumentResult<Vec<ImageRecord>> {
        let now = self.clock.now_ms();
        let records: Vec<ImageRecord> = pending
            .iter()
            .map(|p| ImageRecord {
                image_id: p.image_id.clone(),
                owner,
                session_id: session.clone(),
                content_type: p.content_type.clone(),
                size_bytes: i64::try_from(p.bytes.len()).unwrap_or(i64::MAX),
                created_at: now,
            })
            .collect();
        if let Err(e) = self.images.files.insert_images(&records).await {
            self.discard_images(pending).await;
            return Err(match e {
                StoreError::NotFound => DocumentError::NotFound,
                e => e.into(),
            });
        }
        Ok(records)
    }

    fn upload_version(&self, html: String, count: usize, title: Option<&str>) -> NewVersion {
        NewVersion {
            version_id: new_version_id(),
            html,
            section_count: i64::try_from(count).unwrap_or(i64::MAX),
            source: "upload".to_owned(),
            title: title.map(str::to_owned),
            now: self.clock.now_ms(),
        }
    }

    async fn commit_upload(
        &self,
        owner: Owner,
        session: &SessionId,
        expected: Option<Option<String>>,
        version: NewVersion,
    ) -> DocumentResult<DocumentRecord> {
        match self.store.commit_new_version(owner, session, expected, version).await? {
            CommitOutcome::Committed(document) => Ok(document),
            CommitOutcome::Stale { current_version } => Err(DocumentError::Stale { current_version }),
        }
    }

    /// Appends `new` to the session's document as an upload's version. The version is
    /// committed only over the one it was built on, so that of appends at the same moment
    /// none is lost: a change in between makes it build again on the newer version (at most
    /// [`APPEND_ATTEMPTS`] times). The new sections' ids that the document already uses are
    /// replaced (an upload of the document's own HTML export keeps its `data-chunk-id`s).
    async fn append(
        &self,
        owner: Owner,
        session: &SessionId,
        mut new: Vec<Section>,
        title: Option<&str>,
    ) -> DocumentResult<DocumentRecord> {
        let mut attempt = 1;
        loop {
            let (record, doc) = self.current(owner, session).await?;
            // The version it is built on (the record's HTML is dropped here).
            let base = record.and_then(|r| r.version_id);
            if doc.len().saturating_add(new.len()) > MAX_SECTIONS {
                return Err(DocumentError::TooManySections { limit: MAX_SECTIONS });
            }
            doc.settle_ids(&mut new, None, &mut new_chunk_id);
            let mut built = VersionHtml::new(0, false);
            for s in doc.into_sections() {
                built.push(s);
            }
            for s in &new {
                built.push_html(s);
            }
            if !built.has_content {
                return Err(DocumentError::Convert(ConvertError::Empty));
            }
            let version = self.upload_version(built.html, built.count, title);
            match self.commit_upload(owner, session, Some(base), version).await {
                Err(DocumentError::Stale { .. }) if attempt >= APPEND_ATTEMPTS => {
                    return Err(DocumentError::KeptChanging)
                }
                Err(DocumentError::Stale { .. }) => {
                    let wait = rand::thread_rng().next_u32() % (2 * attempt + 1);
                    tokio::time::sleep(std::time::Duration::from_millis(u64::from(wait))).await;
                    attempt += 1;
                }
                done => return done,
            }
        }
    }

    /// Sanitizes and sections `html` on the blocking pool into the HTML of a version
    /// (`Document::to_html` of its sections), written as the sections come: neither the
    /// sections nor a second copy of the document are kept. The converted HTML is dropped
    /// as soon as it is sectioned. With `index`, the sections' text is kept as blocks.
    async fn build_version(&self, html: String, index: bool) -> DocumentResult<VersionHtml> {
        let sectioner = self.html.clone();
        tokio::task::spawn_blocking(move || {
            // The sections' HTML is the input's plus ids: a little more than the input.
            let mut built = VersionHtml::new(html.len() + html.len() / 8, index);
            let r = sectioner.sectionize_reporting(&html, &mut new_chunk_id, &mut |s| {
                if built.count >= MAX_SECTIONS {
                    return Err(HtmlError::TooManySections { limit: MAX_SECTIONS });
                }
                built.push(s);
                Ok(())
            });
            drop(html);
            r.map(|report| VersionHtml { report, ..built })
        })
        .await
        .map_err(|e| DocumentError::Worker(e.to_string()))?
        .map_err(DocumentError::from)
    }

    async fn put_images(&self, pending: &[PendingImage]) -> DocumentResult<()> {
        for (i, image) in pending.iter().enumerate() {
            if let Err(e) = self.images.blobs.put(&image_key(&image.image_id), image.bytes.clone()).await {
                self.discard_images(&pending[..i]).await;
                return Err(e.into());
            }
        }
        Ok(())
    }

    /// Best-effort removal of the blobs of an upload that did not complete (the failure
    /// being reported is the one that stopped the upload; a blob left here is unreachable,
    /// as no row names it).
    async fn discard_images(&self, pending: &[PendingImage]) {
        for image in pending {
            if let Err(e) = self.images.blobs.delete(&image_key(&image.image_id)).await {
                tracing::warn!(image_id = %image.image_id, error = %e, "could not remove the image of a failed upload");
            }
        }
    }

    /// An image by its id, for `GET /v1/documents/images/{image_id}` (no owner: the id is
    /// the capability).
    pub async fn image(&self, image_id: &str) -> DocumentResult<ImageBytes> {
        if !is_image_id(image_id) {
            return Err(DocumentError::ImageNotFound);
        }
        let record = self.images.files.image(image_id).await?.ok_or(DocumentError::ImageNotFound)?;
        match self.images.blobs.get(&image_key(image_id)).await {
            Ok(bytes) => Ok(ImageBytes { content_type: record.content_type, bytes }),
            Err(BlobError::NotFound) => Err(DocumentError::ImageNotFound),
            Err(e) => Err(e.into()),
        }
    }

    /// Stores a picture a person added to the document by hand (pasted or dropped into a
    /// section) as one of the session's images, which the HTML then names by its path. The
    /// bytes decide the type (PNG, JPEG, GIF, BMP or WebP; anything else is refused); the
    /// session must exist. The caller caps the size.
    pub async fn add_image(
        &self,
        owner: Owner,
        session: &SessionId,
        bytes: bytes::Bytes,
    ) -> DocumentResult<ImageRecord> {
        let content_type = redline_domain::picture::sniff(&bytes).ok_or(DocumentError::NotAPicture)?;
        let pending = [PendingImage { image_id: new_image_id(), content_type: content_type.to_owned(), bytes }];
        self.put_images(&pending).await?;
        let records = self.record_images(owner, session, &pending).await?;
        records.into_iter().next().ok_or(DocumentError::NotFound)
    }

    /// Saves HTML from the editor. Refuses to empty a document that has content; with
    /// `base_version` it saves only over that version (409 otherwise). `title` names a
    /// session that has no title yet (a new document made in the web app).
    pub async fn save(
        &self,
        owner: Owner,
        session: &SessionId,
        html: String,
        base_version: Option<String>,
        title: Option<String>,
    ) -> DocumentResult<DocumentRecord> {
        let sections = self.sectionize(html).await?;
        let doc = Document::new(sections).map_err(|e| DocumentError::Worker(e.to_string()))?;
        let version = NewVersion {
            version_id: new_version_id(),
            html: doc.to_html(),
            section_count: i64::try_from(doc.len()).unwrap_or(i64::MAX),
            source: "save".to_owned(),
            title,
            now: self.clock.now_ms(),
        };
        let mut attempts = 0;
        loop {
            let (existing, existing_doc) = self.current(owner, session).await?;
            if !doc.has_content() && existing_doc.has_content() {
                return Err(DocumentError::WouldEmpty);
            }
            let current = existing.and_then(|r| r.version_id);
            if let Some(base) = &base_version {
                if current.as_ref() != Some(base) {
                    return Err(DocumentError::Stale { current_version: current });
                }
            }
            // Over `base_version` when given. Without one the last save wins, but a save with
            // no content goes only onto the version just found empty: a change committed
            // in between is checked again, so an empty save never wipes content it did not see.
            let expected = match (&base_version, doc.has_content()) {
                (Some(base), _) => Some(Some(base.clone())),
                (None, false) => Some(current),
                (None, true) => None,
            };
            match self.store.commit_version(owner, session, expected, &version).await? {
                CommitOutcome::Committed(document) => return Ok(document),
                CommitOutcome::Stale { .. } if base_version.is_none() && attempts < 8 => attempts += 1,
                CommitOutcome::Stale { current_version } => return Err(DocumentError::Stale { current_version }),
            }
        }
    }

    /// Makes `html` (sanitized and sectioned here) the session's document as a new version
    /// made by `source`, creating the session on first use. `title` names a session that has
    /// no title yet.
    pub async fn commit_html(
        &self,
        owner: Owner,
        session: &SessionId,
        html: String,
        source: &str,
        title: Option<String>,
    ) -> DocumentResult<DocumentRecord> {
        let doc = Document::new(self.sectionize(html).await?).map_err(|e| DocumentError::Worker(e.to_string()))?;
        let version = NewVersion {
            version_id: new_version_id(),
            html: doc.to_html(),
            section_count: i64::try_from(doc.len()).unwrap_or(i64::MAX),
            source: source.to_owned(),
            title,
            now: self.clock.now_ms(),
        };
        match self.store.commit_version(owner, session, None, &version).await? {
            CommitOutcome::Committed(document) => Ok(document),
            CommitOutcome::Stale { current_version } => Err(DocumentError::Stale { current_version }),
        }
    }

    /// Commits `doc` as a new version made by `source`, only over the version `base` (409
    /// otherwise).
    pub async fn commit_over(
        &self,
        owner: Owner,
        session: &SessionId,
        doc: &Document,
        base: Option<String>,
        source: &str,
    ) -> DocumentResult<DocumentRecord> {
        let version = NewVersion {
            version_id: new_version_id(),
            html: doc.to_html(),
            section_count: i64::try_from(doc.len()).unwrap_or(i64::MAX),
            source: source.to_owned(),
            title: None,
            now: self.clock.now_ms(),
        };
        match self.store.commit_version(owner, session, Some(base), &version).await? {
            CommitOutcome::Committed(document) => Ok(document),
            CommitOutcome::Stale { current_version } => Err(DocumentError::Stale { current_version }),
        }
    }

    /// One page of the document's versions, newest first (404 when the session does not
    /// exist).
    pub async fn versions(
        &self,
        owner: Owner,
        session: &SessionId,
        page: &PageRequest,
    ) -> DocumentResult<Page<VersionRecord>> {
        if self.store.document(owner, session).await?.is_none() {
            return Err(DocumentError::NotFound);
        }
        Ok(self.store.versions(owner, session, page).await?)
    }

    pub async fn version(&self, owner: Owner, session: &SessionId, version_id: &str) -> DocumentResult<VersionRecord> {
        self.store.version(owner, session, version_id).await?.ok_or(DocumentError::VersionNotFound)
    }

    /// Makes an earlier version the document again, as a new version with source `restore`:
    /// the history keeps every version in between. With `base_version` it restores only over
    /// that version (409 otherwise).
    pub async fn restore(
        &self,
        owner: Owner,
        session: &SessionId,
        version_id: &str,
        base_version: Option<String>,
    ) -> DocumentResult<DocumentRecord> {
        let earlier = self.version(owner, session, version_id).await?;
        let version = NewVersion {
            version_id: new_version_id(),
            html: earlier.html,
            section_count: earlier.section_count,
            source: "restore".to_owned(),
            title: None,
            now: self.clock.now_ms(),
        };
        match self.store.commit_version(owner, session, base_version.map(Some), &version).await? {
            CommitOutcome::Committed(document) => Ok(document),
            CommitOutcome::Stale { current_version } => Err(DocumentError::Stale { current_version }),
        }
    }

    /// Deletes the session with everything stored with it: its blobs (images, exports)
    /// first, so that a failure leaves the session in place to delete again, then the rows.
    pub async fn delete_session(&self, owner: Owner, session: &SessionId) -> DocumentResult<()> {
        let files = self.images.files.session_files(owner, session).await?;
        let keys =
            files.image_ids.iter().map(|id| image_key(id)).chain(files.export_ids.iter().map(|id| export_key(id)));
        for key in keys {
            self.images.blobs.delete(&key).await?;
        }
        if self.store.delete_session(owner, session).await? {
            Ok(())
        } else {
            Err(DocumentError::NotFound)
        }
    }
}

/// A version's HTML written section by section: `Document::to_html` of the sections pushed,
/// with what `Document::len` and `Document::has_content` would answer.
struct VersionHtml {
    html: String,
    count: usize,
    has_content: bool,
    /// The text of the sections pushed (`TextBlock::of_sections`), when wanted.
    blocks: Vec<TextBlock>,
    keep_blocks: bool,
    /// What sanitizing changed.
    report: SanitizeReport,
}

impl VersionHtml {
    fn new(capacity: usize, keep_blocks: bool) -> Self {
        Self {
            html: String::with_capacity(capacity),
            count: 0,
            has_content: false,
            blocks: Vec::new(),
            keep_blocks,
            report: SanitizeReport::default(),
        }
    }

    fn push(&mut self, section: Section) {
        self.push_html(&section);
        if self.keep_blocks {
            self.blocks.extend(TextBlock::of_section(section));
        }
    }

    /// `push` without keeping the section's text.
    fn push_html(&mut self, section: &Section) {
        self.html.push_str(&section.html);
        self.html.push('\n');
        self.count += 1;
        self.has_content |= section.shows_content();
    }
}

/// The upload warning of what sanitizing changed, if anything a reader would miss.
fn sanitize_warning(report: SanitizeReport) -> Option<String> {
    match report.remote_images {
        0 => None,
        1 => Some(
            "1 picture from another address was replaced by a placeholder naming that address \
             (a document shows only its own images)"
                .to_owned(),
        ),
        n => Some(format!(
            "{n} pictures from other addresses were replaced by placeholders naming those addresses \
             (a document shows only its own images)"
        )),
    }
}

/// An extracted image given its id and URL, not yet stored.
/// The two readings of a DOCX reviewed in Word ([`Documents::readings`]).
#[derive(Debug)]
pub struct Readings {
    /// The file with its remaining tracked changes rejected: what the reviewer decided.
    pub original: Vec<Section>,
    /// The file with its remaining tracked changes accepted.
    pub accepted: Vec<Section>,
    /// What the remaining tracked changes are, in words; `None` when none remain.
    pub summary: Option<String>,
    /// Who made them, paragraph by paragraph.
    pub who: Authorship,
    /// The file's pictures, in document order.
    pub images: Vec<ImageInfo>,
    /// What the conversion could not keep.
    pub warnings: Vec<String>,
    new_images: Vec<PendingImage>,
}

#[derive(Debug, Clone)]
struct PendingImage {
    image_id: String,
    content_type: String,
    bytes: bytes::Bytes,
}

/// Gives every extracted image an id and points its references in the HTML at
/// `/v1/documents/images/{id}`. An image
/// of the same bytes as one of `pending` (another reading of the same file) takes its id;
/// answers `pending` with the new images added.
fn link_images(mut converted: Converted, mut pending: Vec<PendingImage>) -> (Converted, Vec<PendingImage>) {
    pending.reserve(converted.images.len());
    for image in std::mem::take(&mut converted.images) {
        if let Some(known) = pending.iter().find(|p| p.bytes.as_ref() == image.bytes.as_slice()) {
            let url = format!("{IMAGE_PATH}{}", known.image_id);
            converted.html =
                converted.html.replace(&format!("src=\"{}\"", image.placeholder), &format!("src=\"{url}\""));
            continue;
        }
        let image_id = new_image_id();
        let url = format!("{IMAGE_PATH}{image_id}");
        // Match the whole attribute value: `redline-image:1` must not hit `redline-image:10`.
        converted.html = converted.html.replace(&format!("src=\"{}\"", image.placeholder), &format!("src=\"{url}\""));
        pending.push(PendingImage { image_id, content_type: image.content_type, bytes: image.bytes.into() });
    }
    (converted, pending)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_matched_by_their_whole_placeholder() {
        let image = |n: usize| redline_ports::documents::ExtractedImage {
            placeholder: format!("redline-image:{n}"),
            content_type: "image/png".into(),
            bytes: vec![n as u8],
        };
        let converted = Converted {
            html: r#"<img src="redline-image:1"><img src="redline-image:10"><p>redline-image:1</p>"#.into(),
            images: (0..11).map(image).collect(),
            warnings: vec![],
            ..Converted::default()
        };
        let (converted, pending) = link_images(converted, Vec::new());
        let html = converted.html;
        assert_eq!(pending.len(), 11);
        let url = |n: usize| format!("/v1/documents/images/{}", pending[n].image_id);
        assert!(html.contains(&format!(r#"<img src="{}"><img src="{}">"#, url(1), url(10))), "{html}");
        assert!(html.contains("<p>redline-image:1</p>"));
        assert_eq!(pending[10].bytes.as_ref(), &[10u8]);
        assert!(pending.iter().all(|p| is_image_id(&p.image_id)));
    }

    #[test]
    fn image_ids_are_unguessable_and_checked() {
        let a = new_image_id();
        assert!(is_image_id(&a), "{a}");
        assert_ne!(a, new_image_id());
        assert_eq!(a.len(), 4 + 32);
        for bad in ["", "img_", "img_xyz", "../images/img_00", &format!("{a}0"), &a.replace("img_", "imh_")] {
            assert!(!is_image_id(bad), "{bad}");
        }
        assert_eq!(image_key(&a), format!("images/{a}"));
    }

    #[test]
    fn titles_and_ids() {
        let a = new_chunk_id();
        assert_eq!(a.as_str().len(), 13);
        assert_ne!(a, new_chunk_id());
        assert!(new_version_id().starts_with("v_"));
    }
}

//! Documents: uploads (convert → sanitize → section), reads, saves from the editor with
//! optimistic concurrency, versions, and deleting a session.

use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use rand::RngCore;
use redline_domain::document::{ChunkId, Document, Section};
use redline_domain::formats::{SourceFormat, UnsupportedExtension};
use redline_domain::{Owner, SessionId};
use redline_ports::documents::{
    CommitOutcome, ConvertError, Converted, DocumentRecord, HtmlError, NewVersion, VersionRecord,
};
use redline_ports::{Clock, DocumentConverter, DocumentStore, HtmlSections, StoreError};

/// How an upload meets the session's document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// The upload becomes the document (the default).
    Replace,
    /// The upload's sections are added after the existing ones.
    Append,
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
    /// Saving no content over a document that has content (400, document unchanged).
    #[error("refusing to empty a document that has content")]
    WouldEmpty,
    /// `base_version_id` is not the current version (409).
    #[error("stale base version")]
    Stale { current_version: Option<String> },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("worker failed: {0}")]
    Worker(String),
}

pub type DocumentResult<T> = Result<T, DocumentError>;

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
}

pub struct Documents {
    store: Arc<dyn DocumentStore>,
    html: Arc<dyn HtmlSections>,
    converter: Arc<dyn DocumentConverter>,
    clock: Arc<dyn Clock>,
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
    ) -> Self {
        Self { store, html, converter, clock }
    }

    /// Sanitizes and sections HTML on the blocking pool.
    pub async fn sectionize(&self, html: String) -> DocumentResult<Vec<Section>> {
        let sectioner = self.html.clone();
        tokio::task::spawn_blocking(move || sectioner.sectionize(&html, &mut new_chunk_id))
            .await
            .map_err(|e| DocumentError::Worker(e.to_string()))?
            .map_err(|e| match e {
                HtmlError::TooDeep => DocumentError::TooDeep,
            })
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
            Some(r) if !r.html.trim().is_empty() => self.sectionize(r.html.clone()).await?,
            _ => Vec::new(),
        };
        let doc = Document::new(sections).map_err(|e| DocumentError::Worker(e.to_string()))?;
        Ok((record, doc))
    }

    /// Converts an uploaded file and loads it into the session's document.
    pub async fn upload(
        &self,
        owner: Owner,
        session: &SessionId,
        filename: &str,
        bytes: Vec<u8>,
        mode: OpenMode,
    ) -> DocumentResult<Uploaded> {
        let format = SourceFormat::from_filename(filename)?;
        let converter = self.converter.clone();
        let converted = tokio::task::spawn_blocking(move || converter.convert(format, &bytes))
            .await
            .map_err(|e| DocumentError::Worker(e.to_string()))??;
        let images = converted
            .images
            .iter()
            .map(|i| ImageInfo { content_type: i.content_type.clone(), size_bytes: i.bytes.len() })
            .collect();
        let Converted { html, warnings, .. } = inline_images(converted);
        let new_sections = self.sectionize(html).await?;
        let mut doc = match mode {
            OpenMode::Replace => Document::default(),
            OpenMode::Append => self.current(owner, session).await?.1,
        };
        doc.append(new_sections).map_err(|e| DocumentError::Worker(e.to_string()))?;
        if !doc.has_content() {
            return Err(DocumentError::Convert(ConvertError::Empty));
        }
        let version = NewVersion {
            version_id: new_version_id(),
            html: doc.to_html(),
            section_count: i64::try_from(doc.len()).unwrap_or(i64::MAX),
            source: "upload".to_owned(),
            title: Some(title_of(filename)),
            now: self.clock.now_ms(),
        };
        match self.store.commit_version(owner, session, None, &version).await? {
            CommitOutcome::Committed(document) => Ok(Uploaded { document, images, warnings }),
            CommitOutcome::Stale { current_version } => Err(DocumentError::Stale { current_version }),
        }
    }

    /// Saves HTML from the editor. Refuses to empty a document that has content; with
    /// `base_version` it saves only over that version (409 otherwise).
    pub async fn save(
        &self,
        owner: Owner,
        session: &SessionId,
        html: String,
        base_version: Option<String>,
    ) -> DocumentResult<DocumentRecord> {
        let sections = self.sectionize(html).await?;
        let doc = Document::new(sections).map_err(|e| DocumentError::Worker(e.to_string()))?;
        let (existing, existing_doc) = self.current(owner, session).await?;
        if !doc.has_content() && existing_doc.has_content() {
            return Err(DocumentError::WouldEmpty);
        }
        if let (Some(base), Some(current)) = (&base_version, &existing) {
            if current.version_id.as_ref() != Some(base) {
                return Err(DocumentError::Stale { current_version: current.version_id.clone() });
            }
        }
        let expected = match (&base_version, &existing) {
            (Some(base), _) => Some(Some(base.clone())),
            (None, _) => None,
        };
        let version = NewVersion {
            version_id: new_version_id(),
            html: doc.to_html(),
            section_count: i64::try_from(doc.len()).unwrap_or(i64::MAX),
            source: "save".to_owned(),
            title: None,
            now: self.clock.now_ms(),
        };
        match self.store.commit_version(owner, session, expected, &version).await? {
            CommitOutcome::Committed(document) => Ok(document),
            CommitOutcome::Stale { current_version } => Err(DocumentError::Stale { current_version }),
        }
    }

    pub async fn versions(&self, owner: Owner, session: &SessionId) -> DocumentResult<Vec<VersionRecord>> {
        if self.store.document(owner, session).await?.is_none() {
            return Err(DocumentError::NotFound);
        }
        Ok(self.store.versions(owner, session).await?)
    }

    pub async fn version(&self, owner: Owner, session: &SessionId, version_id: &str) -> DocumentResult<VersionRecord> {
        self.store.version(owner, session, version_id).await?.ok_or(DocumentError::VersionNotFound)
    }

    /// Deletes the session with everything stored with it.
    pub async fn delete_session(&self, owner: Owner, session: &SessionId) -> DocumentResult<()> {
        if self.store.delete_session(owner, session).await? {
            Ok(())
        } else {
            Err(DocumentError::NotFound)
        }
    }
}

/// The session title an upload gives: the file name without folders and extension.
fn title_of(filename: &str) -> String {
    let base = filename.rsplit(['/', '\\']).next().unwrap_or(filename);
    let stem = base.rsplit_once('.').map_or(base, |(s, _)| s);
    stem.chars().filter(|c| !c.is_control()).take(200).collect()
}

/// Until the blob store lands (documents issue, part 3), extracted images are embedded as
/// `data:` URLs so that nothing of the file is lost.
fn inline_images(mut converted: Converted) -> Converted {
    for image in std::mem::take(&mut converted.images) {
        let url = format!("data:{};base64,{}", image.content_type, STANDARD.encode(&image.bytes));
        // Match the whole attribute value: `redline-image:1` must not hit `redline-image:10`.
        converted.html = converted.html.replace(&format!("src=\"{}\"", image.placeholder), &format!("src=\"{url}\""));
    }
    converted
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
        };
        let html = inline_images(converted).html;
        assert!(
            html.contains(r#"<img src="data:image/png;base64,AQ=="><img src="data:image/png;base64,Cg==">"#),
            "{html}"
        );
        assert!(html.contains("<p>redline-image:1</p>"));
    }

    #[test]
    fn titles_and_ids() {
        assert_eq!(title_of("../x/Quarterly Report.final.docx"), "Quarterly Report.final");
        assert_eq!(title_of("noext"), "noext");
        let a = new_chunk_id();
        assert_eq!(a.as_str().len(), 13);
        assert_ne!(a, new_chunk_id());
        assert!(new_version_id().starts_with("v_"));
    }
}

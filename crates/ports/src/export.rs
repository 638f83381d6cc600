//! Rendering a document to a file. Adapter: `redline-export`.

use redline_domain::export::ExportFormat;

/// Why a document could not be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportError {
    #[error("the document could not be rendered as {format}: {reason}")]
    Render { format: &'static str, reason: String },
}

/// Finds an image referenced by the document (`/v1/documents/images/{id}` URLs or `data:`
/// URLs are the adapter's business; this answers the bytes of an image id).
pub trait ImageSource: Send + Sync {
    fn image(&self, image_id: &str) -> Option<(String, Vec<u8>)>;
}

/// No images available (they are left out of the export).
pub struct NoImages;

impl ImageSource for NoImages {
    fn image(&self, _image_id: &str) -> Option<(String, Vec<u8>)> {
        None
    }
}

/// Renders sectioned, sanitized HTML. CPU-bound and synchronous: callers run it on the
/// blocking pool.
pub trait DocumentExporter: Send + Sync {
    /// MUST never panic. `title` names the document (DOCX/PDF metadata, HTML `<title>`).
    fn export(
        &self,
        html: &str,
        title: &str,
        format: ExportFormat,
        images: &dyn ImageSource,
    ) -> Result<Vec<u8>, ExportError>;

    /// A DOCX of `document` whose changes are Word revisions (docs/export.md, "Tracked
    /// changes"): accepting every revision gives the new document, rejecting every one the
    /// old, and the text outside the changes is what [`DocumentExporter::export`] writes.
    /// MUST never panic.
    fn export_tracked(
        &self,
        document: &TrackedDocument,
        title: &str,
        images: &dyn ImageSource,
    ) -> Result<Vec<u8>, ExportError>;
}

/// A document with proposed changes, in document order: the sections no change touches and,
/// between them, each change's old and new HTML.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TrackedDocument {
    pub parts: Vec<TrackedPart>,
    /// Who the revisions and their comments are credited to.
    pub author: String,
    /// The job whose changes these are, written into the file (the custom property
    /// `RedlineJobId`) so that the file reviewed in Word and uploaded back settles it.
    pub job_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrackedPart {
    /// Sections no change touches.
    Same(String),
    /// One change: `old` is empty for a new section, `new` for a deleted one.
    Changed(TrackedChange),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackedChange {
    pub old: String,
    pub new: String,
    /// When it was proposed, in milliseconds since the epoch.
    pub at_ms: i64,
    /// The explanation given with it (a comment anchored on the change).
    pub comment: Option<String>,
}

impl TrackedDocument {
    /// All the HTML the document shows, old and new (for the pictures it needs).
    pub fn all_html(&self) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                TrackedPart::Same(html) => out.push_str(html),
                TrackedPart::Changed(c) => {
                    out.push_str(&c.old);
                    out.push_str(&c.new);
                }
            }
        }
        out
    }
}

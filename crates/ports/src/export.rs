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
}

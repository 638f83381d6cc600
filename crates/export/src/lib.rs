//! The `DocumentExporter` adapter: renders a document's sectioned, sanitized HTML as DOCX,
//! PDF, HTML, Markdown or plain text. Pure and synchronous (callers run it on the blocking
//! pool); the only outside input is the [`ImageSource`] for `/v1/documents/images/{id}`.
//!
//! HTML is written from the stored body itself (`html.rs`). The other formats parse it
//! once with html5ever (`parse.rs`, bounded against nesting bombs) into a small document
//! model (`model.rs`, built by `build.rs` with `styles.rs` reading what elements and `style`
//! attributes mean) that each writer renders: `docx/` (zip of
//! WordprocessingML parts), `pdf/` (shaped text with bundled and system fonts subset and
//! embedded, a line-breaking layout, lopdf objects), `markdown.rs` and `text.rs`. Table spans are resolved once
//! for all of them (`table.rs`).
//!
//! **Never panics, work bounded by the input:** the parse stops below a nesting limit,
//! the walk below it keeps only text, block nesting is capped, table grids have a budget,
//! and every writer is linear in the model.

mod build;
mod css;
mod docx;
mod html;
mod image;
mod markdown;
mod model;
mod parse;
mod pdf;
mod redline;
mod styles;
mod table;
mod text;
mod xml;

#[cfg(test)]
mod tests_support;

use std::path::PathBuf;
use std::sync::Arc;

use redline_domain::export::ExportFormat;
use redline_ports::{DocumentExporter, ExportError, ImageSource, TrackedDocument};

use pdf::SystemFonts;
pub use pdf::{PageSetup, SYSTEM_FONT_DIR};

/// Renders documents in every [`ExportFormat`].
#[derive(Debug, Default, Clone)]
pub struct FileExporter {
    /// The system fonts PDFs fall back to; `None`: [`SYSTEM_FONT_DIR`], scanned once per
    /// process.
    fonts: Option<Arc<SystemFonts>>,
    /// The page of PDFs (A4, 2 cm margins by default).
    page: PageSetup,
}

/// A rendered file and what it could not keep (one line each, for the log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub bytes: Vec<u8>,
    pub warnings: Vec<String>,
}

impl FileExporter {
    pub fn new() -> Self {
        FileExporter::default()
    }

    /// PDFs fall back to the fonts of these folders (none when empty), scanned once for this
    /// exporter and its clones, the first time a character needs them.
    pub fn with_font_dirs(self, dirs: Vec<PathBuf>) -> Self {
        FileExporter { fonts: Some(SystemFonts::from_dirs(dirs)), ..self }
    }

    /// PDFs on this page (its sizes are kept within bounds).
    pub fn with_page(self, page: PageSetup) -> Self {
        FileExporter { page, ..self }
    }

    /// Renders `html` as `format`, with the warnings of the rendering (today: characters no
    /// font has in a PDF, naming the font package to install).
    pub fn render(
        &self,
        html: &str,
        title: &str,
        format: ExportFormat,
        images: &dyn ImageSource,
    ) -> Result<Rendered, ExportError> {
        let title: String = title.chars().filter(|c| !c.is_control()).collect();
        let title = title.trim();
        let failed = |reason: String| ExportError::Render { format: format.as_str(), reason };
        let done = |bytes: Vec<u8>| Rendered { bytes, warnings: Vec::new() };
        match format {
            ExportFormat::Html => Ok(done(html::export(html, title, images))),
            ExportFormat::Markdown => Ok(done(markdown::export(&build::doc(html)))),
            ExportFormat::Txt => Ok(done(text::export(&build::doc(html)))),
            ExportFormat::Docx => docx::export(&build::doc(html), title, images).map(done).map_err(failed),
            ExportFormat::Pdf => {
                let system = self.fonts.clone().unwrap_or_else(SystemFonts::shared);
                let document = build::doc_with_nested_notes(html);
                let (bytes, warnings) = pdf::export(&document, title, images, system, self.page).map_err(failed)?;
                Ok(Rendered { bytes, warnings })
            }
        }
    }
}

impl DocumentExporter for FileExporter {
    /// The warnings of [`FileExporter::render`] go to the log, one line per export (the
    /// export answer is the file itself, with no room for them).
    fn export(
        &self,
        html: &str,
        title: &str,
        format: ExportFormat,
        images: &dyn ImageSource,
    ) -> Result<Vec<u8>, ExportError> {
        let rendered = self.render(html, title, format, images)?;
        if !rendered.warnings.is_empty() {
            tracing::warn!(format = format.as_str(), warnings = %rendered.warnings.join("; "), "export: text left out");
        }
        Ok(rendered.bytes)
    }

    fn export_tracked(
        &self,
        document: &TrackedDocument,
        title: &str,
        images: &dyn ImageSource,
    ) -> Result<Vec<u8>, ExportError> {
        let title: String = title.chars().filter(|c| !c.is_control()).collect();
        docx::export_tracked(document, title.trim(), images)
            .map_err(|reason| ExportError::Render { format: ExportFormat::Docx.as_str(), reason })
    }
}

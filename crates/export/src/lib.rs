//! The `DocumentExporter` adapter: renders a document's sectioned, sanitized HTML as DOCX,
//! PDF, HTML, Markdown or plain text. Pure and synchronous (callers run it on the blocking
//! pool); the only outside input is the [`ImageSource`] for `/v1/documents/images/{id}`.
//!
//! HTML is written from the stored body itself (`html.rs`). The other formats parse it
//! once with html5ever (`parse.rs`, bounded against nesting bombs) into a small document
//! model (`model.rs`, built by `build.rs` with `styles.rs` reading what elements and `style`
//! attributes mean) that each writer renders: `docx/` (zip of
//! WordprocessingML parts), `pdf/` (lopdf objects, DejaVu fonts subset and embedded, a
//! small line-breaking layout), `markdown.rs` and `text.rs`. Table spans are resolved once
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
mod styles;
mod table;
mod text;
mod xml;

#[cfg(test)]
mod tests_support;

use redline_domain::export::ExportFormat;
use redline_ports::{DocumentExporter, ExportError, ImageSource};

/// Renders documents in every [`ExportFormat`].
#[derive(Debug, Default, Clone, Copy)]
pub struct FileExporter;

impl FileExporter {
    pub fn new() -> Self {
        FileExporter
    }
}

impl DocumentExporter for FileExporter {
    fn export(
        &self,
        html: &str,
        title: &str,
        format: ExportFormat,
        images: &dyn ImageSource,
    ) -> Result<Vec<u8>, ExportError> {
        let title: String = title.chars().filter(|c| !c.is_control()).collect();
        let title = title.trim();
        let failed = |reason: String| ExportError::Render { format: format.as_str(), reason };
        match format {
            ExportFormat::Html => Ok(html::export(html, title, images)),
            ExportFormat::Markdown => Ok(markdown::export(&build::doc(html))),
            ExportFormat::Txt => Ok(text::export(&build::doc(html))),
            ExportFormat::Docx => docx::export(&build::doc(html), title, images).map_err(failed),
            ExportFormat::Pdf => pdf::export(&build::document(html), title, images).map_err(failed),
        }
    }
}

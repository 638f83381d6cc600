//! DOCX: an Office Open XML package written with `zip`. Styles `Heading1`–`Heading6`,
//! `ListParagraph`, `Quote`, `SourceCode`, `Caption`, `Hyperlink` and `TableGrid`; bulleted
//! and numbered lists through `numbering.xml` (nine levels, each ordered list restarting
//! its count); tables with `gridSpan` and `vMerge`; bold, italic, underline, strike,
//! super/subscript, colour (`w:color`), highlight and background shading, font sizes;
//! links as external relationships; pictures as DrawingML inline pictures at their display
//! size (`width`/`height` attributes or `style`, a percentage of the text width);
//! right-to-left paragraphs (`w:bidi`, see `model::paragraph_dir`) and runs of RTL text
//! (`w:rtl`); alignment (`w:jc`, also in table cells); `<mark>` and backgrounds near one of
//! Word's 16 highlight colours as `w:highlight`; ids as bookmarks and `#…` links as
//! `w:hyperlink w:anchor`; notes as real footnotes (`footnotes.xml`).

mod body;
mod highlight;
mod parts;

use std::io::{Cursor, Write};

use redline_ports::ImageSource;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

use crate::model::Doc;
use body::Body;
use parts::{NS_R, NS_W, XML_HEAD};

pub(crate) fn export(doc: &Doc, title: &str, images: &dyn ImageSource) -> Result<Vec<u8>, String> {
    let mut body = Body::new(images);
    body.set_notes(&doc.notes);
    body.document(&doc.blocks);
    let (footnotes, footnote_rels) = body.footnotes(&doc.notes);
    let document = format!(
        "{XML_HEAD}<w:document xmlns:w=\"{NS_W}\" xmlns:r=\"{NS_R}\" \
         xmlns:wp=\"http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing\" \
         xmlns:a=\"http://schemas.openxmlformats.org/drawingml/2006/main\" \
         xmlns:pic=\"http://schemas.openxmlformats.org/drawingml/2006/picture\"><w:body>{}\
         <w:sectPr><w:pgSz w:w=\"{}\" w:h=\"{}\"/><w:pgMar w:top=\"{m}\" w:right=\"{m}\" w:bottom=\"{m}\" w:left=\"{m}\" \
         w:header=\"708\" w:footer=\"708\" w:gutter=\"0\"/></w:sectPr></w:body></w:document>",
        body.out,
        parts::PAGE_W,
        parts::PAGE_H,
        m = parts::MARGIN,
    );
    let mut extensions: Vec<&str> = Vec::new();
    for m in &body.media {
        let ext = m.name.rsplit('.').next().unwrap_or("png");
        if !extensions.contains(&ext) {
            extensions.push(ext);
        }
    }
    let text_parts = [
        ("[Content_Types].xml", parts::content_types(&extensions)),
        ("_rels/.rels", parts::package_rels()),
        ("docProps/core.xml", parts::core(title)),
        ("docProps/app.xml", parts::app()),
        ("word/document.xml", document),
        ("word/_rels/document.xml.rels", parts::document_rels(&body.rels)),
        ("word/styles.xml", parts::styles()),
        ("word/numbering.xml", parts::numbering(&body.nums)),
        ("word/settings.xml", parts::settings()),
        ("word/footnotes.xml", parts::footnotes(&footnotes)),
        ("word/_rels/footnotes.xml.rels", parts::part_rels(&footnote_rels)),
    ];
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    let deflated = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    let stored = SimpleFileOptions::default().compression_method(CompressionMethod::Stored);
    let fail = |e: &dyn std::fmt::Display| format!("writing the package failed: {e}");
    for (name, text) in &text_parts {
        zip.start_file(*name, deflated).map_err(|e| fail(&e))?;
        zip.write_all(text.as_bytes()).map_err(|e| fail(&e))?;
    }
    for m in &body.media {
        zip.start_file(format!("word/media/{}", m.name), stored).map_err(|e| fail(&e))?;
        zip.write_all(&m.bytes).map_err(|e| fail(&e))?;
    }
    Ok(zip.finish().map_err(|e| fail(&e))?.into_inner())
}

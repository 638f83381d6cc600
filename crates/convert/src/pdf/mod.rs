//! PDF: text extracted with `pdf-extract` (through an `OutputDev` that keeps each line's
//! font size and its words' places), laid out as headings, paragraphs, lists (see
//! [`layout`]) and tables (see [`tables`]: ruled from the lines the pages draw, or unruled
//! where columns line up), with superscripts and subscripts, a two-column page drawn row by
//! row read column by column (see [`columns`]), right-to-left lines in logical order (see
//! [`bidi`]).
//!
//! The file is loaded with lopdf 0.47 (it repairs damaged cross-reference tables and
//! bounds decompression), made safe for `pdf-extract` (see [`prepare`]), then read page by
//! page. `pdf-extract` panics on many malformed inputs: every call runs under
//! `catch_unwind`, and a page that fails is skipped with a warning rather than failing the
//! whole file.
//!
//! Pictures (see [`pictures`]) join the flow before the first block below their top edge. A
//! page without text whose pictures were read is a scan: its largest picture stands for the
//! page, followed by its text read by OCR when an [`Ocr`] engine is given (at most
//! [`MAX_OCR_PAGES`] pages a file), with a warning either way.

mod bidi;
mod cmaps;
mod columns;
mod layout;
mod pictures;
mod prepare;
mod tables;

use std::panic::{catch_unwind, AssertUnwindSafe};

use redline_ports::documents::{ConvertError, Converted};
use redline_ports::{Ocr, OcrError};

use layout::{Block, Collector, Placed};

/// The most scanned pages of one file read by OCR (each takes seconds).
pub(crate) const MAX_OCR_PAGES: usize = 100;

const CUT_SHORT: &str = "the file looks cut short (it does not end with %%EOF)";

fn corrupt(reason: impl Into<String>) -> ConvertError {
    ConvertError::Corrupt { format: "PDF".into(), reason: reason.into() }
}

/// The message of a caught panic.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown error".into())
}

/// [`convert_with`] without OCR.
#[cfg(test)]
pub(crate) fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    convert_with(bytes, None)
}

pub(crate) fn convert_with(bytes: &[u8], ocr: Option<&dyn Ocr>) -> Result<Converted, ConvertError> {
    if bytes.is_empty() {
        return Err(ConvertError::Empty);
    }
    // Readers accept the header anywhere in the first kilobyte.
    let head = &bytes[..bytes.len().min(1024)];
    if !head.windows(5).any(|w| w == b"%PDF-") {
        return Err(corrupt("it does not start with a %PDF- header"));
    }
    // A file cut short (an interrupted download or copy) loses its last bytes, and with them
    // the %%EOF marker that ends every complete PDF: a refusal then says so first.
    let tail = &bytes[bytes.len().saturating_sub(1024)..];
    let cut_short = !tail.windows(5).any(|w| w == b"%%EOF");
    let doc = load(bytes).map_err(|e| match e {
        ConvertError::Corrupt { reason, .. } if cut_short => corrupt(format!("{CUT_SHORT}: {reason}")),
        e => e,
    })?;
    let prepared = catch_unwind(AssertUnwindSafe(|| prepare::prepare(doc, bytes.len())))
        .map_err(|p| corrupt(format!("it could not be read ({})", panic_message(&*p))))??;
    let prepare::Prepared { doc, page_count, has_images, mut warnings, pictures, rules } = prepared;

    let mut collector = Collector::default();
    collector.max_chars = layout::char_budget(bytes.len());
    let Extracted { failed, first_failure } = extract(&doc, page_count, &mut collector).map_err(|e| match e {
        ConvertError::TooComplex(_) => ConvertError::TooComplex(format!(
            "the PDF has more than {} characters of text",
            layout::char_budget(bytes.len())
        )),
        e => e,
    })?;
    drop(doc);
    if cut_short {
        warnings.push(format!("{CUT_SHORT}, so some of its text may be missing"));
    }
    if !failed.is_empty() {
        warnings.push(match failed.len() {
            1 => format!("the text of page {} could not be read", failed[0]),
            n if n <= 10 => format!(
                "the text of pages {} could not be read",
                failed.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
            ),
            n => format!("the text of {n} pages could not be read"),
        });
    }

    let text_chars: usize = collector.lines.iter().map(|l| l.text.chars().filter(|c| !c.is_whitespace()).count()).sum();
    if text_chars == 0 && pictures.drawn.is_empty() {
        if collector.undecoded > 0 {
            return Err(ConvertError::NoText(
                "the PDF's fonts do not say which characters they draw (no ToUnicode map), so its text cannot be \
                 extracted"
                    .into(),
            ));
        }
        if has_images {
            return Err(ConvertError::NoText(
                "the PDF holds only images (a scan?) in forms that could not be read, and no text layer; run it through \
                 OCR first"
                    .into(),
            ));
        }
        if failed.len() == page_count {
            let why = first_failure.unwrap_or_else(|| "unknown error".into());
            if cut_short {
                return Err(corrupt(format!("{CUT_SHORT}, and no page could be read ({why})")));
            }
            return Err(ConvertError::NoText(format!("no page's text could be read ({why})")));
        }
        return Err(ConvertError::NoText("the PDF has no text".into()));
    }
    if has_images && pictures.drawn.is_empty() && pictures.warnings.is_empty() && !pictures.decoration {
        warnings.push("the PDF's pictures were not imported".into());
    }
    warnings.extend(pictures.warnings.iter().cloned());
    let (html, images) = compose(&collector.lines, &rules, pictures, ocr, &mut warnings);
    Ok(Converted { html, images, warnings, title: None, tracked: None, origin_job: None })
}

/// A picture in the flow.
struct Shown {
    page: u32,
    top: f32,
    placeholder: String,
}

/// The document: the text's blocks with the pictures among them, scanned pages as their
/// picture and the text OCR reads from it.
fn compose(
    lines: &[layout::Line],
    rules: &[pictures::Rule],
    decoded: pictures::Decoded,
    ocr: Option<&dyn Ocr>,
    warnings: &mut Vec<String>,
) -> (String, Vec<redline_ports::documents::ExtractedImage>) {
    let in_order = columns::reorder(lines.to_vec());
    let tabled = tables::unruled(tables::extract(&in_order, rules));
    drop(in_order);
    let mut blocks = layout::placed_blocks(&tabled.lines, tabled.tables);
    let mut kept = crate::images::Pictures::default();
    let mut refused = None;
    let files: Vec<Option<String>> = decoded
        .files
        .into_iter()
        .map(|p| kept.add_typed(p.bytes, p.content_type).map_err(|r| refused = Some(r)).ok())
        .collect();
    if let Some(refused) = refused {
        warnings.push(refused.warning("PDF"));
    }
    let mut drawn: Vec<(pictures::Drawn, String)> =
        decoded.drawn.into_iter().filter_map(|(d, i)| Some((d, files.get(i)?.clone()?))).collect();
    // Scanned pages: no text, and a picture. The largest picture stands for the page.
    let mut text_pages: Vec<u32> = lines.iter().map(|l| l.page).collect();
    text_pages.dedup();
    let mut scans: Vec<(u32, String, usize)> = Vec::new(); // page, placeholder, file index
    for (d, placeholder) in &drawn {
        if text_pages.binary_search(&d.page).is_ok() {
            continue;
        }
        match scans.last_mut() {
            Some(last) if last.0 == d.page => {}
            _ => scans.push((d.page, placeholder.clone(), usize::MAX)),
        }
    }
    for scan in &mut scans {
        let largest = drawn
            .iter()
            .filter(|(d, _)| d.page == scan.0)
            .max_by(|a, b| a.0.area.total_cmp(&b.0.area))
            .map(|(_, p)| p.clone());
        if let Some(largest) = largest {
            scan.1 = largest;
        }
        scan.2 = kept.images.iter().position(|i| i.placeholder == scan.1).unwrap_or(usize::MAX);
    }
    drawn.retain(|(d, p)| scans.iter().all(|s| s.0 != d.page || &s.1 == p));
    let mut ocr_pages = Vec::new();
    let mut unread_pages = Vec::new();
    let mut unavailable = None;
    for (n, (page, _, index)) in scans.iter().enumerate() {
        let picture = kept.images.get(*index).map(|i| i.bytes.as_slice());
        let text = match (ocr, picture) {
            (Some(ocr), Some(picture)) if n < MAX_OCR_PAGES && unavailable.is_none() => match ocr.read(picture) {
                Ok(text) => text,
                Err(OcrError::Unavailable(why)) => {
                    unavailable = Some(why);
                    String::new()
                }
                Err(e) => {
                    if warnings.len() < 32 {
                        warnings.push(format!("page {page}: {e}"));
                    }
                    String::new()
                }
            },
            _ => String::new(),
        };
        let paragraphs = ocr_paragraphs(&text);
        if paragraphs.is_empty() {
            unread_pages.push(*page);
            continue;
        }
        ocr_pages.push(*page);
        let at = blocks.iter().position(|b| b.page > *page).unwrap_or(blocks.len());
        let ocr_blocks =
            paragraphs.into_iter().map(|p| Placed { block: Block::Paragraph(p), page: *page, y: f32::MAX });
        blocks.splice(at..at, ocr_blocks);
    }
    if !ocr_pages.is_empty() {
        warnings.push(format!(
            "the text of {} was read by OCR from the scanned picture, and may have errors",
            pages_list(&ocr_pages)
        ));
    }
    if !unread_pages.is_empty() {
        let why = match (ocr, &unavailable) {
            (None, _) => "OCR is not available".to_owned(),
            (Some(_), Some(why)) => format!("OCR is not available ({why})"),
            (Some(_), None) => "OCR found no text in it".to_owned(),
        };
        warnings.push(format!(
            "no text could be read from {}: it is a picture (a scan?) and {why}; the picture is kept",
            pages_list(&unread_pages)
        ));
    }
    let mut shown: Vec<Shown> =
        drawn.into_iter().map(|(d, placeholder)| Shown { page: d.page, top: d.top, placeholder }).collect();
    // In page order; on a page, from the top down.
    shown.sort_by(|a, b| a.page.cmp(&b.page).then(a.top.total_cmp(&b.top)));
    let mut out = layout::Html::default();
    let mut next = shown.into_iter().peekable();
    for placed in &blocks {
        while let Some(picture) = next.next_if(|s| s.page < placed.page || (s.page == placed.page && s.top <= placed.y))
        {
            out.close_lists();
            picture_html(&picture.placeholder, &mut out.html);
        }
        out.block(&placed.block);
    }
    out.close_lists();
    for picture in next {
        picture_html(&picture.placeholder, &mut out.html);
    }
    (out.html, kept.images)
}

fn picture_html(placeholder: &str, html: &mut String) {
    html.push_str("<p><img src=\"");
    html.push_str(&crate::escape(placeholder));
    html.push_str("\" alt=\"\"></p>\n");
}

/// "page 3", "pages 1, 2, 5", "12 pages".
fn pages_list(pages: &[u32]) -> String {
    match pages {
        [one] => format!("page {one}"),
        few if few.len() <= 10 => {
            format!("pages {}", few.iter().map(u32::to_string).collect::<Vec<_>>().join(", "))
        }
        many => format!("{} pages", many.len()),
    }
}

/// OCR text as paragraphs: blank lines part them, a line's break inside one is a space (or
/// nothing after a hyphen that broke a word).
fn ocr_paragraphs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            continue;
        }
        if current.is_empty() {
            current.push_str(line);
        } else {
            layout::join_line(&mut current, line);
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Loads the document: encrypted files (but those with an empty user password, which
/// lopdf opens) are refused.
fn load(bytes: &[u8]) -> Result<lopdf::Document, ConvertError> {
    let options = lopdf::LoadOptions {
        max_decompressed_size: Some(prepare::decode_budget(bytes.len())),
        ..lopdf::LoadOptions::default()
    };
    let loaded = catch_unwind(|| lopdf::Document::load_mem_with_options(bytes, options))
        .map_err(|p| corrupt(format!("it could not be parsed ({})", panic_message(&*p))))?;
    let doc = match loaded {
        Ok(doc) => doc,
        Err(lopdf::Error::Decryption(_) | lopdf::Error::InvalidPassword | lopdf::Error::AlreadyEncrypted) => {
            return Err(ConvertError::Encrypted)
        }
        Err(lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded { .. })) => {
            return Err(ConvertError::TooComplex("its streams decompress to too much data".into()))
        }
        Err(e) => return Err(corrupt(e.to_string())),
    };
    // lopdf decrypts on load when the user password is empty; otherwise the /Encrypt entry
    // stays and nothing was decrypted.
    if doc.is_encrypted() || (doc.trailer.has(b"Encrypt") && doc.encryption_state.is_none()) {
        return Err(ConvertError::Encrypted);
    }
    if doc.objects.len() > prepare::MAX_OBJECTS {
        return Err(ConvertError::TooComplex(format!("the PDF has more than {} objects", prepare::MAX_OBJECTS)));
    }
    Ok(doc)
}

/// The pages `pdf-extract` could not read, and why the first of them failed.
#[derive(Debug, Default)]
struct Extracted {
    failed: Vec<u32>,
    first_failure: Option<String>,
}

/// Why a run of `pdf-extract` failed, if it did.
fn failure(run: std::thread::Result<Result<(), pdf_extract::OutputError>>) -> Option<String> {
    match run {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e.to_string()),
        Err(panic) => Some(panic_message(&*panic)),
    }
}

/// Runs `pdf-extract` over every page. The whole document goes in one pass; when a page
/// fails (a panic or an error inside `pdf-extract`), the pages after it are read one by
/// one. Answers the pages that failed.
fn extract(
    doc: &pdf_extract::Document,
    page_count: usize,
    collector: &mut Collector,
) -> Result<Extracted, ConvertError> {
    let mut out = Extracted::default();
    let whole = failure(catch_unwind(AssertUnwindSafe(|| pdf_extract::output_doc(doc, collector))));
    let Some(why) = whole else {
        return Ok(out);
    };
    if collector.over_limit {
        return Err(too_many_chars());
    }
    out.first_failure = Some(why);
    let resume_after = collector.page();
    collector.flush();
    if resume_after > 0 {
        out.failed.push(resume_after);
    }
    for page in resume_after + 1..=page_count as u32 {
        let one = failure(catch_unwind(AssertUnwindSafe(|| pdf_extract::output_doc_page(doc, collector, page))));
        if collector.over_limit {
            return Err(too_many_chars());
        }
        if one.is_some() {
            collector.flush();
            out.failed.push(page);
        }
    }
    Ok(out)
}

fn too_many_chars() -> ConvertError {
    ConvertError::TooComplex(format!("the PDF has more than {} characters of text", layout::MAX_CHARS))
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_pictures;
#[cfg(test)]
mod tests_structure;

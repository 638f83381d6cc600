//! PDF: text extracted with `pdf-extract` (through an `OutputDev` that keeps each line's
//! font size), laid out as headings and paragraphs.
//!
//! The file is loaded with lopdf 0.47 (it repairs damaged cross-reference tables and
//! bounds decompression), made safe for `pdf-extract` (see [`prepare`]), then read page by
//! page. `pdf-extract` panics on many malformed inputs: every call runs under
//! `catch_unwind`, and a page that fails is skipped with a warning rather than failing the
//! whole file. Images are not imported.

mod layout;
mod prepare;

use std::panic::{catch_unwind, AssertUnwindSafe};

use redline_ports::documents::{ConvertError, Converted};

use layout::Collector;

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

pub(crate) fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
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
    let prepare::Prepared { doc, page_count, has_images, mut warnings } = prepared;

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
    if text_chars == 0 {
        if collector.undecoded > 0 {
            return Err(ConvertError::NoText(
                "the PDF's fonts do not say which characters they draw (no ToUnicode map), so its text cannot be \
                 extracted"
                    .into(),
            ));
        }
        if has_images {
            return Err(ConvertError::NoText(
                "the PDF holds only images (a scan?) and no text layer; run it through OCR first".into(),
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
    if has_images {
        warnings.push("the PDF's images were not imported".into());
    }
    let blocks = layout::blocks(&collector.lines);
    Ok(Converted { html: layout::to_html(&blocks), images: Vec::new(), warnings })
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

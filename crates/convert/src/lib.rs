//! Converters of uploaded files to HTML, one module per format, behind
//! [`redline_ports::DocumentConverter`]. The HTML they produce is not trusted: the caller
//! sanitizes and sections it (`redline-html`).
//!
//! Invariant: no converter panics or allocates more than a small multiple of its input,
//! whatever the bytes (zip bombs, deep nesting, entity tricks are refused early).

mod data_uri;
mod docx;
mod images;
mod markdown;
mod pdf;
mod prescan;
mod rtf;
mod tesseract;
mod text;

pub use tesseract::{TesseractOcr, DEFAULT_TIMEOUT as DEFAULT_OCR_TIMEOUT};

use std::borrow::Cow;
use std::sync::Arc;

use redline_domain::formats::SourceFormat;
use redline_ports::documents::{ConvertError, Converted};
use redline_ports::{DocumentConverter, Ocr};

/// The converter of every supported format (scanned PDF pages keep their picture; their
/// text is not read: see [`Converters::with_ocr`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct Converters;

impl Converters {
    /// The converters, reading the text of scanned PDF pages with `ocr`.
    pub fn with_ocr(ocr: Arc<dyn Ocr>) -> OcrConverters {
        OcrConverters { ocr }
    }
}

impl DocumentConverter for Converters {
    fn convert(&self, format: SourceFormat, bytes: &[u8]) -> Result<Converted, ConvertError> {
        convert(format, bytes, None)
    }
}

/// [`Converters`] with an OCR engine for scanned PDF pages.
#[derive(Clone)]
pub struct OcrConverters {
    ocr: Arc<dyn Ocr>,
}

impl DocumentConverter for OcrConverters {
    fn convert(&self, format: SourceFormat, bytes: &[u8]) -> Result<Converted, ConvertError> {
        convert(format, bytes, Some(self.ocr.as_ref()))
    }
}

fn convert(format: SourceFormat, bytes: &[u8], ocr: Option<&dyn Ocr>) -> Result<Converted, ConvertError> {
    if bytes.is_empty() {
        return Err(ConvertError::Empty);
    }
    match format {
        SourceFormat::Txt => text::convert(bytes),
        SourceFormat::Markdown => markdown::convert(bytes).map(data_uri::extract),
        SourceFormat::Html => text::convert_html(bytes).map(data_uri::extract),
        SourceFormat::Docx => docx::convert(bytes),
        SourceFormat::Pdf => pdf::convert_with(bytes, ocr),
        SourceFormat::Rtf => rtf::convert(bytes),
    }
}

/// How much of a file the encoding detector reads ([`decode`]).
const DETECTION_SAMPLE: usize = 1 << 20;

/// A NUL is never in text: it is a binary file (a PDF, a zip) under a text extension.
pub(crate) fn refuse_binary(text: &str, format: &str) -> Result<(), ConvertError> {
    if text.contains('\0') {
        return Err(ConvertError::Corrupt { format: format.to_owned(), reason: "the file holds binary data".into() });
    }
    Ok(())
}

/// Reads text: UTF-8 in place (the common case, no copy); otherwise decoded into a new string.
///
/// - A byte order mark decides: UTF-8 (dropped), UTF-16LE or UTF-16BE.
/// - Without one, valid UTF-8 is UTF-8.
/// - Otherwise the encoding the file declares (`declared`: an HTML page's `<meta charset>`),
///   if the bytes read as text in it; a page that says UTF-8 and is not, or whose label does
///   not fit its bytes, is guessed instead.
/// - Anything else is a legacy encoding, guessed from the bytes by `chardetng` (Firefox's
///   detector: Windows-1252 and the other single-byte Windows and ISO code pages, Shift_JIS,
///   EUC-JP, EUC-KR, GBK, Big5, IBM866, …). Text saved on Windows in its "ANSI" encoding is
///   read rather than refused.
///
/// Bytes that the chosen encoding cannot decode (a UTF-16 file cut in the middle of a
/// character, say) make a corrupt file.
pub(crate) fn decode<'a>(
    bytes: &'a [u8],
    format: &str,
    declared: Option<&'static encoding_rs::Encoding>,
) -> Result<Cow<'a, str>, ConvertError> {
    let corrupt = |reason: String| ConvertError::Corrupt { format: format.to_owned(), reason };
    let (encoding, body, guessed) = match encoding_rs::Encoding::for_bom(bytes) {
        Some((encoding, bom)) => (encoding, &bytes[bom..], false),
        None => match std::str::from_utf8(bytes) {
            Ok(text) => return Ok(Cow::Borrowed(text)),
            Err(_) => {
                if let Some(text) = declared
                    .filter(|&e| e != encoding_rs::UTF_8)
                    .and_then(|e| e.decode_without_bom_handling_and_without_replacement(bytes))
                    .filter(|text| mostly_words(text))
                {
                    return Ok(text);
                }
                // The first bytes decide: the detector reads about 15 MB a second, and a
                // megabyte of text leaves no doubt about its encoding.
                let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
                let sample = &bytes[..bytes.len().min(DETECTION_SAMPLE)];
                detector.feed(sample, sample.len() == bytes.len());
                (detector.guess(None, chardetng::Utf8Detection::Deny), bytes, true)
            }
        },
    };
    if encoding == encoding_rs::UTF_8 {
        return std::str::from_utf8(body)
            .map(Cow::Borrowed)
            .map_err(|e| corrupt(format!("not valid UTF-8 text after its byte order mark ({e})")));
    }
    let Some(text) = encoding.decode_without_bom_handling_and_without_replacement(body) else {
        return Err(corrupt(format!("not valid {} text", encoding.name())));
    };
    // A guess can always decode single bytes, also of an encoding it does not know (EBCDIC,
    // say): then the "text" is mostly symbols. Text in any language is mostly letters,
    // digits and spaces.
    if guessed && !mostly_words(&text) {
        return Err(corrupt(
            "not text in an encoding Redline reads (UTF-8, UTF-16, or a legacy code page such as Windows-1252 or Shift_JIS)"
                .to_owned(),
        ));
    }
    Ok(text)
}

/// Whether at least half of `text`'s characters, ASCII punctuation aside (HTML's markup is
/// mostly that), are letters, digits or white space.
fn mostly_words(text: &str) -> bool {
    let (mut words, mut counted) = (0usize, 0usize);
    for c in text.chars().filter(|c| !c.is_ascii_punctuation()) {
        counted += 1;
        if c.is_alphanumeric() || c.is_whitespace() {
            words += 1;
        }
    }
    words * 2 >= counted
}

/// Escapes text for HTML.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    escape_into(&mut out, text);
    out
}

/// Escapes text for HTML onto `out`.
pub(crate) fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Any bytes: decoded or refused as corrupt, never a panic; UTF-8 without a byte order
        /// mark is read in place, as it is.
        #[test]
        fn any_bytes_are_decoded_or_refused(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
            match decode(&bytes, "text", None) {
                Ok(text) => {
                    if let Ok(utf8) = std::str::from_utf8(&bytes) {
                        if !utf8.starts_with('\u{feff}') {
                            proptest::prop_assert!(matches!(text, Cow::Borrowed(t) if t == utf8));
                        }
                    }
                }
                Err(e) => proptest::prop_assert!(matches!(e, ConvertError::Corrupt { .. }), "{e:?}"),
            }
        }

        /// Text in a legacy code page comes back as it was written: 20 words or more of
        /// Western languages, with the code page's accents, quotes, dashes and currency. (A
        /// guess needs text: six words full of curly quotes were once read as Windows-1250.)
        #[test]
        fn windows_1252_round_trips(words in proptest::collection::vec(proptest::sample::select(vec![
            "the", "and", "café", "crème", "naïve", "résumé", "déjà", "vu", "señor", "über", "Straße",
            "garçon", "“quoted”", "‘single’", "–", "—", "10 €", "£5", "cost", "of", "for", "à", "la", "carte",
        ]), 20..60)) {
            let text = words.join(" ");
            if !text.bytes().any(|b| b >= 0x80) {
                return Ok(());
            }
            let (bytes, _, _) = encoding_rs::WINDOWS_1252.encode(&text);
            let decoded = decode(&bytes, "text", None).expect("read");
            proptest::prop_assert_eq!(decoded.as_ref(), text.as_str());
        }
    }
}

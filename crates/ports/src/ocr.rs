//! Optical character recognition: the text of a picture of a page (a scan).

/// Why a picture's text could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OcrError {
    /// No OCR engine here (the program is not installed, or a language is missing).
    #[error("OCR is not available: {0}")]
    Unavailable(String),
    /// The engine ran and failed on this picture.
    #[error("OCR failed: {0}")]
    Failed(String),
    /// The engine took longer than it is allowed.
    #[error("OCR took longer than {seconds} seconds")]
    TimedOut { seconds: u64 },
}

/// Reads the text of a picture of a page. Blocking and CPU-heavy (it runs a program or a
/// library): callers run it on the blocking pool, as the converters are.
#[cfg_attr(feature = "mocks", mockall::automock)]
pub trait Ocr: Send + Sync {
    /// The text of `picture` (the bytes of a PNG or JPEG file): lines separated by `\n`,
    /// paragraphs by a blank line; empty when it holds no text. MUST return within the
    /// adapter's time limit (its error then is `TimedOut`) and MUST NOT panic.
    fn read(&self, picture: &[u8]) -> Result<String, OcrError>;
}

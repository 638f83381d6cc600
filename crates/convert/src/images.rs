//! Pictures found in a converted file: their type sniffed from their bytes, and gathered as
//! [`ExtractedImage`]s under caps, each referred to from the HTML by its placeholder
//! (`redline-image:N`), which the caller rewrites to the stored picture's address.

use redline_ports::documents::ExtractedImage;

use crate::docx::PLACEHOLDER_PREFIX;

/// The most pictures one file brings in; more are left out with a warning.
pub(crate) const MAX_PICTURES: usize = 500;
/// The largest picture kept (its encoded bytes).
pub(crate) const MAX_PICTURE_BYTES: usize = 32 << 20;
/// The most bytes of pictures one file brings in, all together.
pub(crate) const MAX_TOTAL_BYTES: usize = 128 << 20;

/// What stands in the text for a picture that cannot be shown (a Windows metafile, say).
pub(crate) const NOT_SHOWN: &str = "[picture not shown]";

/// The note in place of a picture that cannot be shown, with its description when it has one.
pub(crate) fn not_shown(alt: &str) -> String {
    match alt.trim() {
        "" => NOT_SHOWN.to_owned(),
        alt => format!("[picture not shown: {}]", alt.chars().take(200).collect::<String>()),
    }
}

/// The picture formats a browser shows, sniffed from the first bytes.
pub(crate) use redline_domain::picture::sniff;

/// Pictures gathered under the caps.
#[derive(Debug, Default)]
pub(crate) struct Pictures {
    pub(crate) images: Vec<ExtractedImage>,
    total: usize,
}

/// Why a picture was not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Not a format a browser shows (the bytes say what it is not).
    Format,
    /// Over [`MAX_PICTURE_BYTES`].
    TooBig,
    /// Over [`MAX_PICTURES`] or [`MAX_TOTAL_BYTES`].
    TooMany,
}

impl Refused {
    /// The upload's warning.
    pub(crate) fn warning(self, what: &str) -> String {
        match self {
            Refused::Format => format!("{what}: a picture in a format browsers do not show was skipped"),
            Refused::TooBig => format!("{what}: a picture larger than {} MiB was skipped", MAX_PICTURE_BYTES >> 20),
            Refused::TooMany => format!(
                "{what}: pictures beyond the first {MAX_PICTURES} (or {} MiB in all) were skipped",
                MAX_TOTAL_BYTES >> 20
            ),
        }
    }
}

impl Pictures {
    /// Keeps `bytes` as a picture if its format is one a browser shows and the caps allow;
    /// answers its placeholder.
    pub(crate) fn add(&mut self, bytes: Vec<u8>) -> Result<String, Refused> {
        let content_type = sniff(&bytes).ok_or(Refused::Format)?;
        self.add_typed(bytes, content_type)
    }

    /// [`Pictures::add`] for bytes whose type is known.
    pub(crate) fn add_typed(&mut self, bytes: Vec<u8>, content_type: &str) -> Result<String, Refused> {
        if bytes.len() > MAX_PICTURE_BYTES {
            return Err(Refused::TooBig);
        }
        if !self.room_for(bytes.len()) {
            return Err(Refused::TooMany);
        }
        self.total += bytes.len();
        let placeholder = format!("{PLACEHOLDER_PREFIX}{}", self.images.len());
        self.images.push(ExtractedImage { placeholder: placeholder.clone(), content_type: content_type.into(), bytes });
        Ok(placeholder)
    }

    /// Whether a picture of `len` bytes still fits under the caps.
    pub(crate) fn room_for(&self, len: usize) -> bool {
        self.images.len() < MAX_PICTURES && self.total.saturating_add(len) <= MAX_TOTAL_BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pictures_get_numbered_placeholders_under_the_caps() {
        let mut pictures = Pictures::default();
        assert_eq!(pictures.add(b"\x89PNG\r\n\x1a\n1".to_vec()), Ok("redline-image:0".into()));
        assert_eq!(pictures.add(b"\xFF\xD8\xFF2".to_vec()), Ok("redline-image:1".into()));
        assert_eq!(pictures.add(b"not a picture".to_vec()), Err(Refused::Format));
        assert_eq!(pictures.add_typed(vec![0; MAX_PICTURE_BYTES + 1], "image/png"), Err(Refused::TooBig));
        assert_eq!(pictures.images.len(), 2);
        assert_eq!(pictures.images[1].content_type, "image/jpeg");
        for _ in 2..MAX_PICTURES {
            pictures.add_typed(vec![1], "image/png").expect("room");
        }
        assert_eq!(pictures.add_typed(vec![1], "image/png"), Err(Refused::TooMany));
    }
}

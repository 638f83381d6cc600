//! Pictures a document may show: the formats browsers display, told by their first bytes
//! (never by a name or a declared type).

/// The largest picture a person adds to a document by hand (pasted or dropped into a section).
pub const MAX_ADDED_PICTURE_BYTES: u64 = 10 << 20;

/// The content type of a picture in a format browsers show, read from its first bytes: PNG,
/// JPEG, GIF, BMP or WebP. `None` for anything else (SVG included: it can carry script).
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(b"\xFF\xD8\xFF") {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.starts_with(b"BM") && bytes.len() > 26 {
        Some("image/bmp")
    } else if bytes.len() > 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::sniff;

    #[test]
    fn pictures_are_told_by_their_bytes() {
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n...."), Some("image/png"));
        assert_eq!(sniff(b"\xFF\xD8\xFF\xE0"), Some("image/jpeg"));
        assert_eq!(sniff(b"GIF89a.."), Some("image/gif"));
        assert_eq!(sniff(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(sniff(b"<svg xmlns=..."), None);
        assert_eq!(sniff(b"\x01\x00\x00\x00EMF"), None);
        assert_eq!(sniff(b"BM"), None, "too short to be a bitmap");
    }
}

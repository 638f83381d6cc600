//! The encodings RTF names by number: a Windows code page (`\ansicpg`, `\cpg`) or a font's
//! character set (`\fcharset`).

use encoding_rs::Encoding;

/// The encoding of a Windows code page, if `encoding_rs` has it (or a close one).
pub(super) fn encoding_for_codepage(codepage: i32) -> Option<&'static Encoding> {
    use encoding_rs::*;
    Some(match codepage {
        // No DOS code pages in encoding_rs: Windows-1252 is the closest.
        437 | 850 | 1252 => WINDOWS_1252,
        1250 => WINDOWS_1250,
        1251 => WINDOWS_1251,
        1253 => WINDOWS_1253,
        1254 => WINDOWS_1254,
        1255 => WINDOWS_1255,
        1256 => WINDOWS_1256,
        1257 => WINDOWS_1257,
        1258 => WINDOWS_1258,
        874 => WINDOWS_874,
        932 => SHIFT_JIS,
        936 => GBK,
        949 | 1361 => EUC_KR,
        950 => BIG5,
        866 => IBM866,
        10000 => MACINTOSH,
        20866 => KOI8_R,
        21866 => KOI8_U,
        28592 => ISO_8859_2,
        28595 => ISO_8859_5,
        28597 => ISO_8859_7,
        65001 => UTF_8,
        _ => return None,
    })
}

/// The code page of a font's `\fcharset` (none: the document's).
pub(super) fn codepage_for_charset(charset: i32) -> Option<i32> {
    Some(match charset {
        2 => 1252,
        77 => 10000,
        128 => 932,
        129 => 949,
        130 => 1361,
        134 => 936,
        136 => 950,
        161 => 1253,
        162 => 1254,
        163 => 1258,
        177 => 1255,
        178 => 1256,
        186 => 1257,
        204 => 1251,
        222 => 874,
        238 => 1250,
        254 => 437,
        255 => 850,
        _ => return None,
    })
}

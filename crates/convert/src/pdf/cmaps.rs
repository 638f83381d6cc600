//! Adobe's predefined CJK CMaps read through the legacy encodings they follow
//! (docs/conversion.md, "PDF text in right-to-left and CJK scripts").
//!
//! A Type0 font whose `/Encoding` names a predefined CMap (`90ms-RKSJ-H`, `ETen-B5-H`,
//! `GBK-EUC-H`, `KSCms-UHC-H`, …) draws its text as the bytes of Shift_JIS, EUC-JP, Big5, GBK
//! or EUC-KR/UHC. Those CMaps map the bytes to CIDs of the Adobe character collections, whose
//! Unicode tables we do not carry; but the bytes themselves are text of a known encoding. So
//! the font is given an `/Encoding` CMap with the encoding's code space that keeps each code
//! as its CID, and, when it has no `/ToUnicode` of its own, one that maps each code to the
//! character the encoding (encoding_rs, as browsers decode them) reads it as.

use std::sync::OnceLock;

use encoding_rs::{Encoding, BIG5, EUC_JP, EUC_KR, GBK, SHIFT_JIS};

/// A legacy double-byte encoding: its one-byte and two-byte code spaces.
pub(super) struct Legacy {
    encoding: &'static Encoding,
    /// Lead bytes that are whole codes.
    single: &'static [(u8, u8)],
    /// Lead bytes of two-byte codes, and the range of their trail bytes.
    lead: &'static [(u8, u8)],
    trail: (u8, u8),
    to_unicode: &'static OnceLock<Vec<u8>>,
}

static SJIS_MAP: OnceLock<Vec<u8>> = OnceLock::new();
static EUC_JP_MAP: OnceLock<Vec<u8>> = OnceLock::new();
static BIG5_MAP: OnceLock<Vec<u8>> = OnceLock::new();
static GBK_MAP: OnceLock<Vec<u8>> = OnceLock::new();
static EUC_KR_MAP: OnceLock<Vec<u8>> = OnceLock::new();

static SJIS: Legacy = Legacy {
    encoding: SHIFT_JIS,
    single: &[(0x00, 0x80), (0xA0, 0xDF), (0xFD, 0xFF)],
    lead: &[(0x81, 0x9F), (0xE0, 0xFC)],
    trail: (0x40, 0xFC),
    to_unicode: &SJIS_MAP,
};
static EUCJP: Legacy = Legacy {
    encoding: EUC_JP,
    single: &[(0x00, 0x80)],
    lead: &[(0x8E, 0x8E), (0xA1, 0xFE)],
    trail: (0xA1, 0xFE),
    to_unicode: &EUC_JP_MAP,
};
static BIG5_CODES: Legacy = Legacy {
    encoding: BIG5,
    single: &[(0x00, 0x80)],
    lead: &[(0x81, 0xFE)],
    trail: (0x40, 0xFE),
    to_unicode: &BIG5_MAP,
};
static GBK_CODES: Legacy =
    Legacy { encoding: GBK, single: &[(0x00, 0x80)], lead: &[(0x81, 0xFE)], trail: (0x40, 0xFE), to_unicode: &GBK_MAP };
static UHC: Legacy = Legacy {
    encoding: EUC_KR,
    single: &[(0x00, 0x80)],
    lead: &[(0x81, 0xFE)],
    trail: (0x41, 0xFE),
    to_unicode: &EUC_KR_MAP,
};

/// The legacy encoding a predefined CMap's codes are, by its name (horizontal or vertical:
/// the text is the same); `None` for the others (`Identity`, Unicode CMaps, GB18030's
/// four-byte `GBK2K`, and names we do not know).
pub(super) fn legacy(name: &[u8]) -> Option<&'static Legacy> {
    let name = std::str::from_utf8(name).ok()?;
    let base = name.strip_suffix("-H").or_else(|| name.strip_suffix("-V")).unwrap_or(name);
    if base.contains("RKSJ") {
        Some(&SJIS)
    } else if base == "EUC" {
        Some(&EUCJP)
    } else if base.contains("B5") {
        Some(&BIG5_CODES)
    } else if base.starts_with("GB") && base.ends_with("EUC") {
        Some(&GBK_CODES)
    } else if base.starts_with("KSC") && (base.ends_with("EUC") || base.contains("UHC")) {
        Some(&UHC)
    } else {
        None
    }
}

/// The CID → Unicode tables of Adobe's CJK character collections (`cid/README.md`).
static COLLECTIONS: [(&[u8], &[u8]); 4] = [
    (b"Japan1", include_bytes!("cid/Japan1.bin")),
    (b"GB1", include_bytes!("cid/GB1.bin")),
    (b"CNS1", include_bytes!("cid/CNS1.bin")),
    (b"Korea1", include_bytes!("cid/Korea1.bin")),
];
static COLLECTION_MAPS: [OnceLock<Vec<u8>>; 4] = [OnceLock::new(), OnceLock::new(), OnceLock::new(), OnceLock::new()];

/// A `/ToUnicode` CMap keyed by CID for a CID font of Adobe's character collection
/// `ordering` (`Japan1`, `GB1`, `CNS1`, `Korea1`; registry `Adobe`), for a font drawn with
/// `Identity-H`/`-V` (code = CID) and no map of its own; built once per collection.
pub(super) fn collection_to_unicode(ordering: &[u8]) -> Option<&'static [u8]> {
    let k = COLLECTIONS.iter().position(|(name, _)| *name == ordering)?;
    let map = COLLECTION_MAPS[k].get_or_init(|| {
        use std::io::Read;
        let mut raw = Vec::new();
        if flate2::read::ZlibDecoder::new(COLLECTIONS[k].1).read_to_end(&mut raw).is_err() {
            return Vec::new();
        }
        let mut out = String::from(
            "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n/CMapType 2 def\n\
             1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n",
        );
        let mut ranges = Vec::new();
        let mut chars = Vec::new();
        for run in raw.chunks_exact(8) {
            let cid = u16::from_le_bytes([run[0], run[1]]);
            let cp = u32::from_le_bytes([run[2], run[3], run[4], run[5]]);
            let len = u16::from_le_bytes([run[6], run[7]]);
            if len == 0 {
                continue;
            }
            let last = u32::from(cid) + u32::from(len) - 1;
            let Some(cp_last) = cp.checked_add(u32::from(len) - 1) else { continue };
            if last > 0xFFFF {
                continue;
            }
            // A run within the BMP is one range; past it, each character is its surrogates.
            if cp_last <= 0xFFFF && (cp > 0xDFFF || cp_last < 0xD800) {
                ranges.push(format!("<{cid:04X}> <{last:04X}> <{cp:04X}>"));
            } else {
                for i in 0..u32::from(len) {
                    let Some(c) = char::from_u32(cp + i) else { continue };
                    let utf16: String = c.encode_utf16(&mut [0; 2]).iter().map(|u| format!("{u:04X}")).collect();
                    chars.push(format!("<{:04X}> <{utf16}>", u32::from(cid) + i));
                }
            }
        }
        for chunk in ranges.chunks(100) {
            out.push_str(&format!("{} beginbfrange\n{}\nendbfrange\n", chunk.len(), chunk.join("\n")));
        }
        for chunk in chars.chunks(100) {
            out.push_str(&format!("{} beginbfchar\n{}\nendbfchar\n", chunk.len(), chunk.join("\n")));
        }
        out.push_str("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n");
        out.into_bytes()
    });
    (!map.is_empty()).then_some(map.as_slice())
}

/// Largest embedded font read for its cmap, in bytes.
pub(super) const MAX_FONT_BYTES: usize = 32 << 20;

/// A `/ToUnicode` CMap keyed by CID for an embedded TrueType CID font drawn with
/// `Identity-H`/`-V` and without a map of its own, as poppler falls back to: the font's own
/// `cmap` table read backwards (each glyph's lowest code point), through `cid_to_gid` (the
/// `CIDToGIDMap` stream, two bytes a CID; `None`: the identity). `None` when the font has no
/// usable `cmap`. The work is bounded whatever the font claims: one Unicode subtable is asked
/// for the code points of the BMP and of the ideographic plane, and glyphs past the font's
/// glyph count are ignored.
pub(super) fn font_to_unicode(font: &[u8], cid_to_gid: Option<&[u8]>) -> Option<Vec<u8>> {
    let face = ttf_parser::Face::parse(font, 0).ok()?;
    let glyphs = face.number_of_glyphs();
    let cmap = face.tables().cmap?;
    let subtable = cmap.subtables.into_iter().filter(|s| s.is_unicode()).max_by_key(|s| {
        use ttf_parser::cmap::Format;
        match s.format {
            Format::SegmentedCoverage(_) => 2,
            Format::SegmentMappingToDeltaValues(_) => 1,
            _ => 0,
        }
    })?;
    let mut of_glyph: std::collections::HashMap<u16, char> = std::collections::HashMap::new();
    for cp in (0x20..=0xFFFF_u32).chain(0x2_0000..=0x2_FFFF) {
        let (Some(c), Some(gid)) = (char::from_u32(cp), subtable.glyph_index(cp)) else { continue };
        if gid.0 != 0 && gid.0 < glyphs && !c.is_control() {
            of_glyph.entry(gid.0).or_insert(c);
        }
    }
    if of_glyph.is_empty() {
        return None;
    }
    let mut entries: Vec<(u16, char)> = match cid_to_gid {
        None => of_glyph.into_iter().collect(),
        Some(map) => map
            .chunks_exact(2)
            .enumerate()
            .filter_map(|(cid, gid)| {
                let c = of_glyph.get(&u16::from_be_bytes([gid[0], gid[1]]))?;
                Some((u16::try_from(cid).ok()?, *c))
            })
            .collect(),
    };
    entries.sort_unstable();
    let mut out = String::from(
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n/CMapType 2 def\n\
         1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n",
    );
    for chunk in entries.chunks(100) {
        out.push_str(&format!("{} beginbfchar\n", chunk.len()));
        for (cid, c) in chunk {
            let utf16: String = c.encode_utf16(&mut [0; 2]).iter().map(|u| format!("{u:04X}")).collect();
            out.push_str(&format!("<{cid:04X}> <{utf16}>\n"));
        }
        out.push_str("endbfchar\n");
    }
    out.push_str("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n");
    Some(out.into_bytes())
}

/// Whether a simple font (TrueType or Type 1, one byte a code by its dictionary) is named as
/// a Chinese font of the GB encodings: `…_GB2312`, `…GBK…`, or a name in GBK bytes (`宋体`).
/// Such fonts draw GBK bytes through `WinAnsiEncoding` in PDFs of Chinese word processors;
/// read as Latin-1 they are mojibake.
pub(super) fn gb_named(base_font: &[u8]) -> bool {
    // A subset's tag (`ABCDEF+`) is not part of the name.
    let name = match base_font.iter().position(|&b| b == b'+') {
        Some(6) => &base_font[7..],
        _ => base_font,
    };
    let upper = name.to_ascii_uppercase();
    if upper.windows(6).any(|w| w == b"GB2312") || upper.windows(3).any(|w| w == b"GBK") {
        return true;
    }
    if name.is_ascii() {
        return false;
    }
    // Names in other encodings decode as GBK characters too (Shift_JIS `ＭＳ 明朝`, EUC-KR
    // `굴림`, Latin-1 `Crème`): only the names of the GB fonts' families count.
    let (text, had_errors) = GBK.decode_without_bom_handling(name);
    !had_errors && GB_FAMILIES.iter().any(|family| text.contains(family))
}

/// The families of Chinese fonts of the GB encodings (宋体, 黑体, 楷体, 仿宋, 隶书, 幼圆,
/// 微软雅黑, the 华文 and 方正 fonts).
const GB_FAMILIES: [&str; 9] = ["宋", "黑体", "楷体", "仿宋", "隶书", "幼圆", "雅黑", "华文", "方正"];

/// The GBK reading of codes.
pub(super) fn gbk() -> &'static Legacy {
    &GBK_CODES
}

impl Legacy {
    /// An `/Encoding` CMap with this encoding's code space whose CID is the code itself
    /// (one `cidrange`: pdf-extract's reader takes one).
    ///
    /// pdf-extract's CMap parser (adobe-cmap-parser 0.4) takes a code space range's width in
    /// bytes as half the bytes of its bounds: a one-byte range is written with two bytes
    /// (`<0000> <0080>`) and a two-byte one with four, which reads as the codes meant
    /// (`tests::the_maps_read_codes_as_the_encoding_does` holds the parser to it).
    pub(super) fn encoding_cmap(&self) -> Vec<u8> {
        let mut ranges = Vec::new();
        for &(lo, hi) in self.single {
            ranges.push(format!("<00{lo:02X}> <00{hi:02X}>"));
        }
        for &(lo, hi) in self.lead {
            ranges.push(format!("<0000{lo:02X}{:02X}> <0000{hi:02X}{:02X}>", self.trail.0, self.trail.1));
        }
        format!(
            "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n/CMapType 1 def\n\
             {} begincodespacerange\n{}\nendcodespacerange\n\
             1 begincidrange\n<0000> <FFFF> 0\nendcidrange\n\
             endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n",
            ranges.len(),
            ranges.join("\n")
        )
        .into_bytes()
    }

    /// A `/ToUnicode` CMap of every code the encoding reads as a character (built once).
    pub(super) fn to_unicode(&self) -> &'static [u8] {
        self.to_unicode.get_or_init(|| {
            let mut entries: Vec<(u16, String)> = Vec::new();
            for &(lo, hi) in self.single {
                for b in lo..=hi {
                    if let Some(c) = self.read(&[b]) {
                        entries.push((u16::from(b), c));
                    }
                }
            }
            for &(lo, hi) in self.lead {
                for lead in lo..=hi {
                    for trail in self.trail.0..=self.trail.1 {
                        if let Some(c) = self.read(&[lead, trail]) {
                            entries.push((u16::from_be_bytes([lead, trail]), c));
                        }
                    }
                }
            }
            let mut out = String::from(
                "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n/CMapType 2 def\n\
                 1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n",
            );
            for chunk in entries.chunks(100) {
                out.push_str(&format!("{} beginbfchar\n", chunk.len()));
                for (code, text) in chunk {
                    let utf16: String = text.encode_utf16().map(|u| format!("{u:04X}")).collect();
                    out.push_str(&format!("<{code:04X}> <{utf16}>\n"));
                }
                out.push_str("endbfchar\n");
            }
            out.push_str("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n");
            out.into_bytes()
        })
    }

    /// The character `bytes` are in this encoding, when they are one it maps (control
    /// characters left out).
    fn read(&self, bytes: &[u8]) -> Option<String> {
        let (text, had_errors) = self.encoding.decode_without_bom_handling(bytes);
        let mut chars = text.chars();
        let c = chars.next()?;
        (!had_errors && chars.next().is_none() && !c.is_control()).then(|| c.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predefined_cmaps_are_known_by_their_family() {
        for (name, encoding) in [
            ("90ms-RKSJ-H", SHIFT_JIS),
            ("90msp-RKSJ-V", SHIFT_JIS),
            ("EUC-H", EUC_JP),
            ("ETen-B5-H", BIG5),
            ("B5pc-V", BIG5),
            ("GBK-EUC-H", GBK),
            ("GB-EUC-V", GBK),
            ("KSCms-UHC-H", EUC_KR),
            ("KSC-EUC-H", EUC_KR),
        ] {
            assert_eq!(legacy(name.as_bytes()).map(|l| l.encoding), Some(encoding), "{name}");
        }
        for name in ["Identity-H", "UniJIS-UCS2-H", "GBK2K-H", "Adobe-Japan1-6", "\u{ff}"] {
            assert!(legacy(name.as_bytes()).is_none(), "{name}");
        }
    }

    #[test]
    fn chinese_fonts_of_the_gb_encodings_are_known_by_name() {
        assert!(gb_named(b"\xB7\xC2\xCB\xCE_GB2312"), "仿宋_GB2312");
        assert!(gb_named(b"\xCB\xCE\xCC\xE5"), "宋体");
        assert!(gb_named(b"ABCDEF+SimSun-GBK"));
        // Latin, and names in Shift_JIS (ＭＳ 明朝), EUC-KR (굴림) and Latin-1 (Crème).
        for latin in [
            &b"SimSun"[..],
            b"Helvetica",
            b"ABCDEF+Arial",
            b"Caf\xE9",
            b"\x82\x6C\x82\x72 \x96\xBE\x92\xA9",
            b"\xB1\xBC\xB8\xB2",
            b"Cr\xE8me",
        ] {
            assert!(!gb_named(latin), "{}", String::from_utf8_lossy(latin));
        }
    }

    #[test]
    fn the_character_collections_map_cids_to_unicode() {
        let japan = adobe_cmap_parser::get_unicode_map(collection_to_unicode(b"Japan1").expect("Japan1"))
            .expect("a unicode cmap");
        // Adobe-Japan1: CID 34 is "A", 843 "あ", 3284 "日".
        let at = |map: &std::collections::HashMap<u32, Vec<u8>>, cid: u32| {
            map.get(&cid).map(|v| {
                String::from_utf16_lossy(&v.chunks(2).map(|p| u16::from_be_bytes([p[0], p[1]])).collect::<Vec<_>>())
            })
        };
        assert_eq!(at(&japan, 34).as_deref(), Some("A"));
        assert_eq!(at(&japan, 843).as_deref(), Some("あ"));
        assert_eq!(at(&japan, 3284).as_deref(), Some("日"));
        assert!(japan.len() > 15_000, "{}", japan.len());
        for ordering in [&b"GB1"[..], b"CNS1", b"Korea1"] {
            let map =
                adobe_cmap_parser::get_unicode_map(collection_to_unicode(ordering).expect("a table")).expect("a cmap");
            assert!(map.len() > 15_000, "{}: {}", String::from_utf8_lossy(ordering), map.len());
        }
        assert!(collection_to_unicode(b"Identity").is_none());
    }

    #[test]
    fn the_maps_read_codes_as_the_encoding_does() {
        let cmap = adobe_cmap_parser::get_byte_mapping(&SJIS.encoding_cmap()).expect("an encoding cmap");
        let spaces: Vec<(u32, u32, u32)> = cmap.codespace.iter().map(|r| (r.width, r.start, r.end)).collect();
        assert_eq!(
            spaces,
            [(1, 0x00, 0x80), (1, 0xA0, 0xDF), (1, 0xFD, 0xFF), (2, 0x8140, 0x9FFC), (2, 0xE040, 0xFCFC)],
            "one-byte and two-byte codes, as pdf-extract reads the code space"
        );
        assert_eq!(cmap.cid.len(), 1);
        let unicode = adobe_cmap_parser::get_unicode_map(SJIS.to_unicode()).expect("a unicode cmap");
        // あ in Shift_JIS, and half-width katakana ｱ.
        assert_eq!(unicode.get(&0x82A0).map(Vec::as_slice), Some(&[0x30, 0x42][..]));
        assert_eq!(unicode.get(&0xB1).map(Vec::as_slice), Some(&[0xFF, 0x71][..]));
        let big5 = adobe_cmap_parser::get_unicode_map(BIG5_CODES.to_unicode()).expect("big5");
        // 中 in Big5.
        assert_eq!(big5.get(&0xA4A4).map(Vec::as_slice), Some(&[0x4E, 0x2D][..]));
    }
}

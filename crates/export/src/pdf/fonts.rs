//! The fonts of one export: the bundled set (DejaVu for Latin, Greek, Cyrillic and code,
//! Noto Sans Arabic and Hebrew; licences in `fonts/`) and, for characters none of them has,
//! the system's fonts (`system.rs`). Fallback is per character: the first font whose `cmap`
//! covers it. A character no font covers is left out of the page and named in the export's
//! warnings with the Debian package that would cover it.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::sync::Arc;

use super::system::SystemFonts;

/// A font of this export: an index into [`Fonts`]' faces. The bundled ones come first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct FontId(pub u16);

impl FontId {
    pub(crate) const REGULAR: FontId = FontId(0);
    pub(crate) const BOLD: FontId = FontId(1);
    pub(crate) const ITALIC: FontId = FontId(2);
    pub(crate) const BOLD_ITALIC: FontId = FontId(3);
    pub(crate) const MONO: FontId = FontId(4);
    const ARABIC: FontId = FontId(5);
    const ARABIC_BOLD: FontId = FontId(6);
    const HEBREW: FontId = FontId(7);
    const HEBREW_BOLD: FontId = FontId(8);

    pub(crate) fn pick(bold: bool, italic: bool, code: bool) -> FontId {
        match (code, bold, italic) {
            (true, _, _) => FontId::MONO,
            (false, true, true) => FontId::BOLD_ITALIC,
            (false, true, false) => FontId::BOLD,
            (false, false, true) => FontId::ITALIC,
            (false, false, false) => FontId::REGULAR,
        }
    }

    fn bold(self) -> bool {
        matches!(self, FontId::BOLD | FontId::BOLD_ITALIC | FontId::ARABIC_BOLD | FontId::HEBREW_BOLD)
    }

    pub(crate) fn italic(self) -> bool {
        matches!(self, FontId::ITALIC | FontId::BOLD_ITALIC)
    }
}

/// The bundled fonts: data and PostScript name, in [`FontId`] order.
static BUNDLED: [(&[u8], &str); 9] = [
    (include_bytes!("../../fonts/DejaVuSans.ttf"), "DejaVuSans"),
    (include_bytes!("../../fonts/DejaVuSans-Bold.ttf"), "DejaVuSans-Bold"),
    (include_bytes!("../../fonts/DejaVuSans-Oblique.ttf"), "DejaVuSans-Oblique"),
    (include_bytes!("../../fonts/DejaVuSans-BoldOblique.ttf"), "DejaVuSans-BoldOblique"),
    (include_bytes!("../../fonts/DejaVuSansMono.ttf"), "DejaVuSansMono"),
    (include_bytes!("../../fonts/NotoSansArabic-Regular.ttf"), "NotoSansArabic-Regular"),
    (include_bytes!("../../fonts/NotoSansArabic-Bold.ttf"), "NotoSansArabic-Bold"),
    (include_bytes!("../../fonts/NotoSansHebrew-Regular.ttf"), "NotoSansHebrew-Regular"),
    (include_bytes!("../../fonts/NotoSansHebrew-Bold.ttf"), "NotoSansHebrew-Bold"),
];

/// A font ready to shape with and to embed.
pub(crate) struct Loaded {
    pub face: rustybuzz::Face<'static>,
    pub data: &'static [u8],
    pub index: u32,
    pub name: String,
    /// CFF outlines (embedded as `FontFile3`/`OpenType`), else TrueType (`FontFile2`).
    pub cff: bool,
    pub mono: bool,
    pub bold: bool,
    pub italic: bool,
    pub units: f32,
}

impl Loaded {
    pub(crate) fn new(data: &'static [u8], index: u32, name: String) -> Option<Loaded> {
        let face = rustybuzz::Face::from_slice(data, index)?;
        let cff = face.tables().cff.is_some();
        let units = face.units_per_em().max(1) as f32;
        let (mono, bold, italic) = (face.is_monospaced(), face.is_bold(), face.is_italic() || face.is_oblique());
        Some(Loaded { face, data, index, name, cff, mono, bold, italic, units })
    }

    /// The advance of a glyph in ems, from `hmtx`.
    pub(crate) fn advance(&self, gid: u16) -> f32 {
        self.face.glyph_hor_advance(ttf_parser::GlyphId(gid)).map_or(0.0, |a| f32::from(a) / self.units)
    }
}

/// Characters no font had, by the package that would bring them.
#[derive(Default)]
struct Missing {
    seen: std::collections::HashSet<char>,
    by_package: BTreeMap<&'static str, (usize, Vec<char>)>,
}

pub(crate) struct Fonts {
    faces: RefCell<Vec<Rc<Loaded>>>,
    system: Arc<SystemFonts>,
    /// System faces of this export: the system's face index to ours.
    system_ids: RefCell<HashMap<usize, FontId>>,
    choice: RefCell<HashMap<(FontId, char), Option<FontId>>>,
    missing: RefCell<Missing>,
}

impl Fonts {
    pub(crate) fn new(system: Arc<SystemFonts>) -> Result<Fonts, String> {
        let faces = BUNDLED
            .iter()
            .enumerate()
            .map(|(i, (data, name))| {
                Loaded::new(data, 0, (*name).to_string())
                    .map(Rc::new)
                    .ok_or_else(|| format!("the bundled font {i} does not parse"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Fonts {
            faces: RefCell::new(faces),
            system,
            system_ids: RefCell::default(),
            choice: RefCell::default(),
            missing: RefCell::default(),
        })
    }

    pub(crate) fn get(&self, font: FontId) -> Rc<Loaded> {
        let faces = self.faces.borrow();
        faces.get(usize::from(font.0)).unwrap_or(&faces[0]).clone()
    }

    /// Every font of this export, in [`FontId`] order.
    pub(crate) fn all(&self) -> Vec<Rc<Loaded>> {
        self.faces.borrow().clone()
    }

    fn covers(&self, font: FontId, c: char) -> bool {
        self.get(font).face.glyph_index(c).is_some_and(|g| g.0 != 0)
    }

    /// The font that draws `c` for text asked in `want` (a bundled style), or `None` when no
    /// font has it (recorded for the warnings).
    pub(crate) fn font_for(&self, want: FontId, c: char) -> Option<FontId> {
        if let Some(found) = self.choice.borrow().get(&(want, c)) {
            return *found;
        }
        let found = self.find(want, c);
        if found.is_none() {
            self.note_missing(c);
        }
        self.choice.borrow_mut().insert((want, c), found);
        found
    }

    fn find(&self, want: FontId, c: char) -> Option<FontId> {
        let bold = want.bold();
        let (arabic, hebrew) =
            if bold { (FontId::ARABIC_BOLD, FontId::HEBREW_BOLD) } else { (FontId::ARABIC, FontId::HEBREW) };
        let script_font = match u32::from(c) {
            0x0600..=0x06FF | 0x0750..=0x077F | 0x0870..=0x08FF | 0xFB50..=0xFDFF | 0xFE70..=0xFEFF => Some(arabic),
            0x0590..=0x05FF | 0xFB1D..=0xFB4F => Some(hebrew),
            _ => None,
        };
        let fallback = match want {
            FontId::BOLD_ITALIC => Some(FontId::BOLD),
            FontId::REGULAR => None,
            _ => Some(FontId::REGULAR),
        };
        let chain = [script_font, Some(want), fallback, Some(arabic), Some(hebrew)];
        if let Some(f) = chain.into_iter().flatten().find(|&f| self.covers(f, c)) {
            return Some(f);
        }
        let index = self.system.face_for(c, bold)?;
        if let Some(id) = self.system_ids.borrow().get(&index) {
            return Some(*id);
        }
        let loaded = self.system.load(index)?;
        let mut faces = self.faces.borrow_mut();
        let id = FontId(u16::try_from(faces.len()).ok()?);
        faces.push(Rc::new(loaded));
        self.system_ids.borrow_mut().insert(index, id);
        Some(id)
    }

    fn note_missing(&self, c: char) {
        let mut missing = self.missing.borrow_mut();
        if !missing.seen.insert(c) {
            return;
        }
        let entry = missing.by_package.entry(package_for(c)).or_default();
        entry.0 += 1;
        if entry.1.len() < 5 {
            entry.1.push(c);
        }
    }

    /// One warning per font package that would have covered the characters left out.
    pub(crate) fn warnings(&self) -> Vec<String> {
        self.missing
            .borrow()
            .by_package
            .iter()
            .map(|(package, (count, sample))| {
                let shown: Vec<String> = sample.iter().map(|c| format!("{c} U+{:04X}", u32::from(*c))).collect();
                format!(
                    "{count} distinct character(s) have no font and are left out of the PDF ({}); install {package}",
                    shown.join(", ")
                )
            })
            .collect()
    }
}

/// The Debian package whose fonts cover `c`.
pub(crate) fn package_for(c: char) -> &'static str {
    match u32::from(c) {
        0x1100..=0x11FF
        | 0x2E80..=0x2FDF
        | 0x3000..=0x31FF
        | 0x3200..=0x9FFF
        | 0xA960..=0xA97F
        | 0xAC00..=0xD7FF
        | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F
        | 0xFF00..=0xFFEF
        | 0x20000..=0x3FFFF => "fonts-noto-cjk",
        0x1F000..=0x1FAFF | 0x2600..=0x27BF | 0x2B00..=0x2BFF => "fonts-noto-color-emoji",
        _ => "fonts-noto-core (or fonts-noto-extra)",
    }
}

/// Ascent and descent of the line box of a text run, in ems.
pub(crate) const ASCENT: f32 = 0.93;
pub(crate) const DESCENT: f32 = 0.24;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fallback_is_per_character_and_missing_ones_are_named() {
        let fonts = Fonts::new(SystemFonts::from_dirs(Vec::new())).expect("fonts");
        assert_eq!(fonts.font_for(FontId::REGULAR, 'a'), Some(FontId::REGULAR));
        assert_eq!(fonts.font_for(FontId::BOLD, 'a'), Some(FontId::BOLD));
        assert_eq!(fonts.font_for(FontId::REGULAR, 'ب'), Some(FontId::ARABIC));
        assert_eq!(fonts.font_for(FontId::BOLD, 'ب'), Some(FontId::ARABIC_BOLD));
        assert_eq!(fonts.font_for(FontId::REGULAR, 'ש'), Some(FontId::HEBREW));
        assert_eq!(fonts.font_for(FontId::MONO, 'Ж'), Some(FontId::MONO));
        for bullet in ['\u{2022}', '\u{25E6}', '\u{25AA}'] {
            assert!(fonts.font_for(FontId::REGULAR, bullet).is_some(), "{bullet}");
        }
        assert_eq!(fonts.font_for(FontId::REGULAR, '中'), None, "no system fonts here");
        assert_eq!(fonts.font_for(FontId::BOLD, '中'), None);
        assert_eq!(fonts.font_for(FontId::REGULAR, '\u{1F600}'), Some(FontId::REGULAR), "DejaVu has some emoji");
        assert_eq!(fonts.font_for(FontId::REGULAR, '\u{1F389}'), None);
        let warnings = fonts.warnings();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings.iter().any(|w| w.contains("fonts-noto-cjk") && w.contains("U+4E2D")), "{warnings:?}");
        assert!(warnings.iter().any(|w| w.contains("fonts-noto-color-emoji")), "{warnings:?}");
    }
}

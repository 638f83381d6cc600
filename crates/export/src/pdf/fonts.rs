//! The embedded DejaVu fonts (fonts/LICENSE) and their glyph metrics.

use std::cell::RefCell;
use std::collections::HashMap;

use ttf_parser::{Face, GlyphId};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum FontId {
    Regular,
    Bold,
    Italic,
    BoldItalic,
    Mono,
}

pub(crate) const ALL_FONTS: [FontId; 5] =
    [FontId::Regular, FontId::Bold, FontId::Italic, FontId::BoldItalic, FontId::Mono];

static DATA: [&[u8]; 5] = [
    include_bytes!("../../fonts/DejaVuSans.ttf"),
    include_bytes!("../../fonts/DejaVuSans-Bold.ttf"),
    include_bytes!("../../fonts/DejaVuSans-Oblique.ttf"),
    include_bytes!("../../fonts/DejaVuSans-BoldOblique.ttf"),
    include_bytes!("../../fonts/DejaVuSansMono.ttf"),
];

impl FontId {
    pub(crate) fn index(self) -> usize {
        match self {
            FontId::Regular => 0,
            FontId::Bold => 1,
            FontId::Italic => 2,
            FontId::BoldItalic => 3,
            FontId::Mono => 4,
        }
    }

    pub(crate) fn pick(bold: bool, italic: bool, code: bool) -> FontId {
        match (code, bold, italic) {
            (true, _, _) => FontId::Mono,
            (false, true, true) => FontId::BoldItalic,
            (false, true, false) => FontId::Bold,
            (false, false, true) => FontId::Italic,
            (false, false, false) => FontId::Regular,
        }
    }

    pub(crate) fn postscript_name(self) -> &'static str {
        ["DejaVuSans", "DejaVuSans-Bold", "DejaVuSans-Oblique", "DejaVuSans-BoldOblique", "DejaVuSansMono"]
            [self.index()]
    }

    pub(crate) fn data(self) -> &'static [u8] {
        DATA[self.index()]
    }

    /// The font tried when this one has no glyph for a character.
    fn fallback(self) -> Option<FontId> {
        match self {
            FontId::Regular => None,
            FontId::Bold | FontId::Italic | FontId::Mono => Some(FontId::Regular),
            FontId::BoldItalic => Some(FontId::Bold),
        }
    }
}

/// A character's glyph: the font that has it, its id there, its advance in ems.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Glyph {
    pub font: FontId,
    pub gid: u16,
    pub advance: f32,
}

pub(crate) struct Fonts {
    faces: Vec<Face<'static>>,
    cache: RefCell<HashMap<(FontId, char), Glyph>>,
}

impl Fonts {
    pub(crate) fn new() -> Result<Fonts, String> {
        let faces = DATA
            .iter()
            .map(|data| Face::parse(data, 0).map_err(|e| format!("an embedded font does not parse: {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Fonts { faces, cache: RefCell::new(HashMap::new()) })
    }

    pub(crate) fn face(&self, font: FontId) -> &Face<'static> {
        &self.faces[font.index()]
    }

    fn advance(&self, font: FontId, gid: u16) -> f32 {
        let face = self.face(font);
        let units = f32::from(face.units_per_em().max(1));
        face.glyph_hor_advance(GlyphId(gid)).map_or(0.0, |a| f32::from(a) / units)
    }

    /// The glyph of `c` in `font`, or in its fallback, or the missing-glyph box.
    pub(crate) fn glyph(&self, font: FontId, c: char) -> Glyph {
        if let Some(g) = self.cache.borrow().get(&(font, c)) {
            return *g;
        }
        let mut f = Some(font);
        let mut found = None;
        while let Some(candidate) = f {
            if let Some(gid) = self.face(candidate).glyph_index(c) {
                found = Some((candidate, gid.0));
                break;
            }
            f = candidate.fallback();
        }
        let (font_used, gid) = found.unwrap_or((font, 0));
        let glyph = Glyph { font: font_used, gid, advance: self.advance(font_used, gid) };
        self.cache.borrow_mut().insert((font, c), glyph);
        glyph
    }

    /// Width of `text` in `font` at `size` points.
    pub(crate) fn width(&self, font: FontId, size: f32, text: &str) -> f32 {
        text.chars().map(|c| self.glyph(font, c).advance).sum::<f32>() * size
    }
}

/// Ascent and descent of the DejaVu fonts, in ems (the line box of a text run).
pub(crate) const ASCENT: f32 = 0.93;
pub(crate) const DESCENT: f32 = 0.24;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glyphs_and_fallbacks() {
        let fonts = Fonts::new().expect("fonts");
        let a = fonts.glyph(FontId::Regular, 'a');
        assert!(a.gid > 0 && a.advance > 0.3 && a.advance < 1.0, "{a:?}");
        for bullet in ['\u{2022}', '\u{25E6}', '\u{25AA}'] {
            assert!(fonts.glyph(FontId::Regular, bullet).gid > 0, "{bullet}");
        }
        assert_eq!(fonts.glyph(FontId::Regular, '\u{4E2D}').gid, 0, "no CJK in DejaVu");
        let w = fonts.width(FontId::Mono, 10.0, "abc");
        assert!((w - 3.0 * 6.02).abs() < 0.1, "{w}");
    }
}

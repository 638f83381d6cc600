//! Shaping and direction: text becomes runs of positioned glyphs with rustybuzz (joined
//! Arabic, combining marks, ligatures, kerning), one run per font and bidi level, each glyph
//! with the text it shows (for the `ToUnicode` map). Levels come from the Unicode
//! bidirectional algorithm (`unicode-bidi`); lines put their runs in visual order
//! (`reorder`).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use rustybuzz::{Direction, ShapePlan, UnicodeBuffer};
use unicode_bidi::{BidiClass, BidiInfo, Level};

use super::fonts::{FontId, Fonts};

/// The text a glyph shows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cluster {
    /// Part of a cluster whose text another glyph carries.
    None,
    One(char),
    Many(Rc<str>),
}

/// A shaped glyph: advance, offset (ems) and the `hmtx` advance the PDF viewer assumes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Gl {
    pub gid: u16,
    pub adv: f32,
    pub hmtx: f32,
    pub dx: f32,
    pub dy: f32,
    pub text: Cluster,
}

/// Words shaped at most before the cache starts over (text repeats a lot of words).
const CACHE_WORDS: usize = 16_384;
const CACHE_WORD_BYTES: usize = 48;

/// Shaped words of one font and direction.
type Words = HashMap<Box<str>, Rc<[Gl]>>;

/// Shape plans and shaped words, per export.
#[derive(Default)]
pub(crate) struct Shaper {
    plans: RefCell<HashMap<(FontId, bool, rustybuzz::Script), Rc<ShapePlan>>>,
    words: RefCell<HashMap<(FontId, bool), Words>>,
    cached: std::cell::Cell<usize>,
}

impl Shaper {
    /// `text` in `font`, right to left when `rtl` (glyphs then come in visual order).
    pub(crate) fn shape(&self, fonts: &Fonts, font: FontId, text: &str, rtl: bool) -> Rc<[Gl]> {
        let cacheable = text.len() <= CACHE_WORD_BYTES;
        if cacheable {
            if let Some(found) = self.words.borrow().get(&(font, rtl)).and_then(|m| m.get(text)) {
                return found.clone();
            }
        }
        let glyphs: Rc<[Gl]> = self.shape_uncached(fonts, font, text, rtl).into();
        if cacheable {
            if self.cached.get() >= CACHE_WORDS {
                self.words.borrow_mut().clear();
                self.cached.set(0);
            }
            self.cached.set(self.cached.get() + 1);
            self.words.borrow_mut().entry((font, rtl)).or_default().insert(text.into(), glyphs.clone());
        }
        glyphs
    }

    fn shape_uncached(&self, fonts: &Fonts, font: FontId, text: &str, rtl: bool) -> Vec<Gl> {
        let loaded = fonts.get(font);
        let mut buffer = UnicodeBuffer::new();
        buffer.push_str(text);
        let direction = if rtl { Direction::RightToLeft } else { Direction::LeftToRight };
        buffer.set_direction(direction);
        buffer.guess_segment_properties();
        let script = buffer.script();
        let plan = self
            .plans
            .borrow_mut()
            .entry((font, rtl, script))
            .or_insert_with(|| Rc::new(ShapePlan::new(&loaded.face, direction, Some(script), None, &[])))
            .clone();
        let out = rustybuzz::shape_with_plan(&loaded.face, &plan, buffer);
        let (infos, positions) = (out.glyph_infos(), out.glyph_positions());
        let units = loaded.units;
        // Cluster starts in logical order, to find each cluster's text.
        let mut starts: Vec<usize> = infos.iter().map(|i| i.cluster as usize).collect();
        starts.sort_unstable();
        starts.dedup();
        let cluster_text = |start: usize| -> &str {
            let i = starts.partition_point(|&s| s <= start);
            let end = starts.get(i).copied().unwrap_or(text.len());
            text.get(start..end).unwrap_or("")
        };
        let mut glyphs = Vec::with_capacity(infos.len());
        let mut k = 0;
        while k < infos.len() {
            let cluster = infos[k].cluster as usize;
            let mut end = k;
            while end < infos.len() && infos[end].cluster as usize == cluster {
                end += 1;
            }
            let chars: Vec<char> = cluster_text(cluster).chars().collect();
            let n = end - k;
            for (j, (info, pos)) in infos[k..end].iter().zip(&positions[k..end]).enumerate() {
                let gid = u16::try_from(info.glyph_id).unwrap_or(0);
                let text = if n == chars.len() {
                    // One glyph per character: in logical order, reversed for right to left.
                    Cluster::One(chars[if rtl { n - 1 - j } else { j }])
                } else if j == 0 {
                    match chars.as_slice() {
                        [] => Cluster::None,
                        [c] => Cluster::One(*c),
                        // Readers (poppler, pdf.js) put a right-to-left run in logical order by
                        // reversing all its text, a ligature's included: give theirs reversed.
                        _ if rtl => Cluster::Many(chars.iter().rev().collect::<String>().into()),
                        _ => Cluster::Many(chars.iter().collect::<String>().into()),
                    }
                } else {
                    Cluster::None
                };
                if gid == 0 {
                    // Never draw the missing glyph (a default-ignorable character, say).
                    continue;
                }
                glyphs.push(Gl {
                    gid,
                    adv: pos.x_advance as f32 / units,
                    hmtx: loaded.advance(gid),
                    dx: pos.x_offset as f32 / units,
                    dy: pos.y_offset as f32 / units,
                    text,
                });
            }
            k = end;
        }
        glyphs
    }
}

/// Characters drawn with the font of the character before them (marks, joiners,
/// variation selectors, emoji modifiers).
fn sticks(c: char) -> bool {
    matches!(u32::from(c),
        0x0300..=0x036F | 0x0483..=0x0489 | 0x0591..=0x05BD | 0x05BF | 0x05C1..=0x05C2 | 0x05C4..=0x05C5
        | 0x05C7 | 0x0610..=0x061A | 0x064B..=0x065F | 0x0670 | 0x06D6..=0x06DC | 0x06DF..=0x06E4
        | 0x06E7..=0x06E8 | 0x06EA..=0x06ED | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x200C..=0x200D
        | 0x20D0..=0x20FF | 0x3099..=0x309A | 0xFE00..=0xFE0F | 0xFE20..=0xFE2F | 0x1F3FB..=0x1F3FF
        | 0xE0100..=0xE01EF)
}

/// Characters that are never drawn and need no font (controls, format characters).
fn ignorable(c: char) -> bool {
    c.is_control() || matches!(u32::from(c), 0x00AD | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F | 0xFEFF)
}

/// A run of one font and one level: byte range of the text.
pub(crate) struct Run {
    pub font: FontId,
    pub level: u8,
    pub start: usize,
    pub end: usize,
}

/// Splits `text` (asked in `want`) into runs of one font and one level; characters no font
/// has are left out (and recorded by [`Fonts::font_for`]).
pub(crate) fn runs(fonts: &Fonts, want: FontId, text: &str, level_at: &dyn Fn(usize) -> u8, out: &mut Vec<Run>) {
    let mut current: Option<Run> = None;
    for (i, c) in text.char_indices() {
        let end = i + c.len_utf8();
        let level = level_at(i);
        let font = match &current {
            Some(run) if sticks(c) && run.end == i => Some(run.font),
            _ if ignorable(c) => {
                if let Some(run) = current.as_mut().filter(|r| r.end == i) {
                    run.end = end;
                }
                continue;
            }
            _ => fonts.font_for(want, c),
        };
        let Some(font) = font else { continue };
        match &mut current {
            Some(run) if run.font == font && run.level == level && run.end == i => run.end = end,
            _ => {
                if let Some(run) = current.take() {
                    out.push(run);
                }
                current = Some(Run { font, level, start: i, end });
            }
        }
    }
    if let Some(run) = current {
        out.push(run);
    }
}

/// The bidi level of every byte of `text` in a paragraph of that direction, or `None` when
/// all are 0 (left-to-right text, the common case, costs one scan).
pub(crate) fn levels(text: &str, rtl: bool) -> Option<Vec<u8>> {
    let needs = rtl
        || text.chars().any(|c| {
            c >= '\u{0590}'
                && matches!(
                    unicode_bidi::bidi_class(c),
                    BidiClass::R
                        | BidiClass::AL
                        | BidiClass::RLE
                        | BidiClass::RLO
                        | BidiClass::RLI
                        | BidiClass::LRE
                        | BidiClass::LRO
                )
        });
    if !needs {
        return None;
    }
    let base = if rtl { Level::rtl() } else { Level::ltr() };
    let info = BidiInfo::new(text, Some(base));
    Some(info.levels.iter().map(|l| l.number()).collect())
}

/// Puts items of a line, given in logical order with their levels, in visual order (rule L2
/// of the bidirectional algorithm).
pub(crate) fn reorder<T>(items: &mut [T], level: impl Fn(&T) -> u8) {
    let Some(max) = items.iter().map(&level).max() else { return };
    if max == 0 {
        return;
    }
    let lowest_odd = items.iter().map(&level).min().unwrap_or(0) | 1;
    let mut l = max;
    while l >= lowest_odd {
        let mut i = 0;
        while i < items.len() {
            if level(&items[i]) >= l {
                let mut j = i;
                while j < items.len() && level(&items[j]) >= l {
                    j += 1;
                }
                items[i..j].reverse();
                i = j;
            } else {
                i += 1;
            }
        }
        l -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::super::system::SystemFonts;
    use super::*;

    #[test]
    fn arabic_is_joined_and_kept_in_logical_order() {
        let fonts = Fonts::new(SystemFonts::from_dirs(Vec::new())).expect("fonts");
        let shaper = Shaper::default();
        let text = "مرحبا";
        let mut out = Vec::new();
        runs(&fonts, FontId::REGULAR, text, &|_| 1, &mut out);
        assert_eq!(out.len(), 1);
        let glyphs = shaper.shape(&fonts, out[0].font, text, true);
        assert_eq!(glyphs.len(), 5);
        // Visual order: the last letter first, each glyph mapped back to its letter.
        let shown: String = glyphs
            .iter()
            .rev()
            .map(|g| match &g.text {
                Cluster::One(c) => c.to_string(),
                Cluster::Many(s) => s.to_string(),
                Cluster::None => String::new(),
            })
            .collect();
        assert_eq!(shown, text);
        // Joined forms: the initial meem is not the isolated one.
        let isolated = shaper.shape(&fonts, out[0].font, "م", true);
        assert_ne!(glyphs.last().map(|g| g.gid), isolated.first().map(|g| g.gid));
        assert!(glyphs.iter().all(|g| g.gid != 0));
    }

    #[test]
    fn controls_and_format_characters_need_no_font() {
        let fonts = Fonts::new(SystemFonts::from_dirs(Vec::new())).expect("fonts");
        let mut out = Vec::new();
        let text = "a\u{1}b\u{200B}c";
        runs(&fonts, FontId::REGULAR, text, &|_| 0, &mut out);
        assert_eq!(out.len(), 1, "one run: the shaper hides them");
        let glyphs = Shaper::default().shape(&fonts, out[0].font, &text[out[0].start..out[0].end], false);
        assert!(glyphs.iter().all(|g| g.gid != 0));
        let shown: Vec<&Cluster> = glyphs.iter().map(|g| &g.text).filter(|t| **t != Cluster::None).collect();
        for c in ['a', 'b', 'c'] {
            assert!(shown.contains(&&Cluster::One(c)), "{c}: {shown:?}");
        }
        assert!(fonts.warnings().is_empty(), "{:?}", fonts.warnings());
    }

    #[test]
    fn levels_and_visual_order() {
        assert_eq!(levels("plain text", false), None);
        let mixed = levels("abc שלום def", false).expect("levels");
        assert_eq!(mixed[0], 0);
        assert_eq!(mixed[4], 1);
        let mut items = vec![(0, 'a'), (1, 'x'), (1, 'y'), (0, 'b')];
        reorder(&mut items, |i| i.0);
        assert_eq!(items.iter().map(|i| i.1).collect::<String>(), "ayxb");
    }
}

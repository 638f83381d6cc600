//! Setting one line: runs in visual order (bidi rule L2), the baseline from the tallest run
//! or picture, alignment (a right-to-left paragraph starts at the right), backgrounds,
//! underline and strike-through, link areas, the destinations of the ids starting on it;
//! runs of one look drawn as one text operation.

use super::fonts::{ASCENT, DESCENT};
use super::layout::{Line, Lines, Op, ParaLook, Piece, LEADING};
use super::shape::reorder;
use crate::model::Align;

/// The line being filled.
pub(crate) struct LineBuilder {
    pub pieces: Vec<Piece>,
    pub used: f32,
    pub width: f32,
    pub look: ParaLook,
}

impl LineBuilder {
    pub(crate) fn push(&mut self, piece: Piece) {
        self.used += piece.width;
        self.pieces.push(piece);
    }

    pub(crate) fn extend(&mut self, pieces: Vec<Piece>, width: f32) {
        self.used += width;
        self.pieces.extend(pieces);
    }

    pub(crate) fn finish(&mut self, out: &mut dyn Lines) {
        out.put(set_line(std::mem::take(&mut self.pieces), self.used, self.width, self.look));
        self.used = 0.0;
    }
}

/// Positions a line's pieces: baseline, alignment, decorations and link areas.
fn set_line(mut pieces: Vec<Piece>, line_w: f32, width: f32, look: ParaLook) -> Line {
    let ParaLook { base, align, kind } = look;
    reorder(&mut pieces, |p| p.level);
    let mut ascent = 0.0f32;
    let mut descent = 0.0f32;
    let mut largest = 0.0f32;
    for p in &pieces {
        if let Some((_, h)) = p.image {
            ascent = ascent.max(h);
        } else {
            ascent = ascent.max(p.size * ASCENT + p.rise);
            descent = descent.max(p.size * DESCENT - p.rise);
            largest = largest.max(p.size);
        }
    }
    if pieces.iter().all(|p| p.image.is_some()) {
        // A line of pictures (or an empty line) still has the text's descent.
        descent = descent.max(base.size * DESCENT);
        if pieces.is_empty() {
            ascent = base.size * ASCENT;
            largest = base.size;
        }
    }
    let gap = largest.max(if pieces.is_empty() { base.size } else { 0.0 }) * LEADING;
    let baseline = ascent + gap / 2.0;
    let height = ascent + descent + gap;
    let mut x = match (align, base.rtl) {
        (Align::Center, _) => ((width - line_w) / 2.0).max(0.0),
        (Align::End, false) | (Align::Start | Align::Justify, true) => (width - line_w).max(0.0),
        (Align::Start | Align::Justify, false) | (Align::End, true) => 0.0,
    };
    let mut ops: Vec<Op> = Vec::with_capacity(pieces.len() * 2);
    let mut texts: Vec<Op> = Vec::with_capacity(pieces.len());
    let mut decorations: Vec<Op> = Vec::new();
    let mut links: Vec<Op> = Vec::new();
    let mut refs: Vec<Op> = Vec::new();
    for p in pieces {
        let w = p.width;
        if !p.ids.is_empty() {
            refs.push(Op::Dest { x, y: 0.0, ids: p.ids });
        }
        if let Some(note) = p.note {
            if !refs.contains(&Op::NoteRef(note)) {
                refs.push(Op::NoteRef(note));
            }
        }
        if let Some((image, h)) = p.image {
            texts.push(Op::Image { x, y: baseline - h, w, h, image });
        } else {
            let y = baseline - p.rise;
            if let Some(bg) = p.background {
                ops.push(Op::Fill { x, y: y - p.size * ASCENT, w, h: p.size * (ASCENT + DESCENT), color: bg });
            }
            if p.underline {
                decorations.push(Op::Fill { x, y: y + p.size * 0.12, w, h: (p.size * 0.055).max(0.4), color: p.color });
            }
            if p.strike {
                decorations.push(Op::Fill { x, y: y - p.size * 0.3, w, h: (p.size * 0.055).max(0.4), color: p.color });
            }
            // Runs of one look are drawn as one text operation.
            match texts.last_mut() {
                Some(Op::Text { font, size, color, y: ty, glyphs, skew, .. })
                    if *font == p.font && *size == p.size && *color == p.color && *ty == y && *skew == p.skew =>
                {
                    glyphs.extend(p.glyphs);
                }
                _ => texts.push(Op::Text {
                    x,
                    y,
                    font: p.font,
                    size: p.size,
                    color: p.color,
                    skew: p.skew,
                    glyphs: p.glyphs,
                }),
            }
        }
        if let Some(to) = p.link {
            let (top, h) = (baseline - ascent, height);
            match links.last_mut() {
                Some(Op::Link { x: lx, w: lw, to: lt, .. }) if *lt == to && (*lx + *lw - x).abs() < 0.01 => *lw += w,
                _ => links.push(Op::Link { x, y: top.max(0.0), w, h, to }),
            }
        }
        x += w;
    }
    ops.extend(texts);
    ops.extend(decorations);
    ops.extend(links);
    ops.extend(refs);
    Line { height, ops, kind }
}

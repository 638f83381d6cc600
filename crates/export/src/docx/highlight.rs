//! Highlights: `<mark>` and background colours as Word's `w:highlight` where Word has the
//! colour (the nearest of its 16, when close), else as run shading (`w:shd`).

use crate::model::{Rgb, Style};

/// Word's highlight colours (`w:highlight`), by name.
const HIGHLIGHTS: [(&str, Rgb); 16] = [
    ("yellow", Rgb(0xFF, 0xFF, 0x00)),
    ("green", Rgb(0x00, 0xFF, 0x00)),
    ("cyan", Rgb(0x00, 0xFF, 0xFF)),
    ("magenta", Rgb(0xFF, 0x00, 0xFF)),
    ("blue", Rgb(0x00, 0x00, 0xFF)),
    ("red", Rgb(0xFF, 0x00, 0x00)),
    ("darkBlue", Rgb(0x00, 0x00, 0x80)),
    ("darkCyan", Rgb(0x00, 0x80, 0x80)),
    ("darkGreen", Rgb(0x00, 0x80, 0x00)),
    ("darkMagenta", Rgb(0x80, 0x00, 0x80)),
    ("darkRed", Rgb(0x80, 0x00, 0x00)),
    ("darkYellow", Rgb(0x80, 0x80, 0x00)),
    ("darkGray", Rgb(0x80, 0x80, 0x80)),
    ("lightGray", Rgb(0xC0, 0xC0, 0xC0)),
    ("black", Rgb(0x00, 0x00, 0x00)),
    ("white", Rgb(0xFF, 0xFF, 0xFF)),
];

/// How far (Euclidean, in sRGB units) a colour may be from one of Word's highlight colours
/// and still be written as that highlight.
const HIGHLIGHT_DISTANCE: u32 = 60;

/// The Word highlight colour nearest to `c`, when it is close.
pub(crate) fn nearest_highlight(c: Rgb) -> Option<&'static str> {
    let d = |h: Rgb| {
        let dr = i32::from(c.0) - i32::from(h.0);
        let dg = i32::from(c.1) - i32::from(h.1);
        let db = i32::from(c.2) - i32::from(h.2);
        (dr * dr + dg * dg + db * db) as u32
    };
    HIGHLIGHTS
        .iter()
        .map(|(name, h)| (*name, d(*h)))
        .min_by_key(|(_, dist)| *dist)
        .filter(|(_, dist)| *dist <= HIGHLIGHT_DISTANCE * HIGHLIGHT_DISTANCE)
        .map(|(name, _)| name)
}

/// A run's highlight (`w:highlight`) and shading (`w:shd`): `<mark>` is yellow unless a
/// background says otherwise; a background near one of Word's highlight colours (white
/// and black aside, which pasted text carries as no highlight at all) is that highlight;
/// any other background stays shading.
pub(super) fn highlight(style: &Style) -> (Option<&'static str>, Option<Rgb>) {
    match (style.mark, style.background) {
        (true, None) => (Some("yellow"), None),
        (true, Some(bg)) => match nearest_highlight(bg) {
            Some(name) => (Some(name), None),
            None => (None, Some(bg)),
        },
        (false, Some(bg)) => match nearest_highlight(bg).filter(|n| !matches!(*n, "white" | "black")) {
            Some(name) => (Some(name), None),
            None => (None, Some(bg)),
        },
        (false, None) => (None, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlights_are_words_colours_when_close() {
        assert_eq!(nearest_highlight(Rgb(0xFF, 0xFF, 0x00)), Some("yellow"));
        assert_eq!(nearest_highlight(Rgb(0xFF, 0xF0, 0x20)), Some("yellow"));
        assert_eq!(nearest_highlight(Rgb(0x90, 0xEE, 0x90)), None);
        let mark = |bg| Style { mark: true, background: bg, ..Style::default() };
        assert_eq!(highlight(&mark(None)), (Some("yellow"), None));
        assert_eq!(highlight(&mark(Some(Rgb(0, 0xFF, 0xFF)))), (Some("cyan"), None));
        assert_eq!(highlight(&mark(Some(Rgb(0x90, 0xEE, 0x90)))), (None, Some(Rgb(0x90, 0xEE, 0x90))));
        let span = |bg| Style { background: Some(bg), ..Style::default() };
        assert_eq!(highlight(&span(Rgb(0xFF, 0xFF, 0xFF))), (None, Some(Rgb(0xFF, 0xFF, 0xFF))));
        assert_eq!(highlight(&span(Rgb(0xFF, 0x00, 0x00))), (Some("red"), None));
    }
}

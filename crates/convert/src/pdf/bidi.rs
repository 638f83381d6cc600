//! Right-to-left text back in logical order.
//!
//! A PDF draws text in visual order: a line of Arabic or Hebrew comes out of the page left to
//! right, each word mirrored (`تاغللا ددعتم راعشإ` for `إشعار متعدد اللغات`). Each line is put
//! back in logical order by the Unicode bidirectional algorithm (UAX #9, the `unicode-bidi`
//! crate) run on the visual text: its reordering (rule L2) undoes itself for text without
//! explicit embeddings, so numbers and Latin words inside a right-to-left line stay as they
//! read, and the words around them come back in order. The line's direction is that of most
//! of its letters. Arabic presentation forms (the shaped letters of U+FB50–U+FDFF and
//! U+FE70–U+FEFF, which some PDFs map their glyphs to) become their letters (NFKC), so that
//! search and the AI see ordinary text, and Hebrew presentation forms likewise.
//!
//! Left as it is: a table's columns keep their left-to-right order, and a paragraph's lines
//! are joined in the order they stand on the page (top to bottom, which is right).

use std::borrow::Cow;

use unicode_bidi::{BidiInfo, Level};
use unicode_normalization::UnicodeNormalization;

use super::layout::{SUB_END, SUB_START, SUP_END, SUP_START};

/// A character of a right-to-left script: Hebrew, Arabic, Syriac, Thaana, NKo, Samaritan,
/// Mandaic and their presentation forms, the RTL blocks of the SMP.
pub(super) fn is_rtl(c: char) -> bool {
    matches!(c as u32, 0x0590..=0x08FF | 0xFB1D..=0xFDFF | 0xFE70..=0xFEFE | 0x10800..=0x10FFF | 0x1E800..=0x1EFFF)
}

/// Presentation forms (Hebrew and Arabic): letters shaped for display.
fn is_presentation_form(c: char) -> bool {
    matches!(c as u32, 0xFB1D..=0xFDFF | 0xFE70..=0xFEFE)
}

/// Whether text reads right to left: its first strong letter is of a right-to-left script
/// (the rule of HTML's `dir="auto"`, so that the section shows as the editor would guess).
pub(super) fn reads_rtl(text: &str) -> bool {
    text.chars().find(|c| c.is_alphabetic()).is_some_and(is_rtl)
}

/// One line's text in logical order, given in the visual order its page draws it. A line
/// without right-to-left letters is returned as it is.
pub(super) fn logical(visual: &str) -> Cow<'_, str> {
    if !visual.chars().any(is_rtl) {
        return Cow::Borrowed(visual);
    }
    let (mut rtl, mut ltr) = (0usize, 0usize);
    for c in visual.chars().filter(|c| c.is_alphabetic()) {
        if is_rtl(c) {
            rtl += 1;
        } else {
            ltr += 1;
        }
    }
    let level = if rtl >= ltr { Level::rtl() } else { Level::ltr() };
    let info = BidiInfo::new(visual, Some(level));
    let mut out = String::with_capacity(visual.len());
    for para in &info.paragraphs {
        let (levels, runs) = info.visual_runs(para, para.range.clone());
        for run in runs {
            let Some(text) = visual.get(run.clone()) else { continue };
            if levels.get(run.start).is_some_and(|l| l.is_rtl()) {
                out.extend(text.chars().rev().map(mirror_mark));
            } else {
                out.push_str(text);
            }
        }
    }
    if out.chars().any(is_presentation_form) {
        out = out.chars().flat_map(|c| if is_presentation_form(c) { c.nfkc().collect() } else { vec![c] }).collect();
    }
    if !marks_balanced(&out) {
        out.retain(|c| !(SUP_START..=SUB_END).contains(&c));
    }
    Cow::Owned(out)
}

/// A superscript's or subscript's start mark read backwards is its end mark.
fn mirror_mark(c: char) -> char {
    match c {
        SUP_START => SUP_END,
        SUP_END => SUP_START,
        SUB_START => SUB_END,
        SUB_END => SUB_START,
        c => c,
    }
}

/// Whether every superscript and subscript mark opens before it closes, unnested.
fn marks_balanced(text: &str) -> bool {
    let mut open = None;
    for c in text.chars() {
        match c {
            SUP_START | SUB_START if open.is_none() => open = Some(c),
            SUP_END if open == Some(SUP_START) => open = None,
            SUB_END if open == Some(SUB_START) => open = None,
            SUP_START | SUB_START | SUP_END | SUB_END => return false,
            _ => {}
        }
    }
    open.is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a PDF draws for a right-to-left line: the logical text in visual order.
    fn drawn(logical_text: &str) -> String {
        let info = BidiInfo::new(logical_text, None);
        let para = &info.paragraphs[0];
        info.reorder_line(para, para.range.clone()).into_owned()
    }

    #[test]
    fn a_line_drawn_right_to_left_reads_in_logical_order() {
        for text in [
            "إشعار متعدد اللغات",
            "שלום עולם, זהו מסמך",
            "این یک سند فارسی است",
            "رقم الفاتورة INV-2024-0042 بتاريخ 2024",
            "المبلغ: 1,250.00 دولار (شامل الضريبة)",
            "עמוד 3 מתוך 12",
        ] {
            let visual = drawn(text);
            assert_ne!(visual, text, "the test draws it reversed");
            assert_eq!(logical(&visual), text, "from {visual:?}");
        }
    }

    #[test]
    fn a_left_to_right_line_with_a_right_to_left_word_keeps_its_order() {
        let text = "invoice INV-2024-0042 (رقم الفاتورة) is due";
        assert_eq!(logical(&drawn(text)), text);
        let text = "The word שלום means peace.";
        assert_eq!(logical(&drawn(text)), text);
    }

    #[test]
    fn text_without_right_to_left_letters_is_untouched() {
        assert!(matches!(logical("Plain text, 12 (three)"), Cow::Borrowed(_)));
        assert!(matches!(logical("日本語のテキスト"), Cow::Borrowed(_)));
    }

    #[test]
    fn presentation_forms_become_letters() {
        // مرحبا and لا as shaped glyphs (initial, medial, final forms; the lam-alef ligature).
        let shaped = "\u{FEE3}\u{FEAE}\u{FEA3}\u{FE92}\u{FE8E} \u{FEFB}";
        assert_eq!(logical(&drawn(shaped)), "مرحبا لا");
    }

    #[test]
    fn superscript_marks_stay_around_their_word() {
        let text = format!("نص{SUP_START}1{SUP_END} آخر");
        let visual = drawn(&text);
        let back = logical(&visual);
        assert!(marks_balanced(&back), "{back:?}");
        assert!(back.starts_with("نص"), "{back:?}");
        assert!(back.contains('1'), "{back:?}");
    }

    proptest::proptest! {
        /// Any line, of any scripts and controls: no panic, and every character kept (the
        /// reordering only moves them) unless it is a presentation form or a stray mark.
        #[test]
        fn reordering_keeps_every_character(text in "[a-z0-9 ().,\u{05D0}-\u{05EA}\u{0621}-\u{064A}\u{202A}-\u{202E}\u{2066}-\u{2069}\u{FDD0}-\u{FDD3}]{0,40}") {
            let back = logical(&text);
            let sorted = |t: &str| {
                let mut v: Vec<char> = t.chars().filter(|c| !(SUP_START..=SUB_END).contains(c)).collect();
                v.sort_unstable();
                v
            };
            proptest::prop_assert_eq!(sorted(&back), sorted(&text));
        }
    }

    #[test]
    fn the_direction_is_that_of_the_first_letter() {
        assert!(reads_rtl("1. مرحبا world"));
        assert!(!reads_rtl("Hello مرحبا"));
        assert!(!reads_rtl("2024"));
    }
}

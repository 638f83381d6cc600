//! Bounds on the lengths a `style` declaration may give: box sizes within the container, no
//! negative margins or indents, small paddings and borders, font sizes that cannot grow
//! without limit. Without them one transparent link with `padding: 5000px` (or a
//! `font-size` of the same) covers a whole page and takes the clicks meant for it, and
//! a `margin-left: -5000px` pulls content out of the document's frame.
//!
//! A length out of bounds is clamped to the bound rather than dropped: the document keeps the
//! nearest harmless layout (a table 2000px wide becomes as wide as allowed instead of
//! shrinking to its content). A value that cannot be bounded (a viewport or container
//! unit, `max-content`, an unreadable number) drops the declaration, as does a negative
//! value where CSS allows none. Font-relative lengths are bounded as if `1em` were 16px.

/// Pixels per unit of the absolute and font-relative units, at a 16px font (`ex` and `ch`
/// taken as half an `em`). Any other unit makes a bounded declaration go.
const UNITS: [(&str, f64); 11] = [
    ("px", 1.0),
    ("pt", 96.0 / 72.0),
    ("pc", 16.0),
    ("in", 96.0),
    ("cm", 96.0 / 2.54),
    ("mm", 96.0 / 25.4),
    ("q", 96.0 / 101.6),
    ("em", 16.0),
    ("rem", 16.0),
    ("ex", 8.0),
    ("ch", 8.0),
];

/// Units relative to the parent's font size: in `font-size` they are rewritten relative to
/// the root's (`rem`), so that nested elements cannot multiply them.
const PARENT_FONT_UNITS: [(&str, f64); 4] = [("em", 1.0), ("ex", 0.5), ("ch", 0.5), ("%", 0.01)];

/// Keywords a bounded property may not take: sizes set by the content (a long line makes
/// them as wide as it is) and `larger`, which grows again in each nested element.
fn unbounded_keyword(word: &str) -> bool {
    let w = word.to_ascii_lowercase();
    w.contains("content") || w == "larger"
}

/// The range a bounded property's lengths are kept in.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    /// In pixels (see [`UNITS`]).
    px: (f64, f64),
    /// In percent; `None`: a percentage drops the declaration.
    percent: Option<(f64, f64)>,
    /// A plain number (`line-height`), else a number without unit is read as pixels (as
    /// browsers do in quirks mode).
    number: Option<(f64, f64)>,
    /// Whether a negative value is clamped (CSS allows it, we do not) rather than dropping
    /// the declaration (CSS refuses it: the browser would ignore the declaration).
    clamp_negative: bool,
    /// `font-size`: parent-relative units become `rem`.
    font_size: bool,
}

const fn bounds(px_max: f64, percent_max: Option<f64>, clamp_negative: bool) -> Bounds {
    let percent = match percent_max {
        Some(p) => Some((0.0, p)),
        None => None,
    };
    Bounds { px: (0.0, px_max), percent, number: None, clamp_negative, font_size: false }
}

/// Widths and heights: at most the container's width, and 10 inches.
const SIZE: Bounds = bounds(960.0, Some(100.0), false);
/// Paddings: an inline link's padding widens the area it takes clicks in without moving
/// anything, so it stays small.
const PADDING: Bounds = bounds(24.0, Some(5.0), false);
/// Margins and the first line's indent: never negative, at most 2.5 inches.
const OFFSET: Bounds = bounds(240.0, Some(25.0), true);
/// Border widths (a border also takes clicks).
const BORDER: Bounds = bounds(16.0, None, false);
/// The spacing of table cells.
const SPACING: Bounds = bounds(24.0, None, false);
/// The thickness in `text-decoration`.
const DECORATION: Bounds = bounds(8.0, Some(50.0), false);
/// Font sizes: 72pt at most.
const FONT_SIZE: Bounds = Bounds { font_size: true, ..bounds(96.0, None, false) };
/// Line heights: four lines' worth.
const LINE_HEIGHT: Bounds = Bounds { number: Some((0.0, 4.0)), ..bounds(96.0, Some(400.0), false) };
/// `vertical-align`: raised or lowered by at most an `em`.
const VERTICAL: Bounds =
    Bounds { px: (-16.0, 16.0), percent: Some((-50.0, 50.0)), number: None, clamp_negative: true, font_size: false };

/// The bounds of a property of the allow-list, when its values hold lengths that matter.
/// (`border-radius` and `background` positions change neither size nor place.)
fn bounds_of(property: &str) -> Option<Bounds> {
    Some(match property {
        "width" | "height" | "min-width" | "min-height" | "max-width" | "max-height" => SIZE,
        p if p.starts_with("padding") => PADDING,
        p if p.starts_with("margin") => OFFSET,
        "text-indent" => OFFSET,
        "border-spacing" => SPACING,
        p if p.starts_with("border") && !p.contains("radius") && !p.ends_with("style") && !p.ends_with("color") => {
            if p == "border-collapse" {
                return None;
            }
            BORDER
        }
        "font-size" => FONT_SIZE,
        "line-height" => LINE_HEIGHT,
        "vertical-align" => VERTICAL,
        "text-decoration" => DECORATION,
        _ => return None,
    })
}

/// `value` (already checked harmless by the style filter) with its lengths within the
/// bounds of `property`; `None` when the declaration goes.
pub(crate) fn bound(property: &str, value: &str) -> Option<String> {
    let Some(b) = bounds_of(property) else { return Some(value.to_owned()) };
    let mut out = String::with_capacity(value.len());
    let mut token = String::new();
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    for c in value.chars() {
        let separator = quote.is_none() && depth == 0 && (c == ' ' || c == ',');
        if separator {
            out.push_str(&bound_token(&token, b)?);
            token.clear();
            out.push(c);
            continue;
        }
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '"' | '\'') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => depth = depth.saturating_sub(1),
            _ => {}
        }
        token.push(c);
    }
    out.push_str(&bound_token(&token, b)?);
    Some(out)
}

/// One token of a bounded value: a number is kept within the bounds (or refused), anything
/// else (a keyword, a colour, a function) passes unless it sizes by the content.
fn bound_token(token: &str, b: Bounds) -> Option<String> {
    let Some((n, unit)) = number(token) else {
        let numeric = |s: &str| s.starts_with(|c: char| c.is_ascii_digit() || c == '.');
        let starts_like_number = numeric(token) || (token.starts_with(['+', '-']) && numeric(&token[1..]));
        return (!starts_like_number && !unbounded_keyword(token)).then(|| token.to_owned());
    };
    let unit = unit.to_ascii_lowercase();
    if n < 0.0 && !b.clamp_negative {
        return None;
    }
    if b.font_size {
        if let Some((_, factor)) = PARENT_FONT_UNITS.iter().find(|(u, _)| *u == unit) {
            return Some(
                clamped(n * factor, 0.0, b.px.1 / 16.0, "rem").unwrap_or_else(|| format!("{}rem", fmt(n * factor))),
            );
        }
    }
    if unit == "%" {
        let (lo, hi) = b.percent?;
        return Some(clamped(n, lo, hi, "%").unwrap_or_else(|| token.to_owned()));
    }
    if unit.is_empty() {
        if let Some((lo, hi)) = b.number {
            return Some(clamped(n, lo, hi, "").unwrap_or_else(|| token.to_owned()));
        }
    }
    let per_px = if unit.is_empty() { 1.0 } else { UNITS.iter().find(|(u, _)| *u == unit)?.1 };
    Some(clamped(n, b.px.0 / per_px, b.px.1 / per_px, &unit).unwrap_or_else(|| token.to_owned()))
}

/// `n` clamped into `lo..=hi` and written with `unit`, when it was outside (`None`: it was
/// inside, keep the token as written). The bound is rounded towards zero to two decimals,
/// so that the result is inside too and reads back the same (idempotence).
fn clamped(n: f64, lo: f64, hi: f64, unit: &str) -> Option<String> {
    const SLACK: f64 = 1e-9;
    let v = if n > hi + SLACK {
        (hi * 100.0).floor() / 100.0
    } else if n < lo - SLACK {
        (lo * 100.0).ceil() / 100.0
    } else {
        return None;
    };
    Some(format!("{}{unit}", fmt(v)))
}

/// A number with at most two decimals, without trailing zeros.
fn fmt(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" || s.is_empty() {
        "0".to_owned()
    } else {
        s.to_owned()
    }
}

/// A CSS number with its unit (letters or `%`, possibly empty): `-1.5e2px`, `.5em`, `10%`.
fn number(token: &str) -> Option<(f64, &str)> {
    let b = token.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let digits = |mut i: usize| {
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        i
    };
    let int_end = digits(i);
    let mut end = int_end;
    if b.get(end) == Some(&b'.') && b.get(end + 1).is_some_and(u8::is_ascii_digit) {
        end = digits(end + 1);
    }
    if end == i {
        return None;
    }
    if matches!(b.get(end), Some(b'e' | b'E')) {
        let mut j = end + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if b.get(j).is_some_and(u8::is_ascii_digit) {
            end = digits(j);
        }
    }
    let unit = &token[end..];
    if !(unit.is_empty() || unit == "%" || unit.bytes().all(|c| c.is_ascii_alphabetic())) {
        return None;
    }
    let n: f64 = token[..end].parse().ok()?;
    n.is_finite().then_some((n, unit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(number("12px"), Some((12.0, "px")));
        assert_eq!(number("-1.5e2px"), Some((-150.0, "px")));
        assert_eq!(number(".5em"), Some((0.5, "em")));
        assert_eq!(number("+10%"), Some((10.0, "%")));
        assert_eq!(number("0"), Some((0.0, "")));
        assert_eq!(number("1em"), Some((1.0, "em")));
        assert_eq!(number("1e999px"), None);
        assert_eq!(number("px"), None);
        assert_eq!(number("-"), None);
        assert_eq!(number("1.px"), None);
        assert_eq!(number("#fff"), None);
        assert_eq!(number("1px2"), None);
    }

    #[test]
    fn formats() {
        assert_eq!(fmt(960.0), "960");
        assert_eq!(fmt(25.2), "25.2");
        assert_eq!(fmt(-0.0), "0");
        assert_eq!(fmt(0.126), "0.13");
    }
}

//! Reading order across columns: a page set in two columns reads the left column, then the
//! right one.
//!
//! The gutter is a vertical band, in the middle half of the page's text, that no word
//! crosses on most of the page (a heading or a figure across both columns may), with
//! columns at least a quarter of the text's width on both sides, most of whose lines run
//! across their column, with as many lines as each other within a factor of two (a
//! table's columns of labels, numbers or definitions are not such columns). Most writers draw a page
//! column by column, and such a page is read as drawn. A page drawn row by row (lines cut
//! at the gutter, or the drawing going back and forth between the columns) is reordered:
//! a line drawn across the gutter is cut there, and between the lines that span both
//! columns, the left column's lines come first, then the right column's, each in the order
//! drawn.

use super::layout::Line;

/// The narrowest gutter, in points.
const MIN_GUTTER: f32 = 6.0;
/// The fewest lines on each side of a gutter.
const MIN_SIDE_LINES: usize = 5;
/// Pages with more lines than this are left in the order drawn.
const MAX_PAGE_LINES: usize = 5_000;

/// The lines of every page, each page in reading order.
pub(super) fn reorder(lines: Vec<Line>) -> Vec<Line> {
    let mut out = Vec::with_capacity(lines.len());
    let mut page: Vec<Line> = Vec::new();
    for line in lines {
        if page.last().is_some_and(|l| l.page != line.page) {
            out.extend(reorder_page(std::mem::take(&mut page)));
        }
        page.push(line);
    }
    out.extend(reorder_page(page));
    out
}

/// The stretches of a line that hold text: its words, joined over the spaces between them.
fn stretches(line: &Line) -> Vec<(f32, f32)> {
    let mut out: Vec<(f32, f32)> = Vec::new();
    let gap = line.size.max(1.0) * 1.2;
    for &(_, x, end) in &line.runs {
        match out.last_mut() {
            Some(last) if x - last.1 <= gap => last.1 = last.1.max(end),
            _ => out.push((x, end)),
        }
    }
    out
}

/// The gutter of a page's lines, as the band (left, right) free of text.
fn gutter(lines: &[Line]) -> Option<(f32, f32)> {
    let left = lines.iter().map(|l| l.x).fold(f32::INFINITY, f32::min);
    let right = lines.iter().map(|l| l.end).fold(f32::NEG_INFINITY, f32::max);
    let width = right - left;
    if !(width.is_finite() && width > 4.0 * MIN_GUTTER) || lines.len() < MIN_SIDE_LINES {
        return None;
    }
    // How many lines have text over each point of the middle half.
    let from = left + width * 0.25;
    let steps = ((width * 0.5) as usize).min(2_000);
    let mut covered = vec![0usize; steps + 1];
    for line in lines {
        for (a, b) in stretches(line) {
            let first = ((a - from).max(0.0).ceil()) as usize;
            let last = ((b - from).floor().max(-1.0)) as isize;
            if last < 0 {
                continue;
            }
            for slot in covered.iter_mut().take((last as usize).min(steps) + 1).skip(first) {
                *slot += 1;
            }
        }
    }
    // The widest band crossed by at most a tenth of the lines.
    let allowed = (lines.len() / 10).max(1);
    let mut best: Option<(usize, usize)> = None;
    let mut start = None;
    for (i, count) in covered.iter().chain(std::iter::once(&usize::MAX)).enumerate() {
        match (start, *count <= allowed) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                if best.is_none_or(|(bs, be)| i - s > be - bs) {
                    best = Some((s, i));
                }
                start = None;
            }
            _ => {}
        }
    }
    let (s, e) = best?;
    let band = (from + s as f32, from + e as f32 - 1.0);
    if band.1 - band.0 < MIN_GUTTER {
        return None;
    }
    // Text on both sides, over most of the page's height, in columns at least a quarter
    // of the text's width (not a margin of line numbers), most lines running across their
    // column and as many lines on one side as on the other within a factor of two (not a
    // table's columns of labels, numbers or definitions).
    let pieces: Vec<(f32, (f32, f32))> =
        lines.iter().flat_map(|l| stretches(l).into_iter().map(|s| (l.y, s))).collect();
    let side = |left_side: bool| {
        let on: Vec<&(f32, (f32, f32))> = pieces
            .iter()
            .filter(|(_, (a, b))| if left_side { *b <= band.0 + 1.0 } else { *a >= band.1 - 1.0 })
            .collect();
        let top = on.iter().map(|p| p.0).fold(f32::INFINITY, f32::min);
        let bottom = on.iter().map(|p| p.0).fold(f32::NEG_INFINITY, f32::max);
        let (a, b) = on.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), p| (a.min(p.1 .0), b.max(p.1 .1)));
        // Text runs across its column (a table's column of labels or numbers does not).
        let full = on.iter().filter(|p| p.1 .1 - p.1 .0 >= (b - a) * 0.6).count();
        (if full * 2 >= on.len() { on.len() } else { 0 }, top, bottom, b - a)
    };
    let (n_left, top_left, bottom_left, width_left) = side(true);
    let (n_right, top_right, bottom_right, width_right) = side(false);
    let balanced = n_left.min(n_right) * 2 >= n_left.max(n_right);
    if n_left < MIN_SIDE_LINES
        || n_right < MIN_SIDE_LINES
        || !balanced
        || width_left < width * 0.25
        || width_right < width * 0.25
    {
        return None;
    }
    let top = lines.iter().map(|l| l.y).fold(f32::INFINITY, f32::min);
    let bottom = lines.iter().map(|l| l.y).fold(f32::NEG_INFINITY, f32::max);
    let shared = bottom_left.min(bottom_right) - top_left.max(top_right);
    (shared >= (bottom - top) * 0.5).then_some(band)
}

/// Where a line falls: 0 the left column, 1 the right one, 2 across both (or inside the
/// gutter, as a page number), 3 across both but cut in two at `.1`.
fn side(line: &Line, gutter_left: f32, gutter_right: f32) -> (u8, usize) {
    if line.end <= gutter_left + 1.0 {
        (0, 0)
    } else if line.x >= gutter_right - 1.0 {
        (1, 0)
    } else if line.x >= gutter_left - 1.0 && line.end <= gutter_right + 1.0 {
        (2, 0)
    } else {
        // Cut where a word starts right of the gutter after one that ends left of it.
        match line.runs.windows(2).position(|w| w[0].2 <= gutter_left + 1.0 && w[1].1 >= gutter_right - 1.0) {
            Some(i) => (3, i + 1),
            None => (2, 0),
        }
    }
}

fn reorder_page(lines: Vec<Line>) -> Vec<Line> {
    if lines.len() > MAX_PAGE_LINES {
        return lines;
    }
    let Some((gutter_left, gutter_right)) = gutter(&lines) else { return lines };
    let sides: Vec<(u8, usize)> = lines.iter().map(|l| side(l, gutter_left, gutter_right)).collect();
    // Pages drawn column by column are read in the order drawn; only pages drawn row by
    // row (lines across the gutter, or the drawing going back and forth) are reordered.
    let cut = sides.iter().filter(|s| s.0 == 3).count();
    let in_columns: Vec<u8> = sides.iter().map(|s| s.0).filter(|s| *s < 2).collect();
    let switches = in_columns.windows(2).filter(|w| w[0] != w[1]).count();
    if cut < MIN_SIDE_LINES && switches < (in_columns.len() / 4).max(4) {
        return lines;
    }
    let mut sorted: Vec<(u8, Line)> = Vec::with_capacity(lines.len());
    for (line, (side, at)) in lines.into_iter().zip(sides) {
        if side < 3 {
            sorted.push((side, line));
            continue;
        }
        match (line.part(0..at), line.part(at..line.runs.len())) {
            (Some(a), Some(b)) => {
                sorted.push((0, a));
                sorted.push((1, b));
            }
            _ => sorted.push((2, line)),
        }
    }
    // The lines across both columns part the page into bands, top down.
    let mut spans: Vec<f32> = sorted.iter().filter(|(side, _)| *side == 2).map(|(_, l)| l.y).collect();
    spans.sort_by(f32::total_cmp);
    let band_of = |y: f32| spans.partition_point(|s| *s <= y);
    let mut keyed: Vec<(usize, u8, usize, Line)> = sorted
        .into_iter()
        .enumerate()
        .map(|(i, (side, line))| {
            let band = band_of(line.y);
            // A spanning line opens its band: it sorts first in it.
            let (band, side) = if side == 2 { (band, 0) } else { (band, side + 1) };
            (band, side, i, line)
        })
        .collect();
    keyed.sort_by_key(|k| (k.0, k.1, k.2));
    keyed.into_iter().map(|k| k.3).collect()
}

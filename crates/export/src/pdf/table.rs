//! Tables: column widths from the content's narrowest and widest widths (as browsers do
//! for automatic layout, stretched to the available width), rows as tall as their
//! tallest cell, spans from the shared grid, a border around every cell.
//!
//! Rows linked by `rowspan` make one band that moves to the next page whole. A band taller
//! than a page is set row by row, and a row taller than a page is cut between lines of its
//! cells, each cell continuing at the top of the next slice. Header rows (`<thead>` rows, or
//! leading rows of `<th>` cells) are repeated at the top of every page the table continues on.

use std::collections::HashMap;

use super::fonts::{FontId, ASCENT, DESCENT};
use super::layout::{Atom, Ctx, Kind, Layout, Line, Op, ParaLook, TextBase, BODY_SIZE, HEADING_SIZES};
use super::LineSink;
use crate::model::{Align, Block, Rgb, Table};
use crate::table::{Grid, Slot};

/// Cell padding (points).
const PAD: f32 = 4.0;
const BORDER: Rgb = Rgb(0x99, 0x99, 0x99);
const BORDER_W: f32 = 0.6;
const HEADER_BG: Rgb = Rgb(0xF2, 0xF2, 0xF2);
/// Narrowest a column is made when there is room.
const MIN_COLUMN: f32 = 2.0 * PAD + 6.0;

struct CellBox {
    colspan: usize,
    rowspan: usize,
    lines: Vec<Line>,
    content_h: f32,
    background: Option<Rgb>,
}

/// A table being set: its grid, laid-out cells, column positions and row heights.
struct Sheet<'g> {
    grid: &'g Grid,
    boxes: Vec<CellBox>,
    box_at: HashMap<(usize, usize), usize>,
    xs: Vec<f32>,
    heights: Vec<f32>,
}

/// A cell of a row set on its own (a band too tall for a page).
struct Slice {
    x: f32,
    w: f32,
    lines: Vec<Line>,
    next: usize,
    background: Option<Rgb>,
}

impl Layout<'_> {
    /// Lays out a table into `sink`: bands that fit whole, rows cut to the sink's room.
    pub(crate) fn table(&mut self, table: &Table, width: f32, ctx: Ctx, sink: &mut dyn LineSink) {
        if !table.caption.is_empty() {
            let look = ParaLook {
                base: TextBase { size: 10.0, bold: true, rtl: false },
                align: Align::Start,
                kind: Kind::KeepWithNext,
            };
            let mut lines = Vec::new();
            self.paragraph(&table.caption, look, width, ctx.max_h, &mut lines);
            lines.push(Line::spacer(2.0));
            for line in lines {
                sink.emit(line);
            }
        }
        let grid = Grid::new(table);
        if grid.ncols == 0 || grid.nrows() == 0 {
            return;
        }
        let widths = self.column_widths(table, &grid, width, ctx);
        let mut xs = vec![0.0f32; grid.ncols + 1];
        for (i, w) in widths.iter().enumerate() {
            xs[i + 1] = xs[i] + w;
        }
        let cell_ctx = Ctx { tight: true, lists: 0, max_h: (ctx.max_h - 2.0 * PAD).max(20.0), ..ctx };

        let mut boxes: Vec<CellBox> = Vec::new();
        let mut box_at: HashMap<(usize, usize), usize> = HashMap::new();
        for r in 0..grid.nrows() {
            for c in 0..grid.ncols {
                let Slot::Start { cell, colspan, rowspan } = grid.slot(r, c) else { continue };
                let data = crate::table::cell(table, *cell);
                let inner = (xs[c + colspan] - xs[c] - 2.0 * PAD).max(1.0);
                let mut lines = Vec::new();
                for block in grid.content(table, *cell) {
                    self.block(block, inner, cell_ctx, &mut lines);
                }
                trim_spacers(&mut lines);
                let content_h = lines.iter().map(|l| l.height).sum();
                let background = data.background.or(data.header.then_some(HEADER_BG));
                box_at.insert((r, c), boxes.len());
                boxes.push(CellBox { colspan: *colspan, rowspan: *rowspan, lines, content_h, background });
            }
        }

        let min_row = BODY_SIZE * (ASCENT + DESCENT + 0.22) + 2.0 * PAD;
        let mut heights = vec![min_row; grid.nrows()];
        for (&(r, _), &i) in &box_at {
            if boxes[i].rowspan == 1 {
                heights[r] = heights[r].max(boxes[i].content_h + 2.0 * PAD);
            }
        }
        let mut spanning: Vec<(usize, usize)> =
            box_at.iter().filter(|(_, &i)| boxes[i].rowspan > 1).map(|(&(r, _), &i)| (r, i)).collect();
        spanning.sort_unstable();
        for (r, i) in spanning {
            let last = r + boxes[i].rowspan - 1;
            let have: f32 = heights[r..=last].iter().sum();
            let need = boxes[i].content_h + 2.0 * PAD;
            if need > have {
                heights[last] += need - have;
            }
        }

        let headers = table
            .rows
            .iter()
            .take_while(|row| row.header || (!row.cells.is_empty() && row.cells.iter().all(|c| c.header)))
            .count();
        let mut sheet = Sheet { grid: &grid, boxes, box_at, xs, heights };
        let mut header: Option<Line> = None;
        let mut repeating = false;
        let mut r = 0;
        while r < grid.nrows() {
            let mut end = r;
            let mut k = r;
            while k <= end {
                for c in 0..grid.ncols {
                    if let Slot::Start { rowspan, .. } = grid.slot(k, c) {
                        end = end.max(k + rowspan - 1);
                    }
                }
                k += 1;
            }
            let band_h: f32 = sheet.heights[r..=end].iter().sum();
            if r == 0 && end + 1 == headers && headers < grid.nrows() && band_h <= ctx.max_h / 3.0 {
                // The header band goes with the first row, and is repeated from the next page on.
                let mut line = sheet.band(r, end);
                line.kind = Kind::KeepWithNext;
                header = Some(Line { kind: Kind::Content, ..line.clone() });
                sink.emit(line);
            } else if band_h <= ctx.max_h {
                sink.emit(sheet.band(r, end));
            } else {
                for k in r..=end {
                    sheet.split_row(k, sink);
                }
            }
            r = end + 1;
            if !repeating && r > headers {
                if let Some(line) = header.take() {
                    sink.repeat(Some(line));
                    repeating = true;
                }
            }
        }
        if repeating {
            sink.repeat(None);
        }
    }

    fn column_widths(&mut self, table: &Table, grid: &Grid, width: f32, ctx: Ctx) -> Vec<f32> {
        let (mins, maxs) = self.column_measures(table, grid, ctx);
        crate::table::distribute(&mins, &maxs, width)
    }

    /// The narrowest and widest useful width of each column, padding included.
    fn column_measures(&mut self, table: &Table, grid: &Grid, ctx: Ctx) -> (Vec<f32>, Vec<f32>) {
        crate::table::column_bounds(grid, MIN_COLUMN, |id| {
            let (mut lo, mut hi) = (0.0f32, 0.0f32);
            for block in grid.content(table, id) {
                let (l, h) = self.measure(block, ctx);
                lo = lo.max(l);
                hi = hi.max(h);
            }
            (lo + 2.0 * PAD, hi + 2.0 * PAD)
        })
    }

    /// The narrowest width a block can be set in without overflowing (its widest word or
    /// picture) and the width it takes unbroken.
    fn measure(&mut self, block: &Block, ctx: Ctx) -> (f32, f32) {
        match block {
            Block::Paragraph { content, .. } | Block::Heading { content, .. } => {
                let size = match block {
                    Block::Heading { level, .. } => HEADING_SIZES[usize::from((*level).clamp(1, 6)) - 1],
                    _ => BODY_SIZE,
                };
                let bold = matches!(block, Block::Heading { .. });
                let atoms = self.atoms(content, TextBase { size, bold, rtl: false }, super::CONTENT_W, ctx.max_h);
                let (mut lo, mut hi, mut line) = (0.0f32, 0.0f32, 0.0f32);
                for atom in atoms {
                    match atom {
                        Atom::Word(_, w) => {
                            lo = lo.max(w.min(super::CONTENT_W / 3.0));
                            line += w;
                        }
                        Atom::Space(p) => line += p.width,
                        Atom::Break => {
                            hi = hi.max(line);
                            line = 0.0;
                        }
                    }
                }
                (lo, hi.max(line))
            }
            Block::List(list) => {
                let (mut lo, mut hi) = (0.0f32, 0.0f32);
                for item in &list.items {
                    for b in item {
                        let (l, h) = self.measure(b, Ctx { lists: ctx.lists + 1, ..ctx });
                        lo = lo.max(l);
                        hi = hi.max(h);
                    }
                }
                let indent = if list.ordered() { 26.0 } else { 18.0 };
                (lo + indent, hi + indent)
            }
            Block::Quote(blocks) => {
                let (mut lo, mut hi) = (0.0f32, 0.0f32);
                for b in blocks {
                    let (l, h) = self.measure(b, ctx);
                    lo = lo.max(l);
                    hi = hi.max(h);
                }
                (lo + 16.0, hi + 16.0)
            }
            Block::Code(text) => {
                let widest = text.split('\n').map(|l| self.text_width(l, FontId::MONO, 9.0)).fold(0.0f32, f32::max);
                let hi = widest + 8.0;
                (hi.min(80.0), hi)
            }
            Block::Table(t) => {
                let grid = Grid::new(t);
                let (mins, maxs) = self.column_measures(t, &grid, ctx);
                (mins.iter().sum(), maxs.iter().sum())
            }
            Block::Rule => (0.0, 0.0),
        }
    }
}

/// Drops blank space at both ends of a cell's lines.
fn trim_spacers(lines: &mut Vec<Line>) {
    while lines.last().is_some_and(|l| l.kind == Kind::Spacer) {
        lines.pop();
    }
    let leading = lines.iter().take_while(|l| l.kind == Kind::Spacer).count();
    lines.drain(..leading);
}

impl Sheet<'_> {
    /// Sets one row in slices no taller than `max_h`, each cell continuing where it stopped.
    fn split_row(&mut self, k: usize, sink: &mut dyn LineSink) {
        let (grid, xs) = (self.grid, &self.xs);
        let mut cells: Vec<Slice> = Vec::new();
        let mut c = 0;
        while c < grid.ncols {
            let (span, lines, background) = match grid.slot(k, c) {
                Slot::Start { colspan, .. } => {
                    let b = &mut self.boxes[self.box_at[&(k, c)]];
                    (*colspan, std::mem::take(&mut b.lines), b.background)
                }
                Slot::Covered { row, col } if *row < k && *col == c => match grid.slot(*row, *col) {
                    Slot::Start { colspan, .. } => {
                        (*colspan, Vec::new(), self.boxes[self.box_at[&(*row, *col)]].background)
                    }
                    _ => (1, Vec::new(), None),
                },
                Slot::Covered { .. } | Slot::Empty => (1, Vec::new(), None),
            };
            let span = span.max(1).min(grid.ncols - c);
            cells.push(Slice { x: xs[c], w: xs[c + span] - xs[c], lines, next: 0, background });
            c += span;
        }
        loop {
            let max_h = sink.room();
            let mut ops: Vec<Op> = Vec::new();
            let mut slice_h = 0.0f32;
            let mut placed: Vec<Vec<Op>> = Vec::with_capacity(cells.len());
            for cell in &mut cells {
                let mut y = PAD;
                let mut cell_ops = Vec::new();
                while cell.next < cell.lines.len() {
                    let line = &mut cell.lines[cell.next];
                    let first = y == PAD;
                    if first && line.kind == Kind::Spacer {
                        cell.next += 1;
                        continue;
                    }
                    if !first && y + line.height + PAD > max_h {
                        break;
                    }
                    for mut op in std::mem::take(&mut line.ops) {
                        op.translate(cell.x + PAD, y);
                        cell_ops.push(op);
                    }
                    y += line.height;
                    cell.next += 1;
                }
                slice_h = slice_h.max(y + PAD);
                placed.push(cell_ops);
            }
            for (cell, cell_ops) in cells.iter().zip(placed) {
                if let Some(bg) = cell.background {
                    ops.push(Op::Fill { x: cell.x, y: 0.0, w: cell.w, h: slice_h, color: bg });
                }
                ops.extend(cell_ops);
                ops.push(Op::Stroke { x: cell.x, y: 0.0, w: cell.w, h: slice_h, color: BORDER, width: BORDER_W });
            }
            sink.emit(Line { height: slice_h, ops, kind: Kind::Content });
            if cells.iter().all(|c| c.next >= c.lines.len()) {
                break;
            }
        }
    }

    /// Rows `r0..=r1` (linked by row spans) as one line.
    fn band(&mut self, r0: usize, r1: usize) -> Line {
        let (grid, xs, heights) = (self.grid, &self.xs, &self.heights);
        let mut ops = Vec::new();
        let mut borders = Vec::new();
        let mut row_y = 0.0f32;
        for k in r0..=r1 {
            for c in 0..grid.ncols {
                match grid.slot(k, c) {
                    Slot::Start { .. } => {
                        let b = &mut self.boxes[self.box_at[&(k, c)]];
                        let last = (k + b.rowspan - 1).min(r1);
                        let (x, w) = (xs[c], xs[(c + b.colspan).min(grid.ncols)] - xs[c]);
                        let h: f32 = heights[k..=last].iter().sum();
                        if let Some(bg) = b.background {
                            ops.push(Op::Fill { x, y: row_y, w, h, color: bg });
                        }
                        let mut y = row_y + PAD;
                        for line in b.lines.drain(..) {
                            for mut op in line.ops {
                                op.translate(x + PAD, y);
                                ops.push(op);
                            }
                            y += line.height;
                        }
                        borders.push(Op::Stroke { x, y: row_y, w, h, color: BORDER, width: BORDER_W });
                    }
                    Slot::Empty => {
                        let (x, w) = (xs[c], xs[c + 1] - xs[c]);
                        borders.push(Op::Stroke { x, y: row_y, w, h: heights[k], color: BORDER, width: BORDER_W });
                    }
                    Slot::Covered { .. } => {}
                }
            }
            row_y += heights[k];
        }
        ops.extend(borders);
        Line { height: row_y, ops, kind: Kind::Content }
    }
}

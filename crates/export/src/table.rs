//! The grid of a table: where each cell sits once `colspan` and `rowspan` are resolved, as
//! HTML's table model places them. Shared by the DOCX, PDF and Markdown writers.

use std::collections::HashMap;

use crate::model::{Block, Cell, Table};

/// Columns a table may have (Word's own limit is 63). Cells past the last column are
/// appended to the cell that ends the row, so no text is lost.
pub(crate) const MAX_COLUMNS: usize = 63;

/// A cell's place: `(row index, index of the cell in that row)` of [`Table::rows`].
pub(crate) type CellId = (usize, usize);

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Slot {
    /// The top-left slot of a cell.
    Start { cell: CellId, colspan: usize, rowspan: usize },
    /// Covered by the cell that starts at grid position `(row, col)`.
    Covered { row: usize, col: usize },
    /// No cell here (a short row).
    Empty,
}

#[derive(Debug, Clone)]
pub(crate) struct Grid {
    pub ncols: usize,
    /// The slots of each table row; missing slots at the end of a row are [`Slot::Empty`].
    rows: Vec<Vec<Slot>>,
    /// Cells whose content is shown at the end of another cell's: `(target, extra)`.
    pub extras: HashMap<CellId, Vec<CellId>>,
}

const EMPTY: Slot = Slot::Empty;

impl Grid {
    pub(crate) fn new(table: &Table) -> Grid {
        let nrows = table.rows.len();
        let mut grid = Grid { ncols: 0, rows: vec![Vec::new(); nrows], extras: HashMap::new() };
        // Spans cover at most this many slots in all: a few tags must not make a huge grid.
        let cells: usize = table.rows.iter().map(|r| r.cells.len()).sum();
        let mut budget = cells.saturating_mul(256).saturating_add(4096);
        for (r, row) in table.rows.iter().enumerate() {
            let mut col = 0;
            for (i, cell) in row.cells.iter().enumerate() {
                while col < MAX_COLUMNS && *grid.slot(r, col) != Slot::Empty {
                    col += 1;
                }
                if col >= MAX_COLUMNS {
                    let target = match grid.slot(r, MAX_COLUMNS - 1) {
                        Slot::Start { cell, .. } => Some(*cell),
                        Slot::Covered { row, col } => match grid.slot(*row, *col) {
                            Slot::Start { cell, .. } => Some(*cell),
                            _ => None,
                        },
                        Slot::Empty => None,
                    };
                    if let Some(target) = target {
                        grid.extras.entry(target).or_default().push((r, i));
                    }
                    continue;
                }
                // A span stops at a slot another cell already holds (overlapping spans).
                let mut colspan = 1;
                while colspan < cell.colspan
                    && col + colspan < MAX_COLUMNS
                    && *grid.slot(r, col + colspan) == Slot::Empty
                {
                    colspan += 1;
                }
                let wanted = if cell.rowspan == 0 { nrows - r } else { cell.rowspan.min(nrows - r) };
                let wanted = wanted.min((budget / colspan).max(1));
                let mut rowspan = 1;
                'rows: while rowspan < wanted {
                    for c in col..col + colspan {
                        if *grid.slot(r + rowspan, c) != Slot::Empty {
                            break 'rows;
                        }
                    }
                    rowspan += 1;
                }
                budget = budget.saturating_sub(colspan * rowspan);
                for rr in r..r + rowspan {
                    for cc in col..col + colspan {
                        grid.set(rr, cc, Slot::Covered { row: r, col });
                    }
                }
                grid.set(r, col, Slot::Start { cell: (r, i), colspan, rowspan });
                grid.ncols = grid.ncols.max(col + colspan);
                col += colspan;
            }
        }
        grid
    }

    pub(crate) fn nrows(&self) -> usize {
        self.rows.len()
    }

    /// The slot at a grid position ([`Slot::Empty`] outside the grid).
    pub(crate) fn slot(&self, row: usize, col: usize) -> &Slot {
        self.rows.get(row).and_then(|r| r.get(col)).unwrap_or(&EMPTY)
    }

    fn set(&mut self, row: usize, col: usize, slot: Slot) {
        let r = &mut self.rows[row];
        if r.len() <= col {
            r.resize(col + 1, Slot::Empty);
        }
        r[col] = slot;
    }

    /// The content of a cell: its own blocks, then those of the cells appended to it.
    pub(crate) fn content<'t>(&self, table: &'t Table, id: CellId) -> Vec<&'t Block> {
        let mut out: Vec<&Block> = cell(table, id).blocks.iter().collect();
        for extra in self.extras.get(&id).into_iter().flatten() {
            out.extend(cell(table, *extra).blocks.iter());
        }
        out
    }
}

/// The narrowest and widest width of each column, from `measure` of each cell (a cell
/// spanning columns widens them evenly when they are too narrow for it); at least `floor`.
pub(crate) fn column_bounds(
    grid: &Grid,
    floor: f32,
    mut measure: impl FnMut(CellId) -> (f32, f32),
) -> (Vec<f32>, Vec<f32>) {
    let mut mins = vec![floor; grid.ncols];
    let mut maxs = vec![floor; grid.ncols];
    let mut spanning = Vec::new();
    for r in 0..grid.nrows() {
        for c in 0..grid.ncols {
            let Slot::Start { cell, colspan, .. } = grid.slot(r, c) else { continue };
            let (lo, hi) = measure(*cell);
            if *colspan == 1 {
                mins[c] = mins[c].max(lo);
                maxs[c] = maxs[c].max(hi);
            } else {
                spanning.push((c, *colspan, lo, hi));
            }
        }
    }
    for (c, span, lo, hi) in spanning {
        let cols = c..(c + span).min(grid.ncols);
        let n = cols.len().max(1) as f32;
        let have_lo: f32 = mins[cols.clone()].iter().sum();
        let have_hi: f32 = maxs[cols.clone()].iter().sum();
        for i in cols {
            if lo > have_lo {
                mins[i] += (lo - have_lo) / n;
            }
            if hi > have_hi {
                maxs[i] += (hi - have_hi) / n;
            }
        }
    }
    for (lo, hi) in mins.iter().zip(maxs.iter_mut()) {
        *hi = hi.max(*lo);
    }
    (mins, maxs)
}

/// Column widths that fill `width`, as browsers share it in automatic table layout: the
/// widest widths stretched when they all fit; else the narrowest widths plus a share of
/// what is left in proportion to how much more each column wants; else the narrowest
/// widths scaled down.
pub(crate) fn distribute(mins: &[f32], maxs: &[f32], width: f32) -> Vec<f32> {
    let n = mins.len().max(1) as f32;
    let (sum_min, sum_max): (f32, f32) = (mins.iter().sum(), maxs.iter().sum());
    if sum_max <= width && sum_max > 0.0 {
        maxs.iter().map(|m| m + (width - sum_max) * m / sum_max).collect()
    } else if sum_min <= width {
        let spread = sum_max - sum_min;
        mins.iter()
            .zip(maxs)
            .map(|(lo, hi)| if spread > 0.0 { lo + (width - sum_min) * (hi - lo) / spread } else { width / n })
            .collect()
    } else if sum_min > 0.0 {
        mins.iter().map(|m| width * m / sum_min).collect()
    } else {
        vec![width / n; mins.len()]
    }
}

pub(crate) fn cell(table: &Table, id: CellId) -> &Cell {
    &table.rows[id.0].cells[id.1]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Row;

    fn cell(colspan: usize, rowspan: usize) -> Cell {
        Cell { header: false, colspan, rowspan, background: None, blocks: Vec::new() }
    }

    fn table(rows: Vec<Vec<Cell>>) -> Table {
        Table {
            caption: Vec::new(),
            rows: rows.into_iter().map(|cells| Row { header: false, cells, rev: None }).collect(),
        }
    }

    #[test]
    fn spans_are_placed_as_in_html() {
        // | A (rowspan 2) | B (colspan 2) |
        // |               | C    | D      |
        let t = table(vec![vec![cell(1, 2), cell(2, 1)], vec![cell(1, 1), cell(1, 1)]]);
        let g = Grid::new(&t);
        assert_eq!(g.ncols, 3);
        assert_eq!(*g.slot(0, 0), Slot::Start { cell: (0, 0), colspan: 1, rowspan: 2 });
        assert_eq!(*g.slot(0, 1), Slot::Start { cell: (0, 1), colspan: 2, rowspan: 1 });
        assert_eq!(*g.slot(0, 2), Slot::Covered { row: 0, col: 1 });
        assert_eq!(*g.slot(1, 0), Slot::Covered { row: 0, col: 0 });
        assert_eq!(*g.slot(1, 1), Slot::Start { cell: (1, 0), colspan: 1, rowspan: 1 });
        assert_eq!(*g.slot(1, 2), Slot::Start { cell: (1, 1), colspan: 1, rowspan: 1 });
    }

    #[test]
    fn rowspans_are_clamped_and_short_rows_padded() {
        let t = table(vec![vec![cell(1, 0), cell(1, 9)], vec![]]);
        let g = Grid::new(&t);
        assert_eq!(*g.slot(0, 0), Slot::Start { cell: (0, 0), colspan: 1, rowspan: 2 });
        assert_eq!(*g.slot(0, 1), Slot::Start { cell: (0, 1), colspan: 1, rowspan: 2 });
        let t = table(vec![vec![cell(1, 1), cell(1, 1)], vec![cell(1, 1)]]);
        assert_eq!(*Grid::new(&t).slot(1, 1), Slot::Empty);
    }

    #[test]
    fn widths_fill_the_line_by_content() {
        assert_eq!(distribute(&[10.0, 10.0], &[20.0, 60.0], 160.0), [40.0, 120.0]);
        assert_eq!(distribute(&[10.0, 30.0], &[40.0, 90.0], 100.0), [30.0, 70.0]);
        assert_eq!(distribute(&[100.0, 300.0], &[200.0, 400.0], 100.0), [25.0, 75.0]);
        let t = table(vec![vec![cell(2, 1)], vec![cell(1, 1), cell(1, 1)]]);
        let g = Grid::new(&t);
        let (mins, maxs) = column_bounds(&g, 1.0, |id| if id == (0, 0) { (40.0, 100.0) } else { (10.0, 10.0) });
        assert_eq!((mins, maxs), (vec![20.0, 20.0], vec![50.0, 50.0]));
    }

    #[test]
    fn cells_past_the_last_column_join_the_last_cell() {
        let t = table(vec![vec![cell(MAX_COLUMNS, 1), cell(1, 1), cell(1, 1)]]);
        let g = Grid::new(&t);
        assert_eq!(g.ncols, MAX_COLUMNS);
        assert_eq!(g.extras.get(&(0, 0)), Some(&vec![(0, 1), (0, 2)]));
    }
}

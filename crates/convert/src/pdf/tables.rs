//! Ruled tables: the grid that a page's ruling lines draw, and the text inside it.
//!
//! The rules of a page (see [`Rule`]) are merged where they continue one another, then
//! grouped into tables: horizontal and vertical rules that touch. A group's distinct rows
//! and columns of rules make the grid; where the line between two neighbouring cells is
//! missing, the cells are one (a `colspan` or `rowspan`), when the merged cells make a
//! rectangle. The words of the lines whose baseline falls inside the grid go to the cell
//! under their middle. A grid of fewer than two cells with text (a frame round a text box),
//! or with text in fewer than two cells of five (a chart's grid), is not a table.

use super::bidi::logical;
use super::layout::{join_line, Line};
use super::pictures::Rule;

/// Rules closer than this (points) are one line; a rule reaches a crossing within it.
const SNAP: f32 = 2.0;
/// Rows or columns narrower than this are a double border, not cells.
const MIN_CELL: f32 = 4.0;
/// The most rules of one page looked at (past it the page has no tables).
const MAX_PAGE_RULES: usize = 2_000;
/// The most rows and columns of one grid.
const MAX_ROWS: usize = 500;
const MAX_COLUMNS: usize = 64;

/// A table rebuilt from a page.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Table {
    /// Each row's cells that start in it: text, columns spanned, rows spanned.
    pub rows: Vec<Vec<Cell>>,
    pub page: u32,
    /// Its top edge, from the top of the page down.
    pub top: f32,
}

impl Table {
    /// Whether most of its letters are of a right-to-left script.
    pub(super) fn reads_rtl(&self) -> bool {
        let (mut rtl, mut other) = (0usize, 0usize);
        for c in self.rows.iter().flatten().flat_map(|cell| cell.text.chars()).filter(|c| c.is_alphabetic()) {
            if super::bidi::is_rtl(c) {
                rtl += 1;
            } else {
                other += 1;
            }
        }
        rtl > other
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Cell {
    pub text: String,
    pub colspan: usize,
    pub rowspan: usize,
}

/// A grid: its row and column lines, and which cells are one.
#[derive(Debug)]
struct Grid {
    page: u32,
    /// Column lines, left to right.
    xs: Vec<f32>,
    /// Row lines, top down.
    ys: Vec<f32>,
    /// For each cell (row-major), the cell that stands for its merged group.
    owner: Vec<usize>,
}

impl Grid {
    fn columns(&self) -> usize {
        self.xs.len() - 1
    }

    fn rows(&self) -> usize {
        self.ys.len() - 1
    }

    fn holds(&self, page: u32, y: f32) -> bool {
        page == self.page && y >= self.ys[0] && y < self.ys[self.ys.len() - 1]
    }

    /// The cell at `x` on row `row`, if inside.
    fn cell(&self, row: usize, x: f32) -> Option<usize> {
        if x < self.xs[0] || x >= self.xs[self.xs.len() - 1] {
            return None;
        }
        let column = self.xs.partition_point(|edge| *edge <= x).saturating_sub(1);
        Some(self.owner[row * self.columns() + column.min(self.columns() - 1)])
    }

    fn row_of(&self, y: f32) -> usize {
        self.ys.partition_point(|edge| *edge <= y).saturating_sub(1).min(self.rows() - 1)
    }
}

fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

fn union(parent: &mut [usize], a: usize, b: usize) {
    let (a, b) = (find(parent, a), find(parent, b));
    if a != b {
        parent[a.max(b)] = a.min(b);
    }
}

/// Rules of one direction merged where one continues or overlaps another.
fn merge(mut rules: Vec<Rule>) -> Vec<Rule> {
    rules.sort_by(|a, b| a.at.total_cmp(&b.at).then(a.from.total_cmp(&b.from)));
    let mut out: Vec<Rule> = Vec::new();
    for rule in rules {
        let joined = out
            .iter_mut()
            .rev()
            .take_while(|m| rule.at - m.at <= SNAP)
            .find(|m| (m.at - rule.at).abs() <= SNAP && rule.from <= m.to + SNAP && rule.to >= m.from - SNAP);
        match joined {
            Some(m) => {
                m.from = m.from.min(rule.from);
                m.to = m.to.max(rule.to);
            }
            None => out.push(rule),
        }
    }
    out
}

/// Distinct positions, those within [`MIN_CELL`] of the previous one dropped.
fn lines_at(mut positions: Vec<f32>) -> Vec<f32> {
    positions.sort_by(f32::total_cmp);
    let mut out: Vec<f32> = Vec::new();
    for p in positions {
        if out.last().is_none_or(|last| p - last >= MIN_CELL) {
            out.push(p);
        }
    }
    out
}

/// Whether a rule of `rules` lies at `at` and covers `point` along its direction.
fn covered(rules: &[&Rule], at: f32, point: f32) -> bool {
    rules.iter().any(|r| (r.at - at).abs() <= SNAP && r.from - SNAP <= point && point <= r.to + SNAP)
}

/// The grids the rules of one page draw.
fn grids(page: u32, rules: &[Rule]) -> Vec<Grid> {
    if rules.len() > MAX_PAGE_RULES {
        return Vec::new();
    }
    let horizontal = merge(rules.iter().filter(|r| r.horizontal).copied().collect());
    let vertical = merge(rules.iter().filter(|r| !r.horizontal).copied().collect());
    let all: Vec<&Rule> = horizontal.iter().chain(&vertical).collect();
    let mut parent: Vec<usize> = (0..all.len()).collect();
    for (i, h) in horizontal.iter().enumerate() {
        for (j, v) in vertical.iter().enumerate() {
            let touch = v.at >= h.from - SNAP && v.at <= h.to + SNAP && h.at >= v.from - SNAP && h.at <= v.to + SNAP;
            if touch {
                union(&mut parent, i, horizontal.len() + j);
            }
        }
    }
    let mut groups: std::collections::BTreeMap<usize, Vec<&Rule>> = std::collections::BTreeMap::new();
    for (i, rule) in all.iter().enumerate() {
        let root = find(&mut parent, i);
        groups.entry(root).or_default().push(rule);
    }
    let mut out = Vec::new();
    for rules in groups.into_values() {
        let (hs, vs): (Vec<&Rule>, Vec<&Rule>) = rules.into_iter().partition(|r| r.horizontal);
        let ys = lines_at(hs.iter().map(|r| r.at).collect());
        let xs = lines_at(vs.iter().map(|r| r.at).collect());
        if ys.len() < 2 || xs.len() < 2 || ys.len() > MAX_ROWS + 1 || xs.len() > MAX_COLUMNS + 1 {
            continue;
        }
        let (rows, columns) = (ys.len() - 1, xs.len() - 1);
        if rows * columns < 2 {
            continue;
        }
        let mut owner: Vec<usize> = (0..rows * columns).collect();
        for row in 0..rows {
            let mid_y = (ys[row] + ys[row + 1]) / 2.0;
            for column in 0..columns {
                let mid_x = (xs[column] + xs[column + 1]) / 2.0;
                if column + 1 < columns && !covered(&vs, xs[column + 1], mid_y) {
                    union(&mut owner, row * columns + column, row * columns + column + 1);
                }
                if row + 1 < rows && !covered(&hs, ys[row + 1], mid_x) {
                    union(&mut owner, row * columns + column, (row + 1) * columns + column);
                }
            }
        }
        // A merged group must be a rectangle; otherwise its cells stay apart.
        let roots: Vec<usize> = (0..owner.len()).map(|i| find(&mut owner, i)).collect();
        let mut owner = roots.clone();
        let mut groups: std::collections::BTreeMap<usize, Vec<usize>> = std::collections::BTreeMap::new();
        for (i, root) in roots.iter().enumerate() {
            groups.entry(*root).or_default().push(i);
        }
        for members in groups.into_values() {
            let (r0, r1) =
                members.iter().fold((usize::MAX, 0), |(lo, hi), i| (lo.min(i / columns), hi.max(i / columns)));
            let (c0, c1) =
                members.iter().fold((usize::MAX, 0), |(lo, hi), i| (lo.min(i % columns), hi.max(i % columns)));
            if members.len() != (r1 - r0 + 1) * (c1 - c0 + 1) {
                for i in members {
                    owner[i] = i;
                }
            }
        }
        out.push(Grid { page, xs, ys, owner });
    }
    out
}

/// The lines with the tables taken out: the lines left (the words outside any table), and
/// each table with the index in them before which it stands.
pub(super) struct Tabled {
    pub lines: Vec<Line>,
    pub tables: Vec<(usize, Table)>,
}

/// Finds the ruled tables of `rules` and moves the text inside them from `lines` into
/// their cells.
pub(super) fn extract(lines: &[Line], rules: &[Rule]) -> Tabled {
    let mut all_grids = Vec::new();
    let mut start = 0;
    while start < rules.len() {
        let page = rules[start].page;
        let end = start + rules[start..].iter().take_while(|r| r.page == page).count();
        all_grids.extend(grids(page, &rules[start..end]));
        start = end;
    }
    if all_grids.is_empty() {
        return Tabled { lines: lines.to_vec(), tables: Vec::new() };
    }
    let mut placed = place(lines, &all_grids);
    // A grid with fewer than two cells of text, or mostly empty cells (a chart's grid), is
    // not a table: its words stay lines.
    let keep: Vec<bool> = placed
        .texts
        .iter()
        .zip(&all_grids)
        .map(|(texts, grid)| {
            let cells = (0..texts.len()).filter(|i| grid.owner[*i] == *i).count();
            let filled = texts.iter().filter(|t| !t.is_empty()).count();
            filled >= 2 && filled * 5 >= cells * 2
        })
        .collect();
    if keep.iter().any(|k| !k) {
        let mut k = keep.iter();
        all_grids.retain(|_| *k.next().unwrap_or(&false));
        if all_grids.is_empty() {
            return Tabled { lines: lines.to_vec(), tables: Vec::new() };
        }
        placed = place(lines, &all_grids);
    }
    let mut tables = Vec::new();
    for (g, grid) in all_grids.iter().enumerate() {
        let Some(anchor) = placed.anchors[g] else { continue };
        let texts = &placed.texts[g];
        let columns = grid.columns();
        let rows = (0..grid.rows())
            .map(|row| {
                (0..columns)
                    .filter(|column| grid.owner[row * columns + column] == row * columns + column)
                    .map(|column| {
                        let me = row * columns + column;
                        let colspan = (column..columns).take_while(|c| grid.owner[row * columns + c] == me).count();
                        let rowspan = (row..grid.rows()).take_while(|r| grid.owner[r * columns + column] == me).count();
                        Cell { text: texts[me].clone(), colspan, rowspan }
                    })
                    .collect()
            })
            .collect();
        tables.push((anchor, Table { rows, page: grid.page, top: grid.ys[0] }));
    }
    tables.sort_by_key(|t| t.0);
    Tabled { lines: placed.lines, tables }
}

/// The words of `lines` placed in `grids`.
struct Placement {
    /// The lines left.
    lines: Vec<Line>,
    /// Per grid, the text of each cell (row-major; merged cells in their first).
    texts: Vec<Vec<String>>,
    /// Per grid, the index in `lines` before which it stands (`None`: it holds no text).
    anchors: Vec<Option<usize>>,
}

fn place(lines: &[Line], grids: &[Grid]) -> Placement {
    // Each cell's (baseline, left edge, text) pieces.
    let mut pieces: Vec<Vec<Vec<(f32, f32, String)>>> =
        grids.iter().map(|g| vec![Vec::new(); g.rows() * g.columns()]).collect();
    let mut anchors: Vec<Option<usize>> = vec![None; grids.len()];
    let mut out_lines = Vec::with_capacity(lines.len());
    for line in lines {
        let Some(g) = grids.iter().position(|g| g.holds(line.page, line.y)) else {
            out_lines.push(line.clone());
            continue;
        };
        let grid = &grids[g];
        let row = grid.row_of(line.y);
        let mut outside: Vec<usize> = Vec::new();
        let mut current: Option<(usize, f32, String)> = None;
        for (i, run) in line.runs.iter().enumerate() {
            let word = line.run_text(i);
            let Some(cell) = grid.cell(row, (run.1 + run.2) / 2.0) else {
                outside.push(i);
                continue;
            };
            match current.as_mut() {
                Some((c, _, text)) if *c == cell => {
                    text.push(' ');
                    text.push_str(word);
                }
                _ => {
                    if let Some((c, x, text)) = current.take() {
                        pieces[g][c].push((line.y, x, logical(&text).into_owned()));
                    }
                    current = Some((cell, run.1, word.to_owned()));
                }
            }
        }
        if let Some((c, x, text)) = current.take() {
            pieces[g][c].push((line.y, x, logical(&text).into_owned()));
        }
        if outside.len() == line.runs.len() {
            out_lines.push(line.clone());
            continue;
        }
        if anchors[g].is_none() {
            anchors[g] = Some(out_lines.len());
        }
        // The words outside the grid stay lines, each a run of neighbours.
        let mut k = 0;
        while k < outside.len() {
            let mut j = k + 1;
            while j < outside.len() && outside[j] == outside[j - 1] + 1 {
                j += 1;
            }
            if let Some(part) = line.part(outside[k]..outside[j - 1] + 1) {
                out_lines.push(part);
            }
            k = j;
        }
    }
    let texts = pieces
        .into_iter()
        .map(|cells| {
            cells
                .into_iter()
                .map(|mut cell| {
                    cell.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
                    let mut text = String::new();
                    let mut last_y = f32::NAN;
                    for (y, _, piece) in &cell {
                        if text.is_empty() {
                            text.push_str(piece);
                        } else if (y - last_y).abs() <= SNAP {
                            text.push(' ');
                            text.push_str(piece);
                        } else {
                            join_line(&mut text, piece);
                        }
                        last_y = *y;
                    }
                    text
                })
                .collect()
        })
        .collect();
    Placement { lines: out_lines, texts, anchors }
}

/// The fewest rows of an unruled table.
const MIN_UNRULED_ROWS: usize = 3;

/// A line's cells when it is a row of an unruled table: its stretches of words parted by
/// gaps of at least one and a half times its size, with their left edges.
fn unruled_cells(line: &Line) -> Vec<(f32, String)> {
    let gap = line.size.max(1.0) * 1.5;
    let mut cells: Vec<(f32, f32, String)> = Vec::new();
    for (i, &(_, x, end)) in line.runs.iter().enumerate() {
        let word = line.run_text(i);
        match cells.last_mut() {
            Some(cell) if x - cell.1 < gap => {
                cell.1 = cell.1.max(end);
                cell.2.push(' ');
                cell.2.push_str(word);
            }
            _ => cells.push((x, end, word.to_owned())),
        }
    }
    cells.into_iter().map(|(x, _, text)| (x, logical(&text).into_owned())).collect()
}

/// Finds unruled tables: at least [`MIN_UNRULED_ROWS`] lines in a row, close below one
/// another, each of the same two or more cells whose left edges line up (within two
/// points). Their lines become the table, which stands where its first line was.
pub(super) fn unruled(tabled: Tabled) -> Tabled {
    let Tabled { lines, tables: ruled } = tabled;
    let cells: Vec<Vec<(f32, String)>> = lines.iter().map(unruled_cells).collect();
    let aligned = |a: usize, b: usize| {
        let (la, lb) = (&lines[a], &lines[b]);
        let dy = lb.y - la.y;
        la.page == lb.page
            && dy > 0.0
            && dy <= la.size.max(lb.size).max(1.0) * 2.5
            && cells[a].len() == cells[b].len()
            && cells[a].iter().zip(&cells[b]).all(|(p, q)| (p.0 - q.0).abs() <= SNAP)
    };
    let mut out_lines = Vec::with_capacity(lines.len());
    let mut tables = Vec::new();
    let mut new_index = Vec::with_capacity(lines.len() + 1);
    let mut i = 0;
    while i < lines.len() {
        let mut j = i + 1;
        if cells[i].len() >= 2 {
            while j < lines.len() && aligned(j - 1, j) {
                j += 1;
            }
        }
        if j - i >= MIN_UNRULED_ROWS {
            let rows = (i..j)
                .map(|k| cells[k].iter().map(|(_, text)| Cell { text: text.clone(), colspan: 1, rowspan: 1 }).collect())
                .collect();
            tables.push((out_lines.len(), Table { rows, page: lines[i].page, top: lines[i].y - lines[i].size }));
            for _ in i..j {
                new_index.push(out_lines.len());
            }
            i = j;
        } else {
            new_index.push(out_lines.len());
            out_lines.push(lines[i].clone());
            i += 1;
        }
    }
    new_index.push(out_lines.len());
    for (at, table) in ruled {
        tables.push((new_index.get(at).copied().unwrap_or(out_lines.len()), table));
    }
    tables.sort_by_key(|t| t.0);
    Tabled { lines: out_lines, tables }
}

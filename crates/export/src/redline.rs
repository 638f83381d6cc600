//! A change's old and new HTML merged into one flow of blocks whose differences carry
//! revisions ([`Rev`]): what a tracked DOCX shows (docs/export.md, "Tracked changes").
//!
//! Blocks are aligned by equality (longest common subsequence, after the common ends are
//! trimmed); between two kept blocks, an old and a new block of the same kind are merged in
//! place (a paragraph word by word, a list item by item, a table row by row), and the others
//! are deleted or inserted whole. Words are compared by their text and link: a word made
//! bold is a formatting revision that keeps its former formatting ([`Former`]), a word whose
//! link changed is deleted and inserted. Accepting every revision gives the new blocks;
//! rejecting every one, the old.
//!
//! Work is bounded: an alignment whose table would pass [`MAX_CELLS`] deletes and inserts
//! its middle whole instead.

use std::rc::Rc;

use crate::model::{Block, Cell, Former, Inline, List, Rev, RevKind, Row, Style, Table};

/// The largest alignment table (old × new items after trimming) computed.
const MAX_CELLS: usize = 4_000_000;

/// A top-level block and the revision that inserted or deleted it whole (`None`: kept,
/// perhaps with revisions inside).
pub(crate) type Tracked = (Option<Rev>, Block);

/// The blocks of change number `change` going from `old` to `new`.
pub(crate) fn merge(old: Vec<Block>, new: Vec<Block>, change: usize) -> Vec<Tracked> {
    Merger { change }.flow(old, new)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Keep(usize, usize),
    Delete(usize),
    Insert(usize),
}

/// The steps from `old` to `new` keeping a longest common subsequence under `same`.
fn align<T>(old: &[T], new: &[T], same: impl Fn(&T, &T) -> bool) -> Vec<Step> {
    let mut head = 0;
    while head < old.len() && head < new.len() && same(&old[head], &new[head]) {
        head += 1;
    }
    let mut tail = 0;
    while tail < old.len() - head
        && tail < new.len() - head
        && same(&old[old.len() - 1 - tail], &new[new.len() - 1 - tail])
    {
        tail += 1;
    }
    let (o, n) = (&old[head..old.len() - tail], &new[head..new.len() - tail]);
    let mut steps: Vec<Step> = (0..head).map(|i| Step::Keep(i, i)).collect();
    if o.len().saturating_mul(n.len()) > MAX_CELLS || o.is_empty() || n.is_empty() {
        steps.extend((0..o.len()).map(|i| Step::Delete(head + i)));
        steps.extend((0..n.len()).map(|j| Step::Insert(head + j)));
    } else {
        // lcs[i][j]: the longest common subsequence of o[i..] and n[j..].
        let w = n.len() + 1;
        let mut lcs = vec![0u32; (o.len() + 1) * w];
        for i in (0..o.len()).rev() {
            for j in (0..n.len()).rev() {
                lcs[i * w + j] = if same(&o[i], &n[j]) {
                    lcs[(i + 1) * w + j + 1] + 1
                } else {
                    lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < o.len() || j < n.len() {
            if i < o.len() && j < n.len() && same(&o[i], &n[j]) {
                steps.push(Step::Keep(head + i, head + j));
                i += 1;
                j += 1;
            } else if j == n.len() || (i < o.len() && lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
                steps.push(Step::Delete(head + i));
                i += 1;
            } else {
                steps.push(Step::Insert(head + j));
                j += 1;
            }
        }
    }
    let (old_end, new_end) = (old.len() - tail, new.len() - tail);
    steps.extend((0..tail).map(|k| Step::Keep(old_end + k, new_end + k)));
    steps
}

/// One stretch between kept items: what was deleted and what was inserted there.
enum Stretch {
    /// The new index of a kept item.
    Keep(usize),
    Replace(Vec<usize>, Vec<usize>),
}

fn stretches(steps: &[Step]) -> Vec<Stretch> {
    let mut out = Vec::new();
    let (mut dels, mut ins) = (Vec::new(), Vec::new());
    for step in steps {
        match *step {
            Step::Keep(_, j) => {
                if !dels.is_empty() || !ins.is_empty() {
                    out.push(Stretch::Replace(std::mem::take(&mut dels), std::mem::take(&mut ins)));
                }
                out.push(Stretch::Keep(j));
            }
            Step::Delete(i) => dels.push(i),
            Step::Insert(j) => ins.push(j),
        }
    }
    if !dels.is_empty() || !ins.is_empty() {
        out.push(Stretch::Replace(dels, ins));
    }
    out
}

/// Pairs a stretch's deleted and inserted items in order: `Some` pairs, then the leftovers.
fn pairs(dels: &[usize], ins: &[usize]) -> Vec<(Option<usize>, Option<usize>)> {
    (0..dels.len().max(ins.len())).map(|k| (dels.get(k).copied(), ins.get(k).copied())).collect()
}

struct Merger {
    change: usize,
}

impl Merger {
    fn rev(&self, kind: RevKind) -> Rev {
        Rev { kind, change: self.change }
    }

    /// A flow of blocks: kept, merged, or inserted and deleted whole.
    fn flow(&self, old: Vec<Block>, new: Vec<Block>) -> Vec<Tracked> {
        let steps = align(&old, &new, |a, b| a == b);
        let mut old: Vec<Option<Block>> = old.into_iter().map(Some).collect();
        let mut new: Vec<Option<Block>> = new.into_iter().map(Some).collect();
        let mut out = Vec::new();
        for stretch in stretches(&steps) {
            match stretch {
                Stretch::Keep(j) => out.extend(new[j].take().map(|b| (None, b))),
                Stretch::Replace(dels, ins) => {
                    for (d, i) in pairs(&dels, &ins) {
                        let a = d.and_then(|d| old[d].take());
                        let b = i.and_then(|i| new[i].take());
                        match (a, b) {
                            (Some(a), Some(b)) => match self.block(&a, &b) {
                                Some(merged) => out.push((None, merged)),
                                None => {
                                    out.push((Some(self.rev(RevKind::Deleted)), a));
                                    out.push((Some(self.rev(RevKind::Inserted)), b));
                                }
                            },
                            (Some(a), None) => out.push((Some(self.rev(RevKind::Deleted)), a)),
                            (None, Some(b)) => out.push((Some(self.rev(RevKind::Inserted)), b)),
                            (None, None) => {}
                        }
                    }
                }
            }
        }
        out
    }

    /// A flow merged with revisions inside its blocks only (`None` when a block would be
    /// inserted or deleted whole, which a list item's or a cell's flow cannot say).
    fn flat(&self, old: &[Block], new: &[Block]) -> Option<Vec<Block>> {
        if old.len() != new.len() {
            return None;
        }
        old.iter().zip(new).map(|(a, b)| if a == b { Some(b.clone()) } else { self.block(a, b) }).collect()
    }

    /// Two blocks of the same kind and the same block properties merged, or `None` (a
    /// property that changed, such as a paragraph's alignment or a list's first number, is
    /// shown by deleting and inserting the block: no revision here says "formatting").
    fn block(&self, old: &Block, new: &Block) -> Option<Block> {
        match (old, new) {
            (Block::Paragraph { align: aa, content: a }, Block::Paragraph { align, content: b }) if aa == align => {
                Some(Block::Paragraph { align: *align, content: self.inlines(a, b) })
            }
            (Block::Heading { level: la, align: aa, content: a }, Block::Heading { level, align, content: b })
                if la == level && aa == align =>
            {
                Some(Block::Heading { level: *level, align: *align, content: self.inlines(a, b) })
            }
            (Block::List(a), Block::List(b)) if (a.numbering, a.start) == (b.numbering, b.start) => {
                Some(Block::List(self.list(a, b)))
            }
            // Rows are merged into one grid: only tables of the same columns and no cells
            // spanning rows (a deleted row's span would reach into the inserted ones).
            (Block::Table(a), Block::Table(b)) if same_grid(a, b) => Some(Block::Table(self.table(a, b))),
            (Block::Quote(a), Block::Quote(b)) => self.flat(a, b).map(Block::Quote),
            _ => None,
        }
    }

    fn list(&self, old: &List, new: &List) -> List {
        let steps = align(&old.items, &new.items, |a, b| a == b);
        let mut items = Vec::new();
        let mut item_revs = Vec::new();
        let mut push = |blocks: Vec<Block>, rev: Option<Rev>| {
            if let Some(rev) = rev {
                item_revs.push((items.len(), rev));
            }
            items.push(blocks);
        };
        for stretch in stretches(&steps) {
            match stretch {
                Stretch::Keep(j) => push(new.items[j].clone(), None),
                Stretch::Replace(dels, ins) => {
                    for (d, i) in pairs(&dels, &ins) {
                        let a = d.map(|d| &old.items[d]);
                        let b = i.map(|i| &new.items[i]);
                        match (a, b) {
                            (Some(a), Some(b)) => match self.flat(a, b) {
                                Some(merged) => push(merged, None),
                                None => {
                                    push(a.clone(), Some(self.rev(RevKind::Deleted)));
                                    push(b.clone(), Some(self.rev(RevKind::Inserted)));
                                }
                            },
                            (Some(a), None) => push(a.clone(), Some(self.rev(RevKind::Deleted))),
                            (None, Some(b)) => push(b.clone(), Some(self.rev(RevKind::Inserted))),
                            (None, None) => {}
                        }
                    }
                }
            }
        }
        List { numbering: new.numbering, start: new.start, items, item_revs }
    }

    fn table(&self, old: &Table, new: &Table) -> Table {
        let steps = align(&old.rows, &new.rows, |a, b| a == b);
        let mut rows = Vec::new();
        let with = |row: &Row, kind: RevKind| Row { rev: Some(self.rev(kind)), ..row.clone() };
        for stretch in stretches(&steps) {
            match stretch {
                Stretch::Keep(j) => rows.push(new.rows[j].clone()),
                Stretch::Replace(dels, ins) => {
                    for (d, i) in pairs(&dels, &ins) {
                        let a = d.map(|d| &old.rows[d]);
                        let b = i.map(|i| &new.rows[i]);
                        match (a, b) {
                            (Some(a), Some(b)) => match self.row(a, b) {
                                Some(merged) => rows.push(merged),
                                None => {
                                    rows.push(with(a, RevKind::Deleted));
                                    rows.push(with(b, RevKind::Inserted));
                                }
                            },
                            (Some(a), None) => rows.push(with(a, RevKind::Deleted)),
                            (None, Some(b)) => rows.push(with(b, RevKind::Inserted)),
                            (None, None) => {}
                        }
                    }
                }
            }
        }
        Table { caption: self.inlines(&old.caption, &new.caption), rows }
    }

    /// Two rows of the same cells (spans and kinds) merged cell by cell.
    fn row(&self, old: &Row, new: &Row) -> Option<Row> {
        if old.cells.len() != new.cells.len() || old.header != new.header {
            return None;
        }
        let mut cells = Vec::with_capacity(new.cells.len());
        for (a, b) in old.cells.iter().zip(&new.cells) {
            if (a.colspan, a.rowspan, a.header, a.background) != (b.colspan, b.rowspan, b.header, b.background) {
                return None;
            }
            cells.push(Cell { blocks: self.flat(&a.blocks, &b.blocks)?, ..b.clone() });
        }
        Some(Row { header: new.header, cells, rev: None })
    }

    /// Inline content merged word by word: a word whose text stays and whose formatting
    /// changes (not its link) is a formatting revision.
    fn inlines(&self, old: &[Inline], new: &[Inline]) -> Vec<Inline> {
        let (a, b) = (tokens(old), tokens(new));
        let steps = align(&a, &b, Token::same_text);
        let mut out: Vec<Inline> = Vec::new();
        for step in steps {
            let (token, rev, former) = match step {
                Step::Keep(i, j) if a[i] == b[j] => (&b[j], None, None),
                Step::Keep(i, j) => (&b[j], None, a[i].former(self.change)),
                Step::Delete(i) => (&a[i], Some(self.rev(RevKind::Deleted)), None),
                Step::Insert(j) => (&b[j], Some(self.rev(RevKind::Inserted)), None),
            };
            push_token(&mut out, token, rev, former);
        }
        out
    }
}

/// Whether two tables have the same number of grid columns in every row and no cell that
/// spans rows.
fn same_grid(old: &Table, new: &Table) -> bool {
    let columns = |t: &Table| -> Option<usize> {
        let mut widths = t.rows.iter().map(|r| r.cells.iter().map(|c| c.colspan).sum::<usize>());
        let first = widths.next().unwrap_or(0);
        widths.all(|w| w == first).then_some(first)
    };
    let spans = |t: &Table| t.rows.iter().flat_map(|r| &r.cells).any(|c| c.rowspan != 1);
    columns(old).is_some() && columns(old) == columns(new) && !spans(old) && !spans(new)
}

/// A word, a run of spaces, a line break or a picture, with its formatting.
#[derive(PartialEq)]
enum Token<'a> {
    Text(&'a str, &'a Style),
    Break,
    Image(&'a crate::model::ImageRef),
}

impl Token<'_> {
    /// The same text, or picture, or break, whatever the formatting that a run's properties
    /// hold; a link, anchor, note, direction or id differs.
    fn same_text(&self, other: &Self) -> bool {
        match (self, other) {
            (Token::Text(s, a), Token::Text(t, b)) => {
                s == t
                    && a.link == b.link
                    && a.anchor == b.anchor
                    && a.note == b.note
                    && a.dir == b.dir
                    && a.ids == b.ids
            }
            _ => self == other,
        }
    }

    /// This token's formatting as the one a formatting revision of `change` replaced.
    fn former(&self, change: usize) -> Option<Rc<Former>> {
        match self {
            Token::Text(_, style) => {
                Some(Rc::new(Former { style: Style { rev: None, former: None, ..(*style).clone() }, change }))
            }
            _ => None,
        }
    }
}

fn tokens(content: &[Inline]) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    for inline in content {
        match inline {
            Inline::Text(text, style) => {
                let mut start = 0;
                let mut space = None;
                for (at, c) in text.char_indices() {
                    let is_space = c.is_whitespace();
                    if space.is_some_and(|s| s != is_space) {
                        out.push(Token::Text(&text[start..at], style));
                        start = at;
                    }
                    space = Some(is_space);
                }
                if start < text.len() {
                    out.push(Token::Text(&text[start..], style));
                }
            }
            Inline::Break => out.push(Token::Break),
            Inline::Image(img) => out.push(Token::Image(img)),
        }
    }
    out
}

/// Appends a token, joining it to the last text of the same formatting and revision. A line
/// break inside a revision is the text `\n` (the DOCX writer breaks the line there).
fn push_token(out: &mut Vec<Inline>, token: &Token<'_>, rev: Option<Rev>, former: Option<Rc<Former>>) {
    let text = match token {
        Token::Text(text, _) => *text,
        Token::Break if rev.is_some() => "\n",
        Token::Break => {
            out.push(Inline::Break);
            return;
        }
        Token::Image(img) => {
            out.push(Inline::Image(crate::model::ImageRef { rev, ..(*img).clone() }));
            return;
        }
    };
    let base = match token {
        Token::Text(_, style) => Style { rev, former, ..(*style).clone() },
        _ => Style { rev, ..Style::default() },
    };
    if let Some(Inline::Text(last, style)) = out.last_mut() {
        if *style == base {
            last.push_str(text);
            return;
        }
    }
    out.push(Inline::Text(text.to_owned(), base));
}

#[cfg(test)]
mod tests;

use proptest::prelude::*;

use super::*;
use crate::build;

/// The blocks with every revision of `kind` undone and the others made plain: what Word's
/// "accept all" (dropping deletions) or "reject all" (dropping insertions) leaves.
fn resolve(tracked: &[Tracked], drop: RevKind) -> Vec<Block> {
    tracked.iter().filter(|(rev, _)| rev.is_none_or(|r| r.kind != drop)).map(|(_, b)| block(b, drop)).collect()
}

fn block(b: &Block, drop: RevKind) -> Block {
    match b {
        Block::Paragraph { align, content } => Block::Paragraph { align: *align, content: inlines(content, drop) },
        Block::Heading { level, align, content } => {
            Block::Heading { level: *level, align: *align, content: inlines(content, drop) }
        }
        Block::List(list) => {
            let items = list
                .items
                .iter()
                .enumerate()
                .filter(|(k, _)| !list.item_revs.iter().any(|(at, r)| at == k && r.kind == drop))
                .map(|(_, item)| item.iter().map(|b| block(b, drop)).collect())
                .collect();
            Block::List(List { items, item_revs: Vec::new(), ..list.clone() })
        }
        Block::Table(t) => Block::Table(Table {
            caption: inlines(&t.caption, drop),
            rows: t
                .rows
                .iter()
                .filter(|r| r.rev.is_none_or(|r| r.kind != drop))
                .map(|r| Row {
                    rev: None,
                    cells: r
                        .cells
                        .iter()
                        .map(|c| Cell { blocks: c.blocks.iter().map(|b| block(b, drop)).collect(), ..c.clone() })
                        .collect(),
                    ..r.clone()
                })
                .collect(),
        }),
        Block::Quote(blocks) => Block::Quote(blocks.iter().map(|b| block(b, drop)).collect()),
        other => other.clone(),
    }
}

fn inlines(content: &[Inline], drop: RevKind) -> Vec<Inline> {
    let mut out: Vec<Inline> = Vec::new();
    for inline in content {
        match inline {
            Inline::Text(text, style) => {
                if style.rev.is_some_and(|r| r.kind == drop) {
                    continue;
                }
                // Rejecting restores a formatting revision's former formatting; accepting
                // keeps the new.
                let plain = match &style.former {
                    Some(former) if drop == RevKind::Inserted => former.style.clone(),
                    _ => Style { rev: None, former: None, ..style.clone() },
                };
                for (k, piece) in text.split('\n').enumerate() {
                    if k > 0 {
                        out.push(Inline::Break);
                    }
                    if piece.is_empty() {
                        continue;
                    }
                    match out.last_mut() {
                        Some(Inline::Text(last, s)) if *s == plain => last.push_str(piece),
                        _ => out.push(Inline::Text(piece.to_owned(), plain.clone())),
                    }
                }
            }
            Inline::Image(img) if img.rev.is_some_and(|r| r.kind == drop) => {}
            Inline::Image(img) => out.push(Inline::Image(crate::model::ImageRef { rev: None, ..img.clone() })),
            Inline::Break => out.push(Inline::Break),
        }
    }
    out
}

/// Merges two HTML fragments and checks that accepting gives the new one and rejecting the
/// old one; answers the merge.
fn check(old: &str, new: &str) -> Vec<Tracked> {
    let (a, b) = (build::doc(old).blocks, build::doc(new).blocks);
    let merged = merge(a.clone(), b.clone(), 0);
    let plain = |blocks: Vec<Block>| blocks.iter().map(|b| block(b, RevKind::Inserted)).collect::<Vec<_>>();
    assert_eq!(resolve(&merged, RevKind::Deleted), plain(b), "accepting {old:?} → {new:?}");
    assert_eq!(resolve(&merged, RevKind::Inserted), plain(a), "rejecting {old:?} → {new:?}");
    merged
}

/// The runs of a paragraph as (text, revision kind).
fn runs(block: &Block) -> Vec<(String, Option<RevKind>)> {
    let (Block::Paragraph { content, .. } | Block::Heading { content, .. }) = block else {
        panic!("not a paragraph: {block:?}")
    };
    content
        .iter()
        .map(|i| match i {
            Inline::Text(t, s) => (t.clone(), s.rev.map(|r| r.kind)),
            other => (format!("{other:?}"), None),
        })
        .collect()
}

#[test]
fn a_changed_word_is_deleted_and_inserted_in_place() {
    let merged = check("<p>The quick brown fox.</p>", "<p>The quick red fox.</p>");
    assert_eq!(merged.len(), 1);
    assert_eq!(merged[0].0, None);
    assert_eq!(
        runs(&merged[0].1),
        vec![
            ("The quick ".to_owned(), None),
            ("brown".to_owned(), Some(RevKind::Deleted)),
            ("red".to_owned(), Some(RevKind::Inserted)),
            (" fox.".to_owned(), None),
        ]
    );
}

#[test]
fn a_word_whose_formatting_changed_is_a_formatting_revision() {
    let merged = check("<p>a <i>plain</i> word</p>", "<p>a <b>plain</b> word</p>");
    let r = runs(&merged[0].1);
    assert_eq!(r, [("a ", None), ("plain", None), (" word", None)].map(|(t, k)| (t.to_owned(), k)));
    let Block::Paragraph { content, .. } = &merged[0].1 else { panic!("{merged:?}") };
    let Inline::Text(_, style) = &content[1] else { panic!("{content:?}") };
    let former = style.former.as_ref().expect("a formatting revision");
    assert!(style.bold && !style.italic && former.style.italic && !former.style.bold, "{style:?}");
    // A word whose link changed is deleted and inserted: a link is not a run's formatting.
    let merged = check("<p>see <a href=\"https://a.example\">it</a></p>", "<p>see it</p>");
    let r = runs(&merged[0].1);
    assert!(r.contains(&("it".to_owned(), Some(RevKind::Deleted))), "{r:?}");
}

#[test]
fn new_and_deleted_blocks_are_whole_revisions() {
    let merged = check("<p>one</p><p>two</p>", "<p>one</p><h2>heading</h2><p>two</p><pre>code</pre>");
    let revs: Vec<_> = merged.iter().map(|(r, _)| r.map(|r| r.kind)).collect();
    assert_eq!(revs, vec![None, Some(RevKind::Inserted), None, Some(RevKind::Inserted)]);
    let merged = check("<h1>Title</h1><p>body</p>", "<p>body</p>");
    assert_eq!(merged[0].0.map(|r| r.kind), Some(RevKind::Deleted));
    // A heading become a paragraph cannot be merged word by word: deleted, then inserted.
    let merged = check("<h1>Same words</h1>", "<p>Same words</p>");
    let revs: Vec<_> = merged.iter().map(|(r, _)| r.map(|r| r.kind)).collect();
    assert_eq!(revs, vec![Some(RevKind::Deleted), Some(RevKind::Inserted)]);
}

#[test]
fn lists_change_item_by_item() {
    let merged = check(
        "<ul><li>alpha</li><li>beta</li><li>gamma</li></ul>",
        "<ul><li>alpha</li><li>beta two</li><li>delta</li><li>gamma</li></ul>",
    );
    let Block::List(list) = &merged[0].1 else { panic!("{merged:?}") };
    assert_eq!(list.items.len(), 4);
    assert_eq!(list.item_revs, vec![(2, Rev { kind: RevKind::Inserted, change: 0 })]);
    check("<ol><li>one<ul><li>nested</li></ul></li></ol>", "<ol><li>one<ul><li>nested more</li></ul></li></ol>");
    check("<ol><li>a</li><li>b</li></ol>", "<ol><li>b</li></ol>");
}

#[test]
fn tables_change_row_by_row() {
    let merged = check(
        "<table><tr><th>Name</th><th>Qty</th></tr><tr><td>apples</td><td>3</td></tr></table>",
        "<table><tr><th>Name</th><th>Qty</th></tr><tr><td>apples</td><td>4</td></tr><tr><td>pears</td><td>1</td></tr></table>",
    );
    let Block::Table(table) = &merged[0].1 else { panic!("{merged:?}") };
    let revs: Vec<_> = table.rows.iter().map(|r| r.rev.map(|r| r.kind)).collect();
    assert_eq!(revs, vec![None, None, Some(RevKind::Inserted)]);
    check(
        "<table><tr><td colspan=\"2\">merged</td></tr><tr><td>a</td><td>b</td></tr></table>",
        "<table><tr><td>split</td><td>cells</td></tr><tr><td>a</td><td>b</td></tr></table>",
    );
}

#[test]
fn changed_block_properties_and_table_grids_are_whole_revisions() {
    for (old, new) in [
        ("<p>same words</p>", "<p style=\"text-align: center\">same words</p>"),
        ("<ol><li>a</li></ol>", "<ol start=\"3\"><li>a</li></ol>"),
        ("<table><tr><td>a</td></tr></table>", "<table><tr><td>a</td><td>b</td></tr></table>"),
        (
            "<table><tr><td rowspan=\"2\">a</td><td>b</td></tr><tr><td>c</td></tr></table>",
            "<table><tr><td rowspan=\"2\">a</td><td>b</td></tr><tr><td>d</td></tr></table>",
        ),
    ] {
        let merged = check(old, new);
        let revs: Vec<_> = merged.iter().map(|(r, _)| r.map(|r| r.kind)).collect();
        assert_eq!(revs, vec![Some(RevKind::Deleted), Some(RevKind::Inserted)], "{old} → {new}");
    }
}

#[test]
fn links_pictures_breaks_and_right_to_left_text() {
    check(
        "<p>see <a href=\"https://a.example\">the site</a></p>",
        "<p>see <a href=\"https://b.example\">the site</a> now</p>",
    );
    check("<p>a<br>b <img src=\"x.png\" alt=\"x\"></p>", "<p>a b</p>");
    check("<p dir=\"rtl\">שלום עולם</p>", "<p dir=\"rtl\">שלום לכולם</p>");
}

#[test]
fn a_long_change_stays_within_its_budget() {
    let words = |n: usize, w: &str| (0..n).map(|i| format!("{w}{i}")).collect::<Vec<_>>().join(" ");
    let (a, b) = (format!("<p>{}</p>", words(3_000, "a")), format!("<p>{}</p>", words(3_000, "b")));
    check(&a, &b);
}

proptest! {
    #[test]
    fn accepting_gives_the_new_and_rejecting_the_old(
        old in proptest::collection::vec(0u8..6, 0..12),
        new in proptest::collection::vec(0u8..6, 0..12),
    ) {
        // Each number a block: paragraphs of a few words, a heading, a list, a table.
        let html = |blocks: &[u8]| -> String {
            blocks.iter().enumerate().map(|(k, b)| match b {
                0 => format!("<p>word {k} and <b>bold</b></p>"),
                1 => "<p>same text</p>".to_owned(),
                2 => format!("<h2>title {}</h2>", k % 2),
                3 => format!("<ul><li>item {k}</li><li>other</li></ul>"),
                4 => format!("<table><tr><td>cell {k}</td></tr><tr><td>x</td></tr></table>"),
                _ => "<blockquote><p>quoted</p></blockquote>".to_owned(),
            }).collect()
        };
        check(&html(&old), &html(&new));
    }
}

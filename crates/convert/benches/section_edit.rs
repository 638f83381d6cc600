//! Applying one section edit to a 10,000-section document (issue 4: under 5 ms).
//!
//! The function measured is the domain's: `Change::apply` (an `edit` change, which is
//! `Document::replace`: find the section, check that no new id collides with the others,
//! splice), on a document of 10,000 sections of ~200 bytes, editing the section in the
//! middle; `apply_approved` adds what an approval does around it (the staleness check and a
//! copy of the document, so that a refused set leaves it untouched). `Document::to_html` of
//! the result is timed for reference: what saving a version serializes.
//!
//! It lives here rather than in `redline-domain` because the domain keeps no dev-dependency
//! beyond proptest; it only uses `redline_domain`.
//!
//! `edit_every_section_10k` edits every section in turn and diffs the result against the
//! original, as a chat turn that touches every section does.
//!
//! Run: `cargo bench -p redline-convert --bench section_edit`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use redline_domain::document::{ChunkId, Document, Section};
use redline_domain::job::{apply_approved, Change, ChangeOp};

const SECTIONS: usize = 10_000;

fn section(i: usize, text: &str) -> Section {
    let id = format!("c{i:05}");
    let (tag, html) = if i.is_multiple_of(10) {
        ("h2", format!("<h2 data-chunk-id=\"{id}\">{text}</h2>"))
    } else {
        ("p", format!("<p data-chunk-id=\"{id}\">{text}</p>"))
    };
    Section { id: ChunkId::parse(&id).expect("valid id"), tag: tag.to_owned(), html, text: text.to_owned() }
}

fn document() -> Document {
    let text = "The quick brown fox jumps over the lazy dog while the committee reviews section";
    let sections = (0..SECTIONS).map(|i| section(i, &format!("{text} {i}, clause {}.", i * 7))).collect();
    Document::new(sections).expect("unique ids")
}

fn bench(c: &mut Criterion) {
    let doc = document();
    let target = SECTIONS / 2;
    let old = doc.sections()[target].clone();
    let change = Change {
        change_id: "ch1".into(),
        op: ChangeOp::Edit,
        chunk_id: old.id.clone(),
        after: None,
        old_html: Some(old.html.clone()),
        new_sections: vec![section(target, "An edited clause, with <strong>new</strong> words.")],
        explanation: None,
        edited: false,
    };
    let mut group = c.benchmark_group("section_edit_10k");
    group.bench_function("change_apply", |b| {
        b.iter_batched_ref(|| doc.clone(), |d| change.apply(black_box(d)).expect("applies"), BatchSize::LargeInput)
    });
    group.bench_function("apply_approved_with_copy", |b| {
        b.iter(|| apply_approved(black_box(&doc), &[&change]).expect("current"))
    });
    group.bench_function("to_html", |b| b.iter(|| black_box(&doc).to_html()));
    group.finish();

    // A turn that edits every section (the builtin's replace in a document where every
    // section matches): 10,000 replaces one after another, then the diff that commits them.
    let edits: Vec<Section> = (0..SECTIONS).map(|i| section(i, "Every clause edited.")).collect();
    let mut group = c.benchmark_group("edit_every_section_10k");
    group.sample_size(10);
    group.bench_function("replace_each_then_diff", |b| {
        b.iter_batched_ref(
            || doc.clone(),
            |d| {
                for s in &edits {
                    d.replace(&s.id, vec![s.clone()]).expect("known id");
                }
                redline_domain::document::diff(black_box(&doc), d).len()
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

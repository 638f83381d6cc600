//! Sectioning in slices (`src/slices.rs`) gives the sections of the whole document.

mod common;

use common::ids;
use proptest::prelude::*;
use redline_html::{slices_of, Html5everSections};
use redline_ports::HtmlSections;

/// Blocks of the grammar that is cut, and near misses of it.
const BLOCKS: &[&str] = &[
    "<p>plain words</p>",
    "<p>a &amp; b &lt; c &gt; d &nbsp;e&#x27;f &bogus; &amp</p>",
    "<p>line<br>break<br/>and<br />more</p>",
    "<p></p>",
    "<p> </p>",
    "<p>\n</p>",
    "<h1>Title</h1>",
    "<h2 style=\"color: red\">styled</h2>",
    "<h3 dir=\"rtl\" lang='he'>שלום</h3>",
    "<h6 title=\"a > b &amp; c\">t</h6>",
    "<p style=\"position:absolute\">dropped style</p>",
    "<p onclick=\"alert(1)\">handler</p>",
    "<p style=\"background:url(javascript:alert(1))\">bad url</p>",
    "<h4>\u{a0}</h4>",
    "<p>\r\nwindows\r\n</p>",
    // Near misses: not cut, and must still give the same sections.
    "<p>a<b>b</b></p>",
    "<p>a</h1>",
    "<p>a<p>b</p>",
    "<P>upper</P>",
    "<p class=x>unquoted</p>",
    "<p>a</p >",
    "<p>a<!-- c --></p>",
    "<h1>open",
    "</p>",
    "<b>bold",
    "</b>",
    "loose text",
    "<table><td>cell",
    "<pre>\nx</pre>",
    "<li>item",
    "<center>c</center>",
    "<p data-chunk-id=\"k1\">kept</p>",
    "<script>x</script>",
    "<textarea><p>a</p></textarea>",
    "<svg><p>a</p></svg>",
    "<!--",
    "<div>",
    "</div>",
    "<a href=\"https://x\">link",
    "<font color=red>",
    "&",
    "\u{0}",
];

const SPACES: &[&str] = &["", " ", "\n", "\n\n", "\t", "\r\n", "\u{c}"];

fn document() -> impl Strategy<Value = String> {
    prop::collection::vec((0..BLOCKS.len(), 0..SPACES.len(), prop::bool::weighted(0.7)), 0..40).prop_map(|parts| {
        let mut s = String::new();
        for (block, space, grammar) in parts {
            // Mostly blocks of the grammar, so that cuts happen before a near miss comes.
            s.push_str(BLOCKS[if grammar { block % 15 } else { block }]);
            s.push_str(SPACES[space]);
        }
        s
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000),
        ..ProptestConfig::default()
    })]

    #[test]
    fn slices_give_the_sections_of_the_whole(html in document(), slice in 1usize..64) {
        let whole = Html5everSections::with_slice_bytes(usize::MAX).sectionize(&html, &mut ids("n"));
        let sliced = Html5everSections::with_slice_bytes(slice).sectionize(&html, &mut ids("n"));
        prop_assert_eq!(whole, sliced, "input {:?}, slices {:?}", &html, slices_of(&html, slice));
        prop_assert_eq!(slices_of(&html, slice).concat(), html);
    }

    #[test]
    fn sections_handed_over_one_by_one_are_those_returned(html in document()) {
        let adapter = Html5everSections::with_slice_bytes(1);
        let mut each = Vec::new();
        let r = adapter.sectionize_each(&html, &mut ids("n"), &mut |s| {
            each.push(s);
            Ok(())
        });
        if let Ok(all) = adapter.sectionize(&html, &mut ids("n")) {
            prop_assert!(r.is_ok());
            prop_assert_eq!(all, each);
        }
    }
}

#[test]
fn a_large_plain_document_is_cut_and_gives_the_same_sections() {
    let html: String = (0..5000).map(|i| format!("<p>paragraph {i} &amp; more<br>line</p>\n")).collect();
    assert!(slices_of(&html, 1024).len() > 100);
    let whole = Html5everSections::with_slice_bytes(usize::MAX).sectionize(&html, &mut ids("n")).unwrap();
    let sliced = Html5everSections::with_slice_bytes(1024).sectionize(&html, &mut ids("n")).unwrap();
    assert_eq!(whole.len(), 5000);
    assert_eq!(whole, sliced);
}

#[test]
fn too_deep_is_refused_whether_or_not_it_is_cut() {
    let html = format!("<p>a</p>\n<p>b</p>{}", "<div>".repeat(300));
    assert!(slices_of(&html, 1).len() > 1);
    for slice in [1, usize::MAX] {
        assert!(Html5everSections::with_slice_bytes(slice).sectionize(&html, &mut ids("n")).is_err());
    }
}

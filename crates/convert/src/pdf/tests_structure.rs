//! Structure read from positions and drawings: tables, lists, superscripts, columns.

use super::tests::{html_of, pdf};

/// A text line at (x, y) in Helvetica of `size`.
fn text(x: f32, y: f32, size: f32, text: &str) -> String {
    format!("BT /F1 {size} Tf {x} {y} Td ({text}) Tj ET\n")
}

/// A grid of stroked lines: rows at `ys` (top down in PDF space: descending), columns at `xs`.
fn ruled(xs: &[f32], ys: &[f32]) -> String {
    let (left, right) = (xs[0], xs[xs.len() - 1]);
    let (top, bottom) = (ys[0], ys[ys.len() - 1]);
    let mut out = String::from("0.5 w\n");
    for y in ys {
        out.push_str(&format!("{left} {y} m {right} {y} l S\n"));
    }
    for x in xs {
        out.push_str(&format!("{x} {top} m {x} {bottom} l S\n"));
    }
    out
}

#[test]
fn a_ruled_table_becomes_a_table_with_its_text_in_its_cells() {
    let mut page = text(72.0, 760.0, 11.0, "Before the table.");
    page += &ruled(&[72.0, 200.0, 330.0], &[740.0, 720.0, 700.0]);
    // Each row drawn as one run of text, as many writers do.
    page += "BT /F1 11 Tf 76 726 Td (Name) Tj 128 0 Td (Capital) Tj ET\n";
    page += "BT /F1 11 Tf 76 706 Td (France) Tj 128 0 Td (Paris) Tj ET\n";
    page += &text(72.0, 680.0, 11.0, "After the table.");
    let html = html_of(&pdf(&[&page]));
    assert_eq!(
        html,
        "<p>Before the table.</p>\n<table>\n<tbody>\n<tr><td>Name</td><td>Capital</td></tr>\n\
         <tr><td>France</td><td>Paris</td></tr>\n</tbody>\n</table>\n<p>After the table.</p>\n"
    );
}

#[test]
fn a_missing_inner_line_merges_cells() {
    // Three columns; on the second row the line between columns 2 and 3 is missing, and
    // between rows 1 and 2 the line under column 1 is missing.
    let mut page = String::from("0.5 w\n");
    for y in [760.0, 700.0] {
        page += &format!("72 {y} m 372 {y} l S\n");
    }
    page += "172 730 m 372 730 l S\n"; // row line under columns 2-3 only
    page += "72 760 m 72 700 l S\n172 760 m 172 700 l S\n372 760 m 372 700 l S\n";
    page += "272 760 m 272 730 l S\n"; // column line on the first row only
    page += &text(76.0, 740.0, 10.0, "tall");
    page += &text(176.0, 740.0, 10.0, "b");
    page += &text(276.0, 740.0, 10.0, "c");
    page += &text(176.0, 710.0, 10.0, "wide");
    let html = html_of(&pdf(&[&page]));
    assert!(html.contains("<tr><td rowspan=\"2\">tall</td><td>b</td><td>c</td></tr>"), "{html}");
    assert!(html.contains("<tr><td colspan=\"2\">wide</td></tr>"), "{html}");
}

#[test]
fn thin_filled_rectangles_rule_a_table_as_word_draws_it() {
    let mut page = String::new();
    for y in [740.0, 720.0, 700.0] {
        page += &format!("72 {y} 258 0.5 re f\n");
    }
    for x in [72.0, 200.0, 330.0] {
        page += &format!("{x} 700 0.5 40 re f\n");
    }
    page += &text(76.0, 726.0, 11.0, "a1");
    page += &text(204.0, 726.0, 11.0, "b1");
    page += &text(76.0, 706.0, 11.0, "a2");
    page += &text(204.0, 706.0, 11.0, "b2");
    let html = html_of(&pdf(&[&page]));
    assert!(html.contains("<tr><td>a1</td><td>b1</td></tr>\n<tr><td>a2</td><td>b2</td></tr>"), "{html}");
}

#[test]
fn a_frame_round_one_text_is_not_a_table() {
    let mut page = String::from("72 700 200 40 re S\n");
    page += &text(80.0, 720.0, 11.0, "A text box");
    page += "1 0 0 1 0 0 cm 300 500 100 100 re f\n"; // a filled square: a shape, not a rule
    let html = html_of(&pdf(&[&page]));
    assert_eq!(html, "<p>A text box</p>\n");
}

#[test]
fn clipping_paths_are_not_rules() {
    let mut page = String::new();
    for y in [740.0, 720.0, 700.0] {
        page += &format!("72 {y} m 330 {y} l\n");
    }
    page += "72 700 258 40 re W n\n";
    page += &text(76.0, 726.0, 11.0, "a1");
    page += &text(204.0, 726.0, 11.0, "b1");
    let html = html_of(&pdf(&[&page]));
    assert!(!html.contains("<table>"), "{html}");
}

#[test]
fn a_note_marker_after_a_number_is_a_superscript() {
    let mut page = text(72.0, 700.0, 11.0, "Population 273.879.750");
    page += &text(189.0, 704.0, 7.0, "1");
    page += &text(200.0, 700.0, 11.0, "people");
    page += &text(72.0, 680.0, 11.0, "H");
    page += &text(80.0, 677.0, 7.0, "2");
    page += &text(84.0, 680.0, 11.0, "O");
    let html = html_of(&pdf(&[&page]));
    assert!(html.contains("273.879.750<sup>1</sup> people"), "{html}");
    assert!(html.contains("H<sub>2</sub>O"), "{html}");
}

#[test]
fn noncharacters_in_the_text_do_not_make_tags() {
    // The marks of superscripts are noncharacters; a font mapping to them is dropped.
    let page = text(72.0, 700.0, 11.0, "plain");
    let html = html_of(&pdf(&[&page]));
    assert_eq!(html, "<p>plain</p>\n");
}

#[test]
fn bulleted_and_numbered_lines_become_lists_nested_by_indent() {
    let mut page = text(72.0, 760.0, 11.0, "Shopping:");
    page += &text(72.0, 744.0, 11.0, "- fruit that is");
    page += &text(82.0, 731.0, 11.0, "ripe today");
    page += &text(90.0, 718.0, 11.0, "a. apples");
    page += &text(90.0, 705.0, 11.0, "b. pears");
    page += &text(72.0, 692.0, 11.0, "- bread");
    page += &text(72.0, 660.0, 11.0, "(ii) second of a Roman list");
    page += &text(72.0, 647.0, 11.0, "(iii) third");
    page += &text(72.0, 620.0, 11.0, "A closing paragraph.");
    let html = html_of(&pdf(&[&page]));
    assert_eq!(
        html,
        "<p>Shopping:</p>\n<ul>\n<li>fruit that is ripe today<ol type=\"a\">\n<li>apples</li>\n<li>pears</li>\n\
         </ol>\n</li>\n<li>bread</li>\n</ul>\n<ol type=\"i\" start=\"2\">\n<li>second of a Roman list</li>\n\
         <li>third</li>\n</ol>\n<p>A closing paragraph.</p>\n"
    );
}

#[test]
fn a_lone_numbered_line_stays_a_paragraph() {
    let mut page = text(72.0, 760.0, 11.0, "2020. A year like no other.");
    page += &text(72.0, 747.0, 11.0, "It went on,");
    page += &text(72.0, 734.0, 11.0, "and on.");
    page += &text(72.0, 700.0, 11.0, "1. Only one item");
    page += &text(72.0, 670.0, 11.0, "Text.");
    let html = html_of(&pdf(&[&page]));
    assert_eq!(html, "<p>2020. A year like no other. It went on, and on.</p>\n<p>1. Only one item</p>\n<p>Text.</p>\n");
}

#[test]
fn list_markers_are_read() {
    fn kind(text: &str) -> Option<(Option<(char, u32)>, &str)> {
        super::layout::list_marker(text).map(|(m, len)| (m.ordered, &text[len..]))
    }
    assert_eq!(kind("• dot"), Some((None, "dot")));
    assert_eq!(kind("* star"), Some((None, "star")));
    assert_eq!(kind("– dash"), Some((None, "dash")));
    assert_eq!(kind("12) twelve"), Some((Some(('1', 12)), "twelve")));
    assert_eq!(kind("(iv) four"), Some((Some(('i', 4)), "four")));
    assert_eq!(kind("IV. four"), Some((Some(('I', 4)), "four")));
    assert_eq!(kind("c. three"), Some((Some(('a', 3)), "three")));
    assert_eq!(kind("-5 degrees"), None);
    assert_eq!(kind("2020. year"), None);
    assert_eq!(kind("e.g. this"), None);
    assert_eq!(kind("1.5 litres"), None);
    assert_eq!(kind("•"), None);
}

/// Two columns of eight lines; `row_by_row` draws each row's two halves in one text object.
fn two_columns(row_by_row: bool) -> String {
    let mut page = text(72.0, 780.0, 18.0, "Title across the page");
    let row = |i: usize, side: &str, x: f32| {
        text(x, 750.0 - 13.0 * i as f32, 11.0, &format!("{side} column, line {i} of it"))
    };
    if row_by_row {
        for i in 1..=8 {
            let y = 750.0 - 13.0 * i as f32;
            page += &format!("BT /F1 11 Tf 72 {y} Td (Left column, line {i} of it) Tj 248 0 Td (Right column, line {i} of it) Tj ET\n");
        }
    } else {
        for i in 1..=8 {
            page += &row(i, "Left", 72.0);
        }
        for i in 1..=8 {
            page += &row(i, "Right", 320.0);
        }
    }
    page
}

#[test]
fn a_two_column_page_reads_the_left_column_then_the_right() {
    let column = |side: &str| (1..=8).map(|i| format!("{side} column, line {i} of it")).collect::<Vec<_>>().join(" ");
    let expected = format!("<h1>Title across the page</h1>\n<p>{}</p>\n<p>{}</p>\n", column("Left"), column("Right"));
    assert_eq!(html_of(&pdf(&[&two_columns(true)])), expected, "drawn row by row");
    assert_eq!(html_of(&pdf(&[&two_columns(false)])), expected, "drawn column by column");
}

#[test]
fn a_page_with_a_narrow_margin_column_is_not_two_columns() {
    // Line numbers in the right margin: a band free of text, but no column beyond it.
    let mut page = String::new();
    for i in 1..=8 {
        let y = 750.0 - 13.0 * i as f32;
        page += &format!("BT /F1 11 Tf 72 {y} Td (Body text, line {i} of the page) Tj 400 0 Td ({i}) Tj ET\n");
    }
    let html = html_of(&pdf(&[&page]));
    // Each number stays on its row (the rows line up: an unruled table).
    assert!(
        html.contains("<tr><td>Body text, line 1 of the page</td><td>1</td></tr>\n<tr><td>Body text, line 2"),
        "{html}"
    );
}

#[test]
fn columns_that_line_up_over_three_rows_are_an_unruled_table() {
    let mut page = text(72.0, 780.0, 11.0, "Prices:");
    for (i, (fruit, price, origin)) in
        [("Apples", "1.20", "Kent"), ("Pears", "0.90", "Anjou"), ("Plums", "2.10", "Agen")].iter().enumerate()
    {
        let y = 760.0 - 14.0 * i as f32;
        page += &format!("BT /F1 11 Tf 72 {y} Td ({fruit}) Tj 100 0 Td ({price}) Tj 80 0 Td ({origin}) Tj ET\n");
    }
    page += &text(72.0, 700.0, 11.0, "Two rows are not enough:");
    page += "BT /F1 11 Tf 72 680 Td (one) Tj 100 0 Td (two) Tj ET\nBT /F1 11 Tf 72 666 Td (three) Tj 100 0 Td (four) Tj ET\n";
    let html = html_of(&pdf(&[&page]));
    assert!(
        html.contains(
            "<p>Prices:</p>\n<table>\n<tbody>\n<tr><td>Apples</td><td>1.20</td><td>Kent</td></tr>\n\
             <tr><td>Pears</td><td>0.90</td><td>Anjou</td></tr>\n<tr><td>Plums</td><td>2.10</td><td>Agen</td></tr>\n\
             </tbody>\n</table>\n<p>Two rows"
        ),
        "{html}"
    );
    assert_eq!(html.matches("<table>").count(), 1, "{html}");
}

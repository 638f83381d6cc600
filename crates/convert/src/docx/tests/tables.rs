//! Tables: spans, merges, header rows, blank tables.

use super::*;

fn tc(props: &str, text: &str) -> String {
    format!("<w:tc><w:tcPr>{props}</w:tcPr>{}</w:tc>", p(text))
}

#[test]
fn tables_with_grid_span_and_vertical_merge() {
    let table = format!(
        "<w:tbl><w:tblPr><w:tblW w:w=\"0\"/></w:tblPr><w:tblGrid><w:gridCol/><w:gridCol/><w:gridCol/></w:tblGrid>\
         <w:tr><w:trPr><w:tblHeader/></w:trPr>{}{}</w:tr>\
         <w:tr>{}{}{}</w:tr>\
         <w:tr>{}{}<w:tc><w:tcPr><w:vMerge/></w:tcPr><w:p/></w:tc></w:tr></w:tbl>",
        tc("<w:gridSpan w:val=\"2\"/>", "Wide"),
        tc("<w:shd w:val=\"clear\" w:color=\"auto\" w:fill=\"FFFF00\"/>", "Yellow"),
        tc("", "a"),
        tc("", "b"),
        tc("<w:vMerge w:val=\"restart\"/>", "Tall"),
        tc("", "c"),
        tc("", "d"),
    );
    let html = Docx::new(&[table, p("after")].concat()).html();
    assert!(html.contains("colspan=\"2\""), "{html}");
    assert!(html.contains("rowspan=\"2\""), "{html}");
    assert_eq!(
        html,
        "<table><thead><tr><th colspan=\"2\">Wide</th><th style=\"background-color: #ffff00\">Yellow</th></tr></thead>\
         <tbody><tr><td>a</td><td>b</td><td rowspan=\"2\">Tall</td></tr><tr><td>c</td><td>d</td></tr></tbody></table>\n\
         <p>after</p>\n"
    );
}

#[test]
fn a_first_row_the_table_style_formats_apart_is_a_header() {
    let table = |style: &str, look: &str, cnf: &str| {
        format!(
            "<w:tbl><w:tblPr><w:tblStyle w:val=\"{style}\"/><w:tblLook {look}/></w:tblPr>\
             <w:tr>{cnf}{}{}</w:tr><w:tr>{}{}</w:tr></w:tbl>",
            tc("", "Name"),
            tc("", "Game"),
            tc("", "Lebron"),
            tc("", "Basketball"),
        )
    };
    let styles = r#"<w:style w:type="table" w:styleId="LightShading"><w:name w:val="Light Shading"/>
        <w:tblStylePr w:type="firstRow"><w:rPr><w:b/></w:rPr></w:tblStylePr></w:style>
        <w:style w:type="table" w:styleId="Mine"><w:name w:val="Mine"/><w:basedOn w:val="LightShading"/></w:style>
        <w:style w:type="table" w:styleId="TableGrid"><w:name w:val="Table Grid"/></w:style>"#;
    let header = "<table><thead><tr><th>Name</th><th>Game</th></tr></thead><tbody><tr><td>Lebron</td><td>Basketball</td></tr></tbody></table>\n";
    let plain = "<table><tr><td>Name</td><td>Game</td></tr><tr><td>Lebron</td><td>Basketball</td></tr></table>\n";
    for (style, look, cnf, want) in [
        // pandoc-tables.docx: the style formats the first row, the table asks for it.
        ("LightShading", "w:val=\"0420\" w:firstRow=\"1\"", "", header),
        ("Mine", "w:val=\"0020\"", "", header),
        // Word's default: every table asks, but Table Grid formats no row apart.
        ("TableGrid", "w:val=\"04A0\" w:firstRow=\"1\"", "", plain),
        ("LightShading", "w:val=\"0400\" w:firstRow=\"0\"", "", plain),
        // The row says it took the first row's formatting.
        (
            "TableGrid",
            "w:firstRow=\"0\"",
            "<w:trPr><w:cnfStyle w:val=\"100000000000\" w:firstRow=\"1\"/></w:trPr>",
            header,
        ),
    ] {
        let mut d = Docx::new(&table(style, look, cnf));
        d.styles = Some(styles.into());
        assert_eq!(d.html(), want, "{style} {look} {cnf}");
    }
}

#[test]
fn legacy_horizontal_merges_and_blank_tables() {
    let table = format!(
        "<w:tbl><w:tr>{}{}{}</w:tr><w:tr>{}{}{}</w:tr></w:tbl><w:tbl><w:tr><w:tc><w:p/></w:tc></w:tr></w:tbl>",
        tc("<w:hMerge w:val=\"restart\"/>", "ab"),
        tc("<w:hMerge/>", ""),
        tc("", "c"),
        tc("", "1"),
        tc("", "2"),
        tc("", "3"),
    );
    assert_eq!(
        Docx::new(&table).html(),
        "<table><tr><td colspan=\"2\">ab</td><td>c</td></tr><tr><td>1</td><td>2</td><td>3</td></tr></table>\n"
    );
}

#[test]
fn nested_tables_and_cell_blocks() {
    let inner = format!("<w:tbl><w:tr>{}</w:tr></w:tbl>", tc("", "in"));
    let outer = format!("<w:tbl><w:tr><w:tc>{}{inner}</w:tc><w:tc>{}{}</w:tc></w:tr></w:tbl>", p("x"), p("y"), p("z"));
    assert_eq!(
        Docx::new(&outer).html(),
        "<table><tr><td><p>x</p><table><tr><td>in</td></tr></table></td><td><p>y</p><p>z</p></td></tr></table>\n"
    );
}

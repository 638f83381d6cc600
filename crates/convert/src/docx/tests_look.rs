//! The page header and footer a DOCX shows, and the banded rows of a table style: the parts
//! of a Word document's look outside its paragraphs (docs/conversion.md, "Page headers and
//! footers" and "How the readers decide"); and the formatting a tracked change replaced.

use super::tests::{p, Docx, PNG, REL_NS, W};

#[test]
fn the_page_header_and_footer_most_pages_show_are_kept_and_the_others_named() {
    // The body's section shows header1 (with a picture of its own) and footer1 (with a page
    // number) on most pages, header2 on the first page only.
    let sect = r#"<w:sectPr><w:headerReference w:type="default" r:id="rIdH"/><w:headerReference w:type="first" r:id="rIdH2"/><w:footerReference w:type="default" r:id="rIdFt"/><w:titlePg/></w:sectPr>"#;
    let mut d = Docx::new(&format!("{}{sect}", p("Body")))
        .rel("rIdH", "header", "header1.xml", false)
        .rel("rIdH2", "header", "header2.xml", false)
        .rel("rIdFt", "footer", "footer1.xml", false);
    let logo = r#"<w:p><w:r><w:drawing><wp:inline><wp:extent cx="952500" cy="476250"/><wp:docPr id="1" name="Logo"/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic><pic:blipFill><a:blip r:embed="rIdLogo"/></pic:blipFill></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r><w:r><w:t>ACME Ltd</w:t></w:r></w:p>"#;
    d.media.push(("word/header1.xml".into(), format!("<w:hdr {W}>{logo}</w:hdr>").into_bytes()));
    d.media.push((
        "word/_rels/header1.xml.rels".into(),
        format!(
            r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rIdLogo" Type="{REL_NS}/image" Target="media/logo.png"/></Relationships>"#
        )
        .into_bytes(),
    ));
    d.media.push(("word/media/logo.png".into(), PNG.to_vec()));
    d.media.push(("word/header2.xml".into(), format!("<w:hdr {W}>{}</w:hdr>", p("Cover page")).into_bytes()));
    let page = r#"<w:p><w:r><w:t xml:space="preserve">Page </w:t></w:r><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> PAGE </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>1</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>"#;
    d.media.push(("word/footer1.xml".into(), format!("<w:ftr {W}>{page}</w:ftr>").into_bytes()));
    let out = d.convert().unwrap();
    let header_end = out.html.find("</header>").expect("a page header");
    let header = &out.html[..header_end];
    assert!(header.starts_with("<header role=\"doc-pageheader\">"), "{}", out.html);
    assert!(header.contains("src=\"redline-image:0\""), "the header's own picture: {}", out.html);
    assert!(header.contains("width=\"100\" height=\"50\""), "{}", out.html);
    assert!(header.contains("ACME Ltd") && !out.html.contains("Cover page"), "{}", out.html);
    assert_eq!(out.images.len(), 1);
    assert!(
        out.html.trim_end().ends_with("<footer role=\"doc-pagefooter\">\n<p>Page 1</p>\n</footer>"),
        "{}",
        out.html
    );
    let has = |s: &str| out.warnings.iter().any(|w| w.contains(s));
    assert!(has("the first page's header was not imported"), "{:?}", out.warnings);
    assert!(has("page numbers in the page header or footer became the text"), "{:?}", out.warnings);
    assert!(out.html.find("Body").unwrap() > header_end, "{}", out.html);
}

#[test]
fn a_table_style_bands_its_rows_after_the_header_unless_the_table_turns_bands_off() {
    let row = |a: &str, shd: &str| format!("<w:tr><w:tc>{shd}{}</w:tc><w:tc>{}</w:tc></w:tr>", p(a), p("x"));
    let own = r#"<w:tcPr><w:shd w:val="clear" w:fill="FF0000"/></w:tcPr>"#;
    let table = |look: &str| {
        format!(
            "<w:tbl><w:tblPr><w:tblStyle w:val=\"Banded\"/>{look}</w:tblPr>{}{}{}{}{}</w:tbl>",
            row("Head", ""),
            row("one", ""),
            row("two", ""),
            row("three", own),
            row("four", "")
        )
    };
    let styles = r#"<w:style w:type="table" w:styleId="Base"><w:name w:val="Base"/>
        <w:tblStylePr w:type="firstRow"><w:rPr><w:b/></w:rPr></w:tblStylePr>
        <w:tblStylePr w:type="band1Horz"><w:tblPr/><w:tcPr><w:shd w:val="clear" w:color="auto" w:fill="C0C0C0"/></w:tcPr></w:tblStylePr>
        <w:tblStylePr w:type="band2Horz"><w:tcPr><w:shd w:val="clear" w:fill="00FF00"/></w:tcPr></w:tblStylePr></w:style>
        <w:style w:type="table" w:styleId="Banded"><w:name w:val="Banded"/><w:basedOn w:val="Base"/></w:style>"#;
    let mut d = Docx::new(&table(r#"<w:tblLook w:firstRow="1" w:noHBand="0"/>"#));
    d.styles = Some(styles.into());
    let html = d.html();
    let grey = "style=\"background-color: #c0c0c0\"";
    // The header row, then rows one and three of the body banded (three keeps its own red).
    let rows: Vec<&str> = html.split("<tr>").skip(1).collect();
    assert_eq!(rows.len(), 5, "{html}");
    assert!(rows[0].contains("<th") && !rows[0].contains("background"), "{html}");
    assert_eq!(rows[1].matches(grey).count(), 2, "{html}");
    assert!(!rows[2].contains("background"), "{html}");
    assert!(rows[3].contains("#ff0000") && rows[3].matches(grey).count() == 1, "{html}");
    assert!(!rows[4].contains("background"), "{html}");
    // `w:noHBand` (or bit 0x0200 of the old hexadecimal look) turns the bands off.
    for look in [r#"<w:tblLook w:firstRow="1" w:noHBand="1"/>"#, r#"<w:tblLook w:val="0620"/>"#] {
        let mut d = Docx::new(&table(look));
        d.styles = Some(styles.into());
        let html = d.html();
        assert!(!html.contains("#c0c0c0"), "{look}: {html}");
    }
}

#[test]
fn the_reading_with_changes_rejected_has_the_former_formatting() {
    // Made bold (it was italic), and made a heading (it was a plain paragraph).
    let body = r#"<w:p><w:r><w:rPr><w:b/><w:rPrChange w:id="1" w:author="Ann" w:date="2026-05-03T10:00:00Z"><w:rPr><w:i/></w:rPr></w:rPrChange></w:rPr><w:t>Styled</w:t></w:r></w:p>
      <w:p><w:pPr><w:pStyle w:val="Heading1"/><w:pPrChange w:id="2" w:author="Ann"><w:pPr/></w:pPrChange></w:pPr><w:r><w:rPr><w:u w:val="single"/><w:rPrChange w:id="3" w:author="Ann"/></w:rPr><w:t>Title</w:t></w:r></w:p>"#;
    let out = Docx::new(body).convert().unwrap();
    assert_eq!(out.html, "<p><strong>Styled</strong></p>\n<h1><u>Title</u></h1>\n");
    let tracked = out.tracked.expect("formatting changes are tracked changes");
    assert_eq!(tracked.summary, "3 formatting changes by Ann");
    assert_eq!(tracked.original.html, "<p><em>Styled</em></p>\n<p>Title</p>\n");
}

//! DOCX converter tests: small packages written by hand, hostile packages, and the shared
//! corpus of real files.

use std::io::{Cursor, Write};

use redline_ports::documents::{Attributed, ConvertError, Converted, Reviser};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

use super::{convert, convert_with, Limits};

mod metadata;
mod revisions;
mod tables;

pub(super) const W: &str = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture" xmlns:v="urn:schemas-microsoft-com:vml" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape""#;

const CONTENT_TYPES: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
<Default Extension="xml" ContentType="application/xml"/>
<Default Extension="png" ContentType="image/png"/>
<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>
</Types>"#;

const ROOT_RELS: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>
</Relationships>"#;

pub(super) const REL_NS: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

/// A 1×1 PNG.
pub(super) const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89\0\0\0\rIDATx\x9cc\xf8\x0f\x00\x01\x01\x01\x00\x18\xdd\x8d\xb0\0\0\0\0IEND\xaeB`\x82";

/// Zips parts (deflated).
fn zip_parts(parts: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    for (name, bytes) in parts {
        w.start_file(*name, options).unwrap();
        w.write_all(bytes).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// A package builder: document body, and optional styles, numbering, notes, relationships
/// and media.
#[derive(Default)]
pub(super) struct Docx {
    body: String,
    pub(super) styles: Option<String>,
    numbering: Option<String>,
    footnotes: Option<String>,
    /// `(id, type, target, external)`
    rels: Vec<(String, String, String, bool)>,
    pub(super) media: Vec<(String, Vec<u8>)>,
}

impl Docx {
    pub(super) fn new(body: &str) -> Self {
        Docx { body: body.to_owned(), ..Docx::default() }
    }

    pub(super) fn rel(mut self, id: &str, kind: &str, target: &str, external: bool) -> Self {
        self.rels.push((id.into(), kind.into(), target.into(), external));
        self
    }

    fn build(&self) -> Vec<u8> {
        let document = format!(
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document {W}><w:body>{}<w:sectPr><w:headerReference r:id="rIdH"/><w:pgSz w:w="11906"/></w:sectPr></w:body></w:document>"#,
            self.body
        );
        let mut rels = String::from(
            r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">"#,
        );
        for (id, kind, target, external) in &self.rels {
            rels.push_str(&format!(
                r#"<Relationship Id="{id}" Type="{REL_NS}/{kind}" Target="{target}"{}/>"#,
                if *external { r#" TargetMode="External""# } else { "" }
            ));
        }
        if self.styles.is_some() {
            rels.push_str(&format!(r#"<Relationship Id="rIdS" Type="{REL_NS}/styles" Target="styles.xml"/>"#));
        }
        if self.numbering.is_some() {
            rels.push_str(&format!(r#"<Relationship Id="rIdN" Type="{REL_NS}/numbering" Target="numbering.xml"/>"#));
        }
        if self.footnotes.is_some() {
            rels.push_str(&format!(r#"<Relationship Id="rIdF" Type="{REL_NS}/footnotes" Target="footnotes.xml"/>"#));
        }
        rels.push_str("</Relationships>");
        let mut parts: Vec<(String, Vec<u8>)> = vec![
            ("[Content_Types].xml".into(), CONTENT_TYPES.into()),
            ("_rels/.rels".into(), ROOT_RELS.into()),
            ("word/document.xml".into(), document.into_bytes()),
            ("word/_rels/document.xml.rels".into(), rels.into_bytes()),
        ];
        if let Some(s) = &self.styles {
            parts.push(("word/styles.xml".into(), format!("<w:styles {W}>{s}</w:styles>").into_bytes()));
        }
        if let Some(n) = &self.numbering {
            parts.push(("word/numbering.xml".into(), format!("<w:numbering {W}>{n}</w:numbering>").into_bytes()));
        }
        if let Some(f) = &self.footnotes {
            parts.push(("word/footnotes.xml".into(), format!("<w:footnotes {W}>{f}</w:footnotes>").into_bytes()));
        }
        for (name, bytes) in &self.media {
            parts.push((name.clone(), bytes.clone()));
        }
        let refs: Vec<(&str, &[u8])> = parts.iter().map(|(n, b)| (n.as_str(), b.as_slice())).collect();
        zip_parts(&refs)
    }

    pub(super) fn convert(&self) -> Result<Converted, ConvertError> {
        convert(&self.build())
    }

    pub(super) fn html(&self) -> String {
        self.convert().unwrap().html
    }
}

pub(super) fn p(text: &str) -> String {
    format!("<w:p><w:r><w:t xml:space=\"preserve\">{text}</w:t></w:r></w:p>")
}

fn styled(style: &str, text: &str) -> String {
    format!("<w:p><w:pPr><w:pStyle w:val=\"{style}\"/></w:pPr><w:r><w:t>{text}</w:t></w:r></w:p>")
}

fn run(rpr: &str, text: &str) -> String {
    format!("<w:r><w:rPr>{rpr}</w:rPr><w:t xml:space=\"preserve\">{text}</w:t></w:r>")
}

#[test]
fn headings_from_styles_localised_ids_and_outline_levels() {
    let mut d = Docx::new(
        &[
            styled("Title", "The title"),
            styled("Heading1", "One"),
            styled("berschrift2", "Zwei"),
            styled("Chapter", "Outlined"),
            styled("Normal", "Body text"),
            "<w:p><w:pPr><w:outlineLvl w:val=\"2\"/></w:pPr><w:r><w:t>Direct</w:t></w:r></w:p>".into(),
            styled("Heading1", "   "),
        ]
        .concat(),
    );
    d.styles = Some(
        r#"<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style>
        <w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/><w:rPr><w:color w:val="2F5496"/></w:rPr></w:style>
        <w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/><w:rPr><w:b/></w:rPr></w:style>
        <w:style w:type="paragraph" w:styleId="berschrift2"><w:name w:val="heading 2"/></w:style>
        <w:style w:type="paragraph" w:styleId="Chapter"><w:name w:val="Chapter"/><w:pPr><w:outlineLvl w:val="3"/></w:pPr></w:style>"#
            .into(),
    );
    assert_eq!(
        d.html(),
        // A heading's style gives it its colour, not its weight (every heading is bold).
        "<h1><span style=\"color: #2f5496\">The title</span></h1>\n<h1>One</h1>\n<h2>Zwei</h2>\n<h4>Outlined</h4>\n<p>Body text</p>\n<h3>Direct</h3>\n"
    );
    // Without a styles part, the usual style ids still make headings.
    let bare = Docx::new(&[styled("Heading2", "Two"), p("x")].concat());
    assert_eq!(bare.html(), "<h2>Two</h2>\n<p>x</p>\n");
}

fn item(num: u32, ilvl: u32, text: &str) -> String {
    format!(
        "<w:p><w:pPr><w:numPr><w:ilvl w:val=\"{ilvl}\"/><w:numId w:val=\"{num}\"/></w:numPr></w:pPr><w:r><w:t>{text}</w:t></w:r></w:p>"
    )
}

const NUMBERING: &str = r#"
  <w:abstractNum w:abstractNumId="0">
    <w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/></w:lvl>
    <w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="bullet"/><w:lvlText w:val="o"/></w:lvl>
    <w:lvl w:ilvl="2"><w:start w:val="1"/><w:numFmt w:val="lowerLetter"/></w:lvl>
  </w:abstractNum>
  <w:abstractNum w:abstractNumId="1">
    <w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/></w:lvl>
  </w:abstractNum>
  <w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>
  <w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num>"#;

#[test]
fn nested_lists_ul_inside_ol() {
    let mut d = Docx::new(
        &[
            item(1, 0, "One"),
            item(1, 1, "Sub a"),
            item(1, 1, "Sub b"),
            item(1, 2, "Deep"),
            item(1, 0, "Two"),
            p("Break"),
            item(1, 0, "Three"),
            item(2, 0, "Bullet"),
            styled("ListBullet", "Styled bullet"),
        ]
        .concat(),
    );
    d.numbering = Some(NUMBERING.into());
    d.styles = Some(
        r#"<w:style w:type="paragraph" w:styleId="ListBullet"><w:name w:val="List Bullet"/>
           <w:pPr><w:numPr><w:numId w:val="2"/></w:numPr></w:pPr></w:style>"#
            .into(),
    );
    assert_eq!(
        d.html(),
        "<ol><li>One<ul><li>Sub a</li><li>Sub b<ol type=\"a\"><li>Deep</li></ol></li></ul></li><li>Two</li></ol>\n\
         <p>Break</p>\n\
         <ol start=\"3\"><li>Three</li></ol>\n\
         <ul><li>Bullet</li><li>Styled bullet</li></ul>\n"
    );
}

#[test]
fn damaged_styles_cost_formatting_not_the_document() {
    let mut d = Docx::new(&styled("Heading1", "Still here"));
    d.styles = Some("<w:style w:styleId=\"x\"></w:wrong>".into());
    let out = d.convert().unwrap();
    assert_eq!(out.html, "<h1>Still here</h1>\n");
    assert!(out.warnings.iter().any(|w| w.contains("styles")), "{:?}", out.warnings);
}

#[test]
fn run_formatting_merges_and_maps_to_tags() {
    let body = format!(
        "<w:p>{}{}{}{}{}{}{}{}{}{}{}</w:p>",
        run("<w:b/>", "Bold "),
        run("<w:b w:val=\"1\"/>", "still"),
        run("<w:i/>", " italic"),
        run("<w:u w:val=\"single\"/>", " under"),
        run("<w:u w:val=\"none\"/>", " plain"),
        run("<w:strike/>", " struck"),
        run("<w:color w:val=\"FF0000\"/>", " red"),
        run("<w:highlight w:val=\"yellow\"/>", " marked"),
        run("<w:shd w:val=\"clear\" w:fill=\"00FF00\"/>", " shaded"),
        run("<w:vertAlign w:val=\"superscript\"/>", "2"),
        run("<w:vertAlign w:val=\"subscript\"/><w:color w:val=\"auto\"/>", "i"),
    );
    assert_eq!(
        Docx::new(&body).html(),
        "<p><strong>Bold still</strong><em> italic</em><u> under</u> plain<s> struck</s>\
         <span style=\"color: #ff0000\"> red</span><span style=\"background-color: #ffff00\"> marked</span>\
         <span style=\"background-color: #00ff00\"> shaded</span><sup>2</sup><sub>i</sub></p>\n"
    );
}

#[test]
fn character_and_paragraph_styles_format_runs() {
    let mut d = Docx::new(&format!(
        "<w:p><w:pPr><w:pStyle w:val=\"Quote\"/></w:pPr>{}{}</w:p>",
        run("<w:rStyle w:val=\"Strong\"/>", "strong"),
        run("<w:rStyle w:val=\"Strong\"/><w:b w:val=\"0\"/>", " not")
    ));
    d.styles = Some(
        r#"<w:style w:type="paragraph" w:styleId="Quote"><w:name w:val="Quote"/><w:rPr><w:i/></w:rPr></w:style>
           <w:style w:type="character" w:styleId="Strong"><w:name w:val="Strong"/><w:rPr><w:b/></w:rPr></w:style>"#
            .into(),
    );
    assert_eq!(d.html(), "<p><strong><em>strong</em></strong><em> not</em></p>\n");
}

#[test]
fn hyperlinks_external_field_and_unsafe() {
    let body = format!(
        "<w:p><w:r><w:t xml:space=\"preserve\">See </w:t></w:r><w:hyperlink r:id=\"rIdL\">{}{}</w:hyperlink>\
         <w:hyperlink r:id=\"rIdJ\"><w:r><w:t xml:space=\"preserve\"> evil</w:t></w:r></w:hyperlink>\
         <w:hyperlink w:anchor=\"_Toc1\"><w:r><w:t xml:space=\"preserve\"> internal</w:t></w:r></w:hyperlink></w:p>\
         <w:p><w:r><w:fldChar w:fldCharType=\"begin\"/></w:r><w:r><w:instrText xml:space=\"preserve\"> HYPERLINK \"https://field.example/\" </w:instrText></w:r>\
         <w:r><w:fldChar w:fldCharType=\"separate\"/></w:r><w:r><w:t>field link</w:t></w:r><w:r><w:fldChar w:fldCharType=\"end\"/></w:r>\
         <w:r><w:t xml:space=\"preserve\"> after</w:t></w:r></w:p>",
        run("<w:rStyle w:val=\"Hyperlink\"/><w:color w:val=\"0563C1\"/><w:u w:val=\"single\"/>", "the "),
        run("<w:b/>", "site")
    );
    let d = Docx::new(&body).rel("rIdL", "hyperlink", "https://example.com/?a=1&amp;b=2", true).rel(
        "rIdJ",
        "hyperlink",
        "javascript:alert(1)",
        true,
    );
    assert_eq!(
        d.html(),
        "<p>See <a href=\"https://example.com/?a=1&amp;b=2\"><span style=\"color: #0563c1\">the </span><strong>site</strong></a> \
         evil internal</p>\n\
         <p><a href=\"https://field.example/\">field link</a> after</p>\n"
    );
}

#[test]
fn footnotes_are_marked_and_appended() {
    let mut d = Docx::new(&format!(
        "<w:p><w:r><w:t>Claim</w:t></w:r><w:r><w:rPr><w:vertAlign w:val=\"superscript\"/></w:rPr><w:footnoteReference w:id=\"2\"/></w:r>\
         <w:r><w:t xml:space=\"preserve\"> and more</w:t></w:r><w:r><w:footnoteReference w:id=\"1\"/></w:r></w:p>{}",
        p("Last paragraph")
    ));
    d.footnotes = Some(
        r#"<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>
        <w:footnote w:id="1"><w:p><w:r><w:footnoteRef/></w:r><w:r><w:t xml:space="preserve"> First note.</w:t></w:r></w:p></w:footnote>
        <w:footnote w:id="2"><w:p><w:r><w:footnoteRef/></w:r><w:r><w:t xml:space="preserve"> The source, </w:t></w:r><w:r><w:rPr><w:i/></w:rPr><w:t>p. 4</w:t></w:r></w:p>
          <w:p><w:r><w:t>Second paragraph.</w:t></w:r></w:p></w:footnote>
        <w:footnote w:id="3"><w:p><w:r><w:t>Unreferenced.</w:t></w:r></w:p></w:footnote>"#
            .into(),
    );
    assert_eq!(
        d.html(),
        "<p>Claim<a href=\"#fn1\" id=\"fnref1\" role=\"doc-noteref\"><sup>1</sup></a> and more\
         <a href=\"#fn2\" id=\"fnref2\" role=\"doc-noteref\"><sup>2</sup></a></p>\n<p>Last paragraph</p>\n\
         <section role=\"doc-endnotes\"><ol>\n<li id=\"fn1\"><p>The source, <em>p. 4</em></p>\n<p>Second paragraph.</p></li>\n\
         <li id=\"fn2\"><p>First note.</p></li>\n</ol></section>\n"
    );
}

fn drawing(rel: &str, descr: &str) -> String {
    format!(
        r#"<w:r><w:drawing><wp:inline><wp:extent cx="1" cy="1"/><wp:docPr id="1" name="Picture 1" descr="{descr}"/>
        <a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic>
        <pic:nvPicPr><pic:cNvPr id="0" name="x.png"/><pic:cNvPicPr/></pic:nvPicPr>
        <pic:blipFill><a:blip r:embed="{rel}"/></pic:blipFill></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r>"#
    )
}

#[test]
fn embedded_pictures_are_extracted_once() {
    let body = format!(
        "<w:p><w:r><w:t xml:space=\"preserve\">Look: </w:t></w:r>{}</w:p>\
         <w:p><w:r><w:pict><v:shape alt=\"again\"><v:imagedata r:id=\"rIdImg\" o:title=\"\"/></v:shape></w:pict></w:r></w:p>\
         <w:p>{}{}{}{}</w:p>",
        drawing("rIdImg", "A &lt;cat&gt;"),
        drawing("rIdSvg", "vector"),
        drawing("rIdGone", "missing"),
        drawing("rIdFar", "linked"),
        drawing("rIdEmf", "a chart"),
    );
    let mut d = Docx::new(&body)
        .rel("rIdImg", "image", "media/image1.png", false)
        .rel("rIdSvg", "image", "media/image2.svg", false)
        .rel("rIdGone", "image", "media/nothing.png", false)
        .rel("rIdFar", "image", "https://example.com/x.png", true)
        .rel("rIdEmf", "image", "media/image3.emf", false);
    d.media =
        vec![("word/media/image1.png".into(), PNG.to_vec()), ("word/media/image2.svg".into(), b"<svg/>".to_vec())];
    let out = d.convert().unwrap();
    assert_eq!(
        out.html,
        "<p>Look: <img src=\"redline-image:0\" alt=\"A &lt;cat&gt;\"></p>\n<p><img src=\"redline-image:0\" alt=\"again\"></p>\n\
         <p>[picture not shown: linked][picture not shown: a chart]</p>\n"
    );
    assert_eq!(out.images.len(), 1);
    assert_eq!(out.images[0].placeholder, "redline-image:0");
    assert_eq!(out.images[0].content_type, "image/png");
    assert_eq!(out.images[0].bytes, PNG);
    assert!(out.warnings.iter().any(|w| w.contains("SVG")), "{:?}", out.warnings);
    assert!(out.warnings.iter().any(|w| w.contains("linked picture")), "{:?}", out.warnings);
    assert!(out.warnings.iter().any(|w| w.contains("EMF/WMF")), "{:?}", out.warnings);
    // A picture over its cap is skipped with a warning; the rest converts.
    let mut big = Docx::new(&format!("<w:p><w:r><w:t>text</w:t></w:r>{}</w:p>", drawing("rIdImg", ""))).rel(
        "rIdImg",
        "image",
        "media/image1.png",
        false,
    );
    let mut huge_png = PNG.to_vec();
    huge_png.resize(3 << 20, 0);
    big.media = vec![("word/media/image1.png".into(), huge_png)];
    let out = convert_with(&big.build(), Limits { max_image_bytes: 1 << 20, ..Limits::default() }).unwrap();
    assert_eq!(out.html, "<p>text</p>\n");
    assert!(out.images.is_empty());
    assert!(out.warnings.iter().any(|w| w.contains("larger than 1 MiB")), "{:?}", out.warnings);
    // A document of only a picture is not empty.
    let mut only =
        Docx::new(&format!("<w:p>{}</w:p>", drawing("rIdImg", ""))).rel("rIdImg", "image", "media/image1.png", false);
    only.media = vec![("word/media/image1.png".into(), PNG.to_vec())];
    let out = only.convert().unwrap();
    assert_eq!(out.images.len(), 1);
    assert_eq!(out.html, "<p><img src=\"redline-image:0\" alt=\"\"></p>\n");
}

/// A picture is shown at the size the document gives it (`wp:extent` in EMU, a VML shape's
/// style in points or inches), in CSS pixels, not at its pixel size.
#[test]
fn pictures_keep_the_size_the_document_shows_them_at() {
    let sized =
        |cx: &str, cy: &str| drawing("rIdImg", "logo").replace(r#"cx="1" cy="1""#, &format!(r#"cx="{cx}" cy="{cy}""#));
    let body = format!(
        "<w:p>{}</w:p><w:p>{}</w:p>\
         <w:p><w:r><w:pict><v:shape style=\"position:absolute;width:75pt;height:0.5in\"><v:imagedata r:id=\"rIdImg\"/></v:shape></w:pict></w:r></w:p>",
        sized("1905000", "952500"),
        sized("0", "952500"),
    );
    let mut d = Docx::new(&body).rel("rIdImg", "image", "media/image1.png", false);
    d.media = vec![("word/media/image1.png".into(), PNG.to_vec())];
    let out = d.convert().unwrap();
    assert_eq!(
        out.html,
        "<p><img src=\"redline-image:0\" alt=\"logo\" width=\"200\" height=\"100\"></p>\n\
         <p><img src=\"redline-image:0\" alt=\"logo\"></p>\n\
         <p><img src=\"redline-image:0\" alt=\"\" width=\"100\" height=\"48\"></p>\n"
    );
}

#[test]
fn breaks_tabs_hyphens_content_controls_text_boxes_and_tracked_changes() {
    let body = r#"<w:p><w:r><w:t>a</w:t><w:br/><w:t>b</w:t><w:tab/><w:t>c</w:t><w:softHyphen/><w:t>d</w:t><w:noBreakHyphen/><w:t>e</w:t><w:br w:type="page"/></w:r></w:p>
      <w:sdt><w:sdtPr><w:alias w:val="Field"/><w:placeholder><w:docPart w:val="x"/></w:placeholder></w:sdtPr>
        <w:sdtContent><w:p><w:r><w:t>Inside a control</w:t></w:r><w:sdt><w:sdtContent><w:r><w:t xml:space="preserve"> inline</w:t></w:r></w:sdtContent></w:sdt></w:p></w:sdtContent></w:sdt>
      <w:p><w:ins w:id="1" w:author="A"><w:r><w:t>kept</w:t></w:r></w:ins><w:del w:id="2" w:author="A"><w:r><w:delText>gone</w:delText></w:r></w:del>
        <w:r><w:rPr><w:vanish/></w:rPr><w:t>hidden</w:t></w:r></w:p>
      <w:p><w:r><w:t>Anchor</w:t></w:r><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wp:anchor><wp:docPr id="2" name="Text Box 2"/>
        <a:graphic><a:graphicData><wps:wsp><wps:txbx><w:txbxContent><w:p><w:r><w:t>Boxed text</w:t></w:r></w:p></w:txbxContent></wps:txbx></wps:wsp></a:graphicData></a:graphic>
        </wp:anchor></w:drawing></mc:Choice><mc:Fallback><w:pict><v:shape><v:textbox><w:txbxContent><w:p><w:r><w:t>Boxed text</w:t></w:r></w:p></w:txbxContent></v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r></w:p>
      <w:p><w:r><mc:AlternateContent><mc:Choice Requires="unknown1"><w:t>choice</w:t></mc:Choice><mc:Fallback><w:t>fallback</w:t></mc:Fallback></mc:AlternateContent></w:r></w:p>
      <w:p><w:r><w:t>x&amp;y &#x263A; &lt;z&gt;</w:t></w:r><w:r><w:sym w:font="Symbol" w:char="F0B7"/></w:r></w:p>
      <w:p/><w:p><w:r><w:t xml:space="preserve">   </w:t></w:r></w:p><w:p><w:r><w:br/></w:r></w:p>"#;
    let out = Docx::new(body).convert().unwrap();
    assert_eq!(
        out.html,
        "<p>a<br>b\tc\u{ad}d\u{2011}e</p>\n<p>Inside a control inline</p>\n<p>kept</p>\n<p>Anchor</p>\n<p>Boxed text</p>\n\
         <p>fallback</p>\n<p>x&amp;y ☺ &lt;z&gt;•</p>\n"
    );
    let tracked = out.tracked.expect("the file has tracked changes");
    assert_eq!(tracked.summary, "1 insertion and 1 deletion by A");
    assert!(tracked.original.html.contains("<p>gone</p>"), "rejected: {}", tracked.original.html);
}

#[test]
fn each_paragraph_with_tracked_changes_names_its_authors_and_dates() {
    let body = r#"<w:p><w:r><w:t xml:space="preserve">Keep </w:t></w:r><w:ins w:id="1" w:author="Ann" w:date="2026-05-03T10:00:00Z"><w:r><w:t>this &amp; that</w:t></w:r></w:ins></w:p>
      <w:p><w:r><w:t>Untouched</w:t></w:r></w:p>
      <w:p><w:del w:id="2" w:author="Bob" w:date="2026-05-04T09:00:00Z"><w:r><w:delText>Dropped</w:delText></w:r></w:del><w:ins w:id="3" w:author="Ann" w:date="2026-05-03T10:00:00Z"><w:r><w:t>Added</w:t></w:r></w:ins><w:del w:id="4" w:author="Bob" w:date="2026-05-04T09:00:00Z"><w:r><w:delText>!</w:delText></w:r></w:del></w:p>"#;
    let tracked = Docx::new(body).convert().unwrap().tracked.expect("tracked changes");
    let by = |a: &str, d: &str| Reviser { author: Some(a.into()), date: Some(d.into()) };
    let (ann, bob) = (by("Ann", "2026-05-03T10:00:00Z"), by("Bob", "2026-05-04T09:00:00Z"));
    assert_eq!(
        tracked.who.accepted,
        [
            Attributed { text: "Keep this & that".into(), by: vec![ann.clone()] },
            Attributed { text: "Added".into(), by: vec![bob.clone(), ann.clone()] },
        ]
    );
    assert_eq!(
        tracked.who.original,
        [
            Attributed { text: "Keep".into(), by: vec![ann.clone()] },
            Attributed { text: "Dropped!".into(), by: vec![bob, ann] },
        ]
    );
}

#[test]
fn strict_namespaces_and_bom_and_utf16_parts() {
    let doc = "\u{feff}<?xml version=\"1.0\"?><w:document xmlns:w=\"http://purl.oclc.org/ooxml/wordprocessingml/main\"><w:body><w:p><w:r><w:t>Strict</w:t></w:r></w:p></w:body></w:document>";
    let bytes = zip_parts(&[("word/document.xml", doc.as_bytes())]);
    assert_eq!(convert(&bytes).unwrap().html, "<p>Strict</p>\n");
    let mut utf16 = vec![0xFF, 0xFE];
    utf16.extend(doc.trim_start_matches('\u{feff}').encode_utf16().flat_map(u16::to_le_bytes));
    let bytes = zip_parts(&[("word/document.xml", &utf16)]);
    assert_eq!(convert(&bytes).unwrap().html, "<p>Strict</p>\n");
}

#[test]
fn empty_documents_are_empty() {
    assert_eq!(Docx::new("").convert(), Err(ConvertError::Empty));
    assert_eq!(
        Docx::new("<w:p/><w:p><w:r><w:t> </w:t></w:r></w:p><w:tbl></w:tbl>").convert(),
        Err(ConvertError::Empty)
    );
    assert_eq!(convert(b""), Err(ConvertError::Empty));
}

fn is_corrupt(r: &Result<Converted, ConvertError>) -> bool {
    matches!(r, Err(ConvertError::Corrupt { format, .. }) if format == "DOCX")
}

#[test]
fn garbage_and_wrong_packages_are_corrupt() {
    assert!(is_corrupt(&convert(b"hello, this is not a zip at all")));
    assert!(is_corrupt(&convert(b"PK\x03\x04 truncated")));
    let no_document = zip_parts(&[("[Content_Types].xml", CONTENT_TYPES.as_bytes()), ("xl/workbook.xml", b"<x/>")]);
    let r = convert(&no_document);
    assert!(is_corrupt(&r), "{r:?}");
    assert!(format!("{r:?}").contains("word/document.xml"));
    let broken_xml = zip_parts(&[("word/document.xml", b"<w:document><w:body><w:p></w:body></w:document>")]);
    assert!(is_corrupt(&convert(&broken_xml)));
    // A truncated real package.
    let full = Docx::new(&p("text")).build();
    for cut in [10, full.len() / 2, full.len() - 10] {
        let r = convert(&full[..cut]);
        assert!(r.is_err(), "cut at {cut}: {r:?}");
    }
}

#[test]
fn ole_files_are_encrypted_or_legacy() {
    let ole = |stream: &str| {
        let mut bytes = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1".to_vec();
        bytes.resize(1024, 0);
        bytes.extend(stream.encode_utf16().flat_map(u16::to_le_bytes));
        bytes.resize(2048, 0);
        bytes
    };
    assert_eq!(convert(&ole("EncryptionInfo")), Err(ConvertError::Encrypted));
    let legacy = convert(&ole("WordDocument"));
    assert!(is_corrupt(&legacy));
    assert!(format!("{legacy:?}").contains("legacy Word"), "{legacy:?}");
    assert!(is_corrupt(&convert(&ole("Workbook"))));
}

#[test]
fn zip_bomb_with_lowered_limits() {
    // 8 MiB of zeros deflate to a few KiB; the part cap is 1 MiB.
    let zeros = vec![0u8; 8 << 20];
    let bomb = zip_parts(&[("word/document.xml", &zeros)]);
    assert!(bomb.len() < 64 * 1024);
    let limits = Limits { max_part_bytes: 1 << 20, ..Limits::default() };
    assert!(matches!(convert_with(&bomb, limits), Err(ConvertError::TooComplex(_))));
    // The total budget: each part fits, their sum does not.
    let mut d = Docx::new(&p("x"));
    d.styles = Some(format!("<!-- {} -->", " ".repeat(600 << 10)));
    d.numbering = Some(format!("<!-- {} -->", " ".repeat(600 << 10)));
    let limits = Limits { total_floor: 1 << 20, total_ratio: 1, ..Limits::default() };
    let r = convert_with(&d.build(), limits);
    assert!(matches!(&r, Err(ConvertError::TooComplex(m)) if m.contains("in total")), "{r:?}");
    // The same package with the default limits is fine.
    assert_eq!(convert(&d.build()).unwrap().html, "<p>x</p>\n");
}

/// A raw deflate stream of `matches` × 258 zeros (plus one), at 2 bits per 258 bytes: one
/// dynamic Huffman block whose length/distance codes are a single bit each.
fn deflate_zeros(matches: usize) -> Vec<u8> {
    struct Bits {
        out: Vec<u8>,
        acc: u32,
        n: u32,
    }
    impl Bits {
        fn put(&mut self, value: u32, count: u32) {
            for i in 0..count {
                self.acc |= ((value >> i) & 1) << self.n;
                self.n += 1;
                if self.n == 8 {
                    self.out.push(self.acc as u8);
                    self.acc = 0;
                    self.n = 0;
                }
            }
        }
        /// Huffman codes go most significant bit first.
        fn code(&mut self, code: u32, len: u32) {
            for i in (0..len).rev() {
                self.put((code >> i) & 1, 1);
            }
        }
    }
    let mut b = Bits { out: Vec::with_capacity(matches / 4 + 64), acc: 0, n: 0 };
    b.put(1, 1); // BFINAL
    b.put(2, 2); // dynamic Huffman
    b.put(29, 5); // HLIT: 286 literal/length codes
    b.put(0, 5); // HDIST: 1 distance code
    b.put(14, 4); // HCLEN: 18 code length codes
                  // Code length code lengths in the RFC 1951 order 16 17 18 0 8 7 9 6 10 5 11 4 12 3 13 2 14 1:
                  // symbol 18 → 1 bit, symbols 1 and 2 → 2 bits.
    for len in [0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2] {
        b.put(len, 3);
    }
    // Canonical codes: 18 = 0, 1 = 10, 2 = 11.
    let (len1, len2, zeros) = ((0b10, 2), (0b11, 2), (0b0, 1));
    // Literal/length lengths: 0 → 2, 1..=255 → 0, 256 → 2, 257..=284 → 0, 285 → 1; distance 0 → 1.
    b.code(len2.0, len2.1);
    b.code(zeros.0, zeros.1);
    b.put(138 - 11, 7);
    b.code(zeros.0, zeros.1);
    b.put(117 - 11, 7);
    b.code(len2.0, len2.1);
    b.code(zeros.0, zeros.1);
    b.put(28 - 11, 7);
    b.code(len1.0, len1.1);
    b.code(len1.0, len1.1);
    // Literal/length codes: 285 = 0, 0 = 10, 256 = 11; distance 0 = 0.
    b.code(0b10, 2); // literal 0
    let whole_bytes = matches / 4;
    for _ in 0..(matches % 4) {
        b.code(0, 1);
        b.code(0, 1);
    }
    // Every further match is "00": whole zero bytes, appended directly when aligned.
    if b.n == 0 {
        b.out.resize(b.out.len() + whole_bytes, 0);
    } else {
        for _ in 0..whole_bytes * 8 {
            b.put(0, 1);
        }
    }
    b.code(0b11, 2); // end of block
    if b.n > 0 {
        b.out.push(b.acc as u8);
    }
    b.out
}

/// A zip with one deflated entry whose data is given as is (size and CRC as claimed).
fn raw_zip(name: &str, data: &[u8], claimed_size: u32, crc: u32) -> Vec<u8> {
    let mut z = Vec::new();
    let le16 = |v: u16| v.to_le_bytes();
    let le32 = |v: u32| v.to_le_bytes();
    z.extend(le32(0x0403_4b50));
    z.extend(le16(20));
    z.extend(le16(0));
    z.extend(le16(8));
    z.extend(le32(0));
    z.extend(le32(crc));
    z.extend(le32(data.len() as u32));
    z.extend(le32(claimed_size));
    z.extend(le16(name.len() as u16));
    z.extend(le16(0));
    z.extend(name.as_bytes());
    z.extend(data);
    let cd = z.len() as u32;
    z.extend(le32(0x0201_4b50));
    z.extend(le16(20));
    z.extend(le16(20));
    z.extend(le16(0));
    z.extend(le16(8));
    z.extend(le32(0));
    z.extend(le32(crc));
    z.extend(le32(data.len() as u32));
    z.extend(le32(claimed_size));
    z.extend(le16(name.len() as u16));
    z.extend([0u8; 12]);
    z.extend(le32(0));
    z.extend(name.as_bytes());
    let cd_len = z.len() as u32 - cd;
    z.extend(le32(0x0605_4b50));
    z.extend([0u8; 4]);
    z.extend(le16(1));
    z.extend(le16(1));
    z.extend(le32(cd_len));
    z.extend(le32(cd));
    z.extend(le16(0));
    z
}

#[test]
fn zip_bomb_of_a_gigabyte_is_refused_quickly_with_default_limits() {
    // ~1.1 GB of zeros in ~1 MiB.
    let stream = deflate_zeros(4_300_000);
    assert!(stream.len() < 1_100_000);
    // The CRC is never checked: reading stops at the cap, long before the end.
    let size = 4_300_000 * 258 + 1;
    let bomb = raw_zip("word/document.xml", &stream, size, 0);
    let start = std::time::Instant::now();
    let r = convert(&bomb);
    assert!(matches!(&r, Err(ConvertError::TooComplex(m)) if m.contains("zip bomb")), "{r:?}");
    assert!(start.elapsed().as_secs() < 10);
    // A header that lies (claims 1 KiB) is refused too.
    let liar = raw_zip("word/document.xml", &stream, 1024, 0);
    assert!(convert(&liar).is_err());
    // The stream itself is sound: a short one of the same construction inflates to zeros.
    let small = deflate_zeros(3);
    let zeros = vec![0u8; 3 * 258 + 1];
    let mut zip = zip::ZipArchive::new(Cursor::new(raw_zip("z", &small, zeros.len() as u32, crc32(&zeros)))).unwrap();
    let mut inflated = Vec::new();
    std::io::Read::read_to_end(&mut zip.by_index(0).unwrap(), &mut inflated).unwrap();
    assert_eq!(inflated, zeros);
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

#[test]
fn too_many_entries_are_refused() {
    let mut w = ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(CompressionMethod::Stored);
    for i in 0..20_000 {
        w.start_file(format!("f{i}"), options).unwrap();
    }
    w.start_file("word/document.xml", options).unwrap();
    w.write_all(format!("<w:document {W}><w:body>{}</w:body></w:document>", p("x")).as_bytes()).unwrap();
    let bytes = w.finish().unwrap().into_inner();
    let r = convert(&bytes);
    assert!(matches!(&r, Err(ConvertError::TooComplex(m)) if m.contains("entries")), "{r:?}");
}

#[test]
fn deep_nesting_is_refused() {
    let depth = 2_000;
    let doc = format!(
        "<w:document {W}><w:body>{}<w:p><w:r><w:t>deep</w:t></w:r></w:p>{}</w:body></w:document>",
        "<w:customXml>".repeat(depth),
        "</w:customXml>".repeat(depth)
    );
    let bytes = zip_parts(&[("word/document.xml", doc.as_bytes())]);
    assert!(matches!(convert(&bytes), Err(ConvertError::TooComplex(_))));
    // Inside a skipped subtree, and in the styles part, too.
    let doc = format!("<w:document {W}><w:body><w:sectPr>{}</w:sectPr></w:body></w:document>", "<w:x>".repeat(depth));
    let bytes = zip_parts(&[("word/document.xml", doc.as_bytes())]);
    assert!(matches!(convert(&bytes), Err(ConvertError::TooComplex(_))));
    let mut d = Docx::new(&p("x"));
    d.styles = Some("<w:style>".repeat(depth));
    assert!(matches!(d.convert(), Err(ConvertError::TooComplex(_))));
    // Within the limit is fine.
    let doc = format!(
        "<w:document {W}><w:body>{}<w:p><w:r><w:t>ok</w:t></w:r></w:p>{}</w:body></w:document>",
        "<w:customXml>".repeat(400),
        "</w:customXml>".repeat(400)
    );
    let bytes = zip_parts(&[("word/document.xml", doc.as_bytes())]);
    assert_eq!(convert(&bytes).unwrap().html, "<p>ok</p>\n");
}

/// Structures the converter follows by recursion: nested up to their limit they fit in half
/// the stack of a tokio blocking thread (2 MiB), even unoptimised; deeper is refused.
#[test]
fn recursive_nesting_is_bounded() {
    let wrap = |open: &str, close: &str, times: usize, inner: &str| {
        format!("{}{inner}{}", open.repeat(times), close.repeat(times))
    };
    let cases = |n: usize| {
        [
            wrap("<w:p>", "</w:p>", 1, &wrap("<w:hyperlink>", "</w:hyperlink>", n, "<w:r><w:t>a</w:t></w:r>")),
            wrap("<w:p>", "</w:p>", 1, &wrap("<w:r>", "</w:r>", n, "<w:t>a</w:t>")),
            wrap("<w:tbl><w:tr><w:tc>", "</w:tc></w:tr></w:tbl>", n, &p("a")),
            wrap("<w:p><w:r><w:drawing><w:txbxContent>", "</w:txbxContent></w:drawing></w:r></w:p>", n / 3, &p("a")),
            wrap("<w:p>", "</w:p>", 1, &wrap("<w:fldSimple>", "</w:fldSimple>", n, "<w:r><w:t>a</w:t></w:r>")),
        ]
        .map(|body| Docx::new(&body).build())
    };
    let limit = Limits::default().max_nesting;
    let fits = cases(limit - 3);
    let deeper = cases(limit + 1);
    let handle = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || (fits.map(|d| convert(&d).map(|c| c.html.contains('a'))), deeper.map(|d| convert(&d))))
        .unwrap();
    let (fits, deeper) = handle.join().unwrap();
    for r in fits {
        assert_eq!(r, Ok(true));
    }
    for r in deeper {
        assert!(matches!(r, Err(ConvertError::TooComplex(_))), "{r:?}");
    }
}

#[test]
fn doctype_and_entities_are_refused_or_dropped() {
    let laughs = format!(
        "<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\">{}]><w:document {W}><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>",
        (1..10).map(|i| format!("<!ENTITY lol{i} \"{}\">", format!("&lol{};", i - 1).repeat(10))).collect::<String>()
    );
    let bytes = zip_parts(&[("word/document.xml", laughs.as_bytes())]);
    let r = convert(&bytes);
    assert!(is_corrupt(&r) && format!("{r:?}").contains("DOCTYPE"), "{r:?}");
    let external = format!(
        "<!DOCTYPE d [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]><w:document {W}><w:body>{}</w:body></w:document>",
        p("&xxe;")
    );
    assert!(is_corrupt(&convert(&zip_parts(&[("word/document.xml", external.as_bytes())]))));
    // An undeclared entity is dropped, never resolved.
    assert_eq!(Docx::new(&p("a&xxe;b")).html(), "<p>ab</p>\n");
}

#[test]
fn many_cells_are_refused() {
    let row = format!("<w:tr>{}</w:tr>", "<w:tc/>".repeat(100));
    let doc = format!("<w:tbl>{}</w:tbl>", row.repeat(30));
    let limits = Limits { max_cells: 2_000, ..Limits::default() };
    assert!(matches!(convert_with(&Docx::new(&doc).build(), limits), Err(ConvertError::TooComplex(_))));
}

/// Arbitrary bytes never panic.
#[test]
fn mutated_packages_never_panic() {
    let mut d = Docx::new(
        &[
            styled("Heading1", "Title"),
            item(1, 0, "one"),
            item(1, 1, "two"),
            format!("<w:p>{}</w:p>", drawing("rIdImg", "x")),
        ]
        .concat(),
    )
    .rel("rIdImg", "image", "media/image1.png", false);
    d.numbering = Some(NUMBERING.into());
    d.media = vec![("word/media/image1.png".into(), PNG.to_vec())];
    let good = d.build();
    assert!(convert(&good).is_ok());
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..300 {
        let mut bytes = good.clone();
        for _ in 0..8 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let i = (seed as usize) % bytes.len();
            bytes[i] = (seed >> 32) as u8;
        }
        let _ = convert(&bytes);
    }
}

// The shared corpus of real files.

struct Entry {
    file: String,
    features: Vec<String>,
}

fn manifest(root: &std::path::Path) -> Vec<Entry> {
    let text = std::fs::read_to_string(root.join("MANIFEST.tsv")).expect("the corpus MANIFEST.tsv");
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            let file = cols.first()?.strip_prefix("docx/")?;
            Some(Entry {
                file: file.to_owned(),
                features: cols.get(5).unwrap_or(&"").split(',').filter(|f| !f.is_empty()).map(str::to_owned).collect(),
            })
        })
        .collect()
}

/// Does the package embed a raster picture that its main document refers to?
fn has_body_raster_picture(bytes: &[u8]) -> bool {
    let Ok(mut zip) = zip::ZipArchive::new(Cursor::new(bytes)) else { return false };
    let mut rels = String::new();
    let Ok(mut f) = zip.by_name("word/_rels/document.xml.rels") else { return false };
    let _ = std::io::Read::read_to_string(&mut f, &mut rels);
    drop(f);
    rels.split("<Relationship ").any(|r| {
        let lower = r.to_ascii_lowercase();
        lower.contains("relationships/image\"")
            && !lower.contains("targetmode=\"external\"")
            && [".png\"", ".jpg\"", ".jpeg\"", ".gif\"", ".bmp\"", ".webp\""].iter().any(|ext| lower.contains(ext))
    })
}

fn max_list_depth(html: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        if rest.starts_with("ul") || rest.starts_with("ol") {
            depth += 1;
            max = max.max(depth);
        } else if rest.starts_with("/ul") || rest.starts_with("/ol") {
            depth = depth.saturating_sub(1);
        }
    }
    max
}

/// Files that convert to nothing, and why.
const EMPTY: &[(&str, &str)] = &[("mammoth-empty.docx", "the document has no paragraphs")];

/// Features the MANIFEST lists (it says what a file contains) that the HTML rightly lacks.
const NOT_SHOWN: &[(&str, &str, &str)] =
    &[("poi-bug59058.docx", "nested-lists", "its only second-level list paragraph is empty")];

#[test]
fn corpus_converts_without_panics_and_keeps_features() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/corpus");
    let dir = root.join("docx");
    let listing = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("the corpus at {}: {e}", dir.display()));
    let entries = manifest(&root);
    let mut files: Vec<_> =
        listing.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "docx")).collect();
    files.sort();
    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let bytes = std::fs::read(path).unwrap();
        let result = std::panic::catch_unwind(|| convert(&bytes));
        let Ok(result) = result else {
            failures.push(format!("{name}: panicked"));
            continue;
        };
        let entry = entries.iter().find(|e| e.file == name);
        let features: Vec<&str> = entry.map(|e| e.features.iter().map(String::as_str).collect()).unwrap_or_default();
        let has = |f: &str| features.contains(&f);
        let summary = match &result {
            Ok(c) => {
                format!("ok: {} bytes of HTML, {} images, warnings {:?}", c.html.len(), c.images.len(), c.warnings)
            }
            Err(e) => format!("error: {e}"),
        };
        eprintln!("{name}: {summary}");
        let mut fail = |why: String| failures.push(format!("{name}: {why} ({summary})"));
        if has("encrypted") {
            if result != Err(ConvertError::Encrypted) {
                fail("expected Encrypted".into());
            }
            continue;
        }
        if has("broken") {
            if !matches!(&result, Err(ConvertError::Corrupt { .. })) {
                fail("expected Corrupt".into());
            }
            continue;
        }
        if EMPTY.iter().any(|(file, _)| *file == name) {
            if result != Err(ConvertError::Empty) {
                fail("expected Empty".into());
            }
            continue;
        }
        let Ok(out) = result else {
            fail("expected a conversion".into());
            continue;
        };
        let html = &out.html;
        let checks: [(&str, bool); 10] = [
            ("headings", ["<h1>", "<h2>", "<h3>", "<h4>", "<h5>", "<h6>"].iter().any(|h| html.contains(h))),
            ("tables", html.contains("<table")),
            ("lists", html.contains("<ul") || html.contains("<ol")),
            ("nested-lists", max_list_depth(html) >= 2),
            ("colors", html.contains("color: #")),
            ("highlight", html.contains("background-color: #")),
            ("bold-italic", html.contains("<strong>") || html.contains("<em>")),
            ("hyperlinks", html.contains("<a href=")),
            ("footnotes", html.contains("role=\"doc-noteref\"") && html.contains("<li id=\"fn1\">")),
            ("merged-cells", html.contains("colspan=") || html.contains("rowspan=")),
        ];
        for (feature, ok) in checks {
            let excused = NOT_SHOWN.iter().any(|(file, f, _)| *file == name && *f == feature);
            if has(feature) && !ok && !excused {
                fail(format!("feature {feature} missing from the HTML"));
            }
        }
        if has("images") && has_body_raster_picture(&bytes) && out.images.is_empty() {
            fail("feature images: no ExtractedImage".into());
        }
        for image in &out.images {
            if !html.contains(&format!("src=\"{}\"", image.placeholder)) {
                fail(format!("image {} not referenced", image.placeholder));
            }
        }
    }
    assert!(failures.is_empty(), "corpus failures:\n{}", failures.join("\n"));
}

#[test]
fn what_the_model_cannot_keep_is_named_in_the_warnings() {
    let shape = r#"<w:p><w:r><w:drawing><wp:anchor><wp:docPr id="1" name="Shape 1"/><a:graphic><a:graphicData uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"><wps:wsp><wps:spPr><a:prstGeom prst="rect"/></wps:spPr></wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing></w:r></w:p>"#;
    let text_box = r#"<w:p><w:r><w:drawing><wp:anchor><wp:docPr id="2" name="Box"/><a:graphic><a:graphicData uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"><wps:wsp><wps:txbx><w:txbxContent><w:p><w:r><w:t>Boxed</w:t></w:r></w:p></w:txbxContent></wps:txbx></wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing></w:r></w:p>"#;
    let mut d = Docx::new(&format!("{}{shape}{text_box}", p("Body"))).rel("rIdH", "header", "header1.xml", false).rel(
        "rIdF2",
        "footer",
        "footer1.xml",
        false,
    );
    d.media.push(("word/header1.xml".into(), format!("<w:hdr {W}>{}</w:hdr>", p("Company name")).into_bytes()));
    d.media.push(("word/footer1.xml".into(), format!("<w:ftr {W}><w:p/></w:ftr>").into_bytes()));
    let out = d.convert().unwrap();
    assert!(out.html.contains("Boxed"), "{}", out.html);
    let has = |s: &str| out.warnings.iter().any(|w| w.contains(s));
    assert!(
        out.html.starts_with("<header role=\"doc-pageheader\">\n<p>Company name</p>\n</header>"),
        "the page header is kept first: {}",
        out.html
    );
    assert!(!has("header") && !has("footer"), "{:?}", out.warnings);
    assert!(has("a drawn shape was skipped"), "{:?}", out.warnings);
    assert!(has("text boxes were turned into ordinary paragraphs"), "{:?}", out.warnings);
    assert_eq!(out.warnings.iter().filter(|w| w.contains("drawn shape")).count(), 1, "{:?}", out.warnings);
}

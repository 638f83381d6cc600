//! The fixed parts of the package: content types, relationships, styles, numbering
//! definitions, settings and document properties.

use crate::model::Numbering;
use crate::xml::escape_xml;

pub(crate) const XML_HEAD: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n";

pub(crate) const NS_W: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
pub(crate) const NS_R: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
pub(crate) const REL: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const PKG_REL: &str = "http://schemas.openxmlformats.org/package/2006/relationships";

pub(crate) const REL_HYPERLINK: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink";
pub(crate) const REL_IMAGE: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/image";
pub(crate) const REL_COMMENTS: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/comments";

/// Page: A4 with 2.54 cm margins, in twentieths of a point.
pub(crate) const PAGE_W: i64 = 11906;
pub(crate) const PAGE_H: i64 = 16838;
pub(crate) const MARGIN: i64 = 1440;
pub(crate) const TEXT_W: i64 = PAGE_W - 2 * MARGIN;
pub(crate) const TEXT_H: i64 = PAGE_H - 2 * MARGIN;

/// `w:numId` of every bulleted list (ordered lists get a `w:num` each, from 2 on).
pub(crate) const BULLET_NUM: usize = 1;

/// `[Content_Types].xml`; `optional`: the optional parts the package has (`/word/comments.xml`,
/// `/docProps/custom.xml`, `/word/header1.xml`, `/word/footer1.xml`).
pub(crate) fn content_types(image_extensions: &[&str], optional: &[&str]) -> String {
    let mut s = String::from(XML_HEAD);
    s.push_str("<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\">");
    s.push_str(
        "<Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>",
    );
    s.push_str("<Default Extension=\"xml\" ContentType=\"application/xml\"/>");
    for ext in image_extensions {
        let ct = match *ext {
            "png" => "image/png",
            "jpeg" => "image/jpeg",
            "gif" => "image/gif",
            _ => "image/bmp",
        };
        s.push_str(&format!("<Default Extension=\"{ext}\" ContentType=\"{ct}\"/>"));
    }
    let wml = "application/vnd.openxmlformats-officedocument.wordprocessingml";
    for (part, ct) in [
        ("/word/document.xml", format!("{wml}.document.main+xml")),
        ("/word/styles.xml", format!("{wml}.styles+xml")),
        ("/word/numbering.xml", format!("{wml}.numbering+xml")),
        ("/word/settings.xml", format!("{wml}.settings+xml")),
        ("/word/footnotes.xml", format!("{wml}.footnotes+xml")),
        ("/word/comments.xml", format!("{wml}.comments+xml")),
        ("/word/header1.xml", format!("{wml}.header+xml")),
        ("/word/footer1.xml", format!("{wml}.footer+xml")),
        ("/docProps/core.xml", "application/vnd.openxmlformats-package.core-properties+xml".to_string()),
        ("/docProps/app.xml", "application/vnd.openxmlformats-officedocument.extended-properties+xml".to_string()),
        ("/docProps/custom.xml", "application/vnd.openxmlformats-officedocument.custom-properties+xml".to_string()),
    ] {
        let fixed =
            !["/word/comments.xml", "/docProps/custom.xml", "/word/header1.xml", "/word/footer1.xml"].contains(&part);
        if !fixed && !optional.contains(&part) {
            continue;
        }
        s.push_str(&format!("<Override PartName=\"{part}\" ContentType=\"{ct}\"/>"));
    }
    s.push_str("</Types>");
    s
}

/// The package's relationships; `custom`: with the custom properties part.
pub(crate) fn package_rels(custom: bool) -> String {
    let custom = if custom {
        format!("<Relationship Id=\"rId4\" Type=\"{REL}/custom-properties\" Target=\"docProps/custom.xml\"/>")
    } else {
        String::new()
    };
    format!(
        "{XML_HEAD}<Relationships xmlns=\"{PKG_REL}\">\
         <Relationship Id=\"rId1\" Type=\"{REL}/officeDocument\" Target=\"word/document.xml\"/>\
         <Relationship Id=\"rId2\" Type=\"http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties\" Target=\"docProps/core.xml\"/>\
         <Relationship Id=\"rId3\" Type=\"{REL}/extended-properties\" Target=\"docProps/app.xml\"/>{custom}\
         </Relationships>"
    )
}

/// The name of the custom document property that names the job whose pending changes a
/// tracked export shows (read back on upload by the converter).
pub(crate) const JOB_PROPERTY: &str = "RedlineJobId";

/// The custom properties part: the job whose changes the file's revisions are. Word and
/// LibreOffice keep custom properties when they save (File › Properties › Custom).
pub(crate) fn custom(job: &str) -> String {
    format!(
        "{XML_HEAD}<Properties xmlns=\"http://schemas.openxmlformats.org/officeDocument/2006/custom-properties\" \
         xmlns:vt=\"http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes\">\
         <property fmtid=\"{{D5CDD505-2E9C-101B-9397-08002B2CF9AE}}\" pid=\"2\" name=\"{JOB_PROPERTY}\">\
         <vt:lpwstr>{}</vt:lpwstr></property></Properties>",
        escape_xml(job)
    )
}

/// The document's relationships: styles, numbering and settings, then `extra` (links and
/// pictures, already written as `<Relationship>` elements).
pub(crate) fn document_rels(extra: &str) -> String {
    format!(
        "{XML_HEAD}<Relationships xmlns=\"{PKG_REL}\">\
         <Relationship Id=\"rId1\" Type=\"{REL}/styles\" Target=\"styles.xml\"/>\
         <Relationship Id=\"rId2\" Type=\"{REL}/numbering\" Target=\"numbering.xml\"/>\
         <Relationship Id=\"rId3\" Type=\"{REL}/settings\" Target=\"settings.xml\"/>\
         <Relationship Id=\"rId4\" Type=\"{REL}/footnotes\" Target=\"footnotes.xml\"/>\
         {extra}</Relationships>"
    )
}

/// `comments.xml`: the `w:comment` elements of a tracked document.
pub(crate) fn comments(comments: &str) -> String {
    format!("{XML_HEAD}<w:comments xmlns:w=\"{NS_W}\" xmlns:r=\"{NS_R}\">{comments}</w:comments>")
}

/// The relationships of a part other than the document (links and pictures of the notes).
pub(crate) fn part_rels(extra: &str) -> String {
    format!("{XML_HEAD}<Relationships xmlns=\"{PKG_REL}\">{extra}</Relationships>")
}

/// A page header (`hdr`) or footer (`ftr`) part around its content.
pub(crate) fn page_part(element: &str, content: &str) -> String {
    format!(
        "{XML_HEAD}<w:{element} xmlns:w=\"{NS_W}\" xmlns:r=\"{NS_R}\" \
         xmlns:wp=\"http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing\" \
         xmlns:a=\"http://schemas.openxmlformats.org/drawingml/2006/main\" \
         xmlns:pic=\"http://schemas.openxmlformats.org/drawingml/2006/picture\">{content}</w:{element}>"
    )
}

/// `footnotes.xml`: Word's separator and continuation separator, then the notes
/// (`w:footnote` elements numbered from 1).
pub(crate) fn footnotes(notes: &str) -> String {
    format!(
        "{XML_HEAD}<w:footnotes xmlns:w=\"{NS_W}\" xmlns:r=\"{NS_R}\" \
         xmlns:wp=\"http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing\" \
         xmlns:a=\"http://schemas.openxmlformats.org/drawingml/2006/main\" \
         xmlns:pic=\"http://schemas.openxmlformats.org/drawingml/2006/picture\">\
         <w:footnote w:type=\"separator\" w:id=\"-1\"><w:p><w:pPr><w:spacing w:after=\"0\" w:line=\"240\" w:lineRule=\"auto\"/></w:pPr>\
         <w:r><w:separator/></w:r></w:p></w:footnote>\
         <w:footnote w:type=\"continuationSeparator\" w:id=\"0\"><w:p><w:pPr><w:spacing w:after=\"0\" w:line=\"240\" w:lineRule=\"auto\"/></w:pPr>\
         <w:r><w:continuationSeparator/></w:r></w:p></w:footnote>{notes}</w:footnotes>"
    )
}

pub(crate) fn core(title: &str) -> String {
    format!(
        "{XML_HEAD}<cp:coreProperties \
         xmlns:cp=\"http://schemas.openxmlformats.org/package/2006/metadata/core-properties\" \
         xmlns:dc=\"http://purl.org/dc/elements/1.1/\" xmlns:dcterms=\"http://purl.org/dc/terms/\" \
         xmlns:dcmitype=\"http://purl.org/dc/dcmitype/\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">\
         <dc:title>{}</dc:title><dc:creator>Redline</dc:creator></cp:coreProperties>",
        escape_xml(title)
    )
}

pub(crate) fn app() -> String {
    format!(
        "{XML_HEAD}<Properties xmlns=\"http://schemas.openxmlformats.org/officeDocument/2006/extended-properties\" \
         xmlns:vt=\"http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes\">\
         <Application>Redline</Application></Properties>"
    )
}

pub(crate) fn settings() -> String {
    format!(
        "{XML_HEAD}<w:settings xmlns:w=\"{NS_W}\"><w:defaultTabStop w:val=\"720\"/>\
         <w:characterSpacingControl w:val=\"doNotCompress\"/>\
         <w:footnotePr><w:footnote w:id=\"-1\"/><w:footnote w:id=\"0\"/></w:footnotePr>\
         <w:compat><w:compatSetting w:name=\"compatibilityMode\" w:uri=\"http://schemas.microsoft.com/office/word\" w:val=\"15\"/></w:compat>\
         </w:settings>"
    )
}

fn run_props(bold: bool, italic: bool, half_points: u32) -> String {
    let mut s = String::from("<w:rPr>");
    if bold {
        s.push_str("<w:b/><w:bCs/>");
    }
    if italic {
        s.push_str("<w:i/><w:iCs/>");
    }
    s.push_str(&format!("<w:sz w:val=\"{half_points}\"/><w:szCs w:val=\"{half_points}\"/></w:rPr>"));
    s
}

pub(crate) fn styles() -> String {
    let mut s = format!("{XML_HEAD}<w:styles xmlns:w=\"{NS_W}\">");
    s.push_str(
        "<w:docDefaults><w:rPrDefault><w:rPr>\
         <w:rFonts w:ascii=\"Calibri\" w:eastAsia=\"Calibri\" w:hAnsi=\"Calibri\" w:cs=\"Calibri\"/>\
         <w:sz w:val=\"22\"/><w:szCs w:val=\"22\"/><w:lang w:val=\"en-US\"/></w:rPr></w:rPrDefault>\
         <w:pPrDefault><w:pPr><w:spacing w:after=\"160\" w:line=\"264\" w:lineRule=\"auto\"/></w:pPr></w:pPrDefault>\
         </w:docDefaults>",
    );
    s.push_str("<w:style w:type=\"paragraph\" w:default=\"1\" w:styleId=\"Normal\"><w:name w:val=\"Normal\"/><w:qFormat/></w:style>");
    s.push_str(
        "<w:style w:type=\"character\" w:default=\"1\" w:styleId=\"DefaultParagraphFont\">\
         <w:name w:val=\"Default Paragraph Font\"/><w:uiPriority w:val=\"1\"/><w:semiHidden/><w:unhideWhenUsed/></w:style>",
    );
    // Heading sizes in half-points, h1 to h6.
    for (level, size) in [(1, 36), (2, 30), (3, 26), (4, 24), (5, 22), (6, 22)] {
        s.push_str(&format!(
            "<w:style w:type=\"paragraph\" w:styleId=\"Heading{level}\"><w:name w:val=\"heading {level}\"/>\
             <w:basedOn w:val=\"Normal\"/><w:next w:val=\"Normal\"/><w:uiPriority w:val=\"9\"/><w:qFormat/>\
             <w:pPr><w:keepNext/><w:keepLines/><w:spacing w:before=\"{}\" w:after=\"120\"/><w:outlineLvl w:val=\"{}\"/></w:pPr>{}</w:style>",
            if level <= 2 { 360 } else { 240 },
            level - 1,
            run_props(true, level == 6, size)
        ));
    }
    s.push_str(
        "<w:style w:type=\"paragraph\" w:styleId=\"ListParagraph\"><w:name w:val=\"List Paragraph\"/>\
         <w:basedOn w:val=\"Normal\"/><w:uiPriority w:val=\"34\"/><w:qFormat/>\
         <w:pPr><w:spacing w:after=\"60\"/><w:ind w:left=\"720\"/></w:pPr></w:style>",
    );
    s.push_str(
        "<w:style w:type=\"paragraph\" w:styleId=\"Quote\"><w:name w:val=\"Quote\"/><w:basedOn w:val=\"Normal\"/>\
         <w:uiPriority w:val=\"29\"/><w:qFormat/>\
         <w:pPr><w:pBdr><w:left w:val=\"single\" w:sz=\"18\" w:space=\"8\" w:color=\"CCCCCC\"/></w:pBdr></w:pPr>\
         <w:rPr><w:color w:val=\"555555\"/></w:rPr></w:style>",
    );
    s.push_str(
        "<w:style w:type=\"paragraph\" w:styleId=\"SourceCode\"><w:name w:val=\"Source Code\"/><w:basedOn w:val=\"Normal\"/>\
         <w:qFormat/><w:pPr><w:shd w:val=\"clear\" w:color=\"auto\" w:fill=\"F5F5F5\"/>\
         <w:spacing w:after=\"160\" w:line=\"240\" w:lineRule=\"auto\"/></w:pPr>\
         <w:rPr><w:rFonts w:ascii=\"Courier New\" w:hAnsi=\"Courier New\" w:cs=\"Courier New\"/><w:sz w:val=\"20\"/><w:szCs w:val=\"20\"/></w:rPr></w:style>",
    );
    s.push_str(
        "<w:style w:type=\"paragraph\" w:styleId=\"Caption\"><w:name w:val=\"caption\"/><w:basedOn w:val=\"Normal\"/>\
         <w:next w:val=\"Normal\"/><w:qFormat/><w:pPr><w:keepNext/><w:spacing w:after=\"60\"/></w:pPr>\
         <w:rPr><w:i/><w:iCs/><w:color w:val=\"444444\"/><w:sz w:val=\"20\"/><w:szCs w:val=\"20\"/></w:rPr></w:style>",
    );
    s.push_str(
        "<w:style w:type=\"character\" w:styleId=\"Hyperlink\"><w:name w:val=\"Hyperlink\"/>\
         <w:basedOn w:val=\"DefaultParagraphFont\"/><w:uiPriority w:val=\"99\"/><w:unhideWhenUsed/>\
         <w:rPr><w:color w:val=\"0563C1\"/><w:u w:val=\"single\"/></w:rPr></w:style>",
    );
    s.push_str(
        "<w:style w:type=\"paragraph\" w:styleId=\"FootnoteText\"><w:name w:val=\"footnote text\"/>\
         <w:basedOn w:val=\"Normal\"/><w:uiPriority w:val=\"99\"/><w:unhideWhenUsed/>\
         <w:pPr><w:spacing w:after=\"0\" w:line=\"240\" w:lineRule=\"auto\"/></w:pPr>\
         <w:rPr><w:sz w:val=\"20\"/><w:szCs w:val=\"20\"/></w:rPr></w:style>\
         <w:style w:type=\"character\" w:styleId=\"FootnoteReference\"><w:name w:val=\"footnote reference\"/>\
         <w:basedOn w:val=\"DefaultParagraphFont\"/><w:uiPriority w:val=\"99\"/><w:unhideWhenUsed/>\
         <w:rPr><w:vertAlign w:val=\"superscript\"/></w:rPr></w:style>",
    );
    s.push_str(
        "<w:style w:type=\"character\" w:styleId=\"VerbatimChar\"><w:name w:val=\"Verbatim Char\"/>\
         <w:basedOn w:val=\"DefaultParagraphFont\"/>\
         <w:rPr><w:rFonts w:ascii=\"Courier New\" w:hAnsi=\"Courier New\" w:cs=\"Courier New\"/></w:rPr></w:style>",
    );
    s.push_str(
        "<w:style w:type=\"table\" w:default=\"1\" w:styleId=\"TableNormal\"><w:name w:val=\"Normal Table\"/>\
         <w:uiPriority w:val=\"99\"/><w:semiHidden/><w:unhideWhenUsed/>\
         <w:tblPr><w:tblInd w:w=\"0\" w:type=\"dxa\"/><w:tblCellMar><w:top w:w=\"0\" w:type=\"dxa\"/>\
         <w:left w:w=\"108\" w:type=\"dxa\"/><w:bottom w:w=\"0\" w:type=\"dxa\"/><w:right w:w=\"108\" w:type=\"dxa\"/>\
         </w:tblCellMar></w:tblPr></w:style>",
    );
    s.push_str(&format!(
        "<w:style w:type=\"table\" w:styleId=\"TableGrid\"><w:name w:val=\"Table Grid\"/><w:basedOn w:val=\"TableNormal\"/>\
         <w:uiPriority w:val=\"39\"/><w:pPr><w:spacing w:before=\"40\" w:after=\"40\" w:line=\"240\" w:lineRule=\"auto\"/></w:pPr>\
         <w:tblPr>{}</w:tblPr></w:style>",
        table_borders()
    ));
    s.push_str(
        "<w:style w:type=\"numbering\" w:default=\"1\" w:styleId=\"NoList\"><w:name w:val=\"No List\"/>\
         <w:uiPriority w:val=\"99\"/><w:semiHidden/><w:unhideWhenUsed/></w:style>",
    );
    s.push_str("</w:styles>");
    s
}

pub(crate) fn table_borders() -> String {
    let mut s = String::from("<w:tblBorders>");
    for side in ["top", "left", "bottom", "right", "insideH", "insideV"] {
        s.push_str(&format!("<w:{side} w:val=\"single\" w:sz=\"4\" w:space=\"0\" w:color=\"999999\"/>"));
    }
    s.push_str("</w:tblBorders>");
    s
}

/// The abstract numbering of each list kind (`w:abstractNumId`).
pub(crate) fn abstract_id(numbering: Numbering) -> usize {
    match numbering {
        Numbering::Bullet => 0,
        Numbering::Decimal => 1,
        Numbering::LowerAlpha => 2,
        Numbering::UpperAlpha => 3,
        Numbering::LowerRoman => 4,
        Numbering::UpperRoman => 5,
    }
}

/// Indentation of list level `ilvl` (twips).
pub(crate) fn list_indent(ilvl: usize) -> i64 {
    720 * (ilvl as i64 + 1)
}

/// `numbering.xml`: one abstract numbering per list kind (nine levels each), the bullet
/// `w:num`, then one `w:num` per ordered list, `(abstract id, level, start)`, restarting
/// its count.
pub(crate) fn numbering(ordered: &[(usize, usize, i64)]) -> String {
    let mut s = format!("{XML_HEAD}<w:numbering xmlns:w=\"{NS_W}\">");
    let kinds = [
        Numbering::Bullet,
        Numbering::Decimal,
        Numbering::LowerAlpha,
        Numbering::UpperAlpha,
        Numbering::LowerRoman,
        Numbering::UpperRoman,
    ];
    for kind in kinds {
        s.push_str(&format!(
            "<w:abstractNum w:abstractNumId=\"{}\"><w:multiLevelType w:val=\"multilevel\"/>",
            abstract_id(kind)
        ));
        for ilvl in 0..9 {
            let (fmt, text, font) = match kind {
                Numbering::Bullet => ("bullet", ["\u{2022}", "\u{25E6}", "\u{25AA}"][ilvl % 3].to_string(), true),
                Numbering::Decimal => ("decimal", format!("%{}.", ilvl + 1), false),
                Numbering::LowerAlpha => ("lowerLetter", format!("%{}.", ilvl + 1), false),
                Numbering::UpperAlpha => ("upperLetter", format!("%{}.", ilvl + 1), false),
                Numbering::LowerRoman => ("lowerRoman", format!("%{}.", ilvl + 1), false),
                Numbering::UpperRoman => ("upperRoman", format!("%{}.", ilvl + 1), false),
            };
            s.push_str(&format!(
                "<w:lvl w:ilvl=\"{ilvl}\"><w:start w:val=\"1\"/><w:numFmt w:val=\"{fmt}\"/><w:lvlText w:val=\"{text}\"/>\
                 <w:lvlJc w:val=\"left\"/><w:pPr><w:ind w:left=\"{}\" w:hanging=\"360\"/></w:pPr>{}</w:lvl>",
                list_indent(ilvl),
                if font { "<w:rPr><w:rFonts w:ascii=\"Arial\" w:hAnsi=\"Arial\" w:hint=\"default\"/></w:rPr>" } else { "" }
            ));
        }
        s.push_str("</w:abstractNum>");
    }
    s.push_str(&format!("<w:num w:numId=\"{BULLET_NUM}\"><w:abstractNumId w:val=\"0\"/></w:num>"));
    for (i, (abstract_id, ilvl, start)) in ordered.iter().enumerate() {
        s.push_str(&format!(
            "<w:num w:numId=\"{}\"><w:abstractNumId w:val=\"{abstract_id}\"/>\
             <w:lvlOverride w:ilvl=\"{ilvl}\"><w:startOverride w:val=\"{start}\"/></w:lvlOverride></w:num>",
            BULLET_NUM + 1 + i
        ));
    }
    s.push_str("</w:numbering>");
    s
}

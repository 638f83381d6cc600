//! A package's metadata: the core properties' title.

use super::*;

/// The title of Word's File › Info (`dc:title` of the core properties) names the document;
/// a package without one, or with a broken one, converts all the same.
#[test]
fn the_core_properties_title_is_the_documents_title() {
    let rels = |extra: &str| {
        format!(
            r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="{REL_NS}/officeDocument" Target="word/document.xml"/>{extra}</Relationships>"#
        )
    };
    let core_rel = r#"<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/>"#;
    let document = format!("<w:document {W}><w:body>{}</w:body></w:document>", p("Body."));
    let core = |title: &str| {
        format!(
            r#"<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:creator>Ann</dc:creator>{title}</cp:coreProperties>"#
        )
    };
    let package = |rels: &str, core: &str| {
        zip_parts(&[
            ("[Content_Types].xml", CONTENT_TYPES.as_bytes()),
            ("_rels/.rels", rels.as_bytes()),
            ("word/document.xml", document.as_bytes()),
            ("docProps/core.xml", core.as_bytes()),
        ])
    };
    let titled = convert(&package(&rels(core_rel), &core("<dc:title>Plan &amp; budget 2027</dc:title>"))).unwrap();
    assert_eq!(titled.title.as_deref(), Some("Plan & budget 2027"));
    assert!(!titled.html.contains("budget"), "the title is not text of the body: {}", titled.html);
    assert_eq!(convert(&package(&rels(core_rel), &core(""))).unwrap().title, None);
    assert_eq!(convert(&package(&rels(core_rel), &core("<dc:title>  </dc:title>"))).unwrap().title, None);
    assert_eq!(convert(&package(&rels(""), &core("<dc:title>Unlinked</dc:title>"))).unwrap().title, None);
    let broken = convert(&package(&rels(core_rel), "<cp:coreProperties><dc:title>x</cp:core")).unwrap();
    assert_eq!((broken.title, broken.html.contains("Body.")), (None, true));
}

/// A tracked export names its turn in a custom property (`RedlineJobId`); other custom
/// properties, a missing part or a broken one name none.
#[test]
fn the_custom_property_redline_job_id_names_the_turn_a_file_comes_from() {
    let rels = format!(
        r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="{REL_NS}/officeDocument" Target="word/document.xml"/><Relationship Id="rId4" Type="{REL_NS}/custom-properties" Target="docProps/custom.xml"/></Relationships>"#
    );
    let document = format!("<w:document {W}><w:body>{}</w:body></w:document>", p("Body."));
    let custom = |props: &str| {
        format!(
            r#"<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/custom-properties" xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes">{props}</Properties>"#
        )
    };
    let property = |name: &str, value: &str| {
        format!(
            r#"<property fmtid="{{D5CDD505-2E9C-101B-9397-08002B2CF9AE}}" pid="2" name="{name}"><vt:lpwstr>{value}</vt:lpwstr></property>"#
        )
    };
    let origin = |custom: &str| {
        let package = zip_parts(&[
            ("[Content_Types].xml", CONTENT_TYPES.as_bytes()),
            ("_rels/.rels", rels.as_bytes()),
            ("word/document.xml", document.as_bytes()),
            ("docProps/custom.xml", custom.as_bytes()),
        ]);
        convert(&package).unwrap().origin_job
    };
    let both = format!("{}{}", property("Client", "Acme"), property("RedlineJobId", " 0190-job "));
    assert_eq!(origin(&custom(&both)).as_deref(), Some("0190-job"));
    assert_eq!(origin(&custom(&property("Client", "Acme"))), None);
    assert_eq!(origin(&custom(&property("RedlineJobId", ""))), None);
    assert_eq!(origin("<Properties><property name=\"RedlineJobId\"><vt:lp"), None);
}

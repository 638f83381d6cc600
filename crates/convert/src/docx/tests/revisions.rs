//! Tracked changes (revisions), read both ways: accepted (the document) and rejected
//! (`Converted::tracked`).

use super::*;

#[test]
fn tracked_changes_read_accepted_and_rejected() {
    // Runs inserted and deleted, a move, a formatting change, a table row of each kind and a
    // paragraph mark; two authors.
    let body = r#"<w:p><w:r><w:t xml:space="preserve">The </w:t></w:r><w:del w:id="1" w:author="Ann Lee" w:date="2024-01-02T03:04:05Z"><w:r><w:delText>old</w:delText></w:r></w:del><w:ins w:id="2" w:author="Ann Lee"><w:r><w:t>new</w:t></w:r></w:ins><w:r><w:t xml:space="preserve"> clause.</w:t></w:r></w:p>
      <w:p><w:moveFrom w:id="3" w:author="Bob"><w:r><w:t>Moved text.</w:t></w:r></w:moveFrom></w:p>
      <w:p><w:r><w:rPr><w:b/><w:rPrChange w:id="4" w:author="Bob"><w:rPr/></w:rPrChange></w:rPr><w:t>Now bold.</w:t></w:r></w:p>
      <w:tbl><w:tr><w:tc><w:p><w:r><w:t>Kept row</w:t></w:r></w:p></w:tc></w:tr>
        <w:tr><w:trPr><w:ins w:id="5" w:author="Bob"/></w:trPr><w:tc><w:p><w:ins w:id="6" w:author="Bob"><w:r><w:t>Added row</w:t></w:r></w:ins></w:p></w:tc></w:tr>
        <w:tr><w:trPr><w:del w:id="7" w:author="Bob"/></w:trPr><w:tc><w:p><w:del w:id="8" w:author="Bob"><w:r><w:delText>Removed row</w:delText></w:r></w:del></w:p></w:tc></w:tr></w:tbl>
      <w:p><w:pPr><w:rPr><w:ins w:id="9" w:author="Bob"/></w:rPr></w:pPr><w:moveTo w:id="10" w:author="Bob"><w:r><w:t>Moved text.</w:t></w:r></w:moveTo></w:p>"#;
    let out = Docx::new(body).convert().unwrap();
    assert!(out.html.starts_with("<p>The new clause.</p>\n<p><strong>Now bold.</strong></p>\n"), "{}", out.html);
    assert!(out.html.contains("Kept row") && out.html.contains("Added row") && !out.html.contains("Removed row"));
    assert!(out.html.trim_end().ends_with("<p>Moved text.</p>"), "{}", out.html);
    assert_eq!(out.html.matches("Moved text.").count(), 1);
    let tracked = out.tracked.expect("the file has tracked changes");
    let original = &tracked.original.html;
    assert!(original.starts_with("<p>The old clause.</p>\n<p>Moved text.</p>\n"), "{original}");
    assert!(original.contains("Kept row") && original.contains("Removed row") && !original.contains("Added row"));
    assert_eq!(original.matches("Moved text.").count(), 1, "{original}");
    assert_eq!(tracked.summary, "4 insertions, 3 deletions, 1 move and 1 formatting change by Ann Lee and Bob");
    assert!(out.warnings.is_empty(), "the caller says what it did with them: {:?}", out.warnings);

    // A file without revisions has no other reading.
    assert_eq!(Docx::new("<w:p><w:r><w:t>Plain</w:t></w:r></w:p>").convert().unwrap().tracked, None);
}

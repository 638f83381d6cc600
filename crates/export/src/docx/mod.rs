//! DOCX: an Office Open XML package written with `zip`. Styles `Heading1`–`Heading6`,
//! `ListParagraph`, `Quote`, `SourceCode`, `Caption`, `Hyperlink` and `TableGrid`; bulleted
//! and numbered lists through `numbering.xml` (nine levels, each ordered list restarting
//! its count); tables with `gridSpan` and `vMerge`; bold, italic, underline, strike,
//! super/subscript, colour (`w:color`), highlight and background shading, font sizes;
//! links as external relationships; pictures as DrawingML inline pictures at their display
//! size (`width`/`height` attributes or `style`, a percentage of the text width);
//! right-to-left paragraphs (`w:bidi`, see `model::paragraph_dir`) and runs of RTL text
//! (`w:rtl`); alignment (`w:jc`, also in table cells); `<mark>` and backgrounds near one of
//! Word's 16 highlight colours as `w:highlight`; ids as bookmarks and `#…` links as
//! `w:hyperlink w:anchor`; notes as real footnotes (`footnotes.xml`); tracked changes as
//! revisions with comments (`export_tracked`); the page header and footer (`role="doc-pageheader"`,
//! `doc-pagefooter`) as `header1.xml` and `footer1.xml`, shown on every page.

mod body;
mod highlight;
mod parts;

use std::collections::HashMap;
use std::io::{Cursor, Write};

use redline_domain::time_util::iso8601;
use redline_ports::{ImageSource, TrackedDocument, TrackedPart};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

use crate::build;
use crate::model::{Block, Doc, Note, RevKind};
use crate::redline::{self, Tracked};
use crate::xml::{escape_xml, push_xml};
use body::Body;
use parts::{NS_R, NS_W, XML_HEAD};

pub(crate) fn export(doc: &Doc, title: &str, images: &dyn ImageSource) -> Result<Vec<u8>, String> {
    let mut body = Body::new(images);
    body.set_notes(&doc.notes);
    body.document(&doc.blocks);
    let pages = Pages::write(&mut body, &doc.header, &doc.footer);
    package(body, &doc.notes, title, &pages, None, None)
}

/// The page header and footer parts (`header1.xml`, `footer1.xml`): their XML and their
/// relationships, when the document has them.
#[derive(Default)]
struct Pages {
    header: Option<(String, String)>,
    footer: Option<(String, String)>,
}

impl Pages {
    fn write(body: &mut Body<'_>, header: &[Block], footer: &[Block]) -> Pages {
        let mut part = |blocks: &[Block]| (!blocks.is_empty()).then(|| body.page_part(blocks));
        Pages { header: part(header), footer: part(footer) }
    }
}

/// A DOCX whose changes are revisions (`w:ins`/`w:del` runs, paragraph marks and table
/// rows; see `redline.rs`), credited to the document's author with each change's date, and
/// each change's comment anchored on it (`comments.xml`).
pub(crate) fn export_tracked(
    document: &TrackedDocument,
    title: &str,
    images: &dyn ImageSource,
) -> Result<Vec<u8>, String> {
    let mut body = Body::new(images);
    body.author = document.author.clone();
    // The notes are those of the document with the changes made, numbered over the whole of
    // it: a reference in one change and its note in another are one Word footnote (changes
    // inside a note are not shown as revisions).
    let made: String = document
        .parts
        .iter()
        .map(|p| match p {
            TrackedPart::Same(html) => html.as_str(),
            TrackedPart::Changed(change) => change.new.as_str(),
        })
        .collect();
    let notes: Vec<Note> = build::doc(&made).notes;
    drop(made);
    let numbers: build::NoteNumbers = notes.iter().enumerate().map(|(i, n)| (n.id.clone(), i + 1)).collect();
    let mut moves = moves(&document.parts);
    // Each part as tracked blocks, with the comment of its change.
    /// A part's blocks, and its change's number and comment when it has one.
    type Part<'d> = (Vec<Tracked>, Option<(usize, &'d str)>);
    let mut parts: Vec<Part<'_>> = Vec::new();
    // The page header and footer as they are with the changes made (a change to them is not
    // shown as a revision: docs/export.md, "Tracked changes").
    let (mut header, mut footer) = (Vec::new(), Vec::new());
    for part in &document.parts {
        match part {
            TrackedPart::Same(html) => {
                let mut doc = build::part_of(html, &numbers);
                header.append(&mut doc.header);
                footer.append(&mut doc.footer);
                parts.push((doc.blocks.into_iter().map(|b| (None, b)).collect(), None));
            }
            TrackedPart::Changed(change) => {
                let (old, mut new) = (build::part_of(&change.old, &numbers), build::part_of(&change.new, &numbers));
                header.append(&mut new.header);
                footer.append(&mut new.footer);
                let index = body.dates.len();
                let mut merged = redline::merge(old.blocks, new.blocks, index);
                body.dates.push(iso8601(change.at_ms));
                // One side of a move, when its blocks are paragraphs (a table row has no move
                // revision): the deletion moved from, the insertion moved to.
                let at = parts.len();
                if let Some((side, _)) = moves.get(&at) {
                    if merged.iter().all(|(_, b)| matches!(b, Block::Paragraph { .. } | Block::Heading { .. })) {
                        for (rev, _) in &mut merged {
                            if let Some(rev) = rev {
                                rev.kind = *side;
                            }
                        }
                    } else {
                        // Both sides stay a deletion and an insertion.
                        let name = moves.get(&at).map(|m| m.1);
                        moves.retain(|_, (_, n)| Some(*n) != name);
                    }
                }
                let comment = change.comment.as_deref().filter(|c| !c.trim().is_empty());
                parts.push((merged, comment.map(|c| (index, c))));
            }
        }
    }
    body.set_notes(&notes);
    let mut comments = String::new();
    for (at, (blocks, comment)) in parts.iter().enumerate() {
        // Each part is written apart, so that its comment's anchors go into the part alone
        // (inserting into the whole body per change would copy it once per change).
        let written = std::mem::take(&mut body.out);
        for (rev, block) in blocks {
            body.tracked_block(block, *rev);
        }
        let mut part = std::mem::replace(&mut body.out, written);
        if let Some((change, text)) = comment {
            let id = body.annotation_id();
            if anchor_comment(&mut part, id) {
                comments.push_str(&comment_xml(id, &body.author, &body.dates[*change], text));
            }
        }
        // A move's side within its named range.
        let rev = blocks.iter().find_map(|(rev, _)| *rev);
        match (moves.get(&at), rev) {
            (Some(&(_, name)), Some(rev)) => {
                let (start, end) = body.move_range(rev, name);
                body.out.push_str(&start);
                body.out.push_str(&part);
                body.out.push_str(&end);
            }
            _ => body.out.push_str(&part),
        }
    }
    if body.out.is_empty() {
        body.out.push_str("<w:p/>");
    }
    let pages = Pages::write(&mut body, &header, &footer);
    package(body, &notes, title, &pages, Some(comments), document.job_id.as_deref())
}

/// The moves among a tracked document's changes: a deletion and a creation of the same
/// sections (their ids aside) are the two sides of one move. Part index → its side and the
/// move's number.
fn moves(parts: &[TrackedPart]) -> HashMap<usize, (RevKind, usize)> {
    let key = redline_domain::document::without_chunk_ids;
    let mut deleted: Vec<(usize, String)> = Vec::new();
    // The creations by their text, each list in document order (taken from the front).
    let mut created: HashMap<String, std::collections::VecDeque<usize>> = HashMap::new();
    for (at, part) in parts.iter().enumerate() {
        if let TrackedPart::Changed(change) = part {
            match (change.old.trim().is_empty(), change.new.trim().is_empty()) {
                (false, true) => deleted.push((at, key(&change.old))),
                (true, false) => created.entry(key(&change.new)).or_default().push_back(at),
                _ => {}
            }
        }
    }
    let mut out = HashMap::new();
    for (from, text) in deleted {
        if let Some(to) = created.get_mut(&text).and_then(std::collections::VecDeque::pop_front) {
            let name = out.len() / 2 + 1;
            out.insert(from, (RevKind::MovedFrom, name));
            out.insert(to, (RevKind::MovedTo, name));
        }
    }
    out
}

/// Puts a comment's range around a part's paragraphs: its start after the first
/// paragraph's properties, its end and reference run at the end of the last.
fn anchor_comment(out: &mut String, id: u32) -> bool {
    // The first paragraph that has content (`<w:p>…</w:p>`) and the end of the last one.
    let (Some(first), Some(end)) = (out.find("<w:p>"), out.rfind("</w:p>")) else { return false };
    out.insert_str(
        end,
        &format!(
            "<w:commentRangeEnd w:id=\"{id}\"/><w:r><w:rPr><w:rStyle w:val=\"CommentReference\"/></w:rPr><w:commentReference w:id=\"{id}\"/></w:r>"
        ),
    );
    let range_start = format!("<w:commentRangeStart w:id=\"{id}\"/>");
    match out[first..].find("</w:pPr>").filter(|at| !out[first..first + at].contains("</w:p>")) {
        Some(at) => out.insert_str(first + at + "</w:pPr>".len(), &range_start),
        None => out.insert_str(first + "<w:p>".len(), &range_start),
    }
    true
}

fn comment_xml(id: u32, author: &str, date: &str, text: &str) -> String {
    let mut xml = format!(
        "<w:comment w:id=\"{id}\" w:author=\"{}\" w:date=\"{date}\" w:initials=\"{}\">",
        escape_xml(author),
        escape_xml(&initials(author))
    );
    for (k, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        xml.push_str("<w:p><w:pPr><w:pStyle w:val=\"CommentText\"/></w:pPr>");
        if k == 0 {
            xml.push_str("<w:r><w:rPr><w:rStyle w:val=\"CommentReference\"/></w:rPr><w:annotationRef/></w:r>");
        }
        xml.push_str("<w:r><w:t xml:space=\"preserve\">");
        push_xml(&mut xml, line.trim_end());
        xml.push_str("</w:t></w:r></w:p>");
    }
    xml.push_str("</w:comment>");
    xml
}

/// The initials Word shows on a comment: the first letter of each word of the name.
fn initials(author: &str) -> String {
    author.split_whitespace().filter_map(|w| w.chars().next()).flat_map(char::to_uppercase).take(4).collect()
}

/// Writes the package: the body's document part, its media, the fixed parts, the page header
/// and footer, the comments when there are some, and the job whose changes the revisions are
/// (`RedlineJobId`).
fn package(
    mut body: Body<'_>,
    notes: &[Note],
    title: &str,
    pages: &Pages,
    comments: Option<String>,
    job: Option<&str>,
) -> Result<Vec<u8>, String> {
    let (footnotes, footnote_rels) = body.footnotes(notes);
    let comments = comments.filter(|c| !c.is_empty());
    let mut optional: Vec<&str> = Vec::new();
    let mut references = String::new();
    for (part, name, id, kind) in
        [(&pages.header, "header1.xml", "rId5", "header"), (&pages.footer, "footer1.xml", "rId6", "footer")]
    {
        if part.is_some() {
            body.rels
                .push_str(&format!("<Relationship Id=\"{id}\" Type=\"{}/{kind}\" Target=\"{name}\"/>", parts::REL));
            references.push_str(&format!("<w:{kind}Reference w:type=\"default\" r:id=\"{id}\"/>"));
            optional.push(if kind == "header" { "/word/header1.xml" } else { "/word/footer1.xml" });
        }
    }
    if comments.is_some() {
        body.rels
            .push_str(&format!("<Relationship Id=\"rId9\" Type=\"{}\" Target=\"comments.xml\"/>", parts::REL_COMMENTS));
        optional.push("/word/comments.xml");
    }
    if job.is_some() {
        optional.push("/docProps/custom.xml");
    }
    let document = format!(
        "{XML_HEAD}<w:document xmlns:w=\"{NS_W}\" xmlns:r=\"{NS_R}\" \
         xmlns:wp=\"http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing\" \
         xmlns:a=\"http://schemas.openxmlformats.org/drawingml/2006/main\" \
         xmlns:pic=\"http://schemas.openxmlformats.org/drawingml/2006/picture\"><w:body>{}\
         <w:sectPr>{references}<w:pgSz w:w=\"{}\" w:h=\"{}\"/><w:pgMar w:top=\"{m}\" w:right=\"{m}\" w:bottom=\"{m}\" w:left=\"{m}\" \
         w:header=\"708\" w:footer=\"708\" w:gutter=\"0\"/></w:sectPr></w:body></w:document>",
        body.out,
        parts::PAGE_W,
        parts::PAGE_H,
        m = parts::MARGIN,
    );
    let mut extensions: Vec<&str> = Vec::new();
    for m in &body.media {
        let ext = m.name.rsplit('.').next().unwrap_or("png");
        if !extensions.contains(&ext) {
            extensions.push(ext);
        }
    }
    let mut text_parts = vec![
        ("[Content_Types].xml", parts::content_types(&extensions, &optional)),
        ("_rels/.rels", parts::package_rels(job.is_some())),
        ("docProps/core.xml", parts::core(title)),
        ("docProps/app.xml", parts::app()),
        ("word/document.xml", document),
        ("word/_rels/document.xml.rels", parts::document_rels(&body.rels)),
        ("word/styles.xml", parts::styles()),
        ("word/numbering.xml", parts::numbering(&body.nums)),
        ("word/settings.xml", parts::settings()),
        ("word/footnotes.xml", parts::footnotes(&footnotes)),
        ("word/_rels/footnotes.xml.rels", parts::part_rels(&footnote_rels)),
    ];
    for (part, name, rels, element) in [
        (&pages.header, "word/header1.xml", "word/_rels/header1.xml.rels", "hdr"),
        (&pages.footer, "word/footer1.xml", "word/_rels/footer1.xml.rels", "ftr"),
    ] {
        if let Some((xml, part_rels)) = part {
            text_parts.push((name, parts::page_part(element, xml)));
            text_parts.push((rels, parts::part_rels(part_rels)));
        }
    }
    if let Some(comments) = comments {
        text_parts.push(("word/comments.xml", parts::comments(&comments)));
    }
    if let Some(job) = job {
        text_parts.push(("docProps/custom.xml", parts::custom(job)));
    }
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    let deflated = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    let stored = SimpleFileOptions::default().compression_method(CompressionMethod::Stored);
    let fail = |e: &dyn std::fmt::Display| format!("writing the package failed: {e}");
    for (name, text) in &text_parts {
        zip.start_file(*name, deflated).map_err(|e| fail(&e))?;
        zip.write_all(text.as_bytes()).map_err(|e| fail(&e))?;
    }
    for m in &body.media {
        zip.start_file(format!("word/media/{}", m.name), stored).map_err(|e| fail(&e))?;
        zip.write_all(&m.bytes).map_err(|e| fail(&e))?;
    }
    Ok(zip.finish().map_err(|e| fail(&e))?.into_inner())
}

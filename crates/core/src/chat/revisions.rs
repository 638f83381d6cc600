//! A DOCX's tracked changes proposed for review (docs/api.md, "Upload", `track_changes=review`):
//! the upload loads the document as it was before them, and the changes become one turn
//! awaiting approval, which the approve endpoint and the editor settle like the AI's. No
//! model runs and nothing is billed (only chat turns the AI answers are).

use redline_domain::document::{ChunkId, Document, Section};
use redline_domain::job::{Change, ChangeOp, JobStatus, JobType};
use redline_domain::usage::Cycle;
use redline_domain::{Owner, SessionId};
use redline_ports::jobs::{JobRecord, Signal};
use serde_json::json;

use super::authorship::explain;
use super::record::{PublicChange, ResponseMode, StoredChange, TurnMetadata, TurnRequest, TurnState, FORMAT};
use super::{short_id, Chat, ChatError, ChatResult};
use crate::documents::{new_chunk_id, Revised};

/// Where a turn's request came from, when not from a person asking the AI.
pub const FROM_UPLOAD: &str = "upload";

impl Chat {
    /// Refuses (409) while a turn of the session runs or awaits review: an upload whose
    /// changes are to be reviewed would make a second one.
    pub async fn ensure_no_turn(&self, owner: Owner, session: &SessionId) -> ChatResult<()> {
        if self.ports.jobs.has_active_chat(owner, session).await? {
            return Err(ChatError::Conflict(format!(
                "A chat turn of session {} is running or awaiting review: finish it before uploading changes to review.",
                session.as_str()
            )));
        }
        Ok(())
    }

    /// Proposes the changes from the session's document to `revised` (the uploaded file
    /// `file` with its tracked changes, `summary`, accepted) as one turn awaiting approval.
    /// Answers the turn, or `None` when the readings do not differ.
    pub async fn propose_revisions(
        &self,
        owner: Owner,
        session: &SessionId,
        revised: Revised,
        file: &str,
    ) -> ChatResult<Option<JobRecord>> {
        let (record, doc) = self.documents.current(owner, session).await?;
        let Some(record) = record else { return Err(ChatError::SessionNotFound) };
        let Revised { sections, summary, who } = revised;
        let lead = format!("A tracked change of {file}");
        let fallback = format!("{lead} ({summary}).");
        // Aligning two long documents is CPU work: on the blocking pool.
        let changes = tokio::task::spawn_blocking(move || {
            let mut changes = revision_changes(&doc, sections, &fallback, &mut new_chunk_id);
            explain(&mut changes, &doc, &who, &lead, &fallback);
            changes
        })
        .await
        .map_err(|e| ChatError::Store(redline_ports::StoreError::Other(e.to_string())))?;
        if changes.is_empty() {
            return Ok(None);
        }
        let n = changes.len();
        let response = format!(
            "{file} has tracked changes ({summary}). The document is as it was before them; {n} change{} await{} your review.",
            if n == 1 { "" } else { "s" },
            if n == 1 { "s" } else { "" },
        );
        let message = format!("Review the tracked changes of {file}");
        let job = self.insert_review(owner, session, record.version_id, changes, message, response).await?;
        Ok(Some(job))
    }

    /// Stores `changes` (against the version `base_version`) as one turn awaiting approval
    /// that no model made: `message` is its request, `response` its answer.
    pub(super) async fn insert_review(
        &self,
        owner: Owner,
        session: &SessionId,
        base_version: Option<String>,
        changes: Vec<Change>,
        message: String,
        response: String,
    ) -> ChatResult<JobRecord> {
        let now = self.now();
        let n = changes.len();
        let job = JobRecord {
            job_id: uuid::Uuid::now_v7().to_string(),
            owner,
            session_id: session.clone(),
            job_type: JobType::Chat,
            status: JobStatus::AwaitingApproval,
            progress: 90,
            attempts: 0,
            request: TurnRequest {
                format: FORMAT,
                message: message.clone(),
                document_html: None,
                require_approval: true,
                response_mode: ResponseMode::Full,
                cycle: Cycle::containing(now).id,
                origin: Some(FROM_UPLOAD.to_owned()),
            }
            .to_value(),
            result: None,
            error: None,
            metadata: TurnMetadata {
                message,
                document_html_provided: false,
                require_approval: true,
                response_mode: ResponseMode::Full,
                pending_changes: Some(PublicChange::list(&changes)),
            }
            .to_value(),
            state: TurnState {
                pending: Some(StoredChange::list(&changes)),
                base_version,
                response: Some(response),
                ..TurnState::new()
            }
            .to_value(),
            created_at: now,
            updated_at: now,
            finished_at: None,
            lease_until: None,
        };
        self.ports.jobs.insert_job(&job).await?;
        self.emit(
            &job.job_id,
            "status",
            json!({"message": "Tracked changes of the upload await review", "pending": n}),
        )
        .await;
        self.ports.bus.publish(Signal::Job(job.job_id.clone())).await;
        Ok(job)
    }
}

/// The section html without its id, to compare sections of two readings.
/// Pictures' `width` and `height` are left out: a picture stored without them comes back from
/// a DOCX with the size the export gave it, and is the same picture.
pub(super) fn content(section: &Section) -> String {
    let html = section.html.replacen(&format!(" data-chunk-id=\"{}\"", section.id.as_str()), "", 1);
    if !html.contains("<img ") {
        return html;
    }
    let mut out = String::with_capacity(html.len());
    let mut rest = html.as_str();
    while let Some(at) = rest.find("<img ") {
        out.push_str(&rest[..at]);
        let end = rest[at..].find('>').map_or(rest.len(), |e| at + e + 1);
        let mut tag = rest[at..end].to_owned();
        for name in [" width=\"", " height=\""] {
            if let Some(start) = tag.find(name) {
                let close = tag[start + name.len()..].find('"').map_or(tag.len(), |c| start + name.len() + c + 1);
                tag.replace_range(start..close, "");
            }
        }
        out.push_str(&tag);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// One step of an alignment: items kept (or paired), deleted, inserted.
#[derive(Debug, Clone, Copy)]
pub(super) enum Step {
    Pair(usize, usize),
    Delete(usize),
    Insert(usize),
}

/// The largest alignment table computed (old × new sections left after the common ends);
/// a larger middle is deleted and inserted whole.
const MAX_CELLS: usize = 4_000_000;

/// A longest common subsequence of `0..n` and `0..m` under `same`, as steps (the common
/// start and end first taken as they are, the work bounded by [`MAX_CELLS`]).
pub(super) fn align(n: usize, m: usize, same: impl Fn(usize, usize) -> bool) -> Vec<Step> {
    let mut head = 0;
    while head < n && head < m && same(head, head) {
        head += 1;
    }
    let mut tail = 0;
    while tail < n - head && tail < m - head && same(n - 1 - tail, m - 1 - tail) {
        tail += 1;
    }
    let (n2, m2) = (n - head - tail, m - head - tail);
    let mut steps: Vec<Step> = (0..head).map(|k| Step::Pair(k, k)).collect();
    if n2.saturating_mul(m2) > MAX_CELLS {
        steps.extend((head..head + n2).map(Step::Delete));
        steps.extend((head..head + m2).map(Step::Insert));
    } else {
        // lcs[i][j]: the longest common subsequence of the middle items from i and from j.
        let same = |i: usize, j: usize| same(head + i, head + j);
        let w = m2 + 1;
        let mut lcs = vec![0u32; (n2 + 1) * w];
        for i in (0..n2).rev() {
            for j in (0..m2).rev() {
                lcs[i * w + j] = if same(i, j) {
                    lcs[(i + 1) * w + j + 1] + 1
                } else {
                    lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n2 || j < m2 {
            if i < n2 && j < m2 && same(i, j) {
                steps.push(Step::Pair(head + i, head + j));
                i += 1;
                j += 1;
            } else if j == m2 || (i < n2 && lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
                steps.push(Step::Delete(head + i));
                i += 1;
            } else {
                steps.push(Step::Insert(head + j));
                j += 1;
            }
        }
    }
    steps.extend((0..tail).map(|k| Step::Pair(n - tail + k, m - tail + k)));
    steps
}

/// The changes from `doc` to `revised`. Sections are aligned by their content; between two
/// sections both share, old and new sections of the same element are paired in order (an
/// edit, keeping the section's id), the old ones left over are deletions, and the new ones
/// left over are creations after the section before them. Each change applies alone.
pub(crate) fn revision_changes(
    doc: &Document,
    revised: Vec<Section>,
    explanation: &str,
    fresh: &mut dyn FnMut() -> ChunkId,
) -> Vec<Change> {
    let sections = doc.sections();
    let old: Vec<String> = sections.iter().map(content).collect();
    let new: Vec<String> = revised.iter().map(content).collect();
    let mut out = Changes { doc, explanation, fresh, changes: Vec::new() };
    let (mut dels, mut ins): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
    let mut before: Option<ChunkId> = None;
    for step in align(old.len(), new.len(), |i, j| old[i] == new[j]) {
        match step {
            Step::Pair(i, _) => {
                out.stretch(&dels, &ins, &revised, before.clone());
                dels.clear();
                ins.clear();
                before = Some(sections[i].id.clone());
            }
            Step::Delete(i) => dels.push(i),
            Step::Insert(j) => ins.push(j),
        }
    }
    out.stretch(&dels, &ins, &revised, before);
    out.changes
}

struct Changes<'d, 'f> {
    doc: &'d Document,
    explanation: &'d str,
    fresh: &'f mut dyn FnMut() -> ChunkId,
    changes: Vec<Change>,
}

impl Changes<'_, '_> {
    fn push(&mut self, op: ChangeOp, chunk: ChunkId, after: Option<ChunkId>, old: Option<String>, new: Vec<Section>) {
        self.changes.push(Change {
            change_id: short_id("chg_"),
            op,
            chunk_id: chunk,
            after,
            old_html: old,
            new_sections: new,
            explanation: Some(self.explanation.to_owned()),
            edited: false,
        });
    }

    /// New sections made one creation after `after`.
    fn create(&mut self, mut run: Vec<Section>, after: Option<ChunkId>) {
        if run.is_empty() {
            return;
        }
        self.doc.settle_ids(&mut run, None, &mut *self.fresh);
        let first = run[0].id.clone();
        self.push(ChangeOp::Create, first, after, None, run);
    }

    /// The old sections `dels` (indices into the document) became the new ones `ins`
    /// (indices into `revised`), after the kept section `before`.
    fn stretch(&mut self, dels: &[usize], ins: &[usize], revised: &[Section], before: Option<ChunkId>) {
        let sections = self.doc.sections();
        let mut anchor = before;
        let mut run: Vec<Section> = Vec::new();
        for step in align(dels.len(), ins.len(), |a, b| sections[dels[a]].tag == revised[ins[b]].tag) {
            match step {
                Step::Pair(a, b) => {
                    self.create(std::mem::take(&mut run), anchor.clone());
                    let old = &sections[dels[a]];
                    let mut mine = vec![revised[ins[b]].clone()];
                    self.doc.settle_ids(&mut mine, Some(&old.id), &mut *self.fresh);
                    self.push(ChangeOp::Edit, old.id.clone(), None, Some(old.html.clone()), mine);
                    anchor = Some(old.id.clone());
                }
                Step::Delete(a) => {
                    let old = &sections[dels[a]];
                    self.push(ChangeOp::Delete, old.id.clone(), None, Some(old.html.clone()), Vec::new());
                }
                Step::Insert(b) => run.push(revised[ins[b]].clone()),
            }
        }
        self.create(run, anchor);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::test_support::section;

    fn apply(doc: &Document, changes: &[Change]) -> Vec<String> {
        let refs: Vec<&Change> = changes.iter().collect();
        let next = redline_domain::job::apply_approved(doc, &refs).expect("applies");
        next.sections().iter().map(|s| s.text.clone()).collect()
    }

    #[test]
    fn the_changes_make_the_revised_document_and_each_can_be_taken_alone() {
        let doc = Document::new(vec![
            section("a1", "one"),
            section("b2", "two"),
            section("c3", "three"),
            section("d4", "four"),
        ])
        .expect("doc");
        let revised =
            vec![section("x0", "zero"), section("x1", "one"), section("x2", "two, edited"), section("x4", "four")];
        let mut n = 0;
        let mut fresh = || {
            n += 1;
            ChunkId::parse(&format!("new{n}")).expect("id")
        };
        let changes = revision_changes(&doc, revised, "why", &mut fresh);
        let ops: Vec<(ChangeOp, &str)> = changes.iter().map(|c| (c.op, c.chunk_id.as_str())).collect();
        assert_eq!(
            ops,
            vec![(ChangeOp::Create, "x0"), (ChangeOp::Edit, "b2"), (ChangeOp::Delete, "c3")],
            "{changes:?}"
        );
        assert_eq!(apply(&doc, &changes), vec!["zero", "one", "two, edited", "four"]);
        // Taken alone, each keeps its place.
        assert_eq!(apply(&doc, &changes[..1]), vec!["zero", "one", "two", "three", "four"]);
        assert_eq!(apply(&doc, &changes[1..2]), vec!["one", "two, edited", "three", "four"]);
        assert_eq!(apply(&doc, &changes[2..3]), vec!["one", "two", "four"]);
        assert_eq!(changes[1].new_sections[0].id.as_str(), "b2", "an edit keeps its section's id");
        // More new sections than old in one place: paired in order, the rest created after.
        let revised = vec![
            section("y1", "one"),
            section("y2", "2a"),
            section("y3", "2b"),
            section("y4", "2c"),
            section("y5", "four"),
        ];
        let changes = revision_changes(&doc, revised, "why", &mut fresh);
        let ops: Vec<(ChangeOp, &str, Option<&str>)> =
            changes.iter().map(|c| (c.op, c.chunk_id.as_str(), c.after.as_ref().map(ChunkId::as_str))).collect();
        assert_eq!(
            ops,
            vec![(ChangeOp::Edit, "b2", None), (ChangeOp::Edit, "c3", None), (ChangeOp::Create, "y4", Some("c3"))]
        );
        assert_eq!(apply(&doc, &changes), vec!["one", "2a", "2b", "2c", "four"]);
        assert_eq!(apply(&doc, &changes[2..]), vec!["one", "two", "three", "2c", "four"]);
        assert!(changes.iter().all(|c| c.explanation.as_deref() == Some("why")));
    }

    #[test]
    fn a_picture_is_the_same_whatever_size_it_states() {
        let id = ChunkId::parse("a1").expect("id");
        let with = |img: &str| Section {
            id: id.clone(),
            tag: "p".to_owned(),
            html: format!("<p data-chunk-id=\"a1\">Logo {img} end</p>"),
            text: "Logo end".to_owned(),
        };
        let bare = with("<img src=\"/v1/documents/images/x\" alt=\"logo\">");
        let sized = with("<img src=\"/v1/documents/images/x\" alt=\"logo\" width=\"200\" height=\"100\">");
        assert_eq!(content(&bare), content(&sized));
        assert_eq!(content(&bare), "<p>Logo <img src=\"/v1/documents/images/x\" alt=\"logo\"> end</p>");
        assert_ne!(content(&bare), content(&with("<img src=\"/v1/documents/images/y\" alt=\"logo\">")));
    }

    #[test]
    fn identical_readings_make_no_change() {
        let doc = Document::new(vec![section("a1", "one")]).expect("doc");
        assert!(revision_changes(&doc, vec![section("zz", "one")], "why", &mut new_chunk_id).is_empty());
    }

    fn element(id: &str, tag: &str, text: &str) -> Section {
        let id = ChunkId::parse(id).expect("id");
        let html = format!("<{tag} data-chunk-id=\"{}\">{text}</{tag}>", id.as_str());
        Section { id, tag: tag.to_owned(), html, text: text.to_owned() }
    }

    #[test]
    fn sections_pair_with_sections_of_their_element() {
        // A paragraph deleted before a list and a table that changed: the list is paired with
        // the list, the table with the table, the paragraph deleted.
        let doc = Document::new(vec![
            element("a1", "p", "kept"),
            element("b2", "p", "obsolete"),
            element("c3", "ul", "<li>apples</li>"),
            element("d4", "table", "<tr><td>10</td></tr>"),
            element("e5", "p", "end"),
        ])
        .expect("doc");
        let revised = vec![
            element("x1", "p", "kept"),
            element("x2", "h2", "Payment"),
            element("x3", "ul", "<li>apples</li><li>cherries</li>"),
            element("x4", "table", "<tr><td>12</td></tr>"),
            element("x5", "p", "end"),
        ];
        let changes = revision_changes(&doc, revised, "why", &mut new_chunk_id);
        let ops: Vec<(ChangeOp, &str)> = changes.iter().map(|c| (c.op, c.chunk_id.as_str())).collect();
        assert_eq!(
            ops,
            vec![(ChangeOp::Delete, "b2"), (ChangeOp::Create, "x2"), (ChangeOp::Edit, "c3"), (ChangeOp::Edit, "d4")]
        );
        assert_eq!(changes[1].after.as_ref().map(ChunkId::as_str), Some("a1"));
    }
}

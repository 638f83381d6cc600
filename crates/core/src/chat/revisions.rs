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

use super::record::{PublicChange, ResponseMode, StoredChange, TurnMetadata, TurnRequest, TurnState, FORMAT};
use super::{short_id, Chat, ChatError, ChatResult};
use crate::documents::new_chunk_id;

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
        revised: Vec<Section>,
        file: &str,
        summary: &str,
    ) -> ChatResult<Option<JobRecord>> {
        let (record, doc) = self.documents.current(owner, session).await?;
        let Some(record) = record else { return Err(ChatError::SessionNotFound) };
        let explanation = format!("A tracked change of {file} ({summary}).");
        let changes = revision_changes(&doc, revised, &explanation, &mut new_chunk_id);
        if changes.is_empty() {
            return Ok(None);
        }
        let now = self.now();
        let n = changes.len();
        let message = format!("Review the tracked changes of {file}");
        let response = format!(
            "{file} has tracked changes ({summary}). The document is as it was before them; {n} change{} await{} your review.",
            if n == 1 { "" } else { "s" },
            if n == 1 { "s" } else { "" },
        );
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
                base_version: record.version_id,
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
        Ok(Some(job))
    }
}

/// The section html without its id, to compare sections of two readings.
fn content(section: &Section) -> String {
    section.html.replacen(&format!(" data-chunk-id=\"{}\"", section.id.as_str()), "", 1)
}

/// The changes from `doc` to `revised`: sections are aligned by their content (longest
/// common subsequence); between two kept sections, the old ones are edited into the new ones
/// in order (the last edit taking the new sections left over), the old ones left over
/// deleted, and new sections where no old one was are one creation. Each keeps its place
/// when some are approved and others not.
pub(crate) fn revision_changes(
    doc: &Document,
    revised: Vec<Section>,
    explanation: &str,
    fresh: &mut dyn FnMut() -> ChunkId,
) -> Vec<Change> {
    let old: Vec<String> = doc.sections().iter().map(content).collect();
    let new: Vec<String> = revised.iter().map(content).collect();
    // lcs[i][j]: the longest common subsequence of old[i..] and new[j..].
    let w = new.len() + 1;
    let mut lcs = vec![0u32; (old.len() + 1) * w];
    for i in (0..old.len()).rev() {
        for j in (0..new.len()).rev() {
            lcs[i * w + j] = if old[i] == new[j] {
                lcs[(i + 1) * w + j + 1] + 1
            } else {
                lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
            };
        }
    }
    let sections = doc.sections();
    let mut changes = Vec::new();
    let (mut i, mut j) = (0, 0);
    let mut before: Option<ChunkId> = None;
    let make = |op: ChangeOp, chunk: ChunkId, after: Option<ChunkId>, old: Option<String>, new: Vec<Section>| Change {
        change_id: short_id("chg_"),
        op,
        chunk_id: chunk,
        after,
        old_html: old,
        new_sections: new,
        explanation: Some(explanation.to_owned()),
        edited: false,
    };
    while i < old.len() || j < new.len() {
        if i < old.len() && j < new.len() && old[i] == new[j] {
            before = Some(sections[i].id.clone());
            i += 1;
            j += 1;
            continue;
        }
        // A stretch between kept sections: old[i..i2] became new[j..j2].
        let (mut i2, mut j2) = (i, j);
        while i2 < old.len() || j2 < new.len() {
            if i2 < old.len() && j2 < new.len() && old[i2] == new[j2] {
                break;
            }
            if j2 == new.len() || (i2 < old.len() && lcs[(i2 + 1) * w + j2] >= lcs[i2 * w + j2 + 1]) {
                i2 += 1;
            } else {
                j2 += 1;
            }
        }
        let olds = &sections[i..i2];
        let mut news: Vec<Section> = revised[j..j2].to_vec();
        if olds.is_empty() {
            doc.settle_ids(&mut news, None, fresh);
            let first = news[0].id.clone();
            changes.push(make(ChangeOp::Create, first, before.clone(), None, news));
        } else {
            let edits = olds.len().min(news.len());
            for (k, section) in olds.iter().enumerate() {
                if k >= edits {
                    changes.push(make(
                        ChangeOp::Delete,
                        section.id.clone(),
                        None,
                        Some(section.html.clone()),
                        Vec::new(),
                    ));
                    continue;
                }
                // The last edit takes the new sections left over.
                let take = if k + 1 == edits { news.len() - k } else { 1 };
                let mut mine: Vec<Section> = news[k..k + take].to_vec();
                doc.settle_ids(&mut mine, Some(&section.id), fresh);
                changes.push(make(ChangeOp::Edit, section.id.clone(), None, Some(section.html.clone()), mine));
            }
            before = olds.last().map(|s| s.id.clone());
        }
        i = i2;
        j = j2;
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(id: &str, text: &str) -> Section {
        let id = ChunkId::parse(id).expect("id");
        let html = format!("<p data-chunk-id=\"{}\">{text}</p>", id.as_str());
        Section { id, tag: "p".to_owned(), html, text: text.to_owned() }
    }

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
        // More new sections than old in one place: the last edit takes the rest.
        let revised = vec![
            section("y1", "one"),
            section("y2", "2a"),
            section("y3", "2b"),
            section("y4", "2c"),
            section("y5", "four"),
        ];
        let changes = revision_changes(&doc, revised, "why", &mut fresh);
        let ops: Vec<(ChangeOp, &str, usize)> =
            changes.iter().map(|c| (c.op, c.chunk_id.as_str(), c.new_sections.len())).collect();
        assert_eq!(ops, vec![(ChangeOp::Edit, "b2", 1), (ChangeOp::Edit, "c3", 2)]);
        assert_eq!(apply(&doc, &changes), vec!["one", "2a", "2b", "2c", "four"]);
        assert!(changes.iter().all(|c| c.explanation.as_deref() == Some("why")));
    }

    #[test]
    fn identical_readings_make_no_change() {
        let doc = Document::new(vec![section("a1", "one")]).expect("doc");
        assert!(revision_changes(&doc, vec![section("zz", "one")], "why", &mut new_chunk_id).is_empty());
    }
}

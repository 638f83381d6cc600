//! The pending changes of a session as a tracked document (docs/export.md, "Tracked
//! changes"): what a DOCX export with `track_changes` shows as Word revisions.

use std::collections::HashSet;

use redline_domain::document::{ChunkId, Document};
use redline_domain::job::{Change, ChangeOp, JobStatus, JobType};
use redline_domain::page::PageRequest;
use redline_domain::time_util::Millis;
use redline_domain::{Owner, SessionId};
use redline_ports::jobs::JobFilter;
use redline_ports::{TrackedChange, TrackedDocument, TrackedPart};

use super::record::Turn;
use super::{Chat, ChatError, ChatResult};

/// A session's document with the proposed changes of its turn awaiting approval.
#[derive(Debug, Clone)]
pub struct Pending {
    /// The document, its changes in place (the author is left for the exporter to set).
    pub document: TrackedDocument,
    /// The turn that proposed them (`None`: no turn awaits approval).
    pub job_id: Option<String>,
    /// How many changes the document shows (those still current).
    pub changes: usize,
}

impl Chat {
    /// The session's document with the changes of its turn awaiting approval, each as its
    /// old and new HTML, dated when the turn proposed them and commented with its
    /// explanation. Changes whose sections moved on since are left out.
    pub async fn pending_document(&self, owner: Owner, session: &SessionId) -> ChatResult<Pending> {
        let (record, doc) = self.documents.current(owner, session).await?;
        if record.is_none() {
            return Err(ChatError::SessionNotFound);
        }
        let filter = JobFilter {
            session_id: Some(session.clone()),
            status: Some(JobStatus::AwaitingApproval),
            job_type: Some(JobType::Chat),
        };
        let page = self.ports.jobs.list_jobs(owner, &filter, &PageRequest::first(1)).await?;
        let Some(job) = page.items.into_iter().next() else {
            let parts = vec![TrackedPart::Same(doc.to_html())];
            return Ok(Pending {
                document: TrackedDocument { parts, author: String::new(), job_id: None },
                job_id: None,
                changes: 0,
            });
        };
        let changes = Turn::read(&job)?.state.pending_changes()?;
        let (parts, shown) = tracked_parts(&doc, &changes, job.updated_at);
        Ok(Pending {
            document: TrackedDocument { parts, author: String::new(), job_id: Some(job.job_id.clone()) },
            job_id: Some(job.job_id),
            changes: shown,
        })
    }
}

/// The document's sections in order with `changes` in place: an edited or deleted section
/// becomes its change, new sections follow the section they go after (or another new one).
/// Answers the parts and how many changes they show.
pub(crate) fn tracked_parts(doc: &Document, changes: &[Change], at_ms: Millis) -> (Vec<TrackedPart>, usize) {
    let mut parts = Parts { parts: Vec::new(), same: String::new(), shown: 0, placed: HashSet::new() };
    let creates: Vec<&Change> =
        changes.iter().filter(|c| c.op == ChangeOp::Create && doc.get(&c.chunk_id).is_none()).collect();
    parts.creates_after(None, &creates, at_ms);
    for section in doc.sections() {
        let change = changes.iter().find(|c| c.op != ChangeOp::Create && c.chunk_id == section.id && c.is_current(doc));
        match change {
            Some(c) => {
                parts.change(section.html.clone(), c.new_html().unwrap_or_default(), c, at_ms);
                // New sections may go after any of the sections an edit makes.
                for made in c.new_sections.iter().skip(1) {
                    parts.creates_after(Some(&made.id), &creates, at_ms);
                }
            }
            None => {
                parts.same.push_str(&section.html);
                parts.same.push('\n');
            }
        }
        parts.creates_after(Some(&section.id), &creates, at_ms);
    }
    parts.flush();
    (parts.parts, parts.shown)
}

struct Parts<'c> {
    parts: Vec<TrackedPart>,
    /// Unchanged sections not written yet.
    same: String,
    shown: usize,
    /// New sections placed (each once, whatever their `after` says).
    placed: HashSet<&'c str>,
}

impl<'c> Parts<'c> {
    fn flush(&mut self) {
        if !self.same.is_empty() {
            self.parts.push(TrackedPart::Same(std::mem::take(&mut self.same)));
        }
    }

    fn change(&mut self, old: String, new: String, change: &Change, at_ms: Millis) {
        self.flush();
        self.shown += 1;
        self.parts.push(TrackedPart::Changed(TrackedChange { old, new, at_ms, comment: change.explanation.clone() }));
    }

    /// The new sections that go after `after`, each followed by those that go after it.
    fn creates_after(&mut self, after: Option<&ChunkId>, creates: &[&'c Change], at_ms: Millis) {
        for create in creates {
            if create.after.as_ref() == after && self.placed.insert(create.change_id.as_str()) {
                self.change(String::new(), create.new_html().unwrap_or_default(), create, at_ms);
                // Sections made after a new one (its own id, or the id of the last section it
                // made) follow it.
                for section in &create.new_sections {
                    self.creates_after(Some(&section.id), creates, at_ms);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use redline_domain::document::Section;

    use super::*;
    use crate::chat::test_support::section;

    fn change(id: &str, op: ChangeOp, chunk: &Section, after: Option<&str>, new: Option<&Section>) -> Change {
        Change {
            change_id: id.to_owned(),
            op,
            chunk_id: chunk.id.clone(),
            after: after.and_then(ChunkId::parse),
            old_html: (op != ChangeOp::Create).then(|| chunk.html.clone()),
            new_sections: new.into_iter().cloned().collect(),
            explanation: Some(format!("because {id}")),
            edited: false,
        }
    }

    #[test]
    fn changes_sit_where_their_sections_are() {
        let (a, b, c) = (section("a1", "one"), section("b2", "two"), section("c3", "three"));
        let doc = Document::new(vec![a.clone(), b.clone(), c.clone()]).expect("doc");
        let (b2, new1, new2, top) =
            (section("b2", "TWO"), section("n1", "new"), section("n2", "newer"), section("t0", "top"));
        let changes = vec![
            change("ch1", ChangeOp::Edit, &b, None, Some(&b2)),
            change("ch2", ChangeOp::Delete, &c, None, None),
            change("ch3", ChangeOp::Create, &new1, Some("a1"), Some(&new1)),
            change("ch4", ChangeOp::Create, &new2, Some("n1"), Some(&new2)),
            change("ch5", ChangeOp::Create, &top, None, Some(&top)),
        ];
        let (parts, shown) = tracked_parts(&doc, &changes, 7);
        assert_eq!(shown, 5);
        let kinds: Vec<String> = parts
            .iter()
            .map(|p| match p {
                TrackedPart::Same(html) => format!("same {}", html.trim()),
                TrackedPart::Changed(c) => format!("{} -> {} ({})", c.old, c.new, c.comment.as_deref().unwrap_or("")),
            })
            .collect();
        assert_eq!(
            kinds,
            vec![
                format!(" -> {} (because ch5)", top.html),
                format!("same {}", a.html),
                format!(" -> {} (because ch3)", new1.html),
                format!(" -> {} (because ch4)", new2.html),
                format!("{} -> {} (because ch1)", b.html, b2.html),
                format!("{} ->  (because ch2)", c.html),
            ]
        );
    }

    #[test]
    fn a_new_section_after_the_second_section_of_an_edit_follows_it() {
        let (a, b) = (section("a1", "one"), section("b2", "two"));
        let doc = Document::new(vec![a.clone(), b.clone()]).expect("doc");
        let (a1, x9, n3) = (section("a1", "ONE"), section("x9", "one and a half"), section("n3", "new"));
        let mut edit = change("ch1", ChangeOp::Edit, &a, None, Some(&a1));
        edit.new_sections.push(x9);
        let create = change("ch2", ChangeOp::Create, &n3, Some("x9"), Some(&n3));
        let (parts, shown) = tracked_parts(&doc, &[create, edit], 7);
        assert_eq!(shown, 2);
        let news: Vec<&str> = parts
            .iter()
            .filter_map(|p| match p {
                TrackedPart::Changed(c) => Some(c.new.as_str()),
                TrackedPart::Same(_) => None,
            })
            .collect();
        assert_eq!(
            news,
            vec![format!("{}{}", a1.html, section("x9", "one and a half").html).as_str(), n3.html.as_str()]
        );
    }

    #[test]
    fn a_change_whose_section_moved_on_is_left_out() {
        let (a, b) = (section("a1", "one"), section("b2", "two"));
        let doc = Document::new(vec![a.clone(), b.clone()]).expect("doc");
        let stale = section("a1", "something else");
        let mut edit = change("ch1", ChangeOp::Edit, &stale, None, Some(&a));
        edit.chunk_id = a.id.clone();
        let (parts, shown) = tracked_parts(&doc, &[edit], 7);
        assert_eq!(shown, 0);
        assert_eq!(parts, vec![TrackedPart::Same(format!("{}\n{}\n", a.html, b.html))]);
    }
}

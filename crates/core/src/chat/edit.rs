//! The tool calls of a turn, run against its working copy of the document: reads and
//! searches answer the model; edits, creations and deletions change the copy and are recorded
//! as changes (with a `change` event each).

use redline_domain::document::{ChunkId, Section, MAX_SECTIONS};
use redline_ports::jobs::JobRecord;
use serde_json::{json, Value};

use super::record::PublicChange;
use super::tools::{self, ToolRequest, Workspace};
use super::{short_id, Chat};
use crate::documents::new_chunk_id;

impl Chat {
    /// Runs one tool call against the working copy; the answer goes back to the model.
    pub(super) async fn tool(
        &self,
        job: &JobRecord,
        ws: &mut Workspace,
        name: &str,
        arguments: &str,
        proposing: bool,
        events: &mut Vec<(String, Value)>,
    ) -> Value {
        let request = match tools::parse(name, arguments) {
            Ok(r) => r,
            Err(e) => return json!({"error": e}),
        };
        let chunk = |id: &str, ws: &Workspace| -> Result<ChunkId, Value> {
            ChunkId::parse(id)
                .filter(|c| ws.working.get(c).is_some())
                .ok_or_else(|| json!({"error": format!("unknown chunk_id {id:?}; use ids from the outline or from search_document")}))
        };
        match request {
            ToolRequest::Read { chunk_ids } => tools::read(&ws.working, &chunk_ids),
            ToolRequest::SearchDocument { query, limit, offset } => tools::search(&ws.working, &query, limit, offset),
            ToolRequest::SearchAttachments { query, limit } => match &self.ports.attachments {
                Some(a) => match a.search_passages(job.owner, &job.session_id, &query, limit).await {
                    Ok(p) => tools::passages_json(&p),
                    Err(e) => json!({"error": format!("attachment search failed: {e}")}),
                },
                None => json!({"passages": []}),
            },
            ToolRequest::Edit { chunk_id, new_html, explanation } => {
                let id = match chunk(&chunk_id, ws) {
                    Ok(id) => id,
                    Err(e) => return e,
                };
                let sections = match self.new_sections(ws, &new_html, Some(&id)).await {
                    Ok(s) => s,
                    Err(e) => return e,
                };
                if let Err(e) = ws.working.replace(&id, sections.clone()) {
                    return json!({"error": e.to_string()});
                }
                let at = ws.record_edit(&id, sections, explanation.clone(), short_id("chg_"));
                let change_id = Self::change_event(ws, at, proposing, events);
                json!({"ok": true, "change_id": change_id, "chunk_id": id.as_str()})
            }
            ToolRequest::Create { after, new_html, explanation } => {
                let after = match after.as_deref().filter(|a| !a.is_empty()) {
                    None => None,
                    Some(a) => match chunk(a, ws) {
                        Ok(id) => Some(id),
                        Err(e) => return e,
                    },
                };
                let sections = match self.new_sections(ws, &new_html, None).await {
                    Ok(s) => s,
                    Err(e) => return e,
                };
                if let Err(e) = ws.working.insert_after(after.as_ref(), sections.clone()) {
                    return json!({"error": e.to_string()});
                }
                let ids: Vec<String> = sections.iter().map(|s| s.id.as_str().to_owned()).collect();
                let at = ws.record_create(after, sections, explanation, short_id("chg_"));
                let change_id = Self::change_event(ws, at, proposing, events);
                json!({"ok": true, "change_id": change_id, "chunk_ids": ids})
            }
            ToolRequest::Delete { chunk_id, explanation } => {
                let id = match chunk(&chunk_id, ws) {
                    Ok(id) => id,
                    Err(e) => return e,
                };
                if let Err(e) = ws.working.delete(&id) {
                    return json!({"error": e.to_string()});
                }
                let (change_id, at) = ws.record_delete(&id, explanation, short_id("chg_"));
                if let Some(at) = at {
                    Self::change_event(ws, at, proposing, events);
                }
                json!({"ok": true, "change_id": change_id, "deleted": id.as_str()})
            }
        }
    }
    pub(super) async fn new_sections(
        &self,
        ws: &Workspace,
        html: &str,
        keep: Option<&ChunkId>,
    ) -> Result<Vec<Section>, Value> {
        let sections = self
            .documents
            .sectionize(html.to_owned())
            .await
            .map_err(|e| json!({"error": format!("new_html was refused: {e}")}))?;
        if sections.is_empty() {
            return Err(json!({"error": "new_html has no content; to remove a section use delete_section"}));
        }
        // Past the limit only by growing (a document stored before it keeps being editable).
        let after = ws.working.len().saturating_sub(usize::from(keep.is_some())).saturating_add(sections.len());
        if after > MAX_SECTIONS && after > ws.working.len() {
            return Err(json!({"error": format!(
                "new_html was refused: the document would have more than {MAX_SECTIONS} sections"
            )}));
        }
        let mut sections = sections;
        ws.working.settle_ids(&mut sections, keep, &mut new_chunk_id);
        Ok(sections)
    }
    /// The `change` event of the change at `at`; its id.
    pub(super) fn change_event(
        ws: &Workspace,
        at: usize,
        proposing: bool,
        events: &mut Vec<(String, Value)>,
    ) -> String {
        let c = &ws.changes()[at];
        let mut v = serde_json::to_value(PublicChange::from(c)).unwrap_or_default();
        v["proposed"] = json!(proposing);
        events.push(("change".to_owned(), v));
        c.change_id.clone()
    }
}

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
        match tools::parse(name, arguments) {
            Ok(request) => self.run_request(job, ws, request, proposing, events).await,
            Err(e) => json!({"error": e}),
        }
    }

    /// Runs one parsed request against the working copy (the tools, and the edits the text
    /// protocols parse); the answer goes back to the model.
    pub(super) async fn run_request(
        &self,
        job: &JobRecord,
        ws: &mut Workspace,
        request: ToolRequest,
        proposing: bool,
        events: &mut Vec<(String, Value)>,
    ) -> Value {
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
            ToolRequest::Replace { chunk_id, search, replace, all, explanation } => {
                // An unknown chunk id is looked past: the text is searched for everywhere.
                let targets: Vec<ChunkId> = match chunk_id.as_deref().and_then(|c| chunk(c, ws).ok()) {
                    Some(id) => vec![id],
                    None => ws.working.sections().iter().map(|s| s.id.clone()).collect(),
                };
                let mut hits = Vec::new();
                let mut several = Vec::new();
                for id in targets {
                    let Some(section) = ws.working.get(&id) else { continue };
                    // Markup is matched as the model saw it: without the section's id.
                    let html = super::rewrite::without_chunk_id(&section.html);
                    match tools::replace_in(&html, &search, &replace, all) {
                        Ok(Some(html)) => hits.push((id, html)),
                        Ok(None) => {}
                        Err(n) => several.push(format!("{} ({n} times)", id.as_str())),
                    }
                }
                if !all && (!several.is_empty() || hits.len() > 1) {
                    let mut places = several;
                    places.extend(hits.iter().map(|(id, _)| id.as_str().to_owned()));
                    return json!({"error": format!(
                        "the search text occurs more than once (in {}); give a longer search text, a chunk_id, or all: true to replace every occurrence",
                        places.join(", ")
                    )});
                }
                if hits.is_empty() {
                    return json!({"error": "the search text was not found; copy it exactly from read_sections or search_document (text only, or the HTML as written), or use edit_section"});
                }
                let mut change_ids = Vec::new();
                let mut chunk_ids = Vec::new();
                for (id, html) in hits {
                    let emptied = self.documents.sectionize(html.clone()).await.is_ok_and(|s| s.is_empty());
                    if emptied {
                        // The whole section was replaced by nothing: it is deleted.
                        if ws.working.delete(&id).is_ok() {
                            let (change_id, at) = ws.record_delete(&id, explanation.clone(), short_id("chg_"));
                            if let Some(at) = at {
                                Self::change_event(ws, at, proposing, events);
                            }
                            change_ids.push(change_id);
                            chunk_ids.push(id.as_str().to_owned());
                        }
                        continue;
                    }
                    let sections = match self.new_sections(ws, &html, Some(&id)).await {
                        Ok(s) => s,
                        Err(e) => return e,
                    };
                    if let Err(e) = ws.working.replace(&id, sections.clone()) {
                        return json!({"error": e.to_string()});
                    }
                    let at = ws.record_edit(&id, sections, explanation.clone(), short_id("chg_"));
                    change_ids.push(Self::change_event(ws, at, proposing, events));
                    chunk_ids.push(id.as_str().to_owned());
                }
                json!({"ok": true, "change_ids": change_ids, "chunk_ids": chunk_ids})
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

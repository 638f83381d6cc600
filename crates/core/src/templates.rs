//! Templates: built-in ones every owner sees, and an owner's own (sanitized and sectioned
//! like a save). Applying one makes it the session's document as a new version (source
//! `template`).

use std::sync::Arc;

use rand::RngCore;
use redline_domain::document::Document;
use redline_domain::page::{Cursor, Page, PageRequest};
use redline_domain::time_util::Millis;
use redline_domain::{Owner, SessionId};
use redline_ports::documents::DocumentRecord;
use redline_ports::templates::{TemplateRecord, TemplateSummaryRecord};
use redline_ports::{Clock, HtmlSections, StoreError, TemplateStore};

use crate::documents::{new_chunk_id, DocumentError, Documents};

/// When the built-in templates were written (their `created_at`): 2026-01-01T00:00:00Z.
pub const BUILTIN_CREATED_AT: Millis = 1_767_225_600_000;

/// The built-in templates: id, name, description, HTML.
const BUILTINS: [(&str, &str, &str, &str); 4] = [
    (
        "builtin-meeting-notes",
        "Meeting notes",
        "Attendees, agenda, decisions and action items of a meeting.",
        "<h1>Meeting notes</h1>\
         <p><strong>Date:</strong> … <strong>Facilitator:</strong> … <strong>Note taker:</strong> …</p>\
         <h2>Attendees</h2><ul><li>…</li></ul>\
         <h2>Agenda</h2><ol><li>…</li></ol>\
         <h2>Discussion</h2><p>…</p>\
         <h2>Decisions</h2><ul><li>…</li></ul>\
         <h2>Action items</h2>\
         <table><thead><tr><th>Action</th><th>Owner</th><th>Due</th></tr></thead>\
         <tbody><tr><td>…</td><td>…</td><td>…</td></tr></tbody></table>",
    ),
    (
        "builtin-project-proposal",
        "Project proposal",
        "Problem, goals, scope, plan, budget and risks of a proposed project.",
        "<h1>Project proposal: …</h1>\
         <p><strong>Author:</strong> … <strong>Date:</strong> … <strong>Status:</strong> draft</p>\
         <h2>Summary</h2><p>One paragraph a busy reader can act on.</p>\
         <h2>Problem</h2><p>What is wrong today, for whom, and how we know.</p>\
         <h2>Goals and non-goals</h2><ul><li>Goal: …</li><li>Non-goal: …</li></ul>\
         <h2>Scope</h2><p>…</p>\
         <h2>Plan and milestones</h2>\
         <table><thead><tr><th>Milestone</th><th>Deliverable</th><th>Date</th></tr></thead>\
         <tbody><tr><td>…</td><td>…</td><td>…</td></tr></tbody></table>\
         <h2>Budget</h2><p>…</p>\
         <h2>Risks</h2><ul><li>Risk: … Mitigation: …</li></ul>",
    ),
    (
        "builtin-memo",
        "Memo",
        "A short internal memo: to, from, subject, and the message.",
        "<h1>Memo</h1>\
         <p><strong>To:</strong> …<br><strong>From:</strong> …<br><strong>Date:</strong> …<br><strong>Subject:</strong> …</p>\
         <p>State the purpose of the memo in the first sentence.</p>\
         <p>Give the background and the details the reader needs.</p>\
         <p>Close with what you ask of the reader, and by when.</p>",
    ),
    (
        "builtin-report",
        "Blank report",
        "A report skeleton: title, summary, sections and appendix.",
        "<h1>Report title</h1>\
         <p><em>Author, date</em></p>\
         <h2>Executive summary</h2><p>…</p>\
         <h2>Introduction</h2><p>…</p>\
         <h2>Findings</h2><p>…</p>\
         <h2>Recommendations</h2><ol><li>…</li></ol>\
         <h2>Appendix</h2><p>…</p>",
    ),
];

/// A template as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pub template_id: String,
    pub name: String,
    pub description: Option<String>,
    /// Sanitized, sectioned HTML.
    pub html: String,
    pub section_count: i64,
    /// Built-in templates are seen by every owner and cannot be deleted.
    pub builtin: bool,
    pub created_at: Millis,
    pub updated_at: Millis,
}

impl From<TemplateRecord> for Template {
    fn from(r: TemplateRecord) -> Self {
        Template {
            template_id: r.template_id,
            name: r.name,
            description: r.description,
            html: r.html,
            section_count: r.section_count,
            builtin: false,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

/// A template as a listing shows it: without its HTML.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateSummary {
    pub template_id: String,
    pub name: String,
    pub description: Option<String>,
    pub section_count: i64,
    /// Built-in templates are seen by every owner and cannot be deleted.
    pub builtin: bool,
    pub created_at: Millis,
    pub updated_at: Millis,
}

impl TemplateSummary {
    /// Where the page after this template starts.
    fn cursor(&self) -> Cursor {
        Cursor::new(self.created_at, self.template_id.clone())
    }
}

impl From<TemplateSummaryRecord> for TemplateSummary {
    fn from(r: TemplateSummaryRecord) -> Self {
        TemplateSummary {
            template_id: r.template_id,
            name: r.name,
            description: r.description,
            section_count: r.section_count,
            builtin: false,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

impl From<&Template> for TemplateSummary {
    fn from(t: &Template) -> Self {
        TemplateSummary {
            template_id: t.template_id.clone(),
            name: t.name.clone(),
            description: t.description.clone(),
            section_count: t.section_count,
            builtin: t.builtin,
            created_at: t.created_at,
            updated_at: t.updated_at,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    #[error("template not found")]
    NotFound,
    /// Another owner's template, or a built-in one on delete (403).
    #[error("forbidden: {0}")]
    Forbidden(&'static str),
    /// The HTML has no content once sanitized.
    #[error("the template has no content")]
    Empty,
    #[error(transparent)]
    Document(#[from] DocumentError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

pub type TemplateResult<T> = Result<T, TemplateError>;

/// A fresh template id: `tpl_` + 32 hex characters.
fn new_template_id() -> String {
    let mut bytes = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("tpl_{}", hex::encode(bytes))
}

/// The text of "another owner's template".
pub const NOT_YOURS: &str = "This template belongs to another account.";
/// The text of deleting a built-in template.
pub const BUILTIN_READ_ONLY: &str = "Built-in templates cannot be deleted.";

pub struct Templates {
    store: Arc<dyn TemplateStore>,
    documents: Arc<Documents>,
    clock: Arc<dyn Clock>,
    builtins: Vec<Template>,
}

impl Templates {
    /// Sections the built-in templates once, with `html` (the same sanitizer as everything).
    pub fn new(
        store: Arc<dyn TemplateStore>,
        documents: Arc<Documents>,
        html: &dyn HtmlSections,
        clock: Arc<dyn Clock>,
    ) -> TemplateResult<Self> {
        let mut builtins = Vec::with_capacity(BUILTINS.len());
        for (id, name, description, raw) in BUILTINS {
            let sections = html.sectionize(raw, &mut new_chunk_id).map_err(DocumentError::from)?;
            let doc = Document::new(sections).map_err(|e| DocumentError::Worker(e.to_string()))?;
            builtins.push(Template {
                template_id: id.to_owned(),
                name: name.to_owned(),
                description: Some(description.to_owned()),
                html: doc.to_html(),
                section_count: i64::try_from(doc.len()).unwrap_or(i64::MAX),
                builtin: true,
                created_at: BUILTIN_CREATED_AT,
                updated_at: BUILTIN_CREATED_AT,
            });
        }
        Ok(Self { store, documents, clock, builtins })
    }

    /// One page of the templates the owner can use: the built-in ones, then the owner's own,
    /// newest first. The listing is one sequence: a page may end among the built-ins (its
    /// cursor then names the last built-in shown) or among the owner's own (the store's
    /// cursor); `limit` counts both.
    pub async fn list(&self, owner: Owner, page: &PageRequest) -> TemplateResult<Page<TemplateSummary>> {
        let limit = page.limit.max(1);
        let (builtins_from, own_after) = match &page.after {
            None => (0, None),
            Some(after) => match self.builtins.iter().position(|t| t.template_id == after.id) {
                Some(i) => (i + 1, None),
                None => (self.builtins.len(), Some(after.clone())),
            },
        };
        let mut items: Vec<TemplateSummary> =
            self.builtins[builtins_from..].iter().map(TemplateSummary::from).collect();
        // At least one of the owner's own is read, to know whether a page follows the
        // built-ins.
        let own_page = PageRequest { limit: limit.saturating_sub(items.len()).max(1), after: own_after };
        let own = self.store.templates_of(owner, &own_page).await?;
        items.extend(own.items.into_iter().map(TemplateSummary::from));
        if items.len() > limit {
            items.truncate(limit);
            let next = items.last().map(TemplateSummary::cursor);
            return Ok(Page { items, next });
        }
        Ok(Page { items, next: own.next })
    }

    /// A template the owner may see: a built-in one or one of their own.
    pub async fn get(&self, owner: Owner, template_id: &str) -> TemplateResult<Template> {
        if let Some(builtin) = self.builtins.iter().find(|t| t.template_id == template_id) {
            return Ok(builtin.clone());
        }
        let record = self.store.template(template_id).await?.ok_or(TemplateError::NotFound)?;
        if record.owner != owner {
            return Err(TemplateError::Forbidden(NOT_YOURS));
        }
        Ok(record.into())
    }

    /// Saves a template of the owner (sanitized and sectioned like a save).
    pub async fn create(
        &self,
        owner: Owner,
        name: String,
        description: Option<String>,
        html: String,
    ) -> TemplateResult<Template> {
        let doc =
            Document::new(self.documents.sectionize(html).await?).map_err(|e| DocumentError::Worker(e.to_string()))?;
        if !doc.has_content() {
            return Err(TemplateError::Empty);
        }
        let now = self.clock.now_ms();
        let record = TemplateRecord {
            template_id: new_template_id(),
            owner,
            name,
            description,
            html: doc.to_html(),
            section_count: i64::try_from(doc.len()).unwrap_or(i64::MAX),
            created_at: now,
            updated_at: now,
        };
        self.store.insert_template(&record).await?;
        Ok(record.into())
    }

    /// Deletes a template of the owner. Built-in or another owner's → `Forbidden`.
    pub async fn delete(&self, owner: Owner, template_id: &str) -> TemplateResult<()> {
        if self.builtins.iter().any(|t| t.template_id == template_id) {
            return Err(TemplateError::Forbidden(BUILTIN_READ_ONLY));
        }
        let record = self.store.template(template_id).await?.ok_or(TemplateError::NotFound)?;
        if record.owner != owner {
            return Err(TemplateError::Forbidden(NOT_YOURS));
        }
        if self.store.delete_template(owner, template_id).await? {
            Ok(())
        } else {
            // Deleted by a concurrent request in between.
            Err(TemplateError::NotFound)
        }
    }

    /// Makes the template the session's document, as a new version (source `template`); the
    /// session is created on first use.
    pub async fn apply(&self, owner: Owner, template_id: &str, session: &SessionId) -> TemplateResult<DocumentRecord> {
        let template = self.get(owner, template_id).await?;
        Ok(self.documents.commit_html(owner, session, template.html, "template", Some(template.name)).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_ids_are_unique_and_not_user_shaped() {
        let ids: std::collections::HashSet<_> = BUILTINS.iter().map(|b| b.0).collect();
        assert_eq!(ids.len(), BUILTINS.len());
        assert!(ids.iter().all(|id| id.starts_with("builtin-")));
        let mine = new_template_id();
        assert!(mine.starts_with("tpl_") && mine.len() == 36, "{mine}");
        assert_ne!(mine, new_template_id());
    }
}

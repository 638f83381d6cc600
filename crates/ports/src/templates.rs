//! Document templates of an owner. (The built-in templates that every owner sees are
//! product content and live in `core`, not in a store.)

use redline_domain::page::{Page, PageRequest};
use redline_domain::time_util::Millis;
use redline_domain::Owner;

use crate::error::StoreError;

/// A template saved by an owner: sanitized, sectioned HTML.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateRecord {
    pub template_id: String,
    pub owner: Owner,
    pub name: String,
    pub description: Option<String>,
    pub html: String,
    pub section_count: i64,
    pub created_at: Millis,
    pub updated_at: Millis,
}

/// A template as a listing shows it: without its HTML.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateSummaryRecord {
    pub template_id: String,
    pub name: String,
    pub description: Option<String>,
    pub section_count: i64,
    pub created_at: Millis,
    pub updated_at: Millis,
}

impl From<&TemplateRecord> for TemplateSummaryRecord {
    fn from(t: &TemplateRecord) -> Self {
        Self {
            template_id: t.template_id.clone(),
            name: t.name.clone(),
            description: t.description.clone(),
            section_count: t.section_count,
            created_at: t.created_at,
            updated_at: t.updated_at,
        }
    }
}

#[cfg_attr(feature = "mocks", mockall::automock)]
#[async_trait::async_trait]
pub trait TemplateStore: Send + Sync {
    /// Inserts a template. MUST return `Duplicate` for an id already used.
    async fn insert_template(&self, template: &TemplateRecord) -> Result<(), StoreError>;

    /// The template with this id, whoever owns it (the caller checks ownership, so that it
    /// can tell "not yours" from "unknown").
    async fn template(&self, template_id: &str) -> Result<Option<TemplateRecord>, StoreError>;

    /// One page of the owner's templates without their HTML, newest first (ties by template
    /// id, descending), starting after `page.after` (its number a `created_at`, its id a
    /// template id). MUST never return another owner's, and MUST read through an index that
    /// starts with the owner.
    async fn templates_of(&self, owner: Owner, page: &PageRequest) -> Result<Page<TemplateSummaryRecord>, StoreError>;

    /// Deletes the owner's template; `false` when no template of this owner has this id.
    async fn delete_template(&self, owner: Owner, template_id: &str) -> Result<bool, StoreError>;
}

//! `TemplateStore` on both backends.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use redline_domain::page::{Cursor, Page, PageRequest};
use redline_domain::Owner;
use redline_ports::templates::{TemplateRecord, TemplateStore, TemplateSummaryRecord};
use redline_ports::StoreError;

use crate::db::Db;
use crate::error::DbResult;
use crate::rows::owner;
use crate::schema::templates;

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = templates)]
struct TemplateRow {
    template_id: String,
    owner: String,
    name: String,
    description: Option<String>,
    html: String,
    section_count: i64,
    created_at: i64,
    updated_at: i64,
}

impl From<&TemplateRecord> for TemplateRow {
    fn from(t: &TemplateRecord) -> Self {
        Self {
            template_id: t.template_id.clone(),
            owner: t.owner.to_string(),
            name: t.name.clone(),
            description: t.description.clone(),
            html: t.html.clone(),
            section_count: t.section_count,
            created_at: t.created_at,
            updated_at: t.updated_at,
        }
    }
}

impl TryFrom<TemplateRow> for TemplateRecord {
    type Error = StoreError;

    fn try_from(r: TemplateRow) -> Result<Self, StoreError> {
        Ok(TemplateRecord {
            template_id: r.template_id,
            owner: owner(&r.owner)?,
            name: r.name,
            description: r.description,
            html: r.html,
            section_count: r.section_count,
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
    }
}

#[async_trait::async_trait]
impl TemplateStore for Db {
    async fn insert_template(&self, template: &TemplateRecord) -> Result<(), StoreError> {
        let row = TemplateRow::from(template);
        let r: DbResult<usize> =
            with_write!(self, |conn| Ok(diesel::insert_into(templates::table).values(&row).execute(conn).await?));
        r?;
        Ok(())
    }

    async fn template(&self, template_id: &str) -> Result<Option<TemplateRecord>, StoreError> {
        let row: DbResult<Option<TemplateRow>> = with_conn!(self, |conn| Ok(templates::table
            .find(template_id)
            .select(TemplateRow::as_select())
            .get_result(conn)
            .await
            .optional()?));
        row?.map(TemplateRecord::try_from).transpose()
    }

    async fn templates_of(&self, owner: Owner, page: &PageRequest) -> Result<Page<TemplateSummaryRecord>, StoreError> {
        let owner_s = owner.to_string();
        let fetch = i64::try_from(page.fetch()).unwrap_or(i64::MAX);
        let after = page.after.clone();
        // The summary's columns only: a listing never reads the templates' HTML.
        type Summary = (String, String, Option<String>, i64, i64, i64);
        let rows: DbResult<Vec<Summary>> = with_conn!(self, |conn| {
            let q = templates::table.filter(templates::owner.eq(&owner_s)).into_boxed();
            Ok(keyset!(q, desc(templates::created_at, templates::template_id), &after, fetch)
                .select((
                    templates::template_id,
                    templates::name,
                    templates::description,
                    templates::section_count,
                    templates::created_at,
                    templates::updated_at,
                ))
                .load(conn)
                .await?)
        });
        let rows = rows?
            .into_iter()
            .map(|(template_id, name, description, section_count, created_at, updated_at)| TemplateSummaryRecord {
                template_id,
                name,
                description,
                section_count,
                created_at,
                updated_at,
            })
            .collect();
        Ok(Page::from_rows(rows, page, |t| Cursor::new(t.created_at, t.template_id.clone())))
    }

    async fn delete_template(&self, owner: Owner, template_id: &str) -> Result<bool, StoreError> {
        let owner_s = owner.to_string();
        let n: DbResult<usize> = with_write!(self, |conn| Ok(diesel::delete(
            templates::table.find(template_id).filter(templates::owner.eq(&owner_s))
        )
        .execute(conn)
        .await?));
        Ok(n? > 0)
    }
}

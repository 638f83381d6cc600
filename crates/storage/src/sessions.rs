//! `SessionStore` and `HealthCheck` on both backends.

use std::time::Instant;

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use redline_domain::page::{Cursor, Page, PageRequest};
use redline_domain::Owner;
use redline_ports::records::SessionSummary;
use redline_ports::{HealthCheck, SessionStore, StoreError};

use crate::db::Db;
use crate::error::DbResult;
use crate::rows::SessionRow;
use crate::schema::sessions;

fn summary(r: SessionRow) -> SessionSummary {
    SessionSummary {
        session_id: r.session_id,
        title: r.title,
        created_at: r.created_at,
        updated_at: r.updated_at,
        version_id: r.version_id,
        section_count: r.section_count,
    }
}

#[async_trait::async_trait]
impl SessionStore for Db {
    async fn list_sessions(&self, owner: Owner, page: &PageRequest) -> Result<Page<SessionSummary>, StoreError> {
        let owner = owner.to_string();
        let fetch = page.fetch();
        let key = |s: &SessionSummary| Cursor::new(s.updated_at, s.session_id.clone());
        let kept = match page.after {
            None => self.session_lists.get().map(|lists| (lists, lists.generation(), Instant::now())),
            Some(_) => None,
        };
        if let Some(rows) = kept.and_then(|(lists, _, _)| lists.get(&owner, fetch)) {
            return Ok(Page::from_rows(rows, page, key));
        }
        let after = page.after.clone();
        let rows: DbResult<Vec<SessionRow>> = with_read!(self, |conn| {
            let q = sessions::table.filter(sessions::owner.eq(&owner)).into_boxed();
            Ok(keyset!(
                q,
                desc(sessions::updated_at, sessions::session_id),
                &after,
                i64::try_from(fetch).unwrap_or(i64::MAX)
            )
            .select(SessionRow::as_select())
            .load(conn)
            .await?)
        });
        let list: Vec<SessionSummary> = rows?.into_iter().map(summary).collect();
        if let Some((lists, generation, read_at)) = kept {
            lists.put(&owner, generation, fetch, &list, read_at);
        }
        Ok(Page::from_rows(list, page, key))
    }

    async fn rename_session(
        &self,
        owner: Owner,
        session: &redline_domain::SessionId,
        title: &str,
    ) -> Result<Option<SessionSummary>, StoreError> {
        let owner = owner.to_string();
        let sid = session.as_str();
        let r: DbResult<Option<SessionRow>> =
            with_write!(self, |conn| Ok(diesel::update(sessions::table.find((&owner, sid)))
                .set(sessions::title.eq(title))
                .returning(SessionRow::as_returning())
                .get_result(conn)
                .await
                .optional()?));
        if matches!(r, Ok(Some(_))) {
            self.sessions_changed(&owner).await;
        }
        Ok(r?.map(summary))
    }

    async fn ensure_session(
        &self,
        owner: Owner,
        session: &redline_domain::SessionId,
        now: redline_domain::time_util::Millis,
    ) -> Result<(), StoreError> {
        let owner = owner.to_string();
        let sid = session.as_str();
        let r: DbResult<usize> = with_write!(self, |conn| Ok(diesel::insert_into(sessions::table)
            .values((
                sessions::owner.eq(&owner),
                sessions::session_id.eq(sid),
                sessions::created_at.eq(now),
                sessions::updated_at.eq(now),
                sessions::section_count.eq(0i64),
            ))
            .on_conflict_do_nothing()
            .execute(conn)
            .await?));
        // A session that was there already changed nothing.
        if !matches!(r, Ok(0)) {
            self.sessions_changed(&owner).await;
        }
        r?;
        Ok(())
    }
}

#[async_trait::async_trait]
impl HealthCheck for Db {
    async fn ping(&self) -> Result<(), StoreError> {
        let r: DbResult<usize> = with_conn!(self, |conn| Ok(diesel::sql_query("SELECT 1").execute(conn).await?));
        r?;
        Ok(())
    }
}

//! `DocumentStore` on both backends.

use std::sync::Arc;

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use redline_domain::page::{Cursor, Page, PageRequest};
use redline_domain::{Owner, SessionId};
use redline_ports::documents::{CommitOutcome, DocumentRecord, NewVersion, VersionRecord};
use redline_ports::{DocumentStore, StoreError};

use crate::db::{BackendOps, Db, PgConn, SqliteConn};
use crate::error::DbResult;
use crate::schema::{document_versions, jobs, sessions};

type DocRow = (String, Option<String>, i64, Option<String>, i64, i64);

fn record(
    owner: Owner,
    session: &SessionId,
    (html, version_id, section_count, title, created_at, updated_at): DocRow,
) -> DocumentRecord {
    DocumentRecord {
        owner,
        session_id: session.clone(),
        html,
        version_id,
        section_count,
        title,
        created_at,
        updated_at,
    }
}

type VersionRow = (String, String, i64, String, i64);

fn version((version_id, html, section_count, source, created_at): VersionRow) -> VersionRecord {
    VersionRecord { version_id, html, section_count, source, created_at }
}

#[async_trait::async_trait]
impl DocumentStore for Db {
    async fn document(&self, owner: Owner, session: &SessionId) -> Result<Option<DocumentRecord>, StoreError> {
        let owner_s = owner.to_string();
        let sid = session.as_str();
        let row: DbResult<Option<DocRow>> = with_conn!(self, |conn| Ok(sessions::table
            .find((&owner_s, sid))
            .select((
                sessions::html,
                sessions::version_id,
                sessions::section_count,
                sessions::title,
                sessions::created_at,
                sessions::updated_at
            ))
            .get_result(conn)
            .await
            .optional()?));
        Ok(row?.map(|r| record(owner, session, r)))
    }

    async fn commit_version(
        &self,
        owner: Owner,
        session: &SessionId,
        expected_version: Option<Option<String>>,
        new: &NewVersion,
    ) -> Result<CommitOutcome, StoreError> {
        commit(self, None, owner, session, expected_version, new, new.html.clone())
            .await?
            .ok_or_else(|| StoreError::Other("a commit for no job was refused for its job".to_owned()))
    }

    async fn commit_new_version(
        &self,
        owner: Owner,
        session: &SessionId,
        expected_version: Option<Option<String>>,
        mut new: NewVersion,
    ) -> Result<CommitOutcome, StoreError> {
        let html = std::mem::take(&mut new.html);
        commit(self, None, owner, session, expected_version, &new, html)
            .await?
            .ok_or_else(|| StoreError::Other("a commit for no job was refused for its job".to_owned()))
    }

    async fn commit_job_version(
        &self,
        job_id: &str,
        owner: Owner,
        session: &SessionId,
        expected_version: Option<Option<String>>,
        new: &NewVersion,
    ) -> Result<Option<CommitOutcome>, StoreError> {
        commit(self, Some(job_id), owner, session, expected_version, new, new.html.clone()).await
    }

    async fn versions(
        &self,
        owner: Owner,
        session: &SessionId,
        page: &PageRequest,
    ) -> Result<Page<VersionRecord>, StoreError> {
        let owner_s = owner.to_string();
        let sid = session.as_str();
        let fetch = i64::try_from(page.fetch()).unwrap_or(i64::MAX);
        let after = page.after.clone();
        let rows: DbResult<Vec<(String, i64, String, i64)>> = with_conn!(self, |conn| {
            let mut q = document_versions::table
                .filter(document_versions::owner.eq(&owner_s))
                .filter(document_versions::session_id.eq(sid))
                .into_boxed();
            if let Some(after) = &after {
                // The first condition bounds the index range; the second settles ties.
                q = q.filter(document_versions::created_at.le(after.number)).filter(
                    document_versions::created_at.lt(after.number).or(document_versions::version_id.lt(&after.id)),
                );
            }
            Ok(q.order((document_versions::created_at.desc(), document_versions::version_id.desc()))
                .limit(fetch)
                .select((
                    document_versions::version_id,
                    document_versions::section_count,
                    document_versions::source,
                    document_versions::created_at,
                ))
                .load(conn)
                .await?)
        });
        let rows = rows?
            .into_iter()
            .map(|(version_id, section_count, source, created_at)| VersionRecord {
                version_id,
                html: String::new(),
                section_count,
                source,
                created_at,
            })
            .collect();
        Ok(Page::from_rows(rows, page, |v| Cursor::new(v.created_at, v.version_id.clone())))
    }

    async fn version(
        &self,
        owner: Owner,
        session: &SessionId,
        version_id: &str,
    ) -> Result<Option<VersionRecord>, StoreError> {
        let owner_s = owner.to_string();
        let sid = session.as_str();
        let row: DbResult<Option<VersionRow>> = with_conn!(self, |conn| Ok(document_versions::table
            .find(version_id)
            .filter(document_versions::owner.eq(&owner_s))
            .filter(document_versions::session_id.eq(sid))
            .select((
                document_versions::version_id,
                document_versions::html,
                document_versions::section_count,
                document_versions::source,
                document_versions::created_at,
            ))
            .get_result(conn)
            .await
            .optional()?));
        Ok(row?.map(version))
    }

    async fn delete_session(&self, owner: Owner, session: &SessionId) -> Result<bool, StoreError> {
        let owner_s = owner.to_string();
        let sid = session.as_str();
        let n: DbResult<usize> = with_tx!(self, |conn| {
            diesel::delete(
                document_versions::table
                    .filter(document_versions::owner.eq(&owner_s))
                    .filter(document_versions::session_id.eq(sid)),
            )
            .execute(conn)
            .await?;
            Ok(diesel::delete(sessions::table.find((&owner_s, sid))).execute(conn).await?)
        });
        if !matches!(n, Ok(0)) {
            self.sessions_changed(&owner_s).await;
        }
        Ok(n? > 0)
    }
}

/// Why a commit wrote nothing.
enum Refused {
    /// The expected version is not the current one (it is this).
    Stale(Option<String>),
    /// The job it was for is no longer in progress.
    JobNotRunning,
}

/// HTML from this size on is written by [`WriteHtml::write_html`] on SQLite.
const LARGE_HTML: usize = 1 << 20;

/// Writes a large version's HTML into the rows `commit` made for it (the session's and the
/// version's), without copying it on the way: a 50 MB upload must not cost another 50 MB
/// (or two) at commit. Smaller HTML, and all of it on PostgreSQL (whose driver serializes
/// every bound value into its message buffer whichever way it is bound), goes into the
/// statements that make the rows, with no extra statement.
trait WriteHtml {
    /// Whether HTML of `len` bytes is left out of the rows' statements and written by
    /// `write_html` after them.
    fn defers_html(&self, len: usize) -> bool;
    async fn write_html(&mut self, owner: &str, sid: &str, version_id: &str, html: Arc<String>) -> DbResult<()>;
}

impl WriteHtml for SqliteConn {
    fn defers_html(&self, len: usize) -> bool {
        len >= LARGE_HTML
    }

    /// On the sync connection itself: diesel-async's wrapper would copy every bound value
    /// (to move the statement to its blocking thread), while diesel binds a `&str` to SQLite
    /// as is (`SQLITE_STATIC`). Runs inside the wrapper's transaction (same connection).
    async fn write_html(&mut self, owner: &str, sid: &str, version_id: &str, html: Arc<String>) -> DbResult<()> {
        let (owner, sid, version_id) = (owner.to_owned(), sid.to_owned(), version_id.to_owned());
        self.spawn_blocking(move |conn| {
            diesel::RunQueryDsl::execute(
                diesel::update(sessions::table.find((owner.as_str(), sid.as_str())))
                    .set(sessions::html.eq(html.as_str())),
                conn,
            )?;
            diesel::RunQueryDsl::execute(
                diesel::update(document_versions::table.find(version_id.as_str()))
                    .set(document_versions::html.eq(html.as_str())),
                conn,
            )?;
            Ok(())
        })
        .await?;
        Ok(())
    }
}

impl WriteHtml for PgConn {
    fn defers_html(&self, _len: usize) -> bool {
        false
    }

    async fn write_html(&mut self, owner: &str, sid: &str, version_id: &str, html: Arc<String>) -> DbResult<()> {
        diesel::update(sessions::table.find((owner, sid))).set(sessions::html.eq(html.as_str())).execute(self).await?;
        diesel::update(document_versions::table.find(version_id))
            .set(document_versions::html.eq(html.as_str()))
            .execute(self)
            .await?;
        Ok(())
    }
}

/// A committed row without its HTML: version id, section count, title, created and updated at.
type CommittedRow = (Option<String>, i64, Option<String>, i64, i64);

/// `commit_version`, and with `job` the guard of `commit_job_version`. `html` is the
/// version's HTML (`new.html` is not read); the committed record holds it.
async fn commit(
    db: &Db,
    job: Option<&str>,
    owner: Owner,
    session: &SessionId,
    expected_version: Option<Option<String>>,
    new: &NewVersion,
    html: String,
) -> Result<Option<CommitOutcome>, StoreError> {
    let owner_s = owner.to_string();
    let sid = session.as_str();
    let lock_key = format!("{owner_s}/{sid}");
    let html = Arc::new(html);
    let r: DbResult<Result<CommittedRow, Refused>> = with_tx!(db, |conn| {
        conn.lock_owner(&lock_key).await?;
        // Large HTML on SQLite: the rows are written without it, then it is written into
        // them (`WriteHtml`).
        let deferred = conn.defers_html(html.len());
        let inline: &str = if deferred { "" } else { html.as_str() };
        let existing: Option<(Option<String>, Option<String>, i64, i64)> = sessions::table
            .find((&owner_s, sid))
            .select((sessions::version_id, sessions::title, sessions::created_at, sessions::updated_at))
            .get_result(conn)
            .await
            .optional()?;
        if let Some(expected) = &expected_version {
            let current = existing.as_ref().and_then(|(v, _, _, _)| v.clone());
            if &current != expected {
                return Ok(Err(Refused::Stale(current)));
            }
        }
        if let Some(job_id) = job {
            let running = jobs::table.find(job_id).filter(jobs::status.eq("in_progress"));
            let n = diesel::update(running).set(jobs::committed_version.eq(&new.version_id)).execute(conn).await?;
            if n == 0 {
                return Ok(Err(Refused::JobNotRunning));
            }
        }
        // The commit's time: after the session's last change, even within one millisecond
        // or with a replica's clock behind, so that versions listed newest first are in the
        // order they were committed (the lock above orders the commits).
        let at = existing.as_ref().map_or(new.now, |(_, _, _, last)| new.now.max(last.saturating_add(1)));
        // What every commit sets on the session's row, new or not.
        let current = (
            sessions::updated_at.eq(at),
            sessions::version_id.eq(&new.version_id),
            sessions::section_count.eq(new.section_count),
            sessions::html.eq(inline),
        );
        let (title, created_at) = match &existing {
            None => {
                diesel::insert_into(sessions::table)
                    .values((
                        sessions::owner.eq(&owner_s),
                        sessions::session_id.eq(sid),
                        sessions::title.eq(&new.title),
                        sessions::created_at.eq(new.now),
                        current,
                    ))
                    .execute(conn)
                    .await?;
                (new.title.clone(), new.now)
            }
            Some((_, title, created_at, _)) => {
                let title = title.clone().or_else(|| new.title.clone());
                diesel::update(sessions::table.find((&owner_s, sid)))
                    .set((sessions::title.eq(&title), current))
                    .execute(conn)
                    .await?;
                (title, *created_at)
            }
        };
        diesel::insert_into(document_versions::table)
            .values((
                document_versions::version_id.eq(&new.version_id),
                document_versions::owner.eq(&owner_s),
                document_versions::session_id.eq(sid),
                document_versions::html.eq(inline),
                document_versions::section_count.eq(new.section_count),
                document_versions::source.eq(&new.source),
                document_versions::created_at.eq(at),
            ))
            .execute(conn)
            .await?;
        if deferred {
            conn.write_html(&owner_s, sid, &new.version_id, html.clone()).await?;
        }
        Ok(Ok((Some(new.version_id.clone()), new.section_count, title, created_at, at)))
    });
    db.sessions_changed(&owner_s).await;
    Ok(match r? {
        Ok((version_id, section_count, title, created_at, updated_at)) => {
            // The transaction and its clones of `html` are gone.
            let html = Arc::try_unwrap(html).unwrap_or_else(|shared| (*shared).clone());
            Some(CommitOutcome::Committed(record(
                owner,
                session,
                (html, version_id, section_count, title, created_at, updated_at),
            )))
        }
        Err(Refused::Stale(current_version)) => Some(CommitOutcome::Stale { current_version }),
        Err(Refused::JobNotRunning) => None,
    })
}

//! `AttachmentStore`: attachment rows with their jobs, and an attachment's passages replaced
//! with its index entries in one transaction.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use redline_domain::job::JobStatus;
use redline_domain::page::{Cursor, Page, PageRequest};
use redline_domain::time_util::Millis;
use redline_domain::{Owner, SessionId};
use redline_ports::attachments::{AttachmentRecord, AttachmentState, ExtractedText, Replaced};
use redline_ports::jobs::{JobRecord, JobUpdate};
use redline_ports::{AttachmentStore, StoreError};

use super::index::{insert_entries, PassageWriter};
use super::rows::{AttachmentRow, JobInsert};
use super::{corrupt, scope_token};
use crate::db::Db;
use crate::error::DbResult;
use crate::rows::owner;
use crate::schema::{attachment_passages, attachment_reindex, attachment_totals, attachments, jobs, sessions};

#[async_trait::async_trait]
impl AttachmentStore for Db {
    async fn insert_attachment(
        &self,
        attachment: &AttachmentRecord,
        job: Option<&JobRecord>,
    ) -> Result<(), StoreError> {
        let row = AttachmentRow::from(attachment);
        let job = job.map(JobInsert::from);
        let r: DbResult<()> = with_tx!(self, |conn| {
            diesel::insert_into(attachments::table).values(&row).execute(conn).await?;
            if let Some(job) = &job {
                diesel::insert_into(jobs::table).values(job).execute(conn).await?;
            }
            Ok(())
        });
        Ok(r?)
    }

    async fn attachment(&self, attachment_id: &str) -> Result<Option<AttachmentRecord>, StoreError> {
        let row: DbResult<Option<AttachmentRow>> = with_conn!(self, |conn| Ok(attachments::table
            .find(attachment_id)
            .select(AttachmentRow::as_select())
            .first(conn)
            .await
            .optional()?));
        row?.map(AttachmentRecord::try_from).transpose()
    }

    async fn attachment_of_job(&self, job_id: &str) -> Result<Option<AttachmentRecord>, StoreError> {
        let row: DbResult<Option<AttachmentRow>> = with_conn!(self, |conn| Ok(attachments::table
            .filter(attachments::job_id.eq(job_id))
            .select(AttachmentRow::as_select())
            .first(conn)
            .await
            .optional()?));
        row?.map(AttachmentRecord::try_from).transpose()
    }

    async fn list_attachments(
        &self,
        owner: Owner,
        session: &SessionId,
        now: Millis,
        page: &PageRequest,
    ) -> Result<Option<Page<AttachmentRecord>>, StoreError> {
        let owner_s = owner.to_string();
        let sid = session.as_str();
        let fetch = i64::try_from(page.fetch()).unwrap_or(i64::MAX);
        let after = page.after.clone();
        let rows: DbResult<Option<Vec<AttachmentRow>>> = with_conn!(self, |conn| {
            let exists: i64 = sessions::table.find((&owner_s, sid)).count().get_result(conn).await?;
            if exists == 0 {
                return Ok(None);
            }
            let expired = attachments::state
                .eq(AttachmentState::AwaitingUpload.as_str())
                .and(attachments::upload_expires_at.lt(now));
            let q = attachments::table
                .filter(attachments::owner.eq(&owner_s))
                .filter(attachments::session_id.eq(sid))
                .filter(diesel::dsl::not(expired))
                .into_boxed();
            Ok(Some(
                keyset!(q, asc(attachments::created_at, attachments::attachment_id), &after, fetch)
                    .select(AttachmentRow::as_select())
                    .load(conn)
                    .await?,
            ))
        });
        let Some(rows) = rows? else { return Ok(None) };
        let rows = rows.into_iter().map(AttachmentRecord::try_from).collect::<Result<Vec<_>, _>>()?;
        Ok(Some(Page::from_rows(rows, page, |a| Cursor::new(a.created_at, a.attachment_id.clone()))))
    }

    async fn start_processing(
        &self,
        attachment_id: &str,
        size_bytes: i64,
        job: &JobRecord,
        now: Millis,
    ) -> Result<bool, StoreError> {
        let job_row = JobInsert::from(job);
        let r: DbResult<bool> = with_tx!(self, |conn| {
            let awaiting = attachments::table
                .find(attachment_id)
                .filter(attachments::state.eq(AttachmentState::AwaitingUpload.as_str()))
                .filter(attachments::upload_expires_at.ge(now));
            let n = diesel::update(awaiting)
                .set((
                    attachments::state.eq(AttachmentState::Processing.as_str()),
                    attachments::size_bytes.eq(size_bytes),
                    attachments::job_id.eq(Some(&job_row.job_id)),
                    attachments::updated_at.eq(now),
                ))
                .execute(conn)
                .await?;
            if n == 0 {
                return Ok(false);
            }
            diesel::insert_into(jobs::table).values(&job_row).execute(conn).await?;
            Ok(true)
        });
        Ok(r?)
    }

    async fn replace_passages(
        &self,
        attachment_id: &str,
        text: &ExtractedText,
        job: Option<(&str, &JobUpdate)>,
        now: Millis,
    ) -> Result<Replaced, StoreError> {
        let index = insert_entries(self, &text.passages).await?;
        let job = job.map(|(id, update)| (id, crate::jobs::JobChanges::new(update, now)));
        let r: DbResult<Replaced> = with_tx!(self, |conn| {
            let Some((owner_s, sid)) = conn.lock_attachment(attachment_id).await? else {
                return Ok(Replaced::Gone);
            };
            let owner = owner(&owner_s)?;
            let session = SessionId::parse(&sid).map_err(|_| corrupt("session id", &sid))?;
            let scope = scope_token(owner, &session);
            // The job first: a job no longer in progress is no longer this caller's, and gets
            // nothing written. Its completion commits with its passages: one commit, not two
            // (on PostgreSQL one wait for the log's flush), and never a ready attachment whose
            // job is still running. The update takes the job's row lock (PostgreSQL) and
            // checks the status again under it, so a concurrent cancel or requeue wins or waits.
            if let Some((job_id, changes)) = &job {
                let target = jobs::table.find(*job_id).filter(jobs::status.eq(JobStatus::InProgress.as_str()));
                if diesel::update(target).set(changes).execute(conn).await? == 0 {
                    return Ok(Replaced::NotRunning);
                }
                // Its webhooks (`attachment.processed`), in this transaction like every job's.
                let row: Option<crate::jobs::JobRow> = jobs::table
                    .find(*job_id)
                    .select(crate::jobs::JobRow::as_select())
                    .get_result(conn)
                    .await
                    .optional()?;
                if let Some(message) = row.as_ref().and_then(crate::jobs::webhook_message) {
                    queue_webhooks!(conn, &message, now);
                }
            }
            diesel::delete(attachment_passages::table.filter(attachment_passages::attachment_id.eq(attachment_id)))
                .execute(conn)
                .await?;
            diesel::delete(attachment_reindex::table.find(attachment_id)).execute(conn).await?;
            conn.insert_passages(attachment_id, &scope, &text.passages, &index).await?;
            diesel::update(attachments::table.find(attachment_id))
                .set((
                    attachments::state.eq(AttachmentState::Ready.as_str()),
                    attachments::error.eq(None::<String>),
                    attachments::preview.eq(&text.preview),
                    attachments::text_chars.eq(text.text_chars),
                    attachments::passage_count.eq(i64::try_from(text.passages.len()).unwrap_or(i64::MAX)),
                    attachments::updated_at.eq(now),
                ))
                .execute(conn)
                .await?;
            Ok(Replaced::Ready)
        });
        Ok(r?)
    }

    async fn mark_failed(&self, attachment_id: &str, error: &str, now: Millis) -> Result<bool, StoreError> {
        let r: DbResult<bool> = with_tx!(self, |conn| {
            let n = diesel::update(attachments::table.find(attachment_id))
                .set((
                    attachments::state.eq(AttachmentState::Failed.as_str()),
                    attachments::error.eq(Some(error)),
                    attachments::passage_count.eq(0i64),
                    attachments::updated_at.eq(now),
                ))
                .execute(conn)
                .await?;
            diesel::delete(attachment_reindex::table.find(attachment_id)).execute(conn).await?;
            diesel::delete(attachment_passages::table.filter(attachment_passages::attachment_id.eq(attachment_id)))
                .execute(conn)
                .await?;
            Ok(n > 0)
        });
        Ok(r?)
    }

    async fn delete_attachment(&self, attachment_id: &str) -> Result<bool, StoreError> {
        // The passages go by ON DELETE CASCADE (SQLite, whose trigger then removes the FTS5
        // entries) or by the attachments' delete trigger (PostgreSQL).
        let n: DbResult<usize> =
            with_write!(self, |conn| Ok(diesel::delete(attachments::table.find(attachment_id)).execute(conn).await?));
        Ok(n? > 0)
    }

    async fn session_attachment_ids(&self, owner: Owner, session: &SessionId) -> Result<Vec<String>, StoreError> {
        let owner_s = owner.to_string();
        let sid = session.as_str();
        let ids: DbResult<Vec<String>> = with_conn!(self, |conn| Ok(attachments::table
            .filter(attachments::owner.eq(&owner_s))
            .filter(attachments::session_id.eq(sid))
            .order(attachments::attachment_id.asc())
            .select(attachments::attachment_id)
            .load(conn)
            .await?));
        Ok(ids?)
    }

    async fn attachment_bytes(&self, owner: Owner) -> Result<u64, StoreError> {
        let owner_s = owner.to_string();
        // One row, kept by triggers (migration 000023): summing the owner's attachments here
        // made each upload slower than the last.
        let bytes: DbResult<Option<i64>> = with_conn!(self, |conn| Ok(attachment_totals::table
            .find(&owner_s)
            .select(attachment_totals::bytes)
            .get_result(conn)
            .await
            .optional()?));
        Ok(bytes?.map_or(0, |n| u64::try_from(n).unwrap_or(0)))
    }

    async fn delete_expired_uploads(&self, owner: Owner, now: Millis) -> Result<u64, StoreError> {
        let owner_s = owner.to_string();
        let n: DbResult<usize> = with_write!(self, |conn| Ok(diesel::delete(
            attachments::table
                .filter(attachments::owner.eq(&owner_s))
                .filter(attachments::state.eq(AttachmentState::AwaitingUpload.as_str()))
                .filter(attachments::upload_expires_at.lt(now)),
        )
        .execute(conn)
        .await?));
        Ok(u64::try_from(n?).unwrap_or(u64::MAX))
    }

    async fn session_exists(&self, owner: Owner, session: &SessionId) -> Result<bool, StoreError> {
        let owner_s = owner.to_string();
        let sid = session.as_str();
        let n: DbResult<i64> =
            with_conn!(self, |conn| Ok(sessions::table.find((&owner_s, sid)).count().get_result(conn).await?));
        Ok(n? > 0)
    }
}

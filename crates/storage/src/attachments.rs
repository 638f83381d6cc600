//! `AttachmentStore` and `AttachmentSearch` on both backends: attachment rows, their passages
//! and the full-text index over the passages, in the same database as everything else.
//!
//! - SQLite: an FTS5 table over `attachment_passages` (external content, kept in step by
//!   triggers, which also fire for `ON DELETE CASCADE`), ranked with BM25.
//! - PostgreSQL: a generated `tsvector` column with a GIN index, ranked with `ts_rank`.
//!
//! A query never reaches either full-text language as typed: `redline_domain::attachment::
//! query_terms` reduces it to plain words first, each quoted (FTS5) or handed to
//! `websearch_to_tsquery` (which never raises a syntax error), and any of the words may match
//! (a word with inner joiners, `0.3` or `e-mail`, as a phrase).
//! Every passage carries a `scope` token naming its (owner, session); the search is confined
//! to it inside the index itself.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Double, Text};
use diesel_async::RunQueryDsl;
use redline_domain::attachment::query_terms;
use redline_domain::time_util::Millis;
use redline_domain::{Owner, SessionId};
use redline_ports::attachments::{
    AttachmentRecord, AttachmentSource, AttachmentState, AttachmentSummary, ExtractedText, Passage,
};
use redline_ports::jobs::JobRecord;
use redline_ports::{AttachmentSearch, AttachmentStore, StoreError};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::db::{Db, PgConn, SqliteConn};
use crate::error::DbResult;
use crate::rows::owner;
use crate::schema::{attachment_passages, attachments, jobs, sessions};

/// Most passages one search answers.
const MAX_LIMIT: i64 = 100;

fn corrupt(what: &str, value: &str) -> StoreError {
    StoreError::Other(format!("corrupt {what} in database: {value:?}"))
}

/// The token that names (owner, session) in the index: `z`, then 32 hex characters of a
/// SHA-256, then `9`. Letters and digits only, so every tokenizer keeps it whole, and ending in a digit,
/// so that no stemmer touches it.
pub(crate) fn scope_token(owner: Owner, session: &SessionId) -> String {
    let mut hash = Sha256::new();
    hash.update(owner.to_string().as_bytes());
    hash.update([0u8]);
    hash.update(session.as_str().as_bytes());
    let digest = hash.finalize();
    format!("z{}9", hex::encode(&digest[..16]))
}

#[derive(Queryable, Selectable, Insertable, Debug)]
#[diesel(table_name = attachments)]
struct AttachmentRow {
    attachment_id: String,
    owner: String,
    session_id: String,
    filename: String,
    content_type: String,
    size_bytes: i64,
    state: String,
    source: String,
    job_id: Option<String>,
    error: Option<String>,
    preview: String,
    text_chars: i64,
    passage_count: i64,
    created_at: i64,
    updated_at: i64,
    upload_expires_at: Option<i64>,
}

impl From<&AttachmentRecord> for AttachmentRow {
    fn from(a: &AttachmentRecord) -> Self {
        Self {
            attachment_id: a.attachment_id.clone(),
            owner: a.owner.to_string(),
            session_id: a.session_id.as_str().to_owned(),
            filename: a.filename.clone(),
            content_type: a.content_type.clone(),
            size_bytes: a.size_bytes,
            state: a.state.as_str().to_owned(),
            source: a.source.as_str().to_owned(),
            job_id: a.job_id.clone(),
            error: a.error.clone(),
            preview: a.preview.clone(),
            text_chars: a.text_chars,
            passage_count: a.passage_count,
            created_at: a.created_at,
            updated_at: a.updated_at,
            upload_expires_at: a.upload_expires_at,
        }
    }
}

impl TryFrom<AttachmentRow> for AttachmentRecord {
    type Error = StoreError;

    fn try_from(r: AttachmentRow) -> Result<Self, StoreError> {
        Ok(AttachmentRecord {
            owner: owner(&r.owner)?,
            session_id: SessionId::parse(&r.session_id).map_err(|_| corrupt("session id", &r.session_id))?,
            state: AttachmentState::parse(&r.state).ok_or_else(|| corrupt("attachment state", &r.state))?,
            source: AttachmentSource::parse(&r.source).ok_or_else(|| corrupt("attachment source", &r.source))?,
            attachment_id: r.attachment_id,
            filename: r.filename,
            content_type: r.content_type,
            size_bytes: r.size_bytes,
            job_id: r.job_id,
            error: r.error,
            preview: r.preview,
            text_chars: r.text_chars,
            passage_count: r.passage_count,
            created_at: r.created_at,
            updated_at: r.updated_at,
            upload_expires_at: r.upload_expires_at,
        })
    }
}

/// A job row to insert in the same transaction as its attachment.
#[derive(Insertable)]
#[diesel(table_name = jobs)]
struct JobInsert {
    job_id: String,
    owner: String,
    session_id: String,
    job_type: String,
    status: String,
    progress: i32,
    attempts: i32,
    request: String,
    result: Option<String>,
    error: Option<String>,
    metadata: String,
    state: String,
    created_at: i64,
    updated_at: i64,
    finished_at: Option<i64>,
    lease_until: Option<i64>,
}

impl From<&JobRecord> for JobInsert {
    fn from(j: &JobRecord) -> Self {
        Self {
            job_id: j.job_id.clone(),
            owner: j.owner.to_string(),
            session_id: j.session_id.as_str().to_owned(),
            job_type: j.job_type.as_str().to_owned(),
            status: j.status.as_str().to_owned(),
            progress: j.progress,
            attempts: j.attempts,
            request: j.request.to_string(),
            result: j.result.as_ref().map(Value::to_string),
            error: j.error.clone(),
            metadata: j.metadata.to_string(),
            state: j.state.to_string(),
            created_at: j.created_at,
            updated_at: j.updated_at,
            finished_at: j.finished_at,
            lease_until: j.lease_until,
        }
    }
}

/// Writes an attachment's passages, in each backend's way.
pub(crate) trait PassageWriter {
    /// Inserts `texts` as passages 0, 1, … of the attachment.
    async fn insert_passages(&mut self, attachment_id: &str, scope: &str, texts: &[String]) -> DbResult<()>;
}

/// Passages per statement on PostgreSQL (a few MB of text: bounded statements).
const PG_INSERT_BATCH: usize = 2_000;

impl PassageWriter for SqliteConn {
    async fn insert_passages(&mut self, attachment_id: &str, scope: &str, texts: &[String]) -> DbResult<()> {
        // One statement for all the passages: FTS5 writes its pending terms to disk (and
        // merges segments) at the end of every statement, so batching by statement would
        // cost one flush per batch. The texts travel as one JSON array.
        let array = serde_json::to_string(texts).map_err(|e| StoreError::Other(e.to_string()))?;
        diesel::sql_query(
            "INSERT INTO attachment_passages (attachment_id, scope, chunk_index, text) \
             SELECT ?, ?, CAST(key AS INTEGER), value FROM json_each(?)",
        )
        .bind::<Text, _>(attachment_id)
        .bind::<Text, _>(scope)
        .bind::<Text, _>(array)
        .execute(self)
        .await?;
        Ok(())
    }
}

impl PassageWriter for PgConn {
    async fn insert_passages(&mut self, attachment_id: &str, scope: &str, texts: &[String]) -> DbResult<()> {
        for (n, batch) in texts.chunks(PG_INSERT_BATCH).enumerate() {
            let offset = i64::try_from(n * PG_INSERT_BATCH).unwrap_or(i64::MAX);
            diesel::sql_query(
                "INSERT INTO attachment_passages (attachment_id, scope, chunk_index, text) \
                 SELECT $1, $2, $3 + ord - 1, t FROM unnest($4::text[]) WITH ORDINALITY AS u(t, ord)",
            )
            .bind::<Text, _>(attachment_id)
            .bind::<Text, _>(scope)
            .bind::<BigInt, _>(offset)
            .bind::<diesel::sql_types::Array<Text>, _>(batch)
            .execute(self)
            .await?;
        }
        Ok(())
    }
}

/// One search hit as the SQL answers it.
#[derive(QueryableByName, Debug)]
pub(crate) struct HitRow {
    #[diesel(sql_type = Text)]
    attachment_id: String,
    #[diesel(sql_type = Text)]
    filename: String,
    #[diesel(sql_type = BigInt)]
    chunk_index: i64,
    #[diesel(sql_type = Text)]
    text: String,
    #[diesel(sql_type = Double)]
    score: f64,
}

/// The full-text search, written in each backend's dialect.
pub(crate) trait FullText {
    /// Passages of `scope` matching any of `terms` (plain words, never empty), best first.
    async fn search_scope(&mut self, scope: &str, terms: &[String], limit: i64) -> DbResult<Vec<HitRow>>;
}

/// An FTS5 string: `"` + the text with `"` doubled + `"`; inside it nothing is syntax.
fn fts5_string(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// The FTS5 expression: the scope token in its column, and any of the words in the text.
fn fts5_query(scope: &str, terms: &[String]) -> String {
    let words: Vec<String> = terms.iter().map(|t| fts5_string(t)).collect();
    format!("scope : {} AND text : ({})", fts5_string(scope), words.join(" OR "))
}

impl FullText for SqliteConn {
    async fn search_scope(&mut self, scope: &str, terms: &[String], limit: i64) -> DbResult<Vec<HitRow>> {
        // The hits are ranked inside FTS5 (`ORDER BY rank LIMIT` is its fast path), then joined.
        Ok(diesel::sql_query(
            "WITH hits AS (\
                 SELECT rowid AS passage_id, rank FROM attachment_fts \
                 WHERE attachment_fts MATCH ? ORDER BY rank LIMIT ?\
             ) \
             SELECT p.attachment_id, a.filename, p.chunk_index, p.text, -hits.rank AS score \
             FROM hits \
             JOIN attachment_passages p ON p.passage_id = hits.passage_id \
             JOIN attachments a ON a.attachment_id = p.attachment_id \
             ORDER BY hits.rank, p.passage_id",
        )
        .bind::<Text, _>(fts5_query(scope, terms))
        .bind::<BigInt, _>(limit)
        .load(self)
        .await?)
    }
}

impl FullText for PgConn {
    async fn search_scope(&mut self, scope: &str, terms: &[String], limit: i64) -> DbResult<Vec<HitRow>> {
        // `websearch_to_tsquery` takes any text without a syntax error; `or` between the
        // words makes any of them match. The words hold no quotes and never start with `-`.
        Ok(diesel::sql_query(
            "SELECT p.attachment_id, a.filename, p.chunk_index, p.text, \
                    ts_rank(p.tsv, q)::float8 AS score \
             FROM attachment_passages p \
             JOIN attachments a ON a.attachment_id = p.attachment_id \
             CROSS JOIN websearch_to_tsquery('english'::regconfig, $2) AS q \
             WHERE p.scope = $1 AND p.tsv @@ q \
             ORDER BY score DESC, p.passage_id \
             LIMIT $3",
        )
        .bind::<Text, _>(scope)
        .bind::<Text, _>(terms.join(" or "))
        .bind::<BigInt, _>(limit)
        .load(self)
        .await?)
    }
}

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
    ) -> Result<Option<Vec<AttachmentRecord>>, StoreError> {
        let owner_s = owner.to_string();
        let sid = session.as_str();
        let rows: DbResult<Option<Vec<AttachmentRow>>> = with_conn!(self, |conn| {
            let exists: i64 = sessions::table.find((&owner_s, sid)).count().get_result(conn).await?;
            if exists == 0 {
                return Ok(None);
            }
            let expired = attachments::state
                .eq(AttachmentState::AwaitingUpload.as_str())
                .and(attachments::upload_expires_at.lt(now));
            Ok(Some(
                attachments::table
                    .filter(attachments::owner.eq(&owner_s))
                    .filter(attachments::session_id.eq(sid))
                    .filter(diesel::dsl::not(expired))
                    .order((attachments::created_at.asc(), attachments::attachment_id.asc()))
                    .select(AttachmentRow::as_select())
                    .load(conn)
                    .await?,
            ))
        });
        rows?.map(|rows| rows.into_iter().map(AttachmentRecord::try_from).collect()).transpose()
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
        now: Millis,
    ) -> Result<bool, StoreError> {
        let r: DbResult<bool> = with_tx!(self, |conn| {
            let found: Option<(String, String)> = attachments::table
                .find(attachment_id)
                .select((attachments::owner, attachments::session_id))
                .first(conn)
                .await
                .optional()?;
            let Some((owner_s, sid)) = found else {
                return Ok(false);
            };
            let owner = owner(&owner_s)?;
            let session = SessionId::parse(&sid).map_err(|_| corrupt("session id", &sid))?;
            let scope = scope_token(owner, &session);
            diesel::delete(attachment_passages::table.filter(attachment_passages::attachment_id.eq(attachment_id)))
                .execute(conn)
                .await?;
            conn.insert_passages(attachment_id, &scope, &text.passages).await?;
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
            Ok(true)
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
            diesel::delete(attachment_passages::table.filter(attachment_passages::attachment_id.eq(attachment_id)))
                .execute(conn)
                .await?;
            Ok(n > 0)
        });
        Ok(r?)
    }

    async fn delete_attachment(&self, attachment_id: &str) -> Result<bool, StoreError> {
        // The passages (and, through their triggers, the FTS5 entries) go by ON DELETE CASCADE.
        let n: DbResult<usize> =
            with_conn!(self, |conn| Ok(diesel::delete(attachments::table.find(attachment_id)).execute(conn).await?));
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

    async fn delete_expired_uploads(&self, owner: Owner, now: Millis) -> Result<u64, StoreError> {
        let owner_s = owner.to_string();
        let n: DbResult<usize> = with_conn!(self, |conn| Ok(diesel::delete(
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

#[async_trait::async_trait]
impl AttachmentSearch for Db {
    async fn search_passages(
        &self,
        owner: Owner,
        session: &SessionId,
        query: &str,
        limit: i64,
    ) -> Result<Vec<Passage>, StoreError> {
        let terms = query_terms(query);
        if terms.is_empty() || limit < 1 {
            return Ok(Vec::new());
        }
        let scope = scope_token(owner, session);
        let limit = limit.min(MAX_LIMIT);
        let hits: DbResult<Vec<HitRow>> = with_conn!(self, |conn| conn.search_scope(&scope, &terms, limit).await);
        Ok(hits?
            .into_iter()
            .map(|h| Passage {
                attachment_id: h.attachment_id,
                filename: h.filename,
                chunk_index: h.chunk_index,
                text: h.text,
                score: h.score,
            })
            .collect())
    }

    async fn session_attachments(
        &self,
        owner: Owner,
        session: &SessionId,
    ) -> Result<Vec<AttachmentSummary>, StoreError> {
        let owner_s = owner.to_string();
        let sid = session.as_str();
        let rows: DbResult<Vec<(String, String)>> = with_conn!(self, |conn| Ok(attachments::table
            .filter(attachments::owner.eq(&owner_s))
            .filter(attachments::session_id.eq(sid))
            .filter(attachments::state.eq(AttachmentState::Ready.as_str()))
            .order((attachments::created_at.asc(), attachments::attachment_id.asc()))
            .select((attachments::attachment_id, attachments::filename))
            .load(conn)
            .await?));
        Ok(rows?.into_iter().map(|(attachment_id, filename)| AttachmentSummary { attachment_id, filename }).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redline_domain::UserId;

    #[test]
    fn scope_tokens_are_one_plain_word_per_session() {
        let ann = Owner::User(UserId::new());
        let s1 = SessionId::parse("s1").unwrap();
        let s2 = SessionId::parse("s2").unwrap();
        let a = scope_token(ann, &s1);
        assert_eq!(a, scope_token(ann, &s1));
        assert_ne!(a, scope_token(ann, &s2));
        assert_ne!(a, scope_token(Owner::User(UserId::new()), &s1));
        assert_eq!(a.len(), 34);
        assert!(a.starts_with('z') && a.ends_with('9') && a.bytes().all(|b| b.is_ascii_alphanumeric()));
    }

    #[test]
    fn fts5_queries_quote_every_word() {
        let q = fts5_query("zab9", &["near".to_owned(), "say\"hi".to_owned(), "0.3".to_owned()]);
        assert_eq!(q, r#"scope : "zab9" AND text : ("near" OR "say""hi" OR "0.3")"#);
    }
}

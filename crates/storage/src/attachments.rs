//! `AttachmentStore` and `AttachmentSearch` on both backends: attachment rows, their passages
//! and the full-text index over the passages, in the same database as everything else.
//!
//! The lexemes are computed in Rust (`lexemes.rs`: English Snowball stems, PostgreSQL's stop
//! words), on several threads for a large attachment, before the transaction opens; the
//! database only stores and indexes them.
//!
//! - SQLite: a contentless FTS5 table (`contentless_delete`) fed each passage's lexemes in the
//!   transaction that writes the passages, ranked with BM25; a trigger removes the entries
//!   of deleted passages (also for `ON DELETE CASCADE`).
//! - PostgreSQL: a `tsvector` column written with the row (sent in `tsvector`'s binary form,
//!   which the server reads without parsing text), with a GIN index over (scope, tsv)
//!   (btree_gin, migration 000011), ranked with `ts_rank`.
//!   The passages have no foreign key (its check per row cost a seventh of the insert): the
//!   writer locks the attachment's row instead, and a trigger on `attachments` deletes them.
//!
//! A query never reaches either full-text language as typed: `redline_domain::attachment::
//! query_terms` reduces it to plain words, which the same normalisation turns into lexemes,
//! quoted (FTS5) or written as a `tsquery`; any of the words may match (a word with inner
//! joiners, `0.3` or `e-mail`, as a phrase of its parts).
//!
//! Passages indexed before the lexemes moved to Rust (migration 000007), and on SQLite before
//! the index lost its scope column (000011), are listed in `attachment_reindex` and indexed
//! again by [`reindex_passages`] when the database opens.
//! Every passage carries a `scope` token naming its (owner, session), and the search is
//! confined to it inside the index itself: on PostgreSQL by the `scope` column in the GIN
//! index beside the vector (or a B-tree of its own where btree_gin is missing), on SQLite by
//! the passage ids, which are the FTS5 rowids: each scope has its own range of them
//! ([`ScopeRange`], migration 000011), and a search bounds the rowid.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Double, Text};
use diesel_async::RunQueryDsl;
use redline_domain::attachment::query_terms;
use redline_domain::job::JobStatus;
use redline_domain::time_util::Millis;
use redline_domain::{Owner, SessionId};
use redline_ports::attachments::{
    AttachmentRecord, AttachmentSource, AttachmentState, AttachmentSummary, ExtractedText, Passage, Replaced,
};
use redline_ports::jobs::{JobRecord, JobUpdate};
use redline_ports::{AttachmentSearch, AttachmentStore, StoreError};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::db::{Backend, Db, PgConn, SqliteConn};
use crate::error::DbResult;
use crate::lexemes::{self, QueryWord};
use crate::rows::owner;
use crate::schema::{attachment_passages, attachment_reindex, attachments, jobs, sessions};

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
    progress: i32,
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
            progress: a.progress,
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
            progress: r.progress,
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

/// Writes an attachment's passages and their index entries, in each backend's way.
pub(crate) trait PassageWriter {
    /// What the index gets for a passage.
    type Entry: Send + 'static;
    /// Computes it: [`lexemes::tsvector_binary`] or [`lexemes::fts_text`].
    const INDEX_ENTRY: fn(&mut lexemes::Lexer, &str) -> Self::Entry;

    /// Inserts passages 0, 1, … of the attachment with their index entries, as
    /// [`insert_entries`] made them from `texts`: PostgreSQL binds `texts` and the vectors in
    /// `index`; SQLite binds the JSON in `index`, which holds the texts too.
    async fn insert_passages(
        &mut self,
        attachment_id: &str,
        scope: &str,
        texts: &[String],
        index: &IndexEntries,
    ) -> DbResult<()>;

    /// The (owner, session) of the attachment about to get passages, its row locked until the
    /// transaction ends (PostgreSQL; SQLite's writer holds the whole database): the passages
    /// have no foreign key (PostgreSQL: its check per row was a seventh of the insert), so no
    /// delete of the attachment may commit between this and the insert. `None` when it is gone.
    async fn lock_attachment(&mut self, attachment_id: &str) -> DbResult<Option<(String, String)>>;

    /// Writes `index[i]` as the index entry of the passage `passage_ids[i]` (re-indexing).
    async fn write_index(&mut self, scope: &str, passage_ids: &[i64], index: &[Self::Entry]) -> DbResult<()>;

    /// This backend's entries in `index` ([`index_texts`] computes them for the `Db`'s own).
    fn entries(index: &IndexEntries) -> DbResult<&[Self::Entry]>;
}

/// [`PassageWriter::entries`] of `conn`'s backend.
fn entries_for<'i, W: PassageWriter>(_conn: &W, index: &'i IndexEntries) -> DbResult<&'i [W::Entry]> {
    W::entries(index)
}

/// The index entries of an attachment's passages, for one backend or the other.
pub(crate) enum IndexEntries {
    /// The lexemes of each passage ([`lexemes::fts_text`]), for re-indexing.
    Sqlite(Vec<String>),
    /// What the inserts of new passages bind on SQLite, made before the transaction
    /// ([`sqlite_json`], [`join_parts`]): the JSON arrays of their texts and of their lexemes.
    SqliteJson(std::sync::Arc<JsonParts>),
    Pg(Vec<TsVectorBinary>),
}

/// Passages as two JSON arrays of strings: their texts, and their lexemes.
pub(crate) struct JsonParts {
    texts: String,
    lexemes: String,
}

/// [`JsonParts`] of `texts`, with the thread's lexer. Made on the blocking pool before the
/// transaction, on as many threads as the lexemes, then joined ([`join_parts`]): SQLite's
/// write transaction only binds them (serialising the JSON there, with the writer lock
/// held, was a few percent of every attachment).
fn sqlite_json(lexer: &mut lexemes::Lexer, texts: &[String]) -> Result<JsonParts, String> {
    let mut text_bytes: Vec<u8> = Vec::with_capacity(texts.iter().map(|t| t.len() + 3).sum::<usize>() + 2);
    let mut lexeme_bytes: Vec<u8> = Vec::with_capacity(texts.iter().map(|t| t.len() / 2 + 3).sum::<usize>() + 2);
    text_bytes.push(b'[');
    lexeme_bytes.push(b'[');
    for (i, text) in texts.iter().enumerate() {
        if i > 0 {
            text_bytes.push(b',');
            lexeme_bytes.push(b',');
        }
        serde_json::to_writer(&mut text_bytes, text).map_err(|e| e.to_string())?;
        serde_json::to_writer(&mut lexeme_bytes, &lexemes::fts_text(lexer, text)).map_err(|e| e.to_string())?;
    }
    text_bytes.push(b']');
    lexeme_bytes.push(b']');
    Ok(JsonParts {
        texts: String::from_utf8(text_bytes).map_err(|e| e.to_string())?,
        lexemes: String::from_utf8(lexeme_bytes).map_err(|e| e.to_string())?,
    })
}

/// The parts of one attachment's passages ([`sqlite_json`], in order) as one [`JsonParts`]:
/// a single part as it is, without a copy.
fn join_parts(parts: Vec<JsonParts>) -> JsonParts {
    let (texts, lexemes): (Vec<String>, Vec<String>) = parts.into_iter().map(|p| (p.texts, p.lexemes)).unzip();
    JsonParts { texts: join_arrays(texts), lexemes: join_arrays(lexemes) }
}

/// JSON arrays (`[…]`) as one array of all their elements, in order.
fn join_arrays(mut arrays: Vec<String>) -> String {
    if arrays.len() == 1 {
        if let Some(only) = arrays.pop() {
            return only;
        }
    }
    let mut out = String::with_capacity(arrays.iter().map(String::len).sum::<usize>() + 2);
    out.push('[');
    for array in &arrays {
        let elements = array.strip_prefix('[').and_then(|a| a.strip_suffix(']')).unwrap_or("");
        if elements.is_empty() {
            continue;
        }
        if out.len() > 1 {
            out.push(',');
        }
        out.push_str(elements);
    }
    out.push(']');
    out
}

/// PostgreSQL's `tsvector`, a built-in type (fixed OIDs), for binding.
#[derive(diesel::sql_types::SqlType, diesel::query_builder::QueryId)]
#[diesel(postgres_type(oid = 3614, array_oid = 3643))]
pub(crate) struct TsVector;

/// A `tsvector` in its binary form ([`lexemes::tsvector_binary`]): sent as it is, so the
/// server reads it without parsing text (the text cast was a fifth of the insert).
#[derive(Debug, diesel::expression::AsExpression)]
#[diesel(sql_type = TsVector)]
pub(crate) struct TsVectorBinary(Vec<u8>);

impl diesel::serialize::ToSql<TsVector, diesel::pg::Pg> for TsVectorBinary {
    fn to_sql<'b>(&'b self, out: &mut diesel::serialize::Output<'b, '_, diesel::pg::Pg>) -> diesel::serialize::Result {
        use std::io::Write;
        out.write_all(&self.0)?;
        Ok(diesel::serialize::IsNull::No)
    }
}

fn tsvector_entry(lexer: &mut lexemes::Lexer, text: &str) -> TsVectorBinary {
    TsVectorBinary(lexemes::tsvector_binary(lexer, text))
}

/// Passages per statement on PostgreSQL (a few MB of text: bounded statements).
const PG_INSERT_BATCH: usize = 2_000;

#[derive(QueryableByName)]
struct MaxId {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

/// The passage ids (and so the FTS5 rowids) of one (owner, session) scope on SQLite: its
/// number `n` from `attachment_scopes` gives it `(n << 32) + 1 ..= (n << 32) + 0xFFFF_FFFF`
/// (migration 000011), so a search bounds the rowid instead of matching a scope token.
struct ScopeRange {
    /// `n << 32`: one below the first id.
    start: i64,
    /// The last id.
    end: i64,
}

impl ScopeRange {
    /// Ids per scope, `start` itself not used.
    const SPAN: i64 = 1 << 32;

    /// `None` past the last number whose range fits in a rowid (`i32::MAX`: two billion
    /// sessions with attachments).
    fn new(scope_no: i64) -> Option<Self> {
        let start = scope_no.checked_mul(Self::SPAN).filter(|_| scope_no > 0)?;
        Some(Self { start, end: start.checked_add(Self::SPAN - 1)? })
    }

    /// The range of `scope`, numbered on its first use (inside the writer's transaction).
    fn of(conn: &mut diesel::SqliteConnection, scope: &str) -> QueryResult<Self> {
        diesel::RunQueryDsl::execute(
            diesel::sql_query("INSERT INTO attachment_scopes (scope) VALUES (?) ON CONFLICT (scope) DO NOTHING")
                .bind::<Text, _>(scope),
            conn,
        )?;
        let no: MaxId = diesel::RunQueryDsl::get_result(
            diesel::sql_query("SELECT scope_no AS id FROM attachment_scopes WHERE scope = ?").bind::<Text, _>(scope),
            conn,
        )?;
        Self::new(no.id).ok_or_else(|| {
            diesel::result::Error::DeserializationError(format!("scope number {} has no rowid range", no.id).into())
        })
    }
}

fn json(value: &impl ToString) -> String {
    value.to_string()
}

impl PassageWriter for SqliteConn {
    type Entry = String;
    const INDEX_ENTRY: fn(&mut lexemes::Lexer, &str) -> String = lexemes::fts_text;

    fn entries(index: &IndexEntries) -> DbResult<&[String]> {
        match index {
            IndexEntries::Sqlite(entries) => Ok(entries),
            _ => Err(StoreError::Other("no lexemes to re-index on SQLite".to_owned()).into()),
        }
    }

    async fn insert_passages(
        &mut self,
        attachment_id: &str,
        scope: &str,
        texts: &[String],
        index: &IndexEntries,
    ) -> DbResult<()> {
        let IndexEntries::SqliteJson(json) = index else {
            return Err(StoreError::Other("passages to insert without their JSON".to_owned()).into());
        };
        let json = std::sync::Arc::clone(json);
        let (attachment_id, scope) = (attachment_id.to_owned(), scope.to_owned());
        // One statement for all the passages and one for all their index entries: FTS5
        // writes its pending terms to disk (and merges segments) at the end of every
        // statement. The texts travel as JSON arrays, made before the transaction. On the
        // sync connection itself, in one hand-off: diesel-async's
        // wrapper would copy every bound value, while diesel binds a `&str` as it is. Inside
        // `BEGIN IMMEDIATE` this is the only writer, so the ids after the largest one in the
        // session's range ([`ScopeRange`]) are free.
        let count = i64::try_from(texts.len()).unwrap_or(i64::MAX);
        let fits = self
            .spawn_blocking(move |conn| {
                let range = ScopeRange::of(conn, &scope)?;
                let first: MaxId = diesel::RunQueryDsl::get_result(
                    diesel::sql_query(
                        "SELECT coalesce(max(passage_id), ?) + 1 AS id FROM attachment_passages \
                         WHERE passage_id BETWEEN ? AND ?",
                    )
                    .bind::<BigInt, _>(range.start)
                    .bind::<BigInt, _>(range.start)
                    .bind::<BigInt, _>(range.end),
                    conn,
                )?;
                if count > range.end - first.id + 1 {
                    return Ok(false);
                }
                diesel::RunQueryDsl::execute(
                    diesel::sql_query(
                        "INSERT INTO attachment_passages (passage_id, attachment_id, scope, chunk_index, text) \
                         SELECT ? + key, ?, ?, key, value FROM json_each(?)",
                    )
                    .bind::<BigInt, _>(first.id)
                    .bind::<Text, _>(attachment_id.as_str())
                    .bind::<Text, _>(scope.as_str())
                    .bind::<Text, _>(json.texts.as_str()),
                    conn,
                )?;
                diesel::RunQueryDsl::execute(
                    diesel::sql_query(
                        "INSERT INTO attachment_fts (rowid, text) SELECT ? + key, value FROM json_each(?)",
                    )
                    .bind::<BigInt, _>(first.id)
                    .bind::<Text, _>(json.lexemes.as_str()),
                    conn,
                )?;
                Ok(true)
            })
            .await?;
        if !fits {
            return Err(
                StoreError::Other(format!("no passage numbers left in the session for {count} passages")).into()
            );
        }
        Ok(())
    }

    async fn lock_attachment(&mut self, attachment_id: &str) -> DbResult<Option<(String, String)>> {
        Ok(attachments::table
            .find(attachment_id)
            .select((attachments::owner, attachments::session_id))
            .first(self)
            .await
            .optional()?)
    }

    async fn write_index(&mut self, _scope: &str, passage_ids: &[i64], index: &[String]) -> DbResult<()> {
        // `[[passage_id, lexemes], …]`; the passage ids are in their scope's range already. Contentless-delete: entries go by rowid alone, so a
        // repeated run replaces what an earlier one wrote.
        let pairs: Vec<Value> = passage_ids.iter().zip(index).map(|(id, text)| serde_json::json!([id, text])).collect();
        let pairs = json(&Value::from(pairs));
        diesel::sql_query(
            "DELETE FROM attachment_fts WHERE rowid IN (SELECT json_extract(value, '$[0]') FROM json_each(?))",
        )
        .bind::<Text, _>(&pairs)
        .execute(self)
        .await?;
        diesel::sql_query(
            "INSERT INTO attachment_fts (rowid, text) \
             SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)",
        )
        .bind::<Text, _>(&pairs)
        .execute(self)
        .await?;
        Ok(())
    }
}

impl PassageWriter for PgConn {
    type Entry = TsVectorBinary;
    const INDEX_ENTRY: fn(&mut lexemes::Lexer, &str) -> TsVectorBinary = tsvector_entry;

    fn entries(index: &IndexEntries) -> DbResult<&[TsVectorBinary]> {
        match index {
            IndexEntries::Pg(entries) => Ok(entries),
            _ => Err(StoreError::Other("SQLite index entries for PostgreSQL".to_owned()).into()),
        }
    }

    async fn insert_passages(
        &mut self,
        attachment_id: &str,
        scope: &str,
        texts: &[String],
        index: &IndexEntries,
    ) -> DbResult<()> {
        let index = Self::entries(index)?;
        for (n, (batch, vectors)) in texts.chunks(PG_INSERT_BATCH).zip(index.chunks(PG_INSERT_BATCH)).enumerate() {
            let offset = i64::try_from(n * PG_INSERT_BATCH).unwrap_or(i64::MAX);
            diesel::sql_query(
                "INSERT INTO attachment_passages (attachment_id, scope, chunk_index, text, tsv) \
                 SELECT $1, $2, $3 + ord - 1, t, v \
                 FROM unnest($4::text[], $5::tsvector[]) WITH ORDINALITY AS u(t, v, ord)",
            )
            .bind::<Text, _>(attachment_id)
            .bind::<Text, _>(scope)
            .bind::<BigInt, _>(offset)
            .bind::<diesel::sql_types::Array<Text>, _>(batch)
            .bind::<diesel::sql_types::Array<TsVector>, _>(vectors)
            .execute(self)
            .await?;
        }
        Ok(())
    }

    async fn lock_attachment(&mut self, attachment_id: &str) -> DbResult<Option<(String, String)>> {
        Ok(attachments::table
            .find(attachment_id)
            .select((attachments::owner, attachments::session_id))
            .for_no_key_update()
            .first(self)
            .await
            .optional()?)
    }

    async fn write_index(&mut self, _scope: &str, passage_ids: &[i64], index: &[TsVectorBinary]) -> DbResult<()> {
        for (ids, vectors) in passage_ids.chunks(PG_INSERT_BATCH).zip(index.chunks(PG_INSERT_BATCH)) {
            diesel::sql_query(
                "UPDATE attachment_passages AS p SET tsv = u.v \
                 FROM unnest($1::bigint[], $2::tsvector[]) AS u(id, v) WHERE p.passage_id = u.id",
            )
            .bind::<diesel::sql_types::Array<BigInt>, _>(ids)
            .bind::<diesel::sql_types::Array<TsVector>, _>(vectors)
            .execute(self)
            .await?;
        }
        Ok(())
    }
}

/// The least passages per thread computing the index entries of an attachment (so a second
/// thread starts at twice this). Low: the lexemes of a 100 KB attachment (about 180
/// passages, two threads) take a millisecond or two, and one thread more costs tens of
/// microseconds (attachments of 100 KB indexed one after another went about 10 % faster on
/// two cores than with 512).
const PASSAGES_PER_THREAD: usize = 64;

/// The index entries of `texts`, computed on the blocking pool before any transaction opens:
/// a large attachment in parts on as many threads as there are cores (the pool's threads
/// live on, and so does what their lexers remember).
async fn index_texts(db: &Db, texts: &[String]) -> DbResult<IndexEntries> {
    Ok(match db.backend {
        Backend::Sqlite(_) => IndexEntries::Sqlite(spread(texts, <SqliteConn as PassageWriter>::INDEX_ENTRY).await?),
        Backend::Pg(_) => IndexEntries::Pg(spread(texts, <PgConn as PassageWriter>::INDEX_ENTRY).await?),
    })
}

/// What [`PassageWriter::insert_passages`] binds for new passages `texts`: on SQLite their
/// JSON ([`sqlite_json`]), on PostgreSQL their vectors. Made as [`index_texts`] is.
async fn insert_entries(db: &Db, texts: &[String]) -> DbResult<IndexEntries> {
    match db.backend {
        Backend::Sqlite(_) => {
            let parts = spread_parts(texts, sqlite_json).await?;
            let parts: Result<Vec<JsonParts>, String> = parts.into_iter().collect();
            let parts = parts.map_err(|e| StoreError::Other(format!("passages as JSON: {e}")))?;
            // Joining several parts copies them: a large attachment's, on the blocking pool.
            let json = if parts.len() <= 1 {
                join_parts(parts)
            } else {
                tokio::task::spawn_blocking(move || join_parts(parts))
                    .await
                    .map_err(|e| StoreError::Other(format!("joining the passages' JSON failed: {e}")))?
            };
            Ok(IndexEntries::SqliteJson(std::sync::Arc::new(json)))
        }
        Backend::Pg(_) => index_texts(db, texts).await,
    }
}

/// `entry` of each of `texts`, in order ([`spread_parts`]).
async fn spread<T: Send + 'static>(texts: &[String], entry: fn(&mut lexemes::Lexer, &str) -> T) -> DbResult<Vec<T>> {
    let parts = spread_parts(texts, move |lexer, chunk| chunk.iter().map(|t| entry(lexer, t)).collect::<Vec<T>>());
    Ok(parts.await?.into_iter().flatten().collect())
}

/// `work` over consecutive parts of `texts`, one blocking task each, in order: as many parts
/// as cores, but no more than one per [`PASSAGES_PER_THREAD`] texts (one part when there are
/// fewer), of equal size but the last.
async fn spread_parts<T, F>(texts: &[String], work: F) -> DbResult<Vec<T>>
where
    T: Send + 'static,
    F: Fn(&mut lexemes::Lexer, &[String]) -> T + Send + Copy + 'static,
{
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let parts = cores.min(texts.len() / PASSAGES_PER_THREAD).max(1);
    let tasks = texts
        .chunks(texts.len().div_ceil(parts).max(1))
        .map(|chunk| {
            let chunk = chunk.to_vec();
            tokio::task::spawn_blocking(move || lexemes::with_lexer(|lexer| work(lexer, &chunk)))
        })
        .collect::<Vec<_>>();
    let mut done = Vec::with_capacity(tasks.len());
    for part in futures_util::future::join_all(tasks).await {
        done.push(part.map_err(|e| StoreError::Other(format!("indexing task failed: {e}")))?);
    }
    Ok(done)
}

/// Attachments re-indexed per round of [`reindex_passages`].
const REINDEX_ROUND: i64 = 16;

/// Indexes the passages of every attachment listed in `attachment_reindex` (those indexed
/// before migration 000007, or on SQLite 000011), one transaction per attachment; answers how many. Run when the
/// database opens, so that searches find them once it has.
pub(crate) async fn reindex_passages(db: &Db) -> Result<usize, StoreError> {
    let listed: DbResult<i64> = with_conn!(db, |conn| Ok(attachment_reindex::table.count().get_result(conn).await?));
    let listed = listed?;
    if listed > 0 {
        // After an upgrade this holds the start for as long as the indexing takes.
        tracing::info!(attachments = listed, "indexing the passages of stored attachments again before serving");
    }
    let mut done = 0;
    loop {
        let ids: DbResult<Vec<String>> = with_conn!(db, |conn| Ok(attachment_reindex::table
            .select(attachment_reindex::attachment_id)
            .order(attachment_reindex::attachment_id.asc())
            .limit(REINDEX_ROUND)
            .load(conn)
            .await?));
        let ids = ids?;
        if ids.is_empty() {
            return Ok(done);
        }
        for id in ids {
            let passages: DbResult<Vec<(i64, String, String)>> = with_conn!(db, |conn| Ok(attachment_passages::table
                .filter(attachment_passages::attachment_id.eq(&id))
                .order(attachment_passages::passage_id.asc())
                .select((attachment_passages::passage_id, attachment_passages::scope, attachment_passages::text))
                .load(conn)
                .await?));
            let passages = passages?;
            let scope = <[_]>::first(&passages).map(|p| p.1.clone()).unwrap_or_default();
            let passage_ids: Vec<i64> = passages.iter().map(|p| p.0).collect();
            let texts: Vec<String> = passages.into_iter().map(|p| p.2).collect();
            let index = index_texts(db, &texts).await?;
            let r: DbResult<()> = with_tx!(db, |conn| {
                // A passage list replaced meanwhile (`replace_passages`) is indexed already.
                let listed = diesel::delete(attachment_reindex::table.find(&id)).execute(conn).await?;
                if listed > 0 {
                    let entries = entries_for(&*conn, &index)?;
                    conn.write_index(&scope, &passage_ids, entries).await?;
                }
                Ok(())
            });
            r?;
            done += 1;
        }
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
    /// Passages of `scope` matching any of `words` (never empty), best first.
    async fn search_scope(&mut self, scope: &str, words: &[QueryWord], limit: i64) -> DbResult<Vec<HitRow>>;
}

/// An FTS5 string: `"` + the text with `"` doubled + `"`; inside it nothing is syntax.
fn fts5_string(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// The FTS5 expression: any of the words, a compound as the phrase of its parts (adjacent in
/// the index: stop words are not indexed). `None` when no word has a lexeme.
fn fts5_query(words: &[QueryWord]) -> Option<String> {
    let phrases: Vec<String> = words
        .iter()
        .filter(|w| !w.phrase.is_empty())
        .map(|w| fts5_string(&w.phrase.iter().map(|(lexeme, _)| lexeme.as_str()).collect::<Vec<_>>().join(" ")))
        .collect();
    (!phrases.is_empty()).then(|| phrases.join(" OR "))
}

impl FullText for SqliteConn {
    async fn search_scope(&mut self, scope: &str, words: &[QueryWord], limit: i64) -> DbResult<Vec<HitRow>> {
        let Some(query) = fts5_query(words) else {
            return Ok(Vec::new());
        };
        // The hits are ranked inside FTS5 (`ORDER BY rank LIMIT` is its fast path) within the
        // scope's rowid range (FTS5 seeks to it in each word's list; a scope never numbered
        // gives NULL bounds, and no hit), then joined.
        Ok(diesel::sql_query(
            "WITH scope AS (SELECT scope_no << 32 AS start FROM attachment_scopes WHERE scope = ?), \
             hits AS (\
                 SELECT rowid AS passage_id, rank FROM attachment_fts \
                 WHERE attachment_fts MATCH ? \
                   AND rowid BETWEEN (SELECT start FROM scope) + 1 AND (SELECT start FROM scope) + ? \
                 ORDER BY rank LIMIT ?\
             ) \
             SELECT p.attachment_id, a.filename, p.chunk_index, p.text, -hits.rank AS score \
             FROM hits \
             JOIN attachment_passages p ON p.passage_id = hits.passage_id \
             JOIN attachments a ON a.attachment_id = p.attachment_id \
             ORDER BY hits.rank, p.passage_id",
        )
        .bind::<Text, _>(scope)
        .bind::<Text, _>(query)
        .bind::<BigInt, _>(ScopeRange::SPAN - 1)
        .bind::<BigInt, _>(limit)
        .load(self)
        .await?)
    }
}

impl FullText for PgConn {
    async fn search_scope(&mut self, scope: &str, words: &[QueryWord], limit: i64) -> DbResult<Vec<HitRow>> {
        let Some(query) = lexemes::tsquery(words) else {
            return Ok(Vec::new());
        };
        // The `tsquery` is built from lexemes only (quoted), so its text form never fails.
        // The matches are ranked first and only the best joined (the planner, which cannot
        // estimate how many passages a `tsquery` matches, would otherwise hash thousands of
        // passages with their text to join them); the GIN index over (scope, tsv) finds them
        // within the session (migration 000011).
        Ok(diesel::sql_query(
            "WITH hits AS (\
                 SELECT p.passage_id, ts_rank(p.tsv, q)::float8 AS score \
                 FROM attachment_passages p CROSS JOIN CAST($2 AS tsquery) AS q \
                 WHERE p.scope = $1 AND p.tsv @@ q \
                 ORDER BY score DESC, p.passage_id \
                 LIMIT $3\
             ) \
             SELECT p.attachment_id, a.filename, p.chunk_index, p.text, hits.score \
             FROM hits \
             JOIN attachment_passages p ON p.passage_id = hits.passage_id \
             JOIN attachments a ON a.attachment_id = p.attachment_id \
             ORDER BY hits.score DESC, hits.passage_id",
        )
        .bind::<Text, _>(scope)
        .bind::<Text, _>(query)
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
        // entries) or by the attachments' delete trigger (PostgreSQL, migration 000010).
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

#[async_trait::async_trait]
impl AttachmentSearch for Db {
    async fn search_passages(
        &self,
        owner: Owner,
        session: &SessionId,
        query: &str,
        limit: i64,
    ) -> Result<Vec<Passage>, StoreError> {
        let words = lexemes::query_words(&query_terms(query));
        if words.is_empty() || limit < 1 {
            return Ok(Vec::new());
        }
        let scope = scope_token(owner, session);
        let limit = limit.min(MAX_LIMIT);
        let hits: DbResult<Vec<HitRow>> = with_conn!(self, |conn| conn.search_scope(&scope, &words, limit).await);
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
    fn json_parts_join_into_arrays_of_every_passage_in_order() {
        let texts: Vec<String> = ["The \"first\" passage\n", "Kelp \\ soup", "", "Zorblax at dawn"]
            .iter()
            .map(|t| (*t).to_owned())
            .collect();
        let part = |texts: &[String]| lexemes::with_lexer(|lexer| sqlite_json(lexer, texts)).unwrap();
        // Two parts, as two threads would make them, and an empty part between them.
        let joined = join_parts(vec![part(&texts[..1]), part(&[]), part(&texts[1..])]);
        let back: Vec<String> = serde_json::from_str(&joined.texts).unwrap();
        assert_eq!(back, texts);
        let back: Vec<String> = serde_json::from_str(&joined.lexemes).unwrap();
        assert_eq!(back, ["first passag", "kelp soup", "", "zorblax dawn"]);
        // One part is the arrays as they are; none is empty arrays.
        let one = join_parts(vec![part(&texts)]);
        assert_eq!((one.texts, one.lexemes), (joined.texts, joined.lexemes));
        let none = join_parts(Vec::new());
        assert_eq!((none.texts.as_str(), none.lexemes.as_str()), ("[]", "[]"));
        assert_eq!(join_parts(vec![part(&[])]).texts, "[]");
    }

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
    fn fts5_queries_quote_every_phrase() {
        let word = |parts: &[&str]| QueryWord {
            phrase: parts.iter().map(|w| ((*w).to_owned(), 1)).collect(),
            whole: (parts.len() > 1).then(|| parts.join(".")),
        };
        let q = fts5_query(&[word(&["near"]), word(&["say\"hi"]), word(&["0", "3"]), word(&[])]);
        assert_eq!(q.as_deref(), Some(r#""near" OR "say""hi" OR "0 3""#));
        assert_eq!(fts5_query(&[word(&[])]), None);
    }

    #[test]
    fn scope_ranges_are_disjoint_and_hold_the_ids_between_them() {
        let first = ScopeRange::new(1).unwrap();
        let second = ScopeRange::new(2).unwrap();
        assert_eq!((first.start, first.end), (1 << 32, (2 << 32) - 1));
        assert_eq!(first.end + 1, second.start, "the next scope's range starts past this one's last id");
        assert_eq!(first.end - first.start, ScopeRange::SPAN - 1);
        // The last number whose range fits in a rowid ends at the largest rowid.
        let last = ScopeRange::new(i64::from(i32::MAX)).unwrap();
        assert_eq!(last.end, i64::MAX);
        assert!(ScopeRange::new(i64::from(i32::MAX) + 1).is_none());
        assert!(ScopeRange::new(0).is_none() && ScopeRange::new(-1).is_none());
    }
}

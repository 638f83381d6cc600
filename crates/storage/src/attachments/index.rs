//! Index entries computed before the transaction: the lexemes of an attachment's passages,
//! on the blocking pool and in parts on several threads for a large attachment, in the form
//! each backend's [`PassageWriter`] binds.

use redline_ports::StoreError;

use super::postgres::TsVectorBinary;
use super::sqlite::{join_parts, sqlite_json, JsonParts};
use crate::db::{Backend, Db, PgConn, SqliteConn};
use crate::error::DbResult;
use crate::lexemes;

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
pub(super) fn entries_for<'i, W: PassageWriter>(_conn: &W, index: &'i IndexEntries) -> DbResult<&'i [W::Entry]> {
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

/// The least passages per thread computing the index entries of an attachment (so a second
/// thread starts at twice this). Low: the lexemes of a 100 KB attachment (about 180
/// passages, two threads) take a millisecond or two, and one thread more costs tens of
/// microseconds (attachments of 100 KB indexed one after another went about 10 % faster on
/// two cores than with 512).
const PASSAGES_PER_THREAD: usize = 64;

/// The index entries of `texts`, computed on the blocking pool before any transaction opens:
/// a large attachment in parts on as many threads as there are cores (the pool's threads
/// live on, and so does what their lexers remember).
pub(super) async fn index_texts(db: &Db, texts: &[String]) -> DbResult<IndexEntries> {
    Ok(match db.backend {
        Backend::Sqlite(_) => IndexEntries::Sqlite(spread(texts, <SqliteConn as PassageWriter>::INDEX_ENTRY).await?),
        Backend::Pg(_) => IndexEntries::Pg(spread(texts, <PgConn as PassageWriter>::INDEX_ENTRY).await?),
    })
}

/// What [`PassageWriter::insert_passages`] binds for new passages `texts`: on SQLite their
/// JSON ([`sqlite_json`]), on PostgreSQL their vectors. Made as [`index_texts`] is.
pub(super) async fn insert_entries(db: &Db, texts: &[String]) -> DbResult<IndexEntries> {
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

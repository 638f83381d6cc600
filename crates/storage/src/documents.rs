//! `DocumentStore` on both backends.

use std::collections::{HashMap, HashSet};

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use redline_domain::page::{Cursor, Page, PageRequest};
use redline_domain::{Owner, SessionId};
use redline_ports::documents::{CommitOutcome, DocumentRecord, NewVersion, VersionRecord};
use redline_ports::{DocumentStore, StoreError};

use crate::chunks::{self, Hash};
use crate::db::{BackendOps, Db, PgConn, SqliteConn};
use crate::error::{DbError, DbResult};
use crate::schema::{document_chunks, document_versions, jobs, sessions};

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
        let row: DbResult<Option<DocRow>> = with_conn!(self, |conn| {
            let Some((version_id, section_count, title, created_at, updated_at)) = sessions::table
                .find((&owner_s, sid))
                .select((
                    sessions::version_id,
                    sessions::section_count,
                    sessions::title,
                    sessions::created_at,
                    sessions::updated_at,
                ))
                .get_result::<(Option<String>, i64, Option<String>, i64, i64)>(conn)
                .await
                .optional()?
            else {
                return Ok(None);
            };
            let html = match &version_id {
                Some(v) => conn.version_html(&owner_s, sid, v).await?.unwrap_or_default(),
                None => String::new(),
            };
            Ok(Some((html, version_id, section_count, title, created_at, updated_at)))
        });
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
            let q = document_versions::table
                .filter(document_versions::owner.eq(&owner_s))
                .filter(document_versions::session_id.eq(sid))
                .into_boxed();
            Ok(keyset!(q, desc(document_versions::created_at, document_versions::version_id), &after, fetch)
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
        let row: DbResult<Option<VersionRow>> = with_conn!(self, |conn| {
            let Some((section_count, source, created_at, stored)) = document_versions::table
                .find(version_id)
                .filter(document_versions::owner.eq(&owner_s))
                .filter(document_versions::session_id.eq(sid))
                .select((
                    document_versions::section_count,
                    document_versions::source,
                    document_versions::created_at,
                    (
                        document_versions::version_id,
                        document_versions::session_id,
                        document_versions::html,
                        document_versions::chunks,
                    ),
                ))
                .get_result::<(i64, String, i64, StoredVersion)>(conn)
                .await
                .optional()?
            else {
                return Ok(None);
            };
            let html = conn.assemble(&owner_s, vec![stored]).await?.remove(version_id).unwrap_or_default();
            Ok(Some((version_id.to_owned(), html, section_count, source, created_at)))
        });
        Ok(row?.map(version))
    }

    async fn versions_html(
        &self,
        owner: Owner,
        versions: &[(SessionId, String)],
    ) -> Result<HashMap<String, String>, StoreError> {
        if versions.is_empty() {
            return Ok(HashMap::new());
        }
        let owner_s = owner.to_string();
        let ids: Vec<&str> = versions.iter().map(|(_, v)| v.as_str()).collect();
        let bodies: DbResult<HashMap<String, String>> = with_conn!(self, |conn| {
            let stored: Vec<StoredVersion> = document_versions::table
                .filter(document_versions::owner.eq(&owner_s))
                .filter(document_versions::version_id.eq_any(&ids))
                .select((
                    document_versions::version_id,
                    document_versions::session_id,
                    document_versions::html,
                    document_versions::chunks,
                ))
                .load(conn)
                .await?;
            // A version answers only for the session it was asked under.
            let stored = stored
                .into_iter()
                .filter(|(id, sid, _, _)| versions.iter().any(|(s, v)| v == id && s.as_str() == sid))
                .collect();
            Ok(conn.assemble(&owner_s, stored).await?)
        });
        Ok(bodies?)
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
            diesel::delete(
                document_chunks::table
                    .filter(document_chunks::owner.eq(&owner_s))
                    .filter(document_chunks::session_id.eq(sid)),
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

/// The chunk rows of a session's versions (`chunks.rs`): what a commit writes, and a
/// version's HTML read back from them.
trait ChunkStore {
    /// Stores the chunks of `html` that the session has not got yet; answers the version's
    /// manifest.
    async fn put_chunks(&mut self, owner: &str, sid: &str, html: &[u8]) -> DbResult<Vec<u8>>;

    /// The HTML of a version of the session (`None` when there is no such version): put
    /// together from its chunks, or as stored before chunks (a row the conversion of
    /// migration 000021 has not reached).
    async fn version_html(&mut self, owner: &str, sid: &str, version_id: &str) -> DbResult<Option<String>>;

    /// The HTML of stored versions of the owner, by version id: the chunks of all of them
    /// read in one query (one per [`HASHES_PER_QUERY`] hashes).
    async fn assemble(&mut self, owner: &str, stored: Vec<StoredVersion>) -> DbResult<HashMap<String, String>>;
}

/// A version as stored, before its chunks are read: its id, its session, its whole HTML (a
/// row from before chunks; empty after) and its manifest (none before chunks).
type StoredVersion = (String, String, String, Option<Vec<u8>>);

/// Most chunk hashes one query asks for: below SQLite's limit of bound parameters (32,766).
const HASHES_PER_QUERY: usize = 8_192;

/// Manifests read, waiting for their chunks: version id, session, hashes.
type Wanted = (String, String, Vec<Hash>);

/// Splits `stored` into the versions already whole (`out`) and those to put together from
/// chunks, grouped so that no group asks for more than [`HASHES_PER_QUERY`] hashes.
fn plan(stored: Vec<StoredVersion>, out: &mut HashMap<String, String>) -> DbResult<Vec<Vec<Wanted>>> {
    let mut groups: Vec<Vec<Wanted>> = Vec::new();
    let mut in_group = 0;
    for (id, sid, legacy, manifest) in stored {
        let Some(manifest) = manifest else {
            out.insert(id, legacy);
            continue;
        };
        let hashes = chunks::hashes(&manifest)
            .ok_or_else(|| corrupt(format!("version {id} has a manifest of {} bytes", manifest.len())))?;
        if groups.is_empty() || in_group + hashes.len() > HASHES_PER_QUERY {
            groups.push(Vec::new());
            in_group = 0;
        }
        in_group += hashes.len();
        groups.last_mut().expect("a group was pushed").push((id, sid, hashes));
    }
    Ok(groups)
}

/// Puts each wanted version together from the chunk rows read for its group.
fn join(group: Vec<Wanted>, rows: Vec<(String, Vec<u8>, Vec<u8>)>, out: &mut HashMap<String, String>) -> DbResult<()> {
    let mut bodies: HashMap<String, HashMap<Vec<u8>, Vec<u8>>> = HashMap::new();
    for (sid, hash, body) in rows {
        let bytes = crate::codec::unpack(&body).map_err(|e| corrupt(format!("a chunk of session {sid}: {e}")))?;
        bodies.entry(sid).or_default().insert(hash, bytes);
    }
    for (id, sid, hashes) in group {
        let session = bodies.get(&sid);
        let mut html = Vec::new();
        for h in &hashes {
            let bytes =
                session.and_then(|s| s.get(&h[..])).ok_or_else(|| corrupt(format!("version {id} lacks a chunk")))?;
            html.extend_from_slice(bytes);
        }
        let html = String::from_utf8(html).map_err(|_| corrupt(format!("version {id} is not UTF-8")))?;
        out.insert(id, html);
    }
    Ok(())
}

fn corrupt(what: String) -> DbError {
    DbError::Store(StoreError::Other(what))
}

/// The distinct hashes of a manifest, as the column stores them.
fn distinct(hashes: &[Hash]) -> Vec<Vec<u8>> {
    let mut seen = HashSet::new();
    hashes.iter().filter(|h| seen.insert(**h)).map(|h| h.to_vec()).collect()
}

/// The same statements on both backends; a macro because diesel's bounds for a function
/// generic over the connection would be longer than the function.
macro_rules! chunk_store {
    ($conn:ty) => {
        impl ChunkStore for $conn {
            async fn put_chunks(&mut self, owner: &str, sid: &str, html: &[u8]) -> DbResult<Vec<u8>> {
                let pieces = chunks::split(html);
                let hashes: Vec<Hash> = pieces.iter().map(|c| chunks::hash(c)).collect();
                let wanted = distinct(&hashes);
                let present: HashSet<Vec<u8>> = document_chunks::table
                    .filter(document_chunks::owner.eq(owner))
                    .filter(document_chunks::session_id.eq(sid))
                    .filter(document_chunks::hash.eq_any(&wanted))
                    .select(document_chunks::hash)
                    .load::<Vec<u8>>(self)
                    .await?
                    .into_iter()
                    .collect();
                // Row by row in the commit's transaction: at most a few hundred (`chunks.rs`),
                // and diesel has no batch insert of these value tuples for SQLite.
                let mut stored = HashSet::new();
                for (chunk, h) in pieces.iter().zip(&hashes) {
                    if present.contains(&h[..]) || !stored.insert(*h) {
                        continue;
                    }
                    diesel::insert_into(document_chunks::table)
                        .values((
                            document_chunks::owner.eq(owner),
                            document_chunks::session_id.eq(sid),
                            document_chunks::hash.eq(&h[..]),
                            document_chunks::body.eq(crate::codec::pack(chunk, crate::codec::Codec::Fast)),
                        ))
                        .execute(self)
                        .await?;
                }
                Ok(chunks::manifest(&hashes))
            }

            async fn version_html(&mut self, owner: &str, sid: &str, version_id: &str) -> DbResult<Option<String>> {
                let stored: Option<StoredVersion> = document_versions::table
                    .find(version_id)
                    .filter(document_versions::owner.eq(owner))
                    .filter(document_versions::session_id.eq(sid))
                    .select((
                        document_versions::version_id,
                        document_versions::session_id,
                        document_versions::html,
                        document_versions::chunks,
                    ))
                    .get_result(self)
                    .await
                    .optional()?;
                match stored {
                    Some(stored) => Ok(self.assemble(owner, vec![stored]).await?.remove(version_id)),
                    None => Ok(None),
                }
            }

            async fn assemble(&mut self, owner: &str, stored: Vec<StoredVersion>) -> DbResult<HashMap<String, String>> {
                let mut out = HashMap::with_capacity(stored.len());
                for group in plan(stored, &mut out)? {
                    let sids: Vec<&str> =
                        group.iter().map(|(_, sid, _)| sid.as_str()).collect::<HashSet<_>>().into_iter().collect();
                    let all: Vec<Hash> = group.iter().flat_map(|(_, _, h)| h.iter().copied()).collect();
                    let rows = document_chunks::table
                        .filter(document_chunks::owner.eq(owner))
                        .filter(document_chunks::session_id.eq_any(&sids))
                        .filter(document_chunks::hash.eq_any(distinct(&all)))
                        .select((document_chunks::session_id, document_chunks::hash, document_chunks::body))
                        .load(self)
                        .await?;
                    join(group, rows, &mut out)?;
                }
                Ok(out)
            }
        }
    };
}

chunk_store!(SqliteConn);
chunk_store!(PgConn);

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
    let r: DbResult<Result<CommittedRow, Refused>> = with_tx!(db, |conn| {
        conn.lock_owner(&lock_key).await?;
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
        let manifest = conn.put_chunks(&owner_s, sid, html.as_bytes()).await?;
        diesel::insert_into(document_versions::table)
            .values((
                document_versions::version_id.eq(&new.version_id),
                document_versions::owner.eq(&owner_s),
                document_versions::session_id.eq(sid),
                document_versions::html.eq(""),
                document_versions::chunks.eq(Some(&manifest)),
                document_versions::section_count.eq(new.section_count),
                document_versions::source.eq(&new.source),
                document_versions::created_at.eq(at),
            ))
            .execute(conn)
            .await?;
        Ok(Ok((Some(new.version_id.clone()), new.section_count, title, created_at, at)))
    });
    db.sessions_changed(&owner_s).await;
    Ok(match r? {
        Ok((version_id, section_count, title, created_at, updated_at)) => Some(CommitOutcome::Committed(record(
            owner,
            session,
            (html, version_id, section_count, title, created_at, updated_at),
        ))),
        Err(Refused::Stale(current_version)) => Some(CommitOutcome::Stale { current_version }),
        Err(Refused::JobNotRunning) => None,
    })
}

/// Versions converted per transaction by [`convert_versions`].
const CONVERT_BATCH: i64 = 64;

/// Stores the versions written before chunks (migration 000021) as chunks, a batch per
/// transaction, and empties their `html`; answers how many. Run by `Db::migrate` at every
/// start: with nothing left (the partial index `document_versions_unconverted` is empty) it
/// is one empty index read.
pub(crate) async fn convert_versions(db: &Db) -> Result<u64, StoreError> {
    let mut converted = 0u64;
    loop {
        let n: DbResult<usize> = with_tx!(db, |conn| {
            let rows: Vec<(String, String, String, String)> = document_versions::table
                .filter(document_versions::chunks.is_null())
                .select((
                    document_versions::version_id,
                    document_versions::owner,
                    document_versions::session_id,
                    document_versions::html,
                ))
                .limit(CONVERT_BATCH)
                .load(conn)
                .await?;
            for (version_id, owner, sid, html) in &rows {
                let manifest = conn.put_chunks(owner, sid, html.as_bytes()).await?;
                diesel::update(document_versions::table.find(version_id))
                    .set((document_versions::chunks.eq(Some(manifest)), document_versions::html.eq("")))
                    .execute(conn)
                    .await?;
            }
            Ok(rows.len())
        });
        let n = n?;
        converted += n as u64;
        if n == 0 {
            return Ok(converted);
        }
    }
}

/// The migration that stores versions as chunks (the digits of its folder's name).
pub(crate) const CHUNKS_MIGRATION: &str = "20261130000021";

/// Writes the HTML of every version stored as chunks back into its row (for reverting
/// migration 000021, whose `down.sql` cannot put chunks together and refuses while any
/// version is stored only as chunks). Answers how many.
pub(crate) async fn unconvert_versions(db: &Db) -> Result<u64, StoreError> {
    let mut restored = 0u64;
    loop {
        let n: DbResult<usize> = with_tx!(db, |conn| {
            let rows: Vec<(String, String, String)> = document_versions::table
                .filter(document_versions::chunks.is_not_null())
                .select((document_versions::version_id, document_versions::owner, document_versions::session_id))
                .limit(CONVERT_BATCH)
                .load(conn)
                .await?;
            for (version_id, owner, sid) in &rows {
                let html = conn.version_html(owner, sid, version_id).await?.unwrap_or_default();
                diesel::update(document_versions::table.find(version_id))
                    .set((document_versions::chunks.eq(None::<Vec<u8>>), document_versions::html.eq(html)))
                    .execute(conn)
                    .await?;
            }
            Ok(rows.len())
        });
        let n = n?;
        restored += n as u64;
        if n == 0 {
            return Ok(restored);
        }
    }
}

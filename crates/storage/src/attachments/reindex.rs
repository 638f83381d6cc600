//! Passages indexed again when the database opens: those of the attachments listed in
//! `attachment_reindex`, whose index entries are stale.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use redline_ports::StoreError;

use super::index::{entries_for, index_texts, PassageWriter};
use crate::db::Db;
use crate::error::DbResult;
use crate::schema::{attachment_passages, attachment_reindex};

/// Attachments re-indexed per round of [`reindex_passages`].
const REINDEX_ROUND: i64 = 16;

/// Indexes the passages of every attachment listed in `attachment_reindex` (those whose index
/// entries a migration left stale), one transaction per attachment; answers how many. Run
/// when the database opens, so that searches find them once it has.
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

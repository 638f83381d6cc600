//! The PostgreSQL side of the index: passages inserted with their `tsvector` in its binary
//! form, in bounded batches, under a lock on the attachment's row; the `ts_rank` search within
//! a scope.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel_async::RunQueryDsl;
use redline_ports::StoreError;

use super::index::{IndexEntries, PassageWriter};
use super::search::{FullText, HitRow};
use crate::db::PgConn;
use crate::error::DbResult;
use crate::lexemes::{self, QueryWord};
use crate::schema::attachments;

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

impl FullText for PgConn {
    async fn search_scope(&mut self, scope: &str, words: &[QueryWord], limit: i64) -> DbResult<Vec<HitRow>> {
        let Some(query) = lexemes::tsquery(words) else {
            return Ok(Vec::new());
        };
        // The `tsquery` is built from lexemes only (quoted), so its text form never fails.
        // The matches are ranked first and only the best joined (the planner, which cannot
        // estimate how many passages a `tsquery` matches, would otherwise hash thousands of
        // passages with their text to join them); the GIN index over (scope, tsv) finds them
        // within the session.
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

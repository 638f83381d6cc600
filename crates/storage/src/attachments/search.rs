//! `AttachmentSearch`: a query reduced to plain words and their lexemes, searched within the
//! session's scope by each backend's [`FullText`].

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Double, Text};
use diesel_async::RunQueryDsl;
use redline_domain::attachment::query_terms;
use redline_domain::{Owner, SessionId};
use redline_ports::attachments::{AttachmentState, AttachmentSummary, Passage};
use redline_ports::{AttachmentSearch, StoreError};

use super::scope_token;
use crate::db::Db;
use crate::error::DbResult;
use crate::lexemes::{self, QueryWord};
use crate::schema::attachments;

/// Most passages one search answers.
const MAX_LIMIT: i64 = 100;

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

//! The SQLite side of the index: passages and their FTS5 entries written from JSON arrays made
//! before the transaction, each (owner, session) scope numbered with its own range of passage
//! ids (the FTS5 rowids), and the FTS5 search within that range.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel_async::RunQueryDsl;
use redline_ports::StoreError;
use serde_json::Value;

use super::index::{IndexEntries, PassageWriter};
use super::search::{FullText, HitRow};
use crate::db::SqliteConn;
use crate::error::DbResult;
use crate::lexemes::{self, QueryWord};
use crate::schema::attachments;

/// Passages as two JSON arrays of strings: their texts, and their lexemes.
pub(crate) struct JsonParts {
    texts: String,
    lexemes: String,
}

/// [`JsonParts`] of `texts`, with the thread's lexer. Made on the blocking pool before the
/// transaction, on as many threads as the lexemes, then joined ([`join_parts`]): SQLite's
/// write transaction only binds them (serialising the JSON there, with the writer lock
/// held, was a few percent of every attachment).
pub(super) fn sqlite_json(lexer: &mut lexemes::Lexer, texts: &[String]) -> Result<JsonParts, String> {
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
pub(super) fn join_parts(parts: Vec<JsonParts>) -> JsonParts {
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

#[derive(QueryableByName)]
struct MaxId {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

/// The passage ids (and so the FTS5 rowids) of one (owner, session) scope on SQLite: its
/// number `n` from `attachment_scopes` gives it `(n << 32) + 1 ..= (n << 32) + 0xFFFF_FFFF`,
/// so a search bounds the rowid instead of matching a scope token.
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

#[cfg(test)]
mod tests {
    use super::*;

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

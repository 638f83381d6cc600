//! `AttachmentStore` and `AttachmentSearch` on both backends: attachment rows, their passages
//! and the full-text index over the passages, in the same database as everything else.
//!
//! The lexemes are computed in Rust (`lexemes.rs`: English Snowball stems, PostgreSQL's stop
//! words), on several threads for a large attachment, before the transaction opens
//! ([`index`]); the database only stores and indexes them.
//!
//! - SQLite ([`sqlite`]): a contentless FTS5 table (`contentless_delete`) fed each passage's
//!   lexemes in the transaction that writes the passages, ranked with BM25; a trigger removes
//!   the entries of deleted passages (also for `ON DELETE CASCADE`).
//! - PostgreSQL ([`postgres`]): a `tsvector` column written with the row (sent in
//!   `tsvector`'s binary form, which the server reads without parsing text), with a GIN index
//!   over (scope, tsv) (btree_gin), ranked with `ts_rank`. The passages have no foreign key
//!   (its check per row costs a seventh of the insert): the writer locks the attachment's row
//!   instead, and a trigger on `attachments` deletes them.
//!
//! Every passage carries a `scope` token naming its (owner, session) ([`scope_token`]), and
//! a search is confined to it inside the index itself: on PostgreSQL by the `scope` column in
//! the GIN index beside the vector (or a B-tree of its own where btree_gin is missing), on
//! SQLite by the passage ids, which are the FTS5 rowids: each scope has its own range of them
//! (`sqlite::ScopeRange`), and a search bounds the rowid.
//!
//! A query never reaches either full-text language as typed ([`search`]):
//! `redline_domain::attachment::query_terms` reduces it to plain words, which the same
//! normalisation turns into lexemes, quoted (FTS5) or written as a `tsquery`; any of the
//! words may match (a word with inner joiners, `0.3` or `e-mail`, as a phrase of its parts).
//!
//! Passages listed in `attachment_reindex` (a migration that changes how passages are indexed
//! lists the attachments it leaves stale) are indexed again when the database opens, before
//! it serves ([`reindex`]).
//!
//! The rows and their conversions are in [`rows`]; the store's operations in [`store`].

mod index;
mod postgres;
mod reindex;
mod rows;
mod search;
mod sqlite;
mod store;

use redline_domain::{Owner, SessionId};
use redline_ports::StoreError;
use sha2::{Digest, Sha256};

pub(crate) use reindex::reindex_passages;

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
}

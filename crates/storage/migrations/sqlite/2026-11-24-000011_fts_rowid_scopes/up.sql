-- The search is confined to a session by rowid ranges instead of a scope token in the index:
-- every (owner, session) scope gets a number `n`, and its passages take the ids from
-- `(n << 32) + 1` on, so that one session's entries are one rowid range of the FTS5 index.
-- A search bounds the rowid (FTS5 seeks within each term's list) instead of intersecting
-- its words with the scope token's list, which named every passage of the session: a search
-- of one session among many is 3-4 times faster, and each passage has one index entry less
-- to write (docs/benchmarks.md §4, eleventh session).
CREATE TABLE attachment_scopes (
    scope_no INTEGER PRIMARY KEY,
    scope TEXT NOT NULL UNIQUE
);
INSERT INTO attachment_scopes (scope) SELECT DISTINCT scope FROM attachment_passages ORDER BY scope;

-- The stored passages renumbered into their scope's range, in their order, in two steps so
-- that no two rows meet on the way (SQLite checks the key row by row): first to the negative
-- of their id (ids are positive), then from there into the ranges. One step would do for ids
-- written before this migration (all below 1 << 32), but not for ids in ranges numbered
-- otherwise (this migration reverted and applied again).
UPDATE attachment_passages SET passage_id = -passage_id;
UPDATE attachment_passages SET passage_id = renumbered.new_id
FROM (
    SELECT p.passage_id AS old_id,
           (s.scope_no << 32) + row_number() OVER (PARTITION BY p.scope ORDER BY p.passage_id DESC) AS new_id
    FROM attachment_passages p JOIN attachment_scopes s ON s.scope = p.scope
) AS renumbered
WHERE attachment_passages.passage_id = renumbered.old_id;

-- The index without the scope column, filled again by the application when the database
-- opens (the lexemes are computed in Rust): every attachment with passages is listed.
DROP TRIGGER attachment_passages_ad;
DROP TABLE attachment_fts;
CREATE VIRTUAL TABLE attachment_fts USING fts5(
    text,
    content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO attachment_fts (attachment_fts, rank) VALUES ('automerge', 8);
CREATE TRIGGER attachment_passages_ad AFTER DELETE ON attachment_passages BEGIN
    DELETE FROM attachment_fts WHERE rowid = old.passage_id;
END;
INSERT OR IGNORE INTO attachment_reindex (attachment_id) SELECT DISTINCT attachment_id FROM attachment_passages;

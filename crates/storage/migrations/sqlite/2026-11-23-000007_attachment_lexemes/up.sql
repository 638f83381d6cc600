-- The attachment index gets its lexemes from the application (crates/storage/src/lexemes.rs:
-- English Snowball stems, PostgreSQL's English stop words left out), computed before the
-- transaction, instead of tokenizing with porter inside it. The FTS5 table keeps only the
-- index (contentless); entries are written with their passages and removed by rowid.
DROP TRIGGER attachment_passages_au;
DROP TRIGGER attachment_passages_ad;
DROP TRIGGER attachment_passages_ai;
DROP TABLE attachment_fts;

-- The text indexed is already lexemes; unicode61 only splits it at spaces (and folds accents
-- and case on both sides, as before).
CREATE VIRTUAL TABLE attachment_fts USING fts5(
    scope, text,
    content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);
-- Rank by BM25 over the text only (the scope column weighs nothing).
INSERT INTO attachment_fts (attachment_fts, rank) VALUES ('rank', 'bm25(0.0, 1.0)');

-- Deleted passages leave the index, also when they go by ON DELETE CASCADE.
CREATE TRIGGER attachment_passages_ad AFTER DELETE ON attachment_passages BEGIN
    DELETE FROM attachment_fts WHERE rowid = old.passage_id;
END;

-- The attachments whose passages were indexed the old way: the application indexes them
-- again when it opens the database (one transaction each), then removes them from here.
CREATE TABLE attachment_reindex (
    attachment_id TEXT PRIMARY KEY NOT NULL REFERENCES attachments (attachment_id) ON DELETE CASCADE
);
INSERT INTO attachment_reindex (attachment_id) SELECT DISTINCT attachment_id FROM attachment_passages;

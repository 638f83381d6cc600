-- Back to 000009: the index with the scope column, filled again by the application when the
-- database opens. The passages keep their ids (that code takes the next id after the
-- largest, wherever it is).
DROP TRIGGER attachment_passages_ad;
DROP TABLE attachment_fts;
CREATE VIRTUAL TABLE attachment_fts USING fts5(
    scope, text,
    content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO attachment_fts (attachment_fts, rank) VALUES ('rank', 'bm25(0.0, 1.0)');
INSERT INTO attachment_fts (attachment_fts, rank) VALUES ('automerge', 8);
CREATE TRIGGER attachment_passages_ad AFTER DELETE ON attachment_passages BEGIN
    DELETE FROM attachment_fts WHERE rowid = old.passage_id;
END;
INSERT OR IGNORE INTO attachment_reindex (attachment_id) SELECT DISTINCT attachment_id FROM attachment_passages;
DROP TABLE attachment_scopes;

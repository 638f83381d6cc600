-- Back to 000006: FTS5 over the passages' text with porter, kept by triggers, rebuilt here.
DROP TABLE attachment_reindex;
DROP TRIGGER attachment_passages_ad;
DROP TABLE attachment_fts;

CREATE VIRTUAL TABLE attachment_fts USING fts5(
    scope, text,
    content = 'attachment_passages', content_rowid = 'passage_id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO attachment_fts (attachment_fts, rank) VALUES ('rank', 'bm25(0.0, 1.0)');
CREATE TRIGGER attachment_passages_ai AFTER INSERT ON attachment_passages BEGIN
    INSERT INTO attachment_fts (rowid, scope, text) VALUES (new.passage_id, new.scope, new.text);
END;
CREATE TRIGGER attachment_passages_ad AFTER DELETE ON attachment_passages BEGIN
    INSERT INTO attachment_fts (attachment_fts, rowid, scope, text) VALUES ('delete', old.passage_id, old.scope, old.text);
END;
CREATE TRIGGER attachment_passages_au AFTER UPDATE ON attachment_passages BEGIN
    INSERT INTO attachment_fts (attachment_fts, rowid, scope, text) VALUES ('delete', old.passage_id, old.scope, old.text);
    INSERT INTO attachment_fts (rowid, scope, text) VALUES (new.passage_id, new.scope, new.text);
END;
INSERT INTO attachment_fts (attachment_fts) VALUES ('rebuild');

-- Attachments (decisions.md §6): files attached to a session for the AI to search. The bytes
-- are in the blob store; the rows go with their session.
CREATE TABLE attachments (
    attachment_id TEXT PRIMARY KEY NOT NULL,
    owner TEXT NOT NULL,
    session_id TEXT NOT NULL,
    filename TEXT NOT NULL,
    content_type TEXT NOT NULL,
    size_bytes BIGINT NOT NULL,
    state TEXT NOT NULL,
    source TEXT NOT NULL,
    job_id TEXT,
    error TEXT,
    preview TEXT NOT NULL DEFAULT '',
    text_chars BIGINT NOT NULL DEFAULT 0,
    passage_count BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    upload_expires_at BIGINT,
    FOREIGN KEY (owner, session_id) REFERENCES sessions(owner, session_id) ON DELETE CASCADE
);
CREATE INDEX attachments_session ON attachments (owner, session_id, created_at);
CREATE INDEX attachments_job ON attachments (job_id);
CREATE INDEX attachments_awaiting ON attachments (owner, upload_expires_at) WHERE state = 'awaiting_upload';

-- The passages of processed attachments. `scope` is one token naming (owner, session): the
-- full-text index holds it in a column of its own, so that a search reads only the
-- session's part of the index.
CREATE TABLE attachment_passages (
    passage_id INTEGER PRIMARY KEY,
    attachment_id TEXT NOT NULL REFERENCES attachments (attachment_id) ON DELETE CASCADE,
    scope TEXT NOT NULL,
    chunk_index BIGINT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX attachment_passages_attachment ON attachment_passages (attachment_id, chunk_index);

-- FTS5 over the passages (external content: the text is stored once, in the table above).
-- porter + unicode61: English stemming, any script tokenized, accents folded.
CREATE VIRTUAL TABLE attachment_fts USING fts5(
    scope, text,
    content = 'attachment_passages', content_rowid = 'passage_id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
-- Rank by BM25 over the text only (the scope column weighs nothing).
INSERT INTO attachment_fts (attachment_fts, rank) VALUES ('rank', 'bm25(0.0, 1.0)');

-- The index follows the table, also when rows go by ON DELETE CASCADE.
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

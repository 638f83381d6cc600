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

-- The passages of processed attachments, with their full-text vector (English stemming and
-- stop words; other scripts are kept as words). `scope` names (owner, session).
CREATE TABLE attachment_passages (
    passage_id BIGSERIAL PRIMARY KEY,
    attachment_id TEXT NOT NULL REFERENCES attachments (attachment_id) ON DELETE CASCADE,
    scope TEXT NOT NULL,
    chunk_index BIGINT NOT NULL,
    text TEXT NOT NULL,
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, text)) STORED
);
CREATE INDEX attachment_passages_attachment ON attachment_passages (attachment_id, chunk_index);
CREATE INDEX attachment_passages_scope ON attachment_passages (scope);
CREATE INDEX attachment_passages_tsv ON attachment_passages USING GIN (tsv);

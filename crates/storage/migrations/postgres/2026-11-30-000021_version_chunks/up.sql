-- Versions stored by what changed (src/chunks.rs): each version lists the hashes of its
-- content-defined chunks, and a session keeps each chunk once, compressed. Rows written before
-- keep their HTML in `html` until `Db::migrate` converts them (`chunks IS NULL` marks them).
CREATE TABLE document_chunks (
    owner TEXT NOT NULL,
    session_id TEXT NOT NULL,
    hash BYTEA NOT NULL,
    body BYTEA NOT NULL,
    PRIMARY KEY (owner, session_id, hash),
    FOREIGN KEY (owner, session_id) REFERENCES sessions(owner, session_id) ON DELETE CASCADE
);
-- Chunks are compressed already: kept out of line, not compressed again.
ALTER TABLE document_chunks ALTER COLUMN body SET STORAGE EXTERNAL;
ALTER TABLE document_versions ADD COLUMN chunks BYTEA;
CREATE INDEX document_versions_unconverted ON document_versions (version_id) WHERE chunks IS NULL;
-- The current document is the session's current version: no second copy on the session.
ALTER TABLE sessions DROP COLUMN html;

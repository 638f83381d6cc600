-- Documents: the current HTML lives on the session row; every change is a version.
ALTER TABLE sessions ADD COLUMN html TEXT NOT NULL DEFAULT '';

CREATE TABLE document_versions (
    version_id TEXT PRIMARY KEY NOT NULL,
    owner TEXT NOT NULL,
    session_id TEXT NOT NULL,
    html TEXT NOT NULL,
    section_count BIGINT NOT NULL,
    source TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    FOREIGN KEY (owner, session_id) REFERENCES sessions(owner, session_id) ON DELETE CASCADE
);
CREATE INDEX document_versions_session ON document_versions (owner, session_id, created_at);

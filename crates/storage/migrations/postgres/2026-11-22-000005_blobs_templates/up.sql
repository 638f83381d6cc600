-- Files kept in the blob store for a session (extracted images, rendered exports): the rows
-- say who owns each blob, and go with their session.
CREATE TABLE images (
    image_id TEXT PRIMARY KEY NOT NULL,
    owner TEXT NOT NULL,
    session_id TEXT NOT NULL,
    content_type TEXT NOT NULL,
    size_bytes BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    FOREIGN KEY (owner, session_id) REFERENCES sessions(owner, session_id) ON DELETE CASCADE
);
CREATE INDEX images_session ON images (owner, session_id);

CREATE TABLE export_files (
    export_id TEXT PRIMARY KEY NOT NULL,
    owner TEXT NOT NULL,
    session_id TEXT NOT NULL,
    format TEXT NOT NULL,
    filename TEXT NOT NULL,
    content_type TEXT NOT NULL,
    size_bytes BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    FOREIGN KEY (owner, session_id) REFERENCES sessions(owner, session_id) ON DELETE CASCADE
);
CREATE INDEX export_files_session ON export_files (owner, session_id);
CREATE INDEX export_files_expiry ON export_files (expires_at);

-- Templates saved by an owner (the built-in ones are product content, not rows).
CREATE TABLE templates (
    template_id TEXT PRIMARY KEY NOT NULL,
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT,
    html TEXT NOT NULL,
    section_count BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX templates_owner ON templates (owner, created_at);

-- Jobs (chat turns, attachment processing), their intermediate events, and chat history.
CREATE TABLE jobs (
    job_id TEXT PRIMARY KEY NOT NULL,
    owner TEXT NOT NULL,
    session_id TEXT NOT NULL,
    job_type TEXT NOT NULL,
    status TEXT NOT NULL,
    progress INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    request TEXT NOT NULL,
    result TEXT,
    error TEXT,
    metadata TEXT NOT NULL,
    state TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    finished_at BIGINT,
    lease_until BIGINT
);
CREATE INDEX jobs_owner_created ON jobs (owner, created_at);
CREATE INDEX jobs_owner_session_created ON jobs (owner, session_id, created_at);
CREATE INDEX jobs_status_created ON jobs (status, created_at);

CREATE TABLE job_events (
    job_id TEXT NOT NULL,
    sequence BIGINT NOT NULL,
    kind TEXT NOT NULL,
    content TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (job_id, sequence)
);

CREATE TABLE chat_messages (
    message_id TEXT PRIMARY KEY NOT NULL,
    owner TEXT NOT NULL,
    session_id TEXT NOT NULL,
    position BIGINT NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    job_id TEXT,
    version_before TEXT,
    version_after TEXT,
    active BOOLEAN NOT NULL DEFAULT TRUE,
    created_at BIGINT NOT NULL,
    FOREIGN KEY (owner, session_id) REFERENCES sessions(owner, session_id) ON DELETE CASCADE
);
CREATE INDEX chat_messages_session ON chat_messages (owner, session_id, position);

DROP INDEX jobs_owner_created;
DROP INDEX jobs_owner_session_created;
DROP INDEX jobs_owner_status_created;
DROP INDEX jobs_owner_type_created;
DROP INDEX jobs_owner_type_status_created;
CREATE INDEX jobs_owner_created ON jobs (owner, created_at);
CREATE INDEX jobs_owner_session_created ON jobs (owner, session_id, created_at);
DROP INDEX sessions_owner_updated;
CREATE INDEX sessions_owner_updated ON sessions (owner, updated_at);

-- Every listing reads one owner's rows through an index that starts with the owner and ends
-- with the listing's whole sort key (keyset pages: no sort, no scan of other owners' rows),
-- one index per filter an endpoint offers.
DROP INDEX jobs_owner_created;
DROP INDEX jobs_owner_session_created;
CREATE INDEX jobs_owner_created ON jobs (owner, created_at, job_id);
CREATE INDEX jobs_owner_session_created ON jobs (owner, session_id, created_at, job_id);
CREATE INDEX jobs_owner_status_created ON jobs (owner, status, created_at, job_id);
CREATE INDEX jobs_owner_type_created ON jobs (owner, job_type, created_at, job_id);
CREATE INDEX jobs_owner_type_status_created ON jobs (owner, job_type, status, created_at, job_id);
DROP INDEX sessions_owner_updated;
CREATE INDEX sessions_owner_updated ON sessions (owner, updated_at, session_id);

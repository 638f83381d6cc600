ALTER TABLE jobs RESET (autovacuum_vacuum_scale_factor, autovacuum_analyze_scale_factor);
ALTER TABLE job_events RESET (autovacuum_vacuum_scale_factor, autovacuum_analyze_scale_factor);
DROP INDEX jobs_finished;
DROP INDEX jobs_unarchived;
-- Archived jobs are finished jobs, deleted an hour after they finish (REDLINE_JOB_RETENTION_SECS):
-- reverting drops them rather than leave them unreadable.
DELETE FROM jobs WHERE archive IS NOT NULL;
ALTER TABLE jobs DROP COLUMN archive;

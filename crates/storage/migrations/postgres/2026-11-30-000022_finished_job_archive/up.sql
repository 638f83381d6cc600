-- A finished job kept as one compressed value (src/jobs/archive.rs): its request, state,
-- result, metadata and events, which were four JSON columns and a row per event. Jobs that
-- finished before this are read as they are.
ALTER TABLE jobs ADD COLUMN archive BYTEA;
-- The sweep finds the jobs to archive through this (only jobs not archived yet are in it) and
-- the finished jobs past retention through the next: without them it read the whole table
-- every second, in a write transaction.
CREATE INDEX jobs_unarchived ON jobs (finished_at) WHERE archive IS NULL;
CREATE INDEX jobs_finished ON jobs (finished_at);
-- Jobs churn (a turn updates its job a few times, the archive rewrites it, retention deletes
-- it): autovacuum visits these tables at 2 % of dead rows rather than the default 20 %.
ALTER TABLE jobs SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
ALTER TABLE job_events SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);

-- How far processing got when it stopped. An attachment whose job failed or was cancelled
-- keeps that job's end (state, error, progress) when the job is deleted an hour later.
ALTER TABLE attachments ADD COLUMN progress INTEGER NOT NULL DEFAULT 0;

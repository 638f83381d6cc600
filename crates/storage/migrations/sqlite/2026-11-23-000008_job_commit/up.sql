-- The version a chat job committed. Set in the transaction that commits the document, while
-- the job is still in progress: from then on the job can no longer be cancelled, and recovery
-- does not run its turn again (that would apply its changes twice).
ALTER TABLE jobs ADD COLUMN committed_version TEXT;

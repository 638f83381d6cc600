ALTER TABLE jobs DROP COLUMN committed_version;

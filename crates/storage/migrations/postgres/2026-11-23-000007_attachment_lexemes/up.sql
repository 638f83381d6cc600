-- The passages' vectors come from the application (crates/storage/src/lexemes.rs: English
-- Snowball stems, the English stop words left out, as `to_tsvector('english', …)` did),
-- computed before the transaction, instead of a generated column computed inside it.
-- Dropping the column drops its GIN index.
ALTER TABLE attachment_passages DROP COLUMN tsv;
-- NULL only until the application has indexed a passage written before this migration.
ALTER TABLE attachment_passages ADD COLUMN tsv tsvector;
CREATE INDEX attachment_passages_tsv ON attachment_passages USING GIN (tsv);

-- The attachments whose passages were indexed the old way: the application indexes them
-- again when it opens the database (one transaction each), then removes them from here.
CREATE TABLE attachment_reindex (
    attachment_id TEXT PRIMARY KEY REFERENCES attachments (attachment_id) ON DELETE CASCADE
);
INSERT INTO attachment_reindex (attachment_id) SELECT DISTINCT attachment_id FROM attachment_passages;

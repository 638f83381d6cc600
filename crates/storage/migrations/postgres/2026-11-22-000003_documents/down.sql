DROP TABLE document_versions;
ALTER TABLE sessions DROP COLUMN html;

-- Back to whole copies: each version's HTML again in `html`, and the session's current HTML
-- on its row. Run `redline` of this build once before reverting: SQL cannot put chunks
-- together, so this refuses while any version is stored only as chunks.
DO $$ BEGIN
    IF EXISTS (SELECT 1 FROM document_versions WHERE chunks IS NOT NULL) THEN
        RAISE EXCEPTION 'versions are stored as chunks: convert them back first';
    END IF;
END $$;
ALTER TABLE sessions ADD COLUMN html TEXT NOT NULL DEFAULT '';
UPDATE sessions SET html = COALESCE(
    (SELECT v.html FROM document_versions v WHERE v.version_id = sessions.version_id), '');
DROP INDEX document_versions_unconverted;
ALTER TABLE document_versions DROP COLUMN chunks;
DROP TABLE document_chunks;

-- One GIN index over (scope, tsv) instead of a B-tree on scope and a GIN on tsv: a search's
-- words and its session are then matched inside one index, which skips to the session's
-- passages in each word's list, instead of reading every session's entries for the words and
-- intersecting them with the session's rows (docs/benchmarks.md §4, eleventh session). The
-- cost of writing a passage is the same (one GIN entry more, one B-tree fewer).
--
-- A GIN index on a text column needs the btree_gin extension (a trusted extension: the owner
-- of the database may create it). Where it cannot be created, the two indexes stay as they
-- are and the search works as before, only slower on a large database.
DO $$
BEGIN
    CREATE EXTENSION IF NOT EXISTS btree_gin;
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'btree_gin cannot be created (%): the passages keep their two indexes', SQLERRM;
END
$$;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'btree_gin') THEN
        CREATE INDEX attachment_passages_scope_tsv ON attachment_passages USING GIN (scope, tsv);
        DROP INDEX attachment_passages_tsv;
        DROP INDEX attachment_passages_scope;
    END IF;
END
$$;

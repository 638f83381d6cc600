-- Back to the B-tree on scope and the GIN on tsv (the extension is left: it may serve others).
CREATE INDEX IF NOT EXISTS attachment_passages_scope ON attachment_passages (scope);
CREATE INDEX IF NOT EXISTS attachment_passages_tsv ON attachment_passages USING GIN (tsv);
DROP INDEX IF EXISTS attachment_passages_scope_tsv;

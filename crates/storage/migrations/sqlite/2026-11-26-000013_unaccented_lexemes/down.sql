-- Back to 000012: the lexemes of the older code keep their accents, so every stored
-- attachment is indexed again, by that code, when it opens the database.
INSERT OR IGNORE INTO attachment_reindex (attachment_id) SELECT DISTINCT attachment_id FROM attachment_passages;

-- Lexemes lose the accents of Latin and Greek letters and Hebrew and Arabic vowel points
-- (crates/storage/src/lexemes.rs): every stored attachment is indexed again when the
-- application opens the database, so that `αθηνα` finds `Αθήνα` in what was stored before.
INSERT OR IGNORE INTO attachment_reindex (attachment_id) SELECT DISTINCT attachment_id FROM attachment_passages;

DROP TRIGGER attachment_passages_au;
DROP TRIGGER attachment_passages_ad;
DROP TRIGGER attachment_passages_ai;
DROP TABLE attachment_fts;
DROP TABLE attachment_passages;
DROP TABLE attachments;

DROP TABLE attachment_passages;
DROP TABLE attachments;

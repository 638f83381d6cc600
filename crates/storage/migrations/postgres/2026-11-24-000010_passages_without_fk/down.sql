DROP TRIGGER attachments_delete_passages ON attachments;
DROP FUNCTION attachment_passages_cascade();
DELETE FROM attachment_passages p WHERE NOT EXISTS (SELECT 1 FROM attachments a WHERE a.attachment_id = p.attachment_id);
ALTER TABLE attachment_passages ADD CONSTRAINT attachment_passages_attachment_id_fkey
    FOREIGN KEY (attachment_id) REFERENCES attachments (attachment_id) ON DELETE CASCADE;

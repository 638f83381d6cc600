-- The passages no longer reference their attachment by a foreign key: its check ran once per
-- inserted passage (a trigger and a lookup each), about a seventh of an attachment's insert.
-- The store locks the attachment's row before it writes the passages (so the attachment
-- cannot go in between), and this trigger removes the passages of a deleted attachment, as
-- ON DELETE CASCADE did (also when its session is deleted).
ALTER TABLE attachment_passages DROP CONSTRAINT attachment_passages_attachment_id_fkey;

CREATE FUNCTION attachment_passages_cascade() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM attachment_passages WHERE attachment_id = OLD.attachment_id;
    RETURN OLD;
END
$$;

CREATE TRIGGER attachments_delete_passages AFTER DELETE ON attachments
    FOR EACH ROW EXECUTE FUNCTION attachment_passages_cascade();

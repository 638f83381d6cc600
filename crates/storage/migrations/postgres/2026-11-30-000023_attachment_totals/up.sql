-- Each owner's attachment bytes (every attachment but an upload not made yet), kept by the
-- trigger below: an upload's storage check reads this one row instead of every attachment
-- of the owner, which grew with each upload.
CREATE TABLE attachment_totals (
    owner TEXT PRIMARY KEY NOT NULL,
    bytes BIGINT NOT NULL
);
INSERT INTO attachment_totals (owner, bytes)
    SELECT owner, SUM(size_bytes)::BIGINT FROM attachments WHERE state <> 'awaiting_upload' GROUP BY owner;

CREATE FUNCTION attachment_totals_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        IF OLD.state <> 'awaiting_upload' THEN
            UPDATE attachment_totals SET bytes = bytes - OLD.size_bytes WHERE owner = OLD.owner;
        END IF;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        IF NEW.state <> 'awaiting_upload' THEN
            INSERT INTO attachment_totals (owner, bytes) VALUES (NEW.owner, NEW.size_bytes)
                ON CONFLICT (owner) DO UPDATE SET bytes = attachment_totals.bytes + EXCLUDED.bytes;
        END IF;
    END IF;
    RETURN NULL;
END
$$;

-- Also when a session's deletion deletes its attachments (the cascade deletes row by row).
CREATE TRIGGER attachment_totals AFTER INSERT OR DELETE OR UPDATE OF owner, state, size_bytes
    ON attachments FOR EACH ROW EXECUTE FUNCTION attachment_totals_change();

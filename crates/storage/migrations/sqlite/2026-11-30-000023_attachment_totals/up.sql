-- Each owner's attachment bytes (every attachment but an upload not made yet), kept by the
-- triggers below: an upload's storage check reads this one row instead of every attachment
-- of the owner, which grew with each upload.
CREATE TABLE attachment_totals (
    owner TEXT PRIMARY KEY NOT NULL,
    bytes BIGINT NOT NULL
) WITHOUT ROWID;
INSERT INTO attachment_totals (owner, bytes)
    SELECT owner, SUM(size_bytes) FROM attachments WHERE state <> 'awaiting_upload' GROUP BY owner;

CREATE TRIGGER attachment_totals_insert AFTER INSERT ON attachments
WHEN NEW.state <> 'awaiting_upload'
BEGIN
    INSERT INTO attachment_totals (owner, bytes) VALUES (NEW.owner, NEW.size_bytes)
        ON CONFLICT (owner) DO UPDATE SET bytes = bytes + excluded.bytes;
END;

-- Also when a session's deletion deletes its attachments (foreign key actions fire triggers).
CREATE TRIGGER attachment_totals_delete AFTER DELETE ON attachments
WHEN OLD.state <> 'awaiting_upload'
BEGIN
    UPDATE attachment_totals SET bytes = bytes - OLD.size_bytes WHERE owner = OLD.owner;
END;

CREATE TRIGGER attachment_totals_update AFTER UPDATE OF owner, state, size_bytes ON attachments
BEGIN
    UPDATE attachment_totals SET bytes = bytes - OLD.size_bytes
        WHERE owner = OLD.owner AND OLD.state <> 'awaiting_upload';
    INSERT INTO attachment_totals (owner, bytes)
        SELECT NEW.owner, NEW.size_bytes WHERE NEW.state <> 'awaiting_upload'
        ON CONFLICT (owner) DO UPDATE SET bytes = bytes + excluded.bytes;
END;

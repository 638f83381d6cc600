ALTER TABLE attachments DROP COLUMN progress;

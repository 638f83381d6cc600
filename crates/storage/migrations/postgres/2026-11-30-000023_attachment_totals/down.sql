DROP TRIGGER attachment_totals ON attachments;
DROP FUNCTION attachment_totals_change();
DROP TABLE attachment_totals;

DROP TRIGGER attachment_totals_update;
DROP TRIGGER attachment_totals_delete;
DROP TRIGGER attachment_totals_insert;
DROP TABLE attachment_totals;

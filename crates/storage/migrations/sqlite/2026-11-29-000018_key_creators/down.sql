DROP INDEX api_keys_creator;
ALTER TABLE api_keys DROP COLUMN created_by;

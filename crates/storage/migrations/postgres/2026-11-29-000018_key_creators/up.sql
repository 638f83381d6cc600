-- Who made each API key (docs/api.md, "Accounts, keys and organizations"): the user for a
-- user's own keys and for an organization's keys made from the web app; NULL for keys the
-- operator made and for keys made before this column. Removing a member revokes the
-- organization keys they made.
ALTER TABLE api_keys ADD COLUMN created_by TEXT;
UPDATE api_keys SET created_by = substr(owner, 6) WHERE owner LIKE 'user:%';
CREATE INDEX api_keys_creator ON api_keys (owner, created_by);

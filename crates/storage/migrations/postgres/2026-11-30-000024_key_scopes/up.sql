-- Keys with scopes, expiry and last use (docs/api.md, "Key scopes, expiry and last use").
-- NULL scopes: every scope (keys made before, and keys made without naming any).
ALTER TABLE api_keys ADD COLUMN scopes TEXT;
ALTER TABLE api_keys ADD COLUMN expires_at BIGINT;
ALTER TABLE api_keys ADD COLUMN last_used_at BIGINT;

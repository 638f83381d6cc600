-- Accounts people can recover and control (docs/api.md, "Accounts"): each web session gets a
-- public id (for the list of signed-in sessions), the time it was last used (idle expiry),
-- and the browser and address it was opened from; password-reset links are stored by the
-- hash of their token.
ALTER TABLE web_sessions ADD COLUMN id TEXT NOT NULL DEFAULT '';
ALTER TABLE web_sessions ADD COLUMN last_seen_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE web_sessions ADD COLUMN user_agent TEXT;
ALTER TABLE web_sessions ADD COLUMN address TEXT;
UPDATE web_sessions SET id = 'wss_' || substr(token_hash, 1, 32), last_seen_at = created_at;
CREATE UNIQUE INDEX web_sessions_id ON web_sessions (id);

CREATE TABLE password_resets (
    token_hash TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT
);
CREATE INDEX password_resets_user ON password_resets (user_id);

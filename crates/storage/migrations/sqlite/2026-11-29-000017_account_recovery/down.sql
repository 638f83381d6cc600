DROP TABLE password_resets;
DROP INDEX web_sessions_id;
ALTER TABLE web_sessions DROP COLUMN address;
ALTER TABLE web_sessions DROP COLUMN user_agent;
ALTER TABLE web_sessions DROP COLUMN last_seen_at;
ALTER TABLE web_sessions DROP COLUMN id;

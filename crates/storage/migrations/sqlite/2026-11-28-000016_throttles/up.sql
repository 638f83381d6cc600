-- Throttling of guesses (redline_domain::throttle): one row per scope being guessed (an
-- account, a client address, an API-key prefix from an address), keyed by a hash of it.
CREATE TABLE throttles (
    scope TEXT PRIMARY KEY NOT NULL,
    failures BIGINT NOT NULL,
    last_at BIGINT NOT NULL
);
CREATE INDEX throttles_last_at ON throttles (last_at);

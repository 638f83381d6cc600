-- Idempotency keys (docs/api.md, "Idempotent retries"): the first answer to a request, kept a
-- day under its owner and key. status is NULL while the first request runs, which renews its
-- lease; a claim whose lease_until passed (its replica died) counts as free. claim_token names
-- the request holding the row, so that only it finishes, renews or releases it.
CREATE TABLE idempotency_keys (
    owner TEXT NOT NULL,
    idem_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    lease_until BIGINT NOT NULL,
    claim_token TEXT NOT NULL,
    status INTEGER,
    headers TEXT,
    body BLOB,
    PRIMARY KEY (owner, idem_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- Idempotency keys (docs/api.md, "Idempotent retries"): the first answer to a request, kept a
-- day under its owner and key. status is NULL while the first request runs; its claim lapses at
-- lease_until (the replica running it died), after which the key counts as free.
CREATE TABLE idempotency_keys (
    owner TEXT NOT NULL,
    idem_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    lease_until BIGINT NOT NULL,
    status INTEGER,
    content_type TEXT,
    location TEXT,
    body BLOB,
    PRIMARY KEY (owner, idem_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- E-mail verification (docs/api.md, "Accounts"): links mailed to an account's address, stored
-- by the hash of their token, and the address each user has proven they receive mail at (one
-- per user: a changed address is unverified until proven again).
CREATE TABLE email_verifications (
    token_hash TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL,
    email TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX email_verifications_user ON email_verifications (user_id);

CREATE TABLE verified_emails (
    user_id TEXT PRIMARY KEY NOT NULL,
    email TEXT NOT NULL,
    verified_at BIGINT NOT NULL
);

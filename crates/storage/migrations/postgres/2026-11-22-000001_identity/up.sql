-- Identity: users, organizations, keys, web sessions, agent handoffs, promotions, sessions.
-- Times are milliseconds since the Unix epoch (UTC) on both backends.
CREATE TABLE users (
    id TEXT PRIMARY KEY NOT NULL,
    kind TEXT NOT NULL,
    email TEXT UNIQUE,
    password_hash TEXT,
    name TEXT,
    plan TEXT NOT NULL,
    monthly_limit BIGINT,
    created_at BIGINT NOT NULL
);

CREATE TABLE organizations (
    id TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    owner_user_id TEXT NOT NULL REFERENCES users(id),
    plan TEXT NOT NULL,
    monthly_limit BIGINT,
    created_at BIGINT NOT NULL
);

CREATE TABLE org_members (
    org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (org_id, user_id)
);
CREATE INDEX org_members_user ON org_members (user_id);

CREATE TABLE api_keys (
    id TEXT PRIMARY KEY NOT NULL,
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    lookup_prefix TEXT NOT NULL,
    hash TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
);
CREATE INDEX api_keys_prefix ON api_keys (lookup_prefix);
CREATE INDEX api_keys_owner ON api_keys (owner);

CREATE TABLE web_sessions (
    token_hash TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX web_sessions_user ON web_sessions (user_id);

CREATE TABLE handoffs (
    token_hash TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    code_hash TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    wrong_codes BIGINT NOT NULL DEFAULT 0,
    claimed_at BIGINT
);

CREATE TABLE promo_codes (
    code TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    grant_ops BIGINT NOT NULL,
    expires_at BIGINT,
    created_at BIGINT NOT NULL
);

CREATE TABLE promo_grants (
    redemption_id TEXT PRIMARY KEY NOT NULL,
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    code TEXT,
    ops_granted BIGINT NOT NULL,
    ops_remaining BIGINT NOT NULL,
    expires_at BIGINT,
    created_at BIGINT NOT NULL
);
CREATE INDEX promo_grants_owner ON promo_grants (owner);
-- A code is redeemed at most once per account.
CREATE UNIQUE INDEX promo_grants_owner_code ON promo_grants (owner, code) WHERE code IS NOT NULL;

CREATE TABLE sessions (
    owner TEXT NOT NULL,
    session_id TEXT NOT NULL,
    title TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    version_id TEXT,
    section_count BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (owner, session_id)
);
CREATE INDEX sessions_owner_updated ON sessions (owner, updated_at);

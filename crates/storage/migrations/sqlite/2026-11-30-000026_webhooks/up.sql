-- Webhooks (docs/api.md, "Webhooks"). An endpoint's events are a JSON array of event names.
CREATE TABLE webhook_endpoints (
    id TEXT PRIMARY KEY NOT NULL,
    owner TEXT NOT NULL,
    url TEXT NOT NULL,
    description TEXT NOT NULL,
    events TEXT NOT NULL,
    secret TEXT NOT NULL,
    previous_secret TEXT,
    previous_secret_until BIGINT,
    disabled_reason TEXT,
    failing_since BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX webhook_endpoints_owner ON webhook_endpoints (owner, created_at);
-- The outbox: one row per message owed to one endpoint, written in the transaction of the
-- change it tells of. lease_token names the sender holding it until lease_until.
CREATE TABLE webhook_deliveries (
    id TEXT PRIMARY KEY NOT NULL,
    endpoint_id TEXT NOT NULL,
    owner TEXT NOT NULL,
    event TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    next_attempt_at BIGINT NOT NULL,
    lease_until BIGINT,
    lease_token TEXT,
    last_status_code INTEGER,
    last_error TEXT,
    delivered_at BIGINT
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at);
CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created_at);
CREATE TABLE webhook_attempts (
    delivery_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    at BIGINT NOT NULL,
    status_code INTEGER,
    latency_ms BIGINT NOT NULL,
    error TEXT,
    PRIMARY KEY (delivery_id, attempt)
);

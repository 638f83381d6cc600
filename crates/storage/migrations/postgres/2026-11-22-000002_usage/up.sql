-- The usage ledger: one row per billable request, its promotion draws, and per-cycle
-- counters kept consistent with the rows inside the same transaction.
CREATE TABLE usage_ledger (
    request_id TEXT PRIMARY KEY NOT NULL,
    owner TEXT NOT NULL,
    cycle TEXT NOT NULL,
    status TEXT NOT NULL,
    tier_ops BIGINT NOT NULL,
    promo_ops BIGINT NOT NULL,
    first_redemption TEXT,
    created_at BIGINT NOT NULL,
    settled_at BIGINT
);
CREATE INDEX usage_ledger_owner_cycle ON usage_ledger (owner, cycle);

CREATE TABLE usage_draws (
    request_id TEXT NOT NULL REFERENCES usage_ledger(request_id) ON DELETE CASCADE,
    redemption_id TEXT NOT NULL,
    draw_ops BIGINT NOT NULL,
    PRIMARY KEY (request_id, redemption_id)
);

CREATE TABLE usage_counters (
    owner TEXT NOT NULL,
    cycle TEXT NOT NULL,
    tier_used BIGINT NOT NULL,
    PRIMARY KEY (owner, cycle)
);

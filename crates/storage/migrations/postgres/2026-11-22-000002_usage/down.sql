DROP TABLE usage_counters;
DROP TABLE usage_draws;
DROP TABLE usage_ledger;

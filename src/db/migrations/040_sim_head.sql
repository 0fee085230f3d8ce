-- The simulated chains' head (the last inclusion or finality at or before now) is read every second by the
-- confirmation worker's head watcher: one index probe per column.
CREATE INDEX sim_transactions_final ON sim_transactions (chain, final_at);
CREATE INDEX sim_transactions_included ON sim_transactions (chain, included_at);

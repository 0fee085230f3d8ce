-- The simulated chains replay (decision 29). Each signature takes the next number of its chain's sequence, under the
-- wallet row's lock in the signing transaction (a refused signature rolls it back); every roll hashes SIM_SEED, the
-- chain and that number, never the random payment-intent id, so the same operations give the same outcomes.
ALTER TABLE sim_wallets ADD COLUMN last_sequence bigint NOT NULL DEFAULT 0;

-- A refusal by the simulated node is final, as the port promises for a rejection: set once, under the tries row's
-- lock, in the transaction that decided it; every later send of those bytes is refused with the same reason.
ALTER TABLE sim_broadcast_tries ADD COLUMN refused_reason text;

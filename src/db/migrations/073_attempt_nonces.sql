-- Nonce allocation (src/db/queries/nonces.ts) reads the attempts at or above the node's pending nonce, under the
-- chain's nonce lock. Without an index it read every attempt ever signed, so each signature got slower as history
-- grew. The expression and the predicate are the query's own, so the planner can use the index: only the few attempts
-- at the frontier are read, however long the history.
CREATE INDEX payment_attempts_nonce ON payment_attempts (chain, ((chain_meta->>'nonce')::bigint)) WHERE chain_meta ? 'nonce';

-- What an attempt's transaction does: the payout itself ('transfer'), or an operator's cancel on chain ('cancel': a
-- transaction on the stuck transfer's nonce that moves nothing, so that the transfer can never land; decision 63).
ALTER TABLE payment_attempts ADD COLUMN purpose text NOT NULL DEFAULT 'transfer' CHECK (purpose IN ('transfer', 'cancel'));

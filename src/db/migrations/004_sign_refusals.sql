-- Execution attempts the chain refused before anything was signed (e.g. the gas estimate reverts because the treasury
-- lacks USDC on chain). They have no transaction, so no payment_attempts row, but operators must see their reasons
-- in /admin/failures next to the failed attempts.
CREATE TABLE sign_refusals (
  id                 bigserial PRIMARY KEY,
  payment_intent_id  text NOT NULL REFERENCES payment_intents (id),
  chain              text NOT NULL,
  reason             text NOT NULL,
  detail             text,
  created_at         timestamptz NOT NULL
);
CREATE INDEX sign_refusals_intent ON sign_refusals (payment_intent_id);

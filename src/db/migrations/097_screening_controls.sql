-- Screening that fails safe (issue 35, section 2). A refused reload of the screening list raises an operator alert
-- about the list itself, which names no chain: `chain` may be null, and "one open alert per kind and chain" counts a
-- null chain as one value (an expression index, so ON CONFLICT can name it on any PostgreSQL version).
ALTER TABLE operator_alerts ALTER COLUMN chain DROP NOT NULL;
ALTER TABLE operator_alerts DROP CONSTRAINT operator_alerts_kind_check;
ALTER TABLE operator_alerts ADD CONSTRAINT operator_alerts_kind_check
  CHECK (kind IN ('low_gas', 'reconciliation_mismatch', 'screening_hit', 'screening_list_rejected'));
DROP INDEX operator_alerts_one_open;
CREATE UNIQUE INDEX operator_alerts_one_open ON operator_alerts (kind, (COALESCE(chain, ''))) WHERE status = 'open';

-- A replacement of a stuck transaction whose recipients screening now refuses is carried out only when two different
-- operators force it (decision 184): the first one's request waits here, bound to the stuck transaction it would replace
-- (every payment of an on-chain batch has an attempt on it), until a second operator uses it (in the replacement's
-- transaction) or it lapses.
CREATE TABLE screening_overrides (
  id                 text PRIMARY KEY,
  payment_intent_id  text NOT NULL REFERENCES payment_intents (id),
  chain              text NOT NULL,
  tx_id              text NOT NULL,
  screened           jsonb NOT NULL,
  requested_by       text NOT NULL,
  requested_at       timestamptz NOT NULL,
  used_by            text,
  used_at            timestamptz
);
CREATE UNIQUE INDEX screening_overrides_open ON screening_overrides (chain, tx_id) WHERE used_at IS NULL;

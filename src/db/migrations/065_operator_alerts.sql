-- Operator alerts (decision 120): one row per condition (low gas, a reconciliation mismatch) while it lasts; a
-- condition that comes back after it was resolved opens a new row. At most one open alert per (kind, chain).
CREATE TABLE operator_alerts (
  id             text PRIMARY KEY,
  kind           text NOT NULL CHECK (kind IN ('low_gas', 'reconciliation_mismatch')),
  chain          text NOT NULL CHECK (chain IN ('ethereum', 'solana')),
  message        text NOT NULL,
  status         text NOT NULL CHECK (status IN ('open', 'resolved')),
  first_seen_at  timestamptz NOT NULL,
  last_seen_at   timestamptz NOT NULL,
  resolved_at    timestamptz
);
CREATE UNIQUE INDEX operator_alerts_one_open ON operator_alerts (kind, chain) WHERE status = 'open';
CREATE INDEX operator_alerts_recent ON operator_alerts (first_seen_at DESC, id DESC);

-- The operator webhook's outbox: alert.raised / alert.resolved, written in the transaction that opens or resolves the
-- alert, delivered with the merchant webhooks' retry schedule (src/core/alerts.ts).
CREATE TABLE operator_alert_notifications (
  id               text PRIMARY KEY,
  alert_id         text NOT NULL REFERENCES operator_alerts (id),
  event_type       text NOT NULL CHECK (event_type IN ('alert.raised', 'alert.resolved')),
  body             text NOT NULL,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL,
  last_error       text,
  delivered_at     timestamptz,
  created_at       timestamptz NOT NULL
);
CREATE INDEX operator_alert_notifications_due ON operator_alert_notifications (next_attempt_at) WHERE status = 'pending';

-- Continuous reconciliation (decision 119): every run's verdict per chain, kept as history.
CREATE TABLE reconciliation_runs (
  id               bigserial PRIMARY KEY,
  chain            text NOT NULL CHECK (chain IN ('ethereum', 'solana')),
  status           text NOT NULL CHECK (status IN ('ok', 'in_flight', 'mismatch', 'error')),
  address          text NOT NULL,
  ledger_usdc      text NOT NULL,
  in_flight_usdc   text NOT NULL,
  on_chain_usdc    text,
  difference_usdc  text,
  error            text,
  created_at       timestamptz NOT NULL
);
CREATE INDEX reconciliation_runs_recent ON reconciliation_runs (created_at DESC, id DESC);
CREATE INDEX reconciliation_runs_chain_recent ON reconciliation_runs (chain, created_at DESC, id DESC);

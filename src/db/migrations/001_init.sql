-- stableroute schema. Money: USDC in micro-units (BIGINT), native currencies in their smallest unit
-- (wei, lamports) as NUMERIC(78,0), which holds any uint256.

CREATE TABLE merchants (
  id            text PRIMARY KEY,
  name          text NOT NULL,
  webhook_url   text,
  api_key_hash  text UNIQUE,
  is_test       boolean NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL
);

-- Ledger (TigerBeetle-style): accounts with a materialised balance used for locking, and immutable postings.
-- An account's balance always equals the sum of its postings; every transaction's postings sum to zero per currency.
CREATE TABLE ledger_accounts (
  id        bigserial PRIMARY KEY,
  chain     text NOT NULL CHECK (chain IN ('ethereum', 'solana')),
  currency  text NOT NULL,
  kind      text NOT NULL,
  balance   numeric(78, 0) NOT NULL DEFAULT 0,
  UNIQUE (chain, currency, kind)
);

CREATE TABLE ledger_transactions (
  id                 bigserial PRIMARY KEY,
  type               text NOT NULL CHECK (type IN ('funding', 'reserve', 'debit', 'fee', 'settle', 'release', 'refund')),
  chain              text NOT NULL,
  payment_intent_id  text,
  created_at         timestamptz NOT NULL
);
CREATE INDEX ledger_transactions_intent ON ledger_transactions (payment_intent_id);

CREATE TABLE ledger_postings (
  id              bigserial PRIMARY KEY,
  transaction_id  bigint NOT NULL REFERENCES ledger_transactions (id),
  account_id      bigint NOT NULL REFERENCES ledger_accounts (id),
  currency        text NOT NULL,
  amount          numeric(78, 0) NOT NULL CHECK (amount <> 0)
);
CREATE INDEX ledger_postings_transaction ON ledger_postings (transaction_id);
CREATE INDEX ledger_postings_account ON ledger_postings (account_id);

-- One treasury wallet per chain.
CREATE TABLE treasuries (
  chain            text PRIMARY KEY CHECK (chain IN ('ethereum', 'solana')),
  address          text NOT NULL,
  native_currency  text NOT NULL,
  created_at       timestamptz NOT NULL
);

CREATE TABLE chain_health_snapshots (
  id                        bigserial PRIMARY KEY,
  chain                     text NOT NULL CHECK (chain IN ('ethereum', 'solana')),
  health_status             text NOT NULL CHECK (health_status IN ('healthy', 'degraded', 'unhealthy')),
  estimated_fee_usd         double precision NOT NULL,
  avg_confirmation_seconds  double precision NOT NULL,
  rpc_error_rate            double precision NOT NULL CHECK (rpc_error_rate BETWEEN 0 AND 1),
  p95_latency_ms            double precision,
  congestion_score          double precision,
  source                    text NOT NULL CHECK (source IN ('admin', 'collector')),
  created_at                timestamptz NOT NULL
);
CREATE INDEX chain_health_latest ON chain_health_snapshots (chain, created_at DESC, id DESC);

CREATE TABLE quotes (
  id                 text PRIMARY KEY,
  merchant_id        text NOT NULL REFERENCES merchants (id),
  amount_micros      bigint NOT NULL CHECK (amount_micros > 0),
  priority           text NOT NULL,
  destinations       jsonb NOT NULL,
  candidate_routes   jsonb NOT NULL,
  recommended_route  text NOT NULL,
  scoring_details    jsonb NOT NULL,
  chain_health       jsonb NOT NULL,
  treasury_balances  jsonb NOT NULL,
  created_at         timestamptz NOT NULL,
  expires_at         timestamptz NOT NULL
);

CREATE TABLE payment_intents (
  id                   text PRIMARY KEY,
  merchant_id          text NOT NULL REFERENCES merchants (id),
  quote_id             text NOT NULL REFERENCES quotes (id),
  idempotency_key      text NOT NULL,
  amount_micros        bigint NOT NULL CHECK (amount_micros > 0),
  status               text NOT NULL,
  selected_chain       text NOT NULL CHECK (selected_chain IN ('ethereum', 'solana')),
  destination_address  text NOT NULL,
  created_at           timestamptz NOT NULL,
  updated_at           timestamptz NOT NULL,
  UNIQUE (merchant_id, idempotency_key)
);
CREATE INDEX payment_intents_recent ON payment_intents (created_at DESC, id DESC);
CREATE INDEX payment_intents_status ON payment_intents (status);

CREATE TABLE payment_intent_transitions (
  id                 bigserial PRIMARY KEY,
  payment_intent_id  text NOT NULL REFERENCES payment_intents (id),
  from_status        text,
  to_status          text NOT NULL,
  reason             text,
  created_at         timestamptz NOT NULL
);
CREATE INDEX payment_intent_transitions_intent ON payment_intent_transitions (payment_intent_id, id);

CREATE TABLE payment_attempts (
  id                 text PRIMARY KEY,
  payment_intent_id  text NOT NULL REFERENCES payment_intents (id),
  chain              text NOT NULL,
  tx_id              text NOT NULL,
  status             text NOT NULL CHECK (status IN ('signed', 'broadcasted', 'confirmed', 'failed', 'replaced')),
  signed_tx          text NOT NULL,
  chain_meta         jsonb NOT NULL DEFAULT '{}',
  estimated_fee_usd  double precision NOT NULL,
  actual_fee_native  numeric(78, 0),
  failure_reason     text,
  failure_detail     text,
  broadcast_at       timestamptz,
  included_at        timestamptz,
  confirmed_at       timestamptz,
  created_at         timestamptz NOT NULL,
  UNIQUE (chain, tx_id)
);
CREATE INDEX payment_attempts_intent ON payment_attempts (payment_intent_id, created_at);
CREATE INDEX payment_attempts_open ON payment_attempts (status) WHERE status IN ('signed', 'broadcasted');

-- Outbox: every event is written in the same transaction as the state change it describes.
CREATE TABLE webhook_events (
  id                 text PRIMARY KEY,
  seq                bigserial NOT NULL UNIQUE, -- commit-independent creation order, for listing and delivery order
  merchant_id        text NOT NULL REFERENCES merchants (id),
  payment_intent_id  text,
  event_type         text NOT NULL,
  payload            jsonb NOT NULL,
  status             text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed', 'stored')),
  attempts           integer NOT NULL DEFAULT 0,
  next_attempt_at    timestamptz NOT NULL,
  last_error         text,
  delivered_at       timestamptz,
  created_at         timestamptz NOT NULL
);
CREATE INDEX webhook_events_due ON webhook_events (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_events_intent ON webhook_events (payment_intent_id);

CREATE TABLE webhook_deliveries (
  id           bigserial PRIMARY KEY,
  event_id     text NOT NULL REFERENCES webhook_events (id),
  attempt      integer NOT NULL,
  url          text NOT NULL,
  status_code  integer,
  latency_ms   integer NOT NULL,
  error        text,
  created_at   timestamptz NOT NULL
);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id, attempt);

-- Nonces of account-based chains, allocated under a row lock so concurrent workers never collide.
CREATE TABLE chain_nonces (
  chain       text NOT NULL,
  address     text NOT NULL,
  next_nonce  bigint NOT NULL,
  PRIMARY KEY (chain, address)
);

-- The simulated chains: an outside chain whose state happens to live in our database, so it survives restarts.
CREATE TABLE sim_wallets (
  chain                text PRIMARY KEY,
  address              text NOT NULL,
  initial_usdc_micros  bigint NOT NULL,
  created_at           timestamptz NOT NULL
);

CREATE TABLE sim_broadcast_tries (
  tx_id  text PRIMARY KEY,
  tries  integer NOT NULL
);

CREATE TABLE sim_transactions (
  tx_id           text PRIMARY KEY,
  chain           text NOT NULL,
  raw_tx          text NOT NULL,
  to_address      text NOT NULL,
  amount_micros   bigint NOT NULL,
  fee_native      numeric(78, 0) NOT NULL,
  will_stick      boolean NOT NULL,
  submitted_at    timestamptz NOT NULL,
  included_at     timestamptz NOT NULL,
  final_at        timestamptz NOT NULL
);

-- Every health probe of a chain's RPC; the collector derives error rate and latency percentiles from a window.
CREATE TABLE chain_probes (
  id          bigserial PRIMARY KEY,
  chain       text NOT NULL,
  ok          boolean NOT NULL,
  latency_ms  double precision NOT NULL,
  error       text,
  created_at  timestamptz NOT NULL
);
CREATE INDEX chain_probes_recent ON chain_probes (chain, created_at DESC);

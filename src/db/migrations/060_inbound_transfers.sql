-- Inbound transfers (decisions 122, 123, 125-127): every transfer INTO a treasury that the deposit scanner saw at reorg-safe
-- depth, booked once. The unique key (chain, tx_id, transfer_index) is what makes a rescan after a crash harmless;
-- the partial unique index on payment_intent_id is what makes a payment refunded at most once, whichever path
-- (scanner auto-match or operator attach) books it.
CREATE TABLE inbound_transfers (
  id                        bigserial PRIMARY KEY,
  chain                     text NOT NULL CHECK (chain IN ('ethereum', 'solana')),
  tx_id                     text NOT NULL,
  -- Ethereum: the log index of a USDC Transfer, -1 for the transaction's own ETH value. Solana: 0 for the USDC
  -- token account's increase, 1 for the SOL increase (decision 123). Simulated: 0.
  transfer_index            integer NOT NULL,
  from_address              text NOT NULL,
  currency                  text NOT NULL,
  amount                    numeric(78, 0) NOT NULL CHECK (amount > 0),
  -- matched: booked as a payment's refund by the scanner. attached: booked as funding, then attached by an operator.
  -- unmatched / ambiguous: USDC booked as funding with no (or more than one) candidate payout. native: gas funding.
  match_status              text NOT NULL CHECK (match_status IN ('native', 'funding', 'unmatched', 'ambiguous', 'matched', 'attached')),
  payment_intent_id         text REFERENCES payment_intents (id),
  funding_transaction_id    bigint REFERENCES ledger_transactions (id),
  refund_transaction_id     bigint REFERENCES ledger_transactions (id),
  -- An attached transfer: the correcting transaction that takes its funding back out of available.
  reversal_transaction_id   bigint REFERENCES ledger_transactions (id),
  booked_at                 timestamptz NOT NULL,
  attached_at               timestamptz,
  UNIQUE (chain, tx_id, transfer_index),
  CHECK (funding_transaction_id IS NOT NULL OR refund_transaction_id IS NOT NULL),
  CHECK ((payment_intent_id IS NULL) = (refund_transaction_id IS NULL)),
  CHECK ((reversal_transaction_id IS NOT NULL) = (funding_transaction_id IS NOT NULL AND refund_transaction_id IS NOT NULL))
);
CREATE UNIQUE INDEX inbound_transfers_one_refund ON inbound_transfers (payment_intent_id) WHERE payment_intent_id IS NOT NULL;
CREATE UNIQUE INDEX inbound_transfers_funding_tx ON inbound_transfers (funding_transaction_id) WHERE funding_transaction_id IS NOT NULL;
CREATE UNIQUE INDEX inbound_transfers_refund_tx ON inbound_transfers (refund_transaction_id) WHERE refund_transaction_id IS NOT NULL;
CREATE INDEX inbound_transfers_status ON inbound_transfers (match_status, id);

-- Where each chain's deposit scan stands: an adapter-defined position (a block number, a signature, a sequence).
CREATE TABLE deposit_cursors (
  chain       text PRIMARY KEY CHECK (chain IN ('ethereum', 'solana')),
  position    text NOT NULL,
  updated_at  timestamptz NOT NULL
);

-- The simulated chains' transfers from outside (`stableroute simulate transfer`), numbered per chain under the wallet
-- row's lock, so that numbers commit in order and a scan never skips one that commits late.
ALTER TABLE sim_wallets ADD COLUMN last_external_sequence bigint NOT NULL DEFAULT 0;
CREATE TABLE sim_external_transfers (
  chain          text NOT NULL,
  sequence       bigint NOT NULL,
  tx_id          text NOT NULL UNIQUE,
  from_address   text NOT NULL,
  to_address     text NOT NULL,
  currency       text NOT NULL CHECK (currency IN ('USDC', 'native')),
  amount         numeric(78, 0) NOT NULL CHECK (amount > 0),
  created_at     timestamptz NOT NULL,
  PRIMARY KEY (chain, sequence)
);

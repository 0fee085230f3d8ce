-- Payout batches (POST /payout_batches, issue 28 item 4): a merchant's request of up to 1,000 payments at once,
-- idempotent on its own key. The stored answer is replayed for the same key and body; request_hash tells a different
-- body. Its payments are linked by payout_batch_items (a replayed item links a payment an earlier request created);
-- completed_at is set, once, in the transaction that makes its last payment final, with payout_batch.completed.
CREATE TABLE payout_batches (
  id              text PRIMARY KEY,
  merchant_id     text NOT NULL REFERENCES merchants (id),
  idempotency_key text NOT NULL,
  request_hash    text NOT NULL,
  response        jsonb NOT NULL,
  items_total     integer NOT NULL CHECK (items_total > 0),
  items_refused   integer NOT NULL CHECK (items_refused >= 0 AND items_refused <= items_total),
  created_at      timestamptz NOT NULL,
  completed_at    timestamptz,
  UNIQUE (merchant_id, idempotency_key)
);

CREATE TABLE payout_batch_items (
  payout_batch_id   text NOT NULL REFERENCES payout_batches (id),
  payment_intent_id text NOT NULL REFERENCES payment_intents (id),
  PRIMARY KEY (payout_batch_id, payment_intent_id)
);

-- A payment's batches, looked up whenever a payment becomes final.
CREATE INDEX payout_batch_items_payment ON payout_batch_items (payment_intent_id);

-- Forcing a payment to failed while its transfer may still land releases funds the chain can still take, so it is a
-- four-eyes action (decision 181): the request waits here, the payment in manual_review with its funds where they are,
-- until another operator approves it (then the payment fails) or rejects it. attempt_id is the live transfer the
-- request was made about: approval re-checks it under lock. At most one pending request per payment.
CREATE TABLE forced_failures (
  id                 text PRIMARY KEY,
  payment_intent_id  text NOT NULL REFERENCES payment_intents (id),
  attempt_id         text REFERENCES payment_attempts (id),
  status             text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected', 'void')),
  requested_by       text NOT NULL,
  requested_at       timestamptz NOT NULL,
  first_approved_by  text,
  first_approved_at  timestamptz,
  decided_by         text,
  decided_at         timestamptz,
  reason             text
);
CREATE UNIQUE INDEX forced_failures_pending ON forced_failures (payment_intent_id) WHERE status = 'pending';

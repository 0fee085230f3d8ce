-- Operator approval of payments above a merchant's threshold (decision 10). The intent stays route_selected (funds
-- reserved) and no execution job exists until an operator approves; the row records the decision.
CREATE TABLE payment_approvals (
  payment_intent_id  text PRIMARY KEY REFERENCES payment_intents (id),
  threshold_micros   bigint NOT NULL CHECK (threshold_micros >= 0),
  status             text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected', 'cancelled')),
  requested_at       timestamptz NOT NULL,
  decided_at         timestamptz,
  decided_via        text CHECK (decided_via IN ('cli', 'admin_api')),
  reason             text
);
CREATE INDEX payment_approvals_pending ON payment_approvals (requested_at) WHERE status = 'pending';

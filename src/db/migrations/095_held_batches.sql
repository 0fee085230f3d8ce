-- Four-eyes that splitting cannot beat (issue 35, decisions 178, 179). A payout batch held whole: each of its payments
-- has its approval row naming the batch, and the batch is decided once, for all of them (the batch row is inserted
-- after its payments' approvals, in the same transaction: the reference is checked at commit). A merchant's rolling
-- limit of what may leave without approval in 24 hours, tri-state like the other limits (020_spending_policies.sql).
ALTER TABLE payment_approvals
  ADD COLUMN payout_batch_id text REFERENCES payout_batches (id) DEFERRABLE INITIALLY DEFERRED;
CREATE INDEX payment_approvals_batch ON payment_approvals (payout_batch_id) WHERE payout_batch_id IS NOT NULL;

ALTER TABLE merchant_policies
  ADD COLUMN approval_above_per_day_set    boolean NOT NULL DEFAULT false,
  ADD COLUMN approval_above_per_day_micros bigint CHECK (approval_above_per_day_micros >= 0),
  ADD CONSTRAINT merchant_policies_approval_above_per_day_check CHECK (approval_above_per_day_set OR approval_above_per_day_micros IS NULL);

-- Four-eyes (decision 103): who asked for an approval (a withdrawal's requester; null for a merchant's payment), who
-- gave the first of two approvals, and who decided. The same actor may not approve what it requested, nor give both.
-- Withdrawals above WITHDRAWAL_APPROVAL_ABOVE_USD get an approval row like held payments.
ALTER TABLE payment_approvals
  ADD COLUMN requested_by      text,
  ADD COLUMN first_approved_by text,
  ADD COLUMN first_approved_at timestamptz,
  ADD COLUMN decided_by        text;

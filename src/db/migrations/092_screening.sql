-- Sanctions screening (issue 29): a recipient listed after its payment was quoted fails the payment right before
-- signing and raises an operator alert of its own kind.
ALTER TABLE operator_alerts DROP CONSTRAINT operator_alerts_kind_check;
ALTER TABLE operator_alerts ADD CONSTRAINT operator_alerts_kind_check
  CHECK (kind IN ('low_gas', 'reconciliation_mismatch', 'screening_hit'));

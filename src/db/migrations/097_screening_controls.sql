-- Screening that fails safe (issue 35, section 2). A refused reload of the screening list raises an operator alert
-- about the list itself, which names no chain: `chain` may be null, and "one open alert per kind and chain" counts a
-- null chain as one value (an expression index, so ON CONFLICT can name it on any PostgreSQL version).
ALTER TABLE operator_alerts ALTER COLUMN chain DROP NOT NULL;
ALTER TABLE operator_alerts DROP CONSTRAINT operator_alerts_kind_check;
ALTER TABLE operator_alerts ADD CONSTRAINT operator_alerts_kind_check
  CHECK (kind IN ('low_gas', 'reconciliation_mismatch', 'screening_hit', 'screening_list_rejected'));
DROP INDEX operator_alerts_one_open;
CREATE UNIQUE INDEX operator_alerts_one_open ON operator_alerts (kind, (COALESCE(chain, ''))) WHERE status = 'open';

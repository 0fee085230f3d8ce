-- Gas (decision 28): why a chain's snapshot is not healthy when the reason is ours rather than the node's (its booked
-- native balance is below the low-water mark), and the fee estimate in native units, which routing compares with the
-- booked native balance. Both null on older snapshots and on the operator's.
ALTER TABLE chain_health_snapshots ADD COLUMN status_reason text;
ALTER TABLE chain_health_snapshots ADD COLUMN estimated_fee_native numeric(78, 0);

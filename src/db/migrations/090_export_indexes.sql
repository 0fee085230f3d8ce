-- The ledger export (src/ledger/posting-export.ts) reads ledger transactions in time order, a bounded window at a
-- time from where the last window ended: with this index each window is an index range scan of its rows, wherever
-- the period sits in the table's history. Without it, every window sorted the whole table.
CREATE INDEX ledger_transactions_created ON ledger_transactions (created_at, id);

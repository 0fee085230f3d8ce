-- On-chain batches (issue 28): one chain transaction may pay several payments. Each payment keeps its own attempt;
-- the attempts of one transaction share its chain, tx id and signed bytes, and each knows how many payments the
-- transaction pays (tx_payments) and its own place among them (tx_payment_index, from 0), which is all its share of
-- the transaction's fee needs (src/domain/fee-share.ts): no attempt has to read the others to book its fee.
ALTER TABLE payment_attempts
  ADD COLUMN tx_payments integer NOT NULL DEFAULT 1 CHECK (tx_payments >= 1),
  ADD COLUMN tx_payment_index integer NOT NULL DEFAULT 0;
ALTER TABLE payment_attempts ADD CONSTRAINT payment_attempts_tx_payment_index CHECK (tx_payment_index >= 0 AND tx_payment_index < tx_payments);
ALTER TABLE payment_attempts DROP CONSTRAINT payment_attempts_chain_tx_id_key;
ALTER TABLE payment_attempts ADD CONSTRAINT payment_attempts_chain_tx_id_index_key UNIQUE (chain, tx_id, tx_payment_index);

-- A simulated transaction that pays several transfers has no single recipient: its to_address is null and
-- amount_micros their sum.
ALTER TABLE sim_transactions ALTER COLUMN to_address DROP NOT NULL;

-- The simulated network's payouts, one row per transfer a simulated transaction pays: a transaction signed since this
-- migration lists them under `transfers`; one signed before pays the single transfer its top-level fields name.
CREATE VIEW sim_payouts AS
SELECT t.tx_id, t.chain, p.transfer->>'ref' AS ref, p.transfer->>'to' AS to_address, (p.transfer->>'amount')::bigint AS amount_micros,
       t.will_stick, t.included_at, t.final_at
  FROM sim_transactions t
 CROSS JOIN LATERAL jsonb_array_elements(
         COALESCE(t.raw_tx::jsonb->'transfers',
                  jsonb_build_array(jsonb_build_object('to', t.raw_tx::jsonb->'to', 'amount', t.raw_tx::jsonb->'amount', 'ref', t.raw_tx::jsonb->'ref')))
       ) AS p(transfer);

-- The nonce allocation's range read (src/db/queries/nonces.ts) goes through payment_attempts_nonce, a partial index,
-- and PostgreSQL keeps no statistics it would use for a partial index's expression: it guessed a third of the table
-- for `nonce >= pending`, and a table a little wider (the columns above) tipped the plan to a sequential scan of the
-- whole history under the nonce lock. Statistics on the expression give the planner the real distribution.
CREATE STATISTICS payment_attempts_nonce_stats ON ((chain_meta->>'nonce')::bigint) FROM payment_attempts;

-- A send the node refused outright (fee cap below the base fee, no gas: 'rejected') fails its attempt, and the payment's
-- retry signs again on the nonce it keeps (decision 32). When nothing else changed (same payments, nonce and fees) the
-- bytes, and so the tx id, are the refused attempt's: the same transaction sent again. Only one live attempt may carry a
-- transaction's place; refused ones keep their record beside it (decision 227). Found by the simulator
-- (chain.send_refused, seed 1, 600 operations).
ALTER TABLE payment_attempts DROP CONSTRAINT payment_attempts_chain_tx_id_index_key;
CREATE UNIQUE INDEX payment_attempts_chain_tx_id_index_key ON payment_attempts (chain, tx_id, tx_payment_index) WHERE status <> 'failed';

-- Dollar stablecoins beyond USDC (issue 40): a payment pays one token, `usdc` for every payment before this; the
-- simulated chains record which token each transaction moved and take deposits of every token.
ALTER TABLE payment_intents ADD COLUMN token text NOT NULL DEFAULT 'usdc' CHECK (token IN ('usdc', 'usdt', 'pyusd'));
ALTER TABLE sim_transactions ADD COLUMN token text NOT NULL DEFAULT 'usdc' CHECK (token IN ('usdc', 'usdt', 'pyusd'));
ALTER TABLE sim_external_transfers DROP CONSTRAINT sim_external_transfers_currency_check;
ALTER TABLE sim_external_transfers ADD CONSTRAINT sim_external_transfers_currency_check CHECK (currency IN ('USDC', 'USDT', 'PYUSD', 'native'));

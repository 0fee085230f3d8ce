-- The simulated treasury's opening native balance (ETH, SOL), so the simulated chain answers "how much gas is left"
-- like a real node. Wallets created before this column existed opened with the amounts the code then used.
ALTER TABLE sim_wallets ADD COLUMN initial_native numeric(78, 0);
UPDATE sim_wallets SET initial_native = CASE chain WHEN 'ethereum' THEN 100000000000000000000 ELSE 1000000000000 END;
ALTER TABLE sim_wallets ALTER COLUMN initial_native SET NOT NULL;

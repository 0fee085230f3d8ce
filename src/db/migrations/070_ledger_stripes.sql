-- Every payment step posted to the same few treasury account rows (reserved, in flight, payouts, fees), so every
-- reservation batch, signature and settlement of a chain queued on the same row locks. Only `treasury_available` is
-- ever checked under its lock (no overdraft); every other account is split into stripes, one row each, and a posting
-- updates the stripe its payment hashes to (src/ledger/store.ts, decision 18). An account's balance is the sum of its
-- stripes; each stripe still equals the sum of its own postings, which `ledger verify` checks row by row.
ALTER TABLE ledger_accounts ADD COLUMN stripe smallint NOT NULL DEFAULT 0 CHECK (stripe >= 0);
ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_chain_currency_kind_key;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_chain_currency_kind_stripe_key UNIQUE (chain, currency, kind, stripe);
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_available_unstriped CHECK (kind <> 'treasury_available' OR stripe = 0);

-- A quote may say which tokens the recipient accepts (issue 40): `tokens` as asked (NULL: not asked, the spec's
-- request, which pays USDC), and the token of the recommended route.
ALTER TABLE quotes ADD COLUMN tokens text[];
ALTER TABLE quotes ADD COLUMN recommended_token text NOT NULL DEFAULT 'usdc' CHECK (recommended_token IN ('usdc', 'usdt', 'pyusd'));

-- The tokens each treasury's books hold: a token's opening balance is booked once, by the start that adds its row
-- (decision 238). Every treasury before tokens held USDC.
CREATE TABLE treasury_tokens (
  chain       text NOT NULL,
  token       text NOT NULL CHECK (token IN ('usdc', 'usdt', 'pyusd')),
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (chain, token)
);
INSERT INTO treasury_tokens (chain, token, created_at) SELECT chain, 'usdc', created_at FROM treasuries;

-- Reconciliation compares each (chain, token) on its own.
ALTER TABLE reconciliation_runs ADD COLUMN token text NOT NULL DEFAULT 'usdc';

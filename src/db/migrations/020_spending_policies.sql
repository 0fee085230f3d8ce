-- Merchant spending policies (decisions 6-10). A merchant without a row follows the service defaults (config).
-- Each limit is tri-state: *_set false inherits the default; *_set true with NULL micros is "no limit" for this
-- merchant; *_set true with a value replaces the default.
CREATE TABLE merchant_policies (
  merchant_id            text PRIMARY KEY REFERENCES merchants (id),
  max_payment_set        boolean NOT NULL DEFAULT false,
  max_payment_micros     bigint CHECK (max_payment_micros >= 0),
  daily_limit_set        boolean NOT NULL DEFAULT false,
  daily_limit_micros     bigint CHECK (daily_limit_micros >= 0),
  approval_above_set     boolean NOT NULL DEFAULT false,
  approval_above_micros  bigint CHECK (approval_above_micros >= 0),
  allowlist              boolean, -- NULL inherits POLICY_ALLOWLIST
  rate_limit_per_minute  integer CHECK (rate_limit_per_minute >= 0), -- NULL inherits RATE_LIMIT_PER_MINUTE; 0 = none
  updated_at             timestamptz NOT NULL,
  CHECK (max_payment_set OR max_payment_micros IS NULL),
  CHECK (daily_limit_set OR daily_limit_micros IS NULL),
  CHECK (approval_above_set OR approval_above_micros IS NULL)
);

-- The address book: recipients a merchant may pay when its allowlist is on. address_key is the comparison form
-- (lowercase on Ethereum, as given on Solana); address keeps the spelling the operator entered.
CREATE TABLE merchant_addresses (
  merchant_id  text NOT NULL REFERENCES merchants (id),
  chain        text NOT NULL CHECK (chain IN ('ethereum', 'solana')),
  address_key  text NOT NULL,
  address      text NOT NULL,
  label        text,
  created_at   timestamptz NOT NULL,
  usable_from  timestamptz NOT NULL, -- created_at + the cooling-off period in force when it was added
  PRIMARY KEY (merchant_id, chain, address_key)
);

-- The rolling 24-hour volume of one merchant is a range scan on this index.
CREATE INDEX payment_intents_merchant_recent ON payment_intents (merchant_id, created_at);

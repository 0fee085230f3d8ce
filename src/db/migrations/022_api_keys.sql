-- API keys in their own table (decision 91): several active keys per merchant during a rotation, revocation, last
-- use. Only HMAC-SHA256(API_KEY_SALT, key) is stored, as before. `prefix` is the key's first 16 characters
-- (sr_live_ + 8 random ones), shown so operators can tell keys apart; keys issued before this table have none.
CREATE TABLE api_keys (
  id            text PRIMARY KEY,
  merchant_id   text NOT NULL REFERENCES merchants (id),
  key_hash      text NOT NULL UNIQUE,
  prefix        text,
  created_at    timestamptz NOT NULL,
  last_used_at  timestamptz,
  revoked_at    timestamptz
);
CREATE INDEX api_keys_merchant ON api_keys (merchant_id, created_at);
CREATE UNIQUE INDEX api_keys_merchant_prefix ON api_keys (merchant_id, prefix) WHERE prefix IS NOT NULL;

-- The one key each merchant had moves over (it keeps working); the column goes, so no second copy of a hash can
-- outlive a revocation.
INSERT INTO api_keys (id, merchant_id, key_hash, prefix, created_at)
SELECT 'key_' || substr(md5(api_key_hash), 1, 16), id, api_key_hash, NULL, created_at FROM merchants WHERE api_key_hash IS NOT NULL;
ALTER TABLE merchants DROP COLUMN api_key_hash;

-- Per-merchant webhook signing secrets (decision 67). `sealed` is the secret encrypted by the service (never the
-- plaintext); NULL stands for the configured WEBHOOK_SIGNING_SECRET, which merchants onboarded before this table
-- existed keep signing with until their first rotation. retires_at NULL: the current secret; a time: a previous
-- secret, still signed with until then (the rotation overlap).
CREATE TABLE webhook_secrets (
  id           bigserial PRIMARY KEY,
  merchant_id  text NOT NULL REFERENCES merchants (id),
  sealed       text,
  created_at   timestamptz NOT NULL,
  retires_at   timestamptz
);
CREATE INDEX webhook_secrets_merchant ON webhook_secrets (merchant_id, created_at DESC);
-- One current secret per merchant.
CREATE UNIQUE INDEX webhook_secrets_current ON webhook_secrets (merchant_id) WHERE retires_at IS NULL;

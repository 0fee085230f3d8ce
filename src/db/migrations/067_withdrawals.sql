-- Withdrawals (decision 121): treasury funds sent out by the operator through the payouts' own lifecycle. A
-- withdrawal is a payment intent of kind 'withdrawal' owned by the internal merchant mer_operator, which has no API
-- key and no webhook URL, so no merchant can read it (another merchant's intent answers 404) and nothing is sent.
ALTER TABLE payment_intents ADD COLUMN kind text NOT NULL DEFAULT 'payout' CHECK (kind IN ('payout', 'withdrawal'));
CREATE INDEX payment_intents_withdrawals ON payment_intents (created_at DESC, id DESC) WHERE kind = 'withdrawal';
INSERT INTO merchants (id, name, webhook_url, is_test, created_at)
VALUES ('mer_operator', 'Treasury withdrawals (internal; not a merchant)', NULL, false, now())
ON CONFLICT (id) DO NOTHING;

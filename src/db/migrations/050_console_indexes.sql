-- The operator console pages payment intents newest first, filtered by status or merchant, and searches them by
-- destination address or transaction id (src/db/queries/intent-list.ts). With these each page is an index scan of
-- its 50 rows, however many intents there are (bench/console.ts prints the plans on 100k). The status index becomes
-- (status, created_at, id): it still answers every lookup and count by status.
CREATE INDEX payment_intents_status_recent ON payment_intents (status, created_at DESC, id DESC);
DROP INDEX payment_intents_status;
-- Replaces the spending policies' (merchant_id, created_at) index (020): the same range scans for a merchant's
-- rolling 24-hour volume, and a keyset page of one merchant's intents.
DROP INDEX payment_intents_merchant_recent;
CREATE INDEX payment_intents_merchant_recent ON payment_intents (merchant_id, created_at DESC, id DESC);
CREATE INDEX payment_intents_destination ON payment_intents (lower(destination_address));
-- (chain, tx_id) is unique already, but a search does not know the chain.
CREATE INDEX payment_attempts_tx ON payment_attempts (tx_id);
-- Webhook events listed by delivery status, newest first, page after page.
CREATE INDEX webhook_events_status_seq ON webhook_events (status, seq DESC);

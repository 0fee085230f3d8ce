-- A receiver answering 410 Gone disables its merchant's endpoint (decision 69): events are kept (status 'stored',
-- held_at set) until an operator enables it again, which queues the held events anew.
ALTER TABLE merchants ADD COLUMN webhook_disabled_at timestamptz;
ALTER TABLE merchants ADD COLUMN webhook_disabled_reason text;
ALTER TABLE webhook_events ADD COLUMN held_at timestamptz;
CREATE INDEX webhook_events_held ON webhook_events (merchant_id) WHERE held_at IS NOT NULL;

-- A webhook_url with user:password@ could never be delivered to, and its password was copied into every delivery
-- record and error (decision 85). Remove the credentials everywhere; such an endpoint is disabled until an operator
-- has checked the URL that remains.
UPDATE webhook_deliveries SET url = regexp_replace(url, '(://)[^/?#@[:space:]]*@', '\1', 'g')
 WHERE url ~ '://[^/?#@[:space:]]*@';
UPDATE webhook_deliveries SET error = regexp_replace(error, '(://)[^/?#@[:space:]]*@', '\1', 'g')
 WHERE error ~ '://[^/?#@[:space:]]*@';
UPDATE webhook_events SET last_error = regexp_replace(last_error, '(://)[^/?#@[:space:]]*@', '\1', 'g')
 WHERE last_error ~ '://[^/?#@[:space:]]*@';
UPDATE merchants
   SET webhook_url = regexp_replace(webhook_url, '(://)[^/?#@[:space:]]*@', '\1'),
       webhook_disabled_at = now(),
       webhook_disabled_reason = 'the webhook_url held credentials, which were removed; check the URL, then enable it'
 WHERE webhook_url ~ '^[a-zA-Z][a-zA-Z0-9+.-]*://[^/?#@[:space:]]*@';

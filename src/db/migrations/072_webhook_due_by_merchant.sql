-- A webhook claim takes the oldest due event and then more due events of the same merchant only (decision 75), in the
-- claim's order: this index finds them without reading the other merchants' pending events.
CREATE INDEX webhook_events_due_by_merchant ON webhook_events (merchant_id, next_attempt_at, created_at, id) WHERE status = 'pending';

-- The delivery claim takes the first due pending event in (next_attempt_at, created_at, id) order. The index of
-- migration 001 sorts by next_attempt_at alone, so under a backlog every claim sorted all due events to find one (about
-- 7 ms each with a few thousand waiting, on the path of every webhook). This index is in the claim's own order, so a
-- claim reads the first rows it does not skip (decision 140).
CREATE INDEX webhook_events_due_order ON webhook_events (next_attempt_at, created_at, id) WHERE status = 'pending';
DROP INDEX IF EXISTS webhook_events_due;

-- The confirmation worker checks open attempts least recently checked first, so a backlog of transfers that stay
-- unresolved (manual review) cannot starve newer ones: every open attempt is reached within ceil(open / batch) polls.
ALTER TABLE payment_attempts ADD COLUMN last_checked_at timestamptz;
CREATE INDEX payment_attempts_check_order ON payment_attempts (last_checked_at NULLS FIRST, broadcast_at, id)
  WHERE status = 'broadcasted';

-- A dead-lettered execution used to leave its live transfer 'signed' under a manual_review intent, where the
-- confirmation worker (which watches 'broadcasted' attempts) never saw it. Such a transfer may have been sent:
-- watch it like any other.
UPDATE payment_attempts a SET status = 'broadcasted', broadcast_at = COALESCE(a.broadcast_at, a.created_at)
  FROM payment_intents i
 WHERE i.id = a.payment_intent_id AND i.status = 'manual_review' AND a.status = 'signed';

-- Confirmation rounds look at every open attempt in id order (decision 60): nothing reads or writes the "least
-- recently checked first" order of migration 003 any more, and its index was still updated by every broadcast.
DROP INDEX IF EXISTS payment_attempts_check_order;
ALTER TABLE payment_attempts DROP COLUMN IF EXISTS last_checked_at;

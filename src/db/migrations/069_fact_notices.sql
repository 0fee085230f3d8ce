-- The facts quotes are decided from (treasury balances, chain health, merchant policies) are cached in each api
-- process and dropped on a notice (src/db/notice-cache.ts, decision 136). Every statement that changes a table the
-- rarely changing facts are read from notifies its topic; NOTIFY is transactional, so the notice is sent when the
-- change commits, and PostgreSQL folds identical notices of one transaction into one.
CREATE OR REPLACE FUNCTION stableroute_notify_facts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('stableroute_facts', TG_ARGV[0]);
  RETURN NULL;
END
$$;

-- Ledger balances are not among them: postings notify 'balances' themselves, after commit (src/ledger/store.ts),
-- because a notifying transaction takes PostgreSQL's notification lock until its commit is flushed (decision 52).
CREATE TRIGGER treasuries_notify_facts AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON treasuries
  FOR EACH STATEMENT EXECUTE FUNCTION stableroute_notify_facts('balances');
CREATE TRIGGER chain_health_snapshots_notify_facts AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON chain_health_snapshots
  FOR EACH STATEMENT EXECUTE FUNCTION stableroute_notify_facts('health');
CREATE TRIGGER merchant_policies_notify_facts AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON merchant_policies
  FOR EACH STATEMENT EXECUTE FUNCTION stableroute_notify_facts('policies');
-- A quote's policy read also answers "no such merchant".
CREATE TRIGGER merchants_notify_facts AFTER INSERT OR DELETE OR TRUNCATE ON merchants
  FOR EACH STATEMENT EXECUTE FUNCTION stableroute_notify_facts('policies');

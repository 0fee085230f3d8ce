-- Execution leases (decision 57): a run of a payment's execution holds its lease while it works and renews it every
-- few seconds. A lease that ran out belongs to a run whose worker died; a live worker's sweeper takes it over and
-- resumes the payment within seconds, instead of waiting for pg-boss to expire the job (a minute or more). Two runs
-- never work on one payment at once: taking the lease, and every write a run makes, happen under the intent's lock.
CREATE TABLE execution_leases (
  payment_intent_id  text PRIMARY KEY REFERENCES payment_intents (id),
  owner              text NOT NULL,
  -- The execution attempt (1-based) the run works on: a lease of an earlier attempt holds nothing back.
  attempt            integer NOT NULL,
  expires_at         timestamptz NOT NULL,
  -- Runs of this attempt whose worker died holding the lease; past a limit the execution is abandoned.
  takeovers          integer NOT NULL DEFAULT 0
);
CREATE INDEX execution_leases_expiry ON execution_leases (expires_at);

-- The audit log (decision 102): one record per operator action, appended in the transaction of the action itself,
-- hash-chained: each record's hash covers its sequence number, the previous record's hash and its own canonical
-- fields, so `stableroute audit verify` finds a record altered, removed or moved. `audit_head` holds the last
-- sequence number and hash; appends serialise on its one row (operator actions are few).
CREATE TABLE audit_log (
  seq         bigint PRIMARY KEY,
  at          timestamptz NOT NULL,
  actor       text NOT NULL,
  actor_role  text,
  action      text NOT NULL,
  targets     text[] NOT NULL,
  details     jsonb NOT NULL,
  peer        text,
  outcome     text NOT NULL,
  prev_hash   text NOT NULL,
  hash        text NOT NULL
);
CREATE INDEX audit_log_actor ON audit_log (actor, seq);
CREATE INDEX audit_log_action ON audit_log (action, seq);
CREATE INDEX audit_log_targets ON audit_log USING gin (targets);

CREATE TABLE audit_head (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  seq       bigint NOT NULL,
  hash      text NOT NULL
);
INSERT INTO audit_head (seq, hash) VALUES (0, repeat('0', 64));

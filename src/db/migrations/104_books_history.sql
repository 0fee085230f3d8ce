-- Books that know which database history they were written under (issue 36, decision 198). A database's history is
-- its system identifier (pg_control_system) and the timeline of its current WAL position: a promoted standby writes on
-- a new timeline, a restored backup or another cluster has another identifier. The history the service last wrote
-- under is kept here; a process that finds itself on another one holds every chain's signing (chain_holds) until the
-- chain's treasury transactions are matched against the books (decision 199).
CREATE TABLE books_history (
  singleton          boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  system_identifier  text NOT NULL,
  timeline           bigint NOT NULL,
  seen_at            timestamptz NOT NULL
);
INSERT INTO books_history (system_identifier, timeline, seen_at)
SELECT (pg_control_system()).system_identifier::text, ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint, now();

-- A chain whose signing is held: opened for every chain when the history changes, lifted when a check matched the
-- treasury's transactions on chain against the books (or an operator accounted for the rest). `findings`: what the
-- last check found that the books do not know (decision 199); `mark`: where the chain stood at the first check (Solana:
-- the finalized block height; nothing signed before it can land once the chain is MAX_PROCESSING_AGE blocks past it).
CREATE TABLE chain_holds (
  id            text PRIMARY KEY,
  chain         text NOT NULL,
  opened_at     timestamptz NOT NULL,
  history_from  text NOT NULL,
  history_to    text NOT NULL,
  state         text NOT NULL DEFAULT 'checking' CHECK (state IN ('checking', 'behind', 'lifted')),
  mark          text,
  findings      jsonb,
  checked_at    timestamptz,
  lifted_at     timestamptz,
  lifted_by     text
);
CREATE UNIQUE INDEX chain_holds_open ON chain_holds (chain) WHERE state <> 'lifted';

-- Treasury transactions (or EVM nonces) an operator declared not ours to pay against (decision 200): a check counts
-- them as known. `nonce` is set for an EVM nonce the chain used with no transaction the check could find.
CREATE TABLE foreign_treasury_transactions (
  chain        text NOT NULL,
  tx_id        text NOT NULL,
  nonce        bigint,
  reason       text NOT NULL,
  declared_by  text NOT NULL,
  approved_by  text,
  declared_at  timestamptz NOT NULL,
  approved_at  timestamptz,
  PRIMARY KEY (chain, tx_id)
);

ALTER TABLE operator_alerts DROP CONSTRAINT operator_alerts_kind_check;
ALTER TABLE operator_alerts ADD CONSTRAINT operator_alerts_kind_check
  CHECK (kind IN ('low_gas', 'reconciliation_mismatch', 'screening_hit', 'screening_list_rejected', 'books_behind_chain',
                  'database_not_synchronous'));

// The books' database history and the chains whose signing it holds (migration 104, decisions 198-200).
import type { Chain } from '../../domain/chain.js';
import type { DatabaseHistory, ReplicationFacts } from '../../domain/books-check.js';
import type { Queryable } from '../pool.js';

/** The database's history now: its system identifier and the timeline of its current WAL position (a primary's). */
const CURRENT_HISTORY = `SELECT (pg_control_system()).system_identifier::text AS system_identifier,
        ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint::text AS timeline`;

type HistoryRow = { system_identifier: string; timeline: string };
const historyOf = (row: HistoryRow): DatabaseHistory => ({ systemIdentifier: row.system_identifier, timeline: BigInt(row.timeline) });

/**
 * Of `chains`, those that may not sign in the caller's transaction: the database's history is not the one the books
 * were last written under (a failover or a restore nobody has checked yet: every chain), or the chain is held. One
 * statement, read in the transaction that signs: a hold and the history it was opened for commit together, so no
 * snapshot sees the new history without the holds.
 */
export async function readHeldChains(db: Queryable, chains: readonly Chain[]): Promise<Set<Chain>> {
  if (chains.length === 0) return new Set();
  const { rows } = await db.query<{ chain: Chain }>(
    `WITH now AS (${CURRENT_HISTORY})
     SELECT c.chain FROM unnest($1::text[]) AS c(chain) CROSS JOIN now LEFT JOIN books_history h ON true
      WHERE h.system_identifier IS DISTINCT FROM now.system_identifier
         OR h.timeline::text IS DISTINCT FROM now.timeline
         OR EXISTS (SELECT 1 FROM chain_holds WHERE chain = c.chain AND state <> 'lifted')`,
    [chains],
  );
  return new Set(rows.map((r) => r.chain));
}

/** The history stored (locked for the caller's transaction) and the database's now. */
export async function lockHistory(db: Queryable): Promise<{ stored: DatabaseHistory | null; current: DatabaseHistory }> {
  const stored = await db.query<HistoryRow>('SELECT system_identifier, timeline::text AS timeline FROM books_history FOR UPDATE');
  const current = await db.query<HistoryRow>(CURRENT_HISTORY);
  return { stored: stored.rows[0] ? historyOf(stored.rows[0]) : null, current: historyOf(current.rows[0]!) };
}

export async function upsertHistory(db: Queryable, history: DatabaseHistory, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO books_history (singleton, system_identifier, timeline, seen_at) VALUES (true, $1, $2, $3)
     ON CONFLICT (singleton) DO UPDATE SET system_identifier = EXCLUDED.system_identifier, timeline = EXCLUDED.timeline, seen_at = EXCLUDED.seen_at`,
    [history.systemIdentifier, history.timeline.toString(), at],
  );
}

/** Every chain the books have a treasury on, with `configured`: the chains a change of history holds. */
export async function listChainsToHold(db: Queryable, configured: readonly Chain[]): Promise<Chain[]> {
  const { rows } = await db.query<{ chain: Chain }>('SELECT chain FROM treasuries UNION SELECT unnest($1::text[])', [configured]);
  return rows.map((r) => r.chain);
}

/** Opens a hold for each chain that has none open. Returns the chains newly held. */
export async function insertHolds(
  db: Queryable,
  holds: readonly { id: string; chain: Chain }[],
  history: { from: string; to: string },
  at: Date,
): Promise<Chain[]> {
  if (holds.length === 0) return [];
  const { rows } = await db.query<{ chain: Chain }>(
    `INSERT INTO chain_holds (id, chain, opened_at, history_from, history_to)
     SELECT id, chain, $3, $4, $5 FROM unnest($1::text[], $2::text[]) AS h(id, chain)
     ON CONFLICT (chain) WHERE state <> 'lifted' DO NOTHING RETURNING chain`,
    [holds.map((h) => h.id), holds.map((h) => h.chain), at, history.from, history.to],
  );
  return rows.map((r) => r.chain);
}

export interface HoldRow {
  id: string;
  chain: Chain;
  opened_at: Date;
  history_from: string;
  history_to: string;
  state: 'checking' | 'behind' | 'lifted';
  mark: string | null;
  findings: StoredFindings | null;
  checked_at: Date | null;
  lifted_at: Date | null;
  lifted_by: string | null;
}

/** What the last check of a hold found that the books do not know; amounts as decimal strings. */
export interface StoredFindings {
  unknown: {
    tx_id: string;
    nonce: number | null;
    failed: boolean;
    memo: string | null;
    transfers: { to: string; amount_micros: string }[];
    signed: { txId: string; rawTx: string; meta: Record<string, string | number | boolean | null> } | null;
  }[];
  unknown_nonces: number[];
  incomplete: boolean;
}

const HOLD_COLUMNS = 'id, chain, opened_at, history_from, history_to, state, mark, findings, checked_at, lifted_at, lifted_by';

/** The open holds (of `chains`, when given), oldest first. */
export async function listOpenHolds(db: Queryable, chains: readonly Chain[] | null, options: { forUpdate?: boolean } = {}): Promise<HoldRow[]> {
  const { rows } = await db.query<HoldRow>(
    `SELECT ${HOLD_COLUMNS} FROM chain_holds WHERE state <> 'lifted' AND ($1::text[] IS NULL OR chain = ANY($1))
      ORDER BY opened_at, chain ${options.forUpdate ? 'FOR UPDATE' : ''}`,
    [chains],
  );
  return rows;
}

/** The holds of the last `limit` history changes and those still open, newest first (for the operator's view). */
export async function listRecentHolds(db: Queryable, limit: number): Promise<HoldRow[]> {
  const { rows } = await db.query<HoldRow>(
    `SELECT ${HOLD_COLUMNS} FROM chain_holds ORDER BY (state <> 'lifted') DESC, opened_at DESC, chain LIMIT $1`,
    [limit],
  );
  return rows;
}

export async function markHoldChecked(
  db: Queryable,
  id: string,
  check: { state: 'checking' | 'behind'; mark: string; findings: StoredFindings | null; at: Date },
): Promise<void> {
  await db.query('UPDATE chain_holds SET state = $2, mark = COALESCE(mark, $3), findings = $4, checked_at = $5 WHERE id = $1', [
    id,
    check.state,
    check.mark,
    check.findings,
    check.at,
  ]);
}

/** Lifts an open hold (a check matched, or an operator's action made it match); `by` is who: 'check' or the operator. */
export async function markHoldLifted(db: Queryable, id: string, by: string, at: Date): Promise<boolean> {
  const { rowCount } = await db.query("UPDATE chain_holds SET state = 'lifted', lifted_at = $2, lifted_by = $3 WHERE id = $1 AND state <> 'lifted'", [
    id,
    at,
    by,
  ]);
  return rowCount === 1;
}

/**
 * What the books hold as landed on `chain`, newest first: the stop of a check's walk back (decision 199). An attempt
 * whose transaction the chain included (`included_at`), whatever came of it afterwards.
 */
export async function listLandedTxIds(db: Queryable, chain: Chain, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ tx_id: string }>(
    `SELECT tx_id FROM payment_attempts WHERE chain = $1 AND included_at IS NOT NULL
      GROUP BY tx_id ORDER BY max(included_at) DESC LIMIT $2`,
    [chain, limit],
  );
  return rows.map((r) => r.tx_id);
}

/** Of `txIds`, those the books know on `chain`: an attempt's, or declared foreign and approved. */
export async function readKnownTxIds(db: Queryable, chain: Chain, txIds: readonly string[]): Promise<Set<string>> {
  if (txIds.length === 0) return new Set();
  const { rows } = await db.query<{ tx_id: string }>(
    `SELECT tx_id FROM payment_attempts WHERE chain = $1 AND tx_id = ANY($2::text[])
     UNION SELECT tx_id FROM foreign_treasury_transactions WHERE chain = $1 AND tx_id = ANY($2::text[]) AND approved_at IS NOT NULL`,
    [chain, txIds],
  );
  return new Set(rows.map((r) => r.tx_id));
}

/**
 * The highest nonce the books' attempts on `chain` used (null: none), and the nonces above it an operator declared
 * foreign (approved): what a check counts as known beyond the books' own allocations.
 */
export async function readKnownNonces(db: Queryable, chain: Chain): Promise<{ highest: number | null; foreign: Set<number> }> {
  const { rows } = await db.query<{ highest: string | null; foreign: string[] }>(
    `WITH own AS (SELECT max((chain_meta->>'nonce')::bigint) AS highest FROM payment_attempts WHERE chain = $1 AND chain_meta ? 'nonce')
     SELECT own.highest::text AS highest,
            ARRAY(SELECT nonce::text FROM foreign_treasury_transactions f
                   WHERE f.chain = $1 AND f.nonce IS NOT NULL AND f.approved_at IS NOT NULL AND f.nonce > COALESCE(own.highest, -1)) AS foreign
       FROM own`,
    [chain],
  );
  const row = rows[0]!;
  return { highest: row.highest === null ? null : Number(row.highest), foreign: new Set(row.foreign.map(Number)) };
}

/** The database's replication as this session sees it. */
export async function readReplicationFacts(db: Queryable): Promise<ReplicationFacts> {
  const { rows } = await db.query<{ names: string; commit: string; sync: number | null }>(
    `SELECT current_setting('synchronous_standby_names') AS names, current_setting('synchronous_commit') AS commit,
            (SELECT CASE WHEN bool_and(sync_state IS NULL) AND count(*) > 0 THEN NULL
                         ELSE count(*) FILTER (WHERE sync_state IN ('sync', 'quorum')) END::int
               FROM pg_stat_replication) AS sync`,
  );
  const row = rows[0]!;
  return { synchronousStandbyNames: row.names, synchronousCommit: row.commit, synchronousStandbys: row.sync };
}

/**
 * Payments of `chain` a found transfer to one of `recipients` could have paid: never signed (no attempt but refused
 * ones), not final, not waiting for an approval's decision to be made... only route_selected, broadcasting, retrying.
 * `foldCase`: addresses compare without case (EVM).
 */
export async function listAttachCandidates(
  db: Queryable,
  chain: Chain,
  recipients: readonly string[],
  foldCase: boolean,
): Promise<{ id: string; to: string; amount_micros: string }[]> {
  const { rows } = await db.query<{ id: string; to: string; amount_micros: string }>(
    `SELECT i.id, i.destination_address AS to, i.amount_micros::text AS amount_micros FROM payment_intents i
      WHERE i.selected_chain = $1 AND i.status IN ('route_selected', 'broadcasting', 'retrying')
        AND (CASE WHEN $3 THEN lower(i.destination_address) = ANY(SELECT lower(r) FROM unnest($2::text[]) r)
                  ELSE i.destination_address = ANY($2::text[]) END)
        AND NOT EXISTS (SELECT 1 FROM payment_attempts a WHERE a.payment_intent_id = i.id AND a.status IN ('signed', 'broadcasted', 'confirmed'))
      ORDER BY i.created_at, i.id`,
    [chain, recipients, foldCase],
  );
  return rows;
}

/** The declaration of `txId` as foreign on `chain`, locked; null when none was made. */
export async function lockForeign(
  db: Queryable,
  chain: Chain,
  txId: string,
): Promise<{ declared_by: string; approved_by: string | null; approved_at: Date | null } | null> {
  const { rows } = await db.query<{ declared_by: string; approved_by: string | null; approved_at: Date | null }>(
    'SELECT declared_by, approved_by, approved_at FROM foreign_treasury_transactions WHERE chain = $1 AND tx_id = $2 FOR UPDATE',
    [chain, txId],
  );
  return rows[0] ?? null;
}

/** A first operator's declaration; false when one exists already (made meanwhile). */
export async function insertForeign(
  db: Queryable,
  row: { chain: Chain; txId: string; nonce: number | null; reason: string; declaredBy: string; at: Date },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO foreign_treasury_transactions (chain, tx_id, nonce, reason, declared_by, declared_at) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (chain, tx_id) DO NOTHING`,
    [row.chain, row.txId, row.nonce, row.reason, row.declaredBy, row.at],
  );
  return rowCount === 1;
}

export async function markForeignApproved(db: Queryable, chain: Chain, txId: string, approvedBy: string, at: Date): Promise<void> {
  await db.query('UPDATE foreign_treasury_transactions SET approved_by = $3, approved_at = $4 WHERE chain = $1 AND tx_id = $2 AND approved_at IS NULL', [
    chain,
    txId,
    approvedBy,
    at,
  ]);
}

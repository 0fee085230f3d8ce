// The history of continuous reconciliation (migration 065): one row per chain and run.
import type { Chain } from '../../domain/chain.js';
import type { Queryable } from '../pool.js';

export interface ReconciliationRunRow {
  id: number;
  chain: Chain;
  status: 'ok' | 'in_flight' | 'mismatch' | 'error';
  address: string;
  ledger_usdc: string;
  in_flight_usdc: string;
  on_chain_usdc: string | null;
  difference_usdc: string | null;
  error: string | null;
  created_at: Date;
}

/** `token`: the token a run compared (issue 40); usdc when absent. */
export async function insertReconciliationRuns(db: Queryable, runs: readonly (Omit<ReconciliationRunRow, 'id'> & { token?: string })[]): Promise<void> {
  if (runs.length === 0) return;
  await db.query(
    `INSERT INTO reconciliation_runs (chain, status, address, ledger_usdc, in_flight_usdc, on_chain_usdc, difference_usdc, error, created_at, token)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::timestamptz[], $10::text[])`,
    [
      runs.map((r) => r.chain),
      runs.map((r) => r.status),
      runs.map((r) => r.address),
      runs.map((r) => r.ledger_usdc),
      runs.map((r) => r.in_flight_usdc),
      runs.map((r) => r.on_chain_usdc),
      runs.map((r) => r.difference_usdc),
      runs.map((r) => r.error),
      runs.map((r) => r.created_at),
      runs.map((r) => r.token ?? 'usdc'),
    ],
  );
}

/** Newest first; `before` is the previous page's last id. */
export async function listReconciliationRuns(
  db: Queryable,
  filter: { chain?: Chain; limit: number; before?: number },
): Promise<ReconciliationRunRow[]> {
  const { rows } = await db.query<ReconciliationRunRow & { id: string }>(
    `SELECT id::text, chain, status, address, ledger_usdc, in_flight_usdc, on_chain_usdc, difference_usdc, error, created_at
       FROM reconciliation_runs
      WHERE ($1::text IS NULL OR chain = $1)
        AND ($2::bigint IS NULL OR (created_at, id) < (SELECT created_at, id FROM reconciliation_runs WHERE id = $2))
      ORDER BY created_at DESC, id DESC LIMIT $3`,
    [filter.chain ?? null, filter.before ?? null, filter.limit],
  );
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}

/** Whether a run was recorded after `since` (another worker process already ran this period). */
export async function readAnyReconciliationRunSince(db: Queryable, since: Date): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM reconciliation_runs WHERE created_at > $1 LIMIT 1', [since]);
  return (rowCount ?? 0) > 0;
}

/**
 * When the chain's current run of `mismatch` verdicts began: the first mismatch after its last `ok` or `in_flight`
 * (an `error` says nothing and does not end it). Null when its latest verdict is not a mismatch.
 */
export async function readMismatchSince(db: Queryable, chain: Chain): Promise<Date | null> {
  const { rows } = await db.query<{ since: Date | null }>(
    `SELECT MIN(created_at) AS since FROM reconciliation_runs
      WHERE chain = $1 AND status = 'mismatch'
        AND created_at > COALESCE(
          (SELECT MAX(created_at) FROM reconciliation_runs WHERE chain = $1 AND status IN ('ok', 'in_flight')), '-infinity')`,
    [chain],
  );
  return rows[0]?.since ?? null;
}

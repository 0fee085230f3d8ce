// Requests to replace a stuck transaction despite a screening hit, waiting for a second operator (migration 097).
import type { Chain } from '../../domain/chain.js';
import type { Queryable } from '../pool.js';

export interface ScreeningOverrideRow {
  id: string;
  payment_intent_id: string;
  /** The stuck transaction the replacement supersedes: the request applies to it only. */
  chain: Chain;
  tx_id: string;
  /** The refused recipients as the requester saw them (payment, chain, address, by, list source). */
  screened: unknown[];
  requested_by: string;
  requested_at: Date;
  used_by: string | null;
  used_at: Date | null;
}

const COLUMNS = 'id, payment_intent_id, chain, tx_id, screened, requested_by, requested_at, used_by, used_at';

/** The request not used yet for this stuck transaction, if any (lapsed or not). */
export async function readOpenOverride(db: Queryable, chain: Chain, txId: string): Promise<ScreeningOverrideRow | null> {
  const { rows } = await db.query<ScreeningOverrideRow>(`SELECT ${COLUMNS} FROM screening_overrides WHERE chain = $1 AND tx_id = $2 AND used_at IS NULL`, [
    chain,
    txId,
  ]);
  return rows[0] ?? null;
}

/**
 * Records a request, or renews one that lapsed before `lapsedBefore` (taking the new id, requester and time). Returns
 * the open request as it stands: the one recorded now (its id is `row.id`), or an earlier one still valid.
 */
export async function upsertOverrideRequest(
  db: Queryable,
  row: Pick<ScreeningOverrideRow, 'id' | 'payment_intent_id' | 'chain' | 'tx_id' | 'screened' | 'requested_by' | 'requested_at'>,
  lapsedBefore: Date,
): Promise<ScreeningOverrideRow> {
  const { rows } = await db.query<ScreeningOverrideRow>(
    `INSERT INTO screening_overrides AS o (id, payment_intent_id, chain, tx_id, screened, requested_by, requested_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (chain, tx_id) WHERE used_at IS NULL
     DO UPDATE SET id = EXCLUDED.id, screened = EXCLUDED.screened, requested_by = EXCLUDED.requested_by, requested_at = EXCLUDED.requested_at
       WHERE o.requested_at < $8
     RETURNING ${COLUMNS}`,
    [row.id, row.payment_intent_id, row.chain, row.tx_id, JSON.stringify(row.screened), row.requested_by, row.requested_at, lapsedBefore],
  );
  return rows[0] ?? (await readOpenOverride(db, row.chain, row.tx_id))!;
}

/** Marks the request used by `usedBy`; false when another transaction used it first. */
export async function markOverrideUsed(db: Queryable, id: string, usedBy: string, at: Date): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE screening_overrides SET used_by = $2, used_at = $3 WHERE id = $1 AND used_at IS NULL', [id, usedBy, at]);
  return rowCount === 1;
}

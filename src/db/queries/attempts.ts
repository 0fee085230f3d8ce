// Payment-attempt queries: one row per signed transaction, persisted before it is sent.
import type { Chain, FailureReason, SignedTransfer } from '../../chains/port.js';
import type { PaymentStatus } from '../../domain/payment-intent.js';
import type { Queryable } from '../pool.js';

export type AttemptStatus = 'signed' | 'broadcasted' | 'confirmed' | 'failed' | 'replaced';

export interface AttemptRow {
  id: string;
  payment_intent_id: string;
  chain: Chain;
  tx_id: string;
  status: AttemptStatus;
  signed_tx: string;
  chain_meta: SignedTransfer['meta'];
  estimated_fee_usd: number;
  actual_fee_native: bigint | null;
  failure_reason: FailureReason | null;
  failure_detail: string | null;
  broadcast_at: Date | null;
  included_at: Date | null;
  confirmed_at: Date | null;
  created_at: Date;
}

const COLUMNS = `id, payment_intent_id, chain, tx_id, status, signed_tx, chain_meta, estimated_fee_usd,
  actual_fee_native::text, failure_reason, failure_detail, broadcast_at, included_at, confirmed_at, created_at`;

type RawRow = Omit<AttemptRow, 'actual_fee_native'> & { actual_fee_native: string | null };
const toRow = (r: RawRow): AttemptRow => ({
  ...r,
  actual_fee_native: r.actual_fee_native === null ? null : BigInt(r.actual_fee_native),
});

export function signedOf(attempt: Pick<AttemptRow, 'tx_id' | 'signed_tx' | 'chain_meta'>): SignedTransfer {
  return { txId: attempt.tx_id, rawTx: attempt.signed_tx, meta: attempt.chain_meta };
}

export async function insertAttempt(
  db: Queryable,
  row: Pick<AttemptRow, 'id' | 'payment_intent_id' | 'chain' | 'estimated_fee_usd' | 'created_at'> & { signed: SignedTransfer },
): Promise<void> {
  await db.query(
    `INSERT INTO payment_attempts (id, payment_intent_id, chain, tx_id, status, signed_tx, chain_meta, estimated_fee_usd, created_at)
     VALUES ($1, $2, $3, $4, 'signed', $5, $6, $7, $8)`,
    [row.id, row.payment_intent_id, row.chain, row.signed.txId, row.signed.rawTx, row.signed.meta, row.estimated_fee_usd, row.created_at],
  );
}

export async function attemptsOf(db: Queryable, intentIds: readonly string[]): Promise<Map<string, AttemptRow[]>> {
  const byIntent = new Map<string, AttemptRow[]>();
  if (intentIds.length === 0) return byIntent;
  const { rows } = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM payment_attempts WHERE payment_intent_id = ANY($1) ORDER BY created_at, id`,
    [intentIds],
  );
  for (const row of rows.map(toRow)) {
    const list = byIntent.get(row.payment_intent_id) ?? [];
    list.push(row);
    byIntent.set(row.payment_intent_id, list);
  }
  return byIntent;
}

/** The attempt that is still live for an intent (signed or broadcast), if any. */
export async function liveAttempt(db: Queryable, intentId: string, options: { forUpdate?: boolean } = {}): Promise<AttemptRow | null> {
  const { rows } = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM payment_attempts WHERE payment_intent_id = $1 AND status IN ('signed', 'broadcasted')
      ORDER BY created_at DESC, id DESC LIMIT 1${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [intentId],
  );
  return rows[0] ? toRow(rows[0]) : null;
}

export async function findAttemptForUpdate(db: Queryable, attemptId: string, skipLocked: boolean): Promise<AttemptRow | null> {
  const { rows } = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM payment_attempts WHERE id = $1 FOR UPDATE${skipLocked ? ' SKIP LOCKED' : ''}`,
    [attemptId],
  );
  return rows[0] ? toRow(rows[0]) : null;
}

/**
 * Picks up to `limit` broadcast attempts of intents the confirmation worker watches, least recently checked first, and
 * stamps them checked at `at`. Stamping before the check (not after it) keeps attempts whose check keeps failing from
 * holding the head of the line. Rows another transaction holds are skipped, never waited for.
 */
export async function claimAttemptsToCheck(
  db: Queryable,
  watchedIntentStatuses: readonly PaymentStatus[],
  limit: number,
  at: Date,
): Promise<{ id: string; payment_intent_id: string }[]> {
  const { rows } = await db.query<{ id: string; payment_intent_id: string }>(
    `UPDATE payment_attempts SET last_checked_at = $3
      WHERE id IN (
        SELECT a.id FROM payment_attempts a JOIN payment_intents i ON i.id = a.payment_intent_id
         WHERE a.status = 'broadcasted' AND i.status = ANY($1)
         ORDER BY a.last_checked_at NULLS FIRST, a.broadcast_at, a.id
         LIMIT $2 FOR UPDATE OF a SKIP LOCKED)
      RETURNING id, payment_intent_id`,
    [watchedIntentStatuses, limit, at],
  );
  return rows;
}

export async function markBroadcasted(db: Queryable, attemptId: string, at: Date): Promise<void> {
  await db.query(
    `UPDATE payment_attempts SET status = 'broadcasted', broadcast_at = COALESCE(broadcast_at, $2) WHERE id = $1 AND status = 'signed'`,
    [attemptId, at],
  );
}

export async function markIncluded(db: Queryable, attemptId: string, at: Date): Promise<void> {
  await db.query('UPDATE payment_attempts SET included_at = COALESCE(included_at, $2) WHERE id = $1', [attemptId, at]);
}

export async function markConfirmed(db: Queryable, attemptId: string, feeNative: bigint, at: Date): Promise<void> {
  await db.query(
    `UPDATE payment_attempts SET status = 'confirmed', actual_fee_native = $2, confirmed_at = $3,
       broadcast_at = COALESCE(broadcast_at, $3) WHERE id = $1`,
    [attemptId, feeNative.toString(), at],
  );
}

export async function markFailed(
  db: Queryable,
  attemptId: string,
  reason: FailureReason,
  detail: string | null,
  feeNative: bigint | null = null,
  status: 'failed' | 'replaced' = 'failed',
): Promise<void> {
  await db.query(
    `UPDATE payment_attempts SET status = $5, failure_reason = $2, failure_detail = $3,
       actual_fee_native = COALESCE($4, actual_fee_native) WHERE id = $1`,
    [attemptId, reason, detail?.slice(0, 2000) ?? null, feeNative === null ? null : feeNative.toString(), status],
  );
}

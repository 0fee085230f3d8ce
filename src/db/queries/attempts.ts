// Payment-attempt queries: one row per signed transaction, persisted before it is sent.
import type { Token } from '../../domain/token.js';
import { signedOf, type Chain, type FailureReason, type SignedTransfer } from '../../domain/chain.js';
import type { PaymentStatus } from '../../domain/payment-intent.js';
import type { AttemptPurpose } from '../../domain/transfer-verdict.js';
import type { Queryable } from '../pool.js';

export type AttemptStatus = 'signed' | 'broadcasted' | 'confirmed' | 'failed' | 'replaced';
export type { AttemptPurpose };

export interface AttemptRow {
  id: string;
  payment_intent_id: string;
  chain: Chain;
  tx_id: string;
  status: AttemptStatus;
  purpose: AttemptPurpose;
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
  /** Payments the attempt's transaction pays (an on-chain batch pays several, each with its own attempt). */
  tx_payments: number;
  /** This attempt's payment's place among them, from 0. */
  tx_payment_index: number;
}

const COLUMN_NAMES = [
  'id', 'payment_intent_id', 'chain', 'tx_id', 'status', 'purpose', 'signed_tx', 'chain_meta', 'estimated_fee_usd',
  'actual_fee_native::text', 'failure_reason', 'failure_detail', 'broadcast_at', 'included_at', 'confirmed_at', 'created_at',
  'tx_payments', 'tx_payment_index',
];
/** The attempt columns, optionally qualified by a table alias (for the queries of other files that read attempts). */
export const attemptColumns = (alias = '') => COLUMN_NAMES.map((c) => (alias ? `${alias}.${c}` : c)).join(', ');
const COLUMNS = attemptColumns();

export type RawAttemptRow = Omit<AttemptRow, 'actual_fee_native'> & { actual_fee_native: string | null };
type RawRow = RawAttemptRow;
export const attemptOf = (r: RawRow): AttemptRow => ({
  ...r,
  actual_fee_native: r.actual_fee_native === null ? null : BigInt(r.actual_fee_native),
});

export type NewAttempt = Pick<AttemptRow, 'id' | 'payment_intent_id' | 'chain' | 'estimated_fee_usd' | 'created_at' | 'tx_payments' | 'tx_payment_index'> & {
  signed: SignedTransfer;
  /** 'transfer' when absent. */
  purpose?: AttemptPurpose;
};

/** Signed attempts, none sent yet, in one INSERT. */
export async function insertAttempts(db: Queryable, rows: readonly NewAttempt[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `INSERT INTO payment_attempts (id, payment_intent_id, chain, tx_id, status, purpose, signed_tx, chain_meta, estimated_fee_usd, created_at,
       tx_payments, tx_payment_index)
     SELECT id, intent, chain, tx, 'signed', purpose, raw, meta, fee, at, payments, index
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[], $7::float8[], $8::timestamptz[], $9::text[],
                   $10::int[], $11::int[])
         AS r(id, intent, chain, tx, raw, meta, fee, at, purpose, payments, index)`,
    [
      rows.map((r) => r.id),
      rows.map((r) => r.payment_intent_id),
      rows.map((r) => r.chain),
      rows.map((r) => r.signed.txId),
      rows.map((r) => r.signed.rawTx),
      rows.map((r) => JSON.stringify(r.signed.meta)),
      rows.map((r) => r.estimated_fee_usd),
      rows.map((r) => r.created_at),
      rows.map((r) => r.purpose ?? 'transfer'),
      rows.map((r) => r.tx_payments),
      rows.map((r) => r.tx_payment_index),
    ],
  );
}

export async function readAttempts(db: Queryable, intentIds: readonly string[]): Promise<Map<string, AttemptRow[]>> {
  const byIntent = new Map<string, AttemptRow[]>();
  if (intentIds.length === 0) return byIntent;
  const { rows } = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM payment_attempts WHERE payment_intent_id = ANY($1) ORDER BY created_at, id`,
    [intentIds],
  );
  for (const row of rows.map(attemptOf)) {
    const list = byIntent.get(row.payment_intent_id) ?? [];
    list.push(row);
    byIntent.set(row.payment_intent_id, list);
  }
  return byIntent;
}

/** An attempt that may still land: signed (perhaps sent) or broadcast. */
export const LIVE_STATUSES = ['signed', 'broadcasted'];

/** The attempt that is still live for an intent (signed or broadcast), if any. */
export async function readLiveAttempt(db: Queryable, intentId: string, options: { forUpdate?: boolean } = {}): Promise<AttemptRow | null> {
  const { rows } = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM payment_attempts WHERE payment_intent_id = $1 AND status = ANY($2::text[])
      ORDER BY created_at DESC, id DESC LIMIT 1${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [intentId, LIVE_STATUSES],
  );
  return rows[0] ? attemptOf(rows[0]) : null;
}

/**
 * The live attempts that share a transaction (`chain`, `txId`): one, or an on-chain batch's, in the transaction's order.
 */
export async function readLiveAttemptsOfTransaction(db: Queryable, chain: string, txId: string, options: { forUpdate?: boolean } = {}): Promise<AttemptRow[]> {
  const { rows } = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM payment_attempts WHERE chain = $1 AND tx_id = $2 AND status = ANY($3::text[])
      ORDER BY tx_payment_index${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [chain, txId, LIVE_STATUSES],
  );
  return rows.map(attemptOf);
}

/**
 * The attempts of each intent that a fee-bumped replacement or a cancel superseded ('replaced'), oldest first. They
 * share the live attempt's nonce, so one of them may be the transfer that lands. Every intent asked is in the answer.
 */
export async function readReplacedAttempts(db: Queryable, intentIds: readonly string[]): Promise<Map<string, AttemptRow[]>> {
  const byIntent = new Map<string, AttemptRow[]>(intentIds.map((id) => [id, []]));
  if (intentIds.length === 0) return byIntent;
  const { rows } = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM payment_attempts WHERE payment_intent_id = ANY($1::text[]) AND status = 'replaced' ORDER BY created_at, id`,
    [intentIds],
  );
  for (const row of rows.map(attemptOf)) byIntent.get(row.payment_intent_id)!.push(row);
  return byIntent;
}

/** A transfer of a payment whose amount the books still count in flight, and that amount. */
export interface InFlightTransfer {
  chain: Chain;
  payment_intent_id: string;
  amount_micros: bigint;
  signed: SignedTransfer;
}

/**
 * Every transfer of `chains` that may have moved treasury USDC the books still count in flight: the signed, broadcast
 * or replaced attempts of payments and withdrawals in `openIntentStatuses` (not settled, failed or cancelled). Read
 * from the intents' status index, so its cost follows what is open, not the history. Nothing is locked.
 */
// Transfers only: a cancel on chain (decision 63) moves no USDC, so its landing explains no shortfall.
export async function listInFlightTransfers(
  db: Queryable,
  chains: readonly Chain[],
  openIntentStatuses: readonly PaymentStatus[],
  token: Token = 'usdc',
): Promise<InFlightTransfer[]> {
  if (chains.length === 0) return [];
  const { rows } = await db.query<{ chain: Chain; payment_intent_id: string; amount_micros: string; tx_id: string; signed_tx: string; chain_meta: SignedTransfer['meta'] }>(
    `SELECT a.chain, a.payment_intent_id, i.amount_micros::text, a.tx_id, a.signed_tx, a.chain_meta
       FROM payment_intents i JOIN payment_attempts a ON a.payment_intent_id = i.id
      WHERE i.status = ANY($2::text[]) AND i.selected_chain = ANY($1::text[]) AND a.status IN ('signed', 'broadcasted', 'replaced')
        AND a.purpose = 'transfer' AND i.token = $3
      ORDER BY a.id`,
    [chains, openIntentStatuses, token],
  );
  return rows.map((r) => ({
    chain: r.chain,
    payment_intent_id: r.payment_intent_id,
    amount_micros: BigInt(r.amount_micros),
    signed: signedOf(r),
  }));
}

/** A send whose outcome is unknown: the attempt stays live, with the reason on record for the failure analysis. */
export async function markSendError(db: Queryable, attemptId: string, reason: FailureReason, detail: string): Promise<void> {
  await db.query('UPDATE payment_attempts SET failure_reason = $2, failure_detail = $3 WHERE id = $1', [attemptId, reason, detail]);
}

/** The attempts `ids` that no other transaction holds, locked, in id order. */
export async function lockAttemptsIfFree(db: Queryable, ids: readonly string[]): Promise<Map<string, AttemptRow>> {
  const { rows } = await db.query<RawRow>(`SELECT ${COLUMNS} FROM payment_attempts WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE SKIP LOCKED`, [ids]);
  return new Map(rows.map((r) => [r.id, attemptOf(r)]));
}

/** A broadcast attempt the confirmation worker watches, with its intent's status as read (not locked). */
export type OpenAttempt = AttemptRow & { intent_status: PaymentStatus };

/**
 * One page of the broadcast attempts of intents in `watchedIntentStatuses`, in id order after `afterId` (keyset
 * paging: a round walks every open attempt however many there are). Nothing is locked.
 */
export async function listOpenAttempts(
  db: Queryable,
  watchedIntentStatuses: readonly PaymentStatus[],
  afterId: string,
  limit: number,
): Promise<OpenAttempt[]> {
  const { rows } = await db.query<RawRow & { intent_status: PaymentStatus }>(
    `SELECT ${attemptColumns('a')}, i.status AS intent_status
       FROM payment_attempts a JOIN payment_intents i ON i.id = a.payment_intent_id
      WHERE a.status = 'broadcasted' AND i.status = ANY($1) AND a.id > $2
      ORDER BY a.id LIMIT $3`,
    [watchedIntentStatuses, afterId, limit],
  );
  return rows.map((r) => ({ ...attemptOf(r), intent_status: r.intent_status }));
}

/** Sent: each attempt still 'signed' becomes 'broadcasted'. */
export async function markBroadcasted(db: Queryable, attemptIds: readonly string[], at: Date): Promise<void> {
  if (attemptIds.length === 0) return;
  await db.query(
    `UPDATE payment_attempts SET status = 'broadcasted', broadcast_at = COALESCE(broadcast_at, $2) WHERE id = ANY($1::text[]) AND status = 'signed'`,
    [attemptIds, at],
  );
}

/** The chain has included these attempts' transactions (the first time seen is kept). */
export async function markIncluded(db: Queryable, attemptIds: readonly string[], at: Date): Promise<void> {
  if (attemptIds.length === 0) return;
  await db.query('UPDATE payment_attempts SET included_at = COALESCE(included_at, $2) WHERE id = ANY($1::text[])', [attemptIds, at]);
}

/** Final on chain, each with the fee it paid. */
export async function markConfirmed(db: Queryable, confirmed: readonly { attemptId: string; feeNative: bigint }[], at: Date): Promise<void> {
  if (confirmed.length === 0) return;
  await db.query(
    `UPDATE payment_attempts a SET status = 'confirmed', actual_fee_native = c.fee, confirmed_at = $3,
       broadcast_at = COALESCE(a.broadcast_at, $3)
       FROM unnest($1::text[], $2::numeric[]) AS c(id, fee) WHERE a.id = c.id`,
    [confirmed.map((c) => c.attemptId), confirmed.map((c) => c.feeNative.toString()), at],
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

// Payment-attempt queries: one row per signed transaction, persisted before it is sent.
import type { Chain, FailureReason, SignedTransfer } from '../../domain/chain.js';
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
}

const COLUMN_NAMES = [
  'id', 'payment_intent_id', 'chain', 'tx_id', 'status', 'purpose', 'signed_tx', 'chain_meta', 'estimated_fee_usd',
  'actual_fee_native::text', 'failure_reason', 'failure_detail', 'broadcast_at', 'included_at', 'confirmed_at', 'created_at',
];
/** The attempt columns, optionally qualified by a table alias. */
const columns = (alias = '') => COLUMN_NAMES.map((c) => (alias ? `${alias}.${c}` : c)).join(', ');
const COLUMNS = columns();

type RawRow = Omit<AttemptRow, 'actual_fee_native'> & { actual_fee_native: string | null };
const toRow = (r: RawRow): AttemptRow => ({
  ...r,
  actual_fee_native: r.actual_fee_native === null ? null : BigInt(r.actual_fee_native),
});

export function signedOf(attempt: Pick<AttemptRow, 'tx_id' | 'signed_tx' | 'chain_meta'>): SignedTransfer {
  return { txId: attempt.tx_id, rawTx: attempt.signed_tx, meta: attempt.chain_meta };
}

export type NewAttempt = Pick<AttemptRow, 'id' | 'payment_intent_id' | 'chain' | 'estimated_fee_usd' | 'created_at'> & {
  signed: SignedTransfer;
  /** 'transfer' when absent. */
  purpose?: AttemptPurpose;
};

export async function insertAttempt(db: Queryable, row: NewAttempt): Promise<void> {
  await insertAttempts(db, [row]);
}

/** Signed attempts, none sent yet, in one INSERT. */
export async function insertAttempts(db: Queryable, rows: readonly NewAttempt[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `INSERT INTO payment_attempts (id, payment_intent_id, chain, tx_id, status, purpose, signed_tx, chain_meta, estimated_fee_usd, created_at)
     SELECT id, intent, chain, tx, 'signed', purpose, raw, meta, fee, at
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[], $7::float8[], $8::timestamptz[], $9::text[])
         AS r(id, intent, chain, tx, raw, meta, fee, at, purpose)`,
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
    ],
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

/** An attempt that may still land: signed (perhaps sent) or broadcast. */
const LIVE_STATUSES = ['signed', 'broadcasted'];

/** The attempt that is still live for an intent (signed or broadcast), if any. */
export async function liveAttempt(db: Queryable, intentId: string, options: { forUpdate?: boolean } = {}): Promise<AttemptRow | null> {
  const { rows } = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM payment_attempts WHERE payment_intent_id = $1 AND status = ANY($2::text[])
      ORDER BY created_at DESC, id DESC LIMIT 1${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [intentId, LIVE_STATUSES],
  );
  return rows[0] ? toRow(rows[0]) : null;
}

/**
 * Whether `runId` holds the intent's execution lease, and the intent's live attempt (locked with `forUpdate`), in one
 * statement. Call with the intent's row lock held: the lease only changes hands under it, so even when the attempt's
 * lock makes this statement wait, the lease it read is still the lease (decision 140).
 */
export async function leaseAndLiveAttempt(
  db: Queryable,
  intentId: string,
  runId: string,
  options: { forUpdate?: boolean } = {},
): Promise<{ holdsLease: boolean; live: AttemptRow | null }> {
  const { rows } = await db.query<RawRow & { holds_lease: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM execution_leases WHERE payment_intent_id = $1 AND owner = $3) AS holds_lease, a.*
       FROM (SELECT 1) AS one
       LEFT JOIN LATERAL (
         SELECT ${COLUMNS} FROM payment_attempts WHERE payment_intent_id = $1 AND status = ANY($2::text[])
          ORDER BY created_at DESC, id DESC LIMIT 1${options.forUpdate ? ' FOR UPDATE' : ''}) AS a ON true`,
    [intentId, LIVE_STATUSES, runId],
  );
  const { holds_lease: holdsLease, ...attempt } = rows[0]!;
  return { holdsLease, live: attempt.id === null ? null : toRow(attempt) };
}

/**
 * For each (intent, run): whether the run holds the intent's execution lease, and the intent's live attempt
 * (leaseAndLiveAttempt's answers, many at once, unlocked: callers hold the intents' locks). In input order.
 */
export async function leasesAndLive(
  db: Queryable,
  pairs: readonly { intentId: string; runId: string }[],
): Promise<{ holdsLease: boolean; live: AttemptRow | null }[]> {
  const { rows } = await db.query<RawRow & { holds_lease: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM execution_leases l WHERE l.payment_intent_id = p.intent AND l.owner = p.run) AS holds_lease, a.*
       FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS p(intent, run, k)
       LEFT JOIN LATERAL (
         SELECT ${COLUMNS} FROM payment_attempts WHERE payment_intent_id = p.intent AND status = ANY($3::text[])
          ORDER BY created_at DESC, id DESC LIMIT 1) AS a ON true
      ORDER BY p.k`,
    [pairs.map((p) => p.intentId), pairs.map((p) => p.runId), LIVE_STATUSES],
  );
  return rows.map(({ holds_lease: holdsLease, ...attempt }) => ({ holdsLease, live: attempt.id === null ? null : toRow(attempt) }));
}

/** liveAttempt of several intents in one statement; every intent asked is in the answer (null: none live). */
export async function liveAttemptsOf(db: Queryable, intentIds: readonly string[]): Promise<Map<string, AttemptRow | null>> {
  if (intentIds.length === 0) return new Map();
  const { rows } = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM payment_attempts WHERE payment_intent_id = ANY($1::text[]) AND status = ANY($2::text[])
      ORDER BY created_at DESC, id DESC`,
    [intentIds, LIVE_STATUSES],
  );
  return new Map(
    intentIds.map((id) => {
      const live = rows.find((r) => r.payment_intent_id === id);
      return [id, live ? toRow(live) : null];
    }),
  );
}

/**
 * The intent's attempts that a fee-bumped replacement superseded ('replaced'), but `exceptId`. They share the live
 * attempt's nonce, so one of them may be the transfer that lands.
 */
export async function replacedAttempts(db: Queryable, intentId: string, exceptId: string | null = null): Promise<AttemptRow[]> {
  const { rows } = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM payment_attempts WHERE payment_intent_id = $1 AND status = 'replaced' AND id IS DISTINCT FROM $2
      ORDER BY created_at, id`,
    [intentId, exceptId],
  );
  return rows.map(toRow);
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
export async function inFlightTransfers(db: Queryable, chains: readonly Chain[], openIntentStatuses: readonly PaymentStatus[]): Promise<InFlightTransfer[]> {
  if (chains.length === 0) return [];
  const { rows } = await db.query<{ chain: Chain; payment_intent_id: string; amount_micros: string; tx_id: string; signed_tx: string; chain_meta: SignedTransfer['meta'] }>(
    `SELECT a.chain, a.payment_intent_id, i.amount_micros::text, a.tx_id, a.signed_tx, a.chain_meta
       FROM payment_intents i JOIN payment_attempts a ON a.payment_intent_id = i.id
      WHERE i.status = ANY($2::text[]) AND i.selected_chain = ANY($1::text[]) AND a.status IN ('signed', 'broadcasted', 'replaced')
        AND a.purpose = 'transfer'
      ORDER BY a.id`,
    [chains, openIntentStatuses],
  );
  return rows.map((r) => ({
    chain: r.chain,
    payment_intent_id: r.payment_intent_id,
    amount_micros: BigInt(r.amount_micros),
    signed: signedOf(r),
  }));
}

/** A send whose outcome is unknown: the attempt stays live, with the reason on record for the failure analysis. */
export async function recordSendError(db: Queryable, attemptId: string, reason: FailureReason, detail: string): Promise<void> {
  await db.query('UPDATE payment_attempts SET failure_reason = $2, failure_detail = $3 WHERE id = $1', [attemptId, reason, detail]);
}

/** Failed attempts and refusals before signing, by reason and chain, most common first (GET /admin/failures). */
export async function failureCounts(db: Queryable): Promise<{ failure_reason: string; chain: Chain; count: string }[]> {
  const { rows } = await db.query<{ failure_reason: string; chain: Chain; count: string }>(
    `SELECT failure_reason, chain, COUNT(*)::text AS count FROM (
       SELECT failure_reason, chain FROM payment_attempts WHERE status = 'failed' AND failure_reason IS NOT NULL
       UNION ALL
       SELECT reason, chain FROM sign_refusals
     ) f GROUP BY failure_reason, chain
      ORDER BY COUNT(*) DESC, failure_reason, chain`,
  );
  return rows;
}

/** Mean seconds from broadcast to confirmation of the chain's last `limit` confirmed attempts, with the sample size. */
export async function recentSettlementSeconds(db: Queryable, chain: Chain, limit: number): Promise<{ samples: number; avgSeconds: number | null }> {
  const { rows } = await db.query<{ n: string; avg: number | null }>(
    `SELECT COUNT(*)::text AS n, AVG(EXTRACT(EPOCH FROM (confirmed_at - broadcast_at)))::float8 AS avg
       FROM (SELECT confirmed_at, broadcast_at FROM payment_attempts
              WHERE chain = $1 AND status = 'confirmed' AND broadcast_at IS NOT NULL
              ORDER BY confirmed_at DESC LIMIT $2) recent`,
    [chain, limit],
  );
  return { samples: Number(rows[0]?.n ?? 0), avgSeconds: rows[0]?.avg ?? null };
}

export async function findAttemptForUpdate(db: Queryable, attemptId: string, skipLocked: boolean): Promise<AttemptRow | null> {
  const { rows } = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM payment_attempts WHERE id = $1 FOR UPDATE${skipLocked ? ' SKIP LOCKED' : ''}`,
    [attemptId],
  );
  return rows[0] ? toRow(rows[0]) : null;
}

/** The attempts `ids` that no other transaction holds, locked, in id order. */
export async function lockAttemptsIfFree(db: Queryable, ids: readonly string[]): Promise<Map<string, AttemptRow>> {
  const { rows } = await db.query<RawRow>(`SELECT ${COLUMNS} FROM payment_attempts WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE SKIP LOCKED`, [ids]);
  return new Map(rows.map((r) => [r.id, toRow(r)]));
}

/** A broadcast attempt the confirmation worker watches, with its intent's status as read (not locked). */
export type OpenAttempt = AttemptRow & { intent_status: PaymentStatus };

/**
 * One page of the broadcast attempts of intents in `watchedIntentStatuses`, in id order after `afterId` (keyset
 * paging: a round walks every open attempt however many there are). Nothing is locked.
 */
export async function openAttempts(
  db: Queryable,
  watchedIntentStatuses: readonly PaymentStatus[],
  afterId: string,
  limit: number,
): Promise<OpenAttempt[]> {
  const { rows } = await db.query<RawRow & { intent_status: PaymentStatus }>(
    `SELECT ${columns('a')}, i.status AS intent_status
       FROM payment_attempts a JOIN payment_intents i ON i.id = a.payment_intent_id
      WHERE a.status = 'broadcasted' AND i.status = ANY($1) AND a.id > $2
      ORDER BY a.id LIMIT $3`,
    [watchedIntentStatuses, afterId, limit],
  );
  return rows.map((r) => ({ ...toRow(r), intent_status: r.intent_status }));
}

export async function markBroadcasted(db: Queryable, attemptId: string, at: Date): Promise<void> {
  await markBroadcastedMany(db, [attemptId], at);
}

/** Sent: each attempt still 'signed' becomes 'broadcasted'. */
export async function markBroadcastedMany(db: Queryable, attemptIds: readonly string[], at: Date): Promise<void> {
  if (attemptIds.length === 0) return;
  await db.query(
    `UPDATE payment_attempts SET status = 'broadcasted', broadcast_at = COALESCE(broadcast_at, $2) WHERE id = ANY($1::text[]) AND status = 'signed'`,
    [attemptIds, at],
  );
}

export async function markIncluded(db: Queryable, attemptId: string, at: Date): Promise<void> {
  await markIncludedMany(db, [attemptId], at);
}

/** The chain has included these attempts' transactions (the first time seen is kept). */
export async function markIncludedMany(db: Queryable, attemptIds: readonly string[], at: Date): Promise<void> {
  if (attemptIds.length === 0) return;
  await db.query('UPDATE payment_attempts SET included_at = COALESCE(included_at, $2) WHERE id = ANY($1::text[])', [attemptIds, at]);
}

export async function markConfirmed(db: Queryable, attemptId: string, feeNative: bigint, at: Date): Promise<void> {
  await markConfirmedMany(db, [{ attemptId, feeNative }], at);
}

/** Final on chain, each with the fee it paid. */
export async function markConfirmedMany(db: Queryable, confirmed: readonly { attemptId: string; feeNative: bigint }[], at: Date): Promise<void> {
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

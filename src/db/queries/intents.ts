// Payment-intent queries: reads and locks. Every write of an intent (its creation, each status change) is in
// transitions.ts.
import type { Chain } from '../../domain/chain.js';
import type { PaymentStatus } from '../../domain/payment-intent.js';
import type { Token } from '../../domain/token.js';
import type { Queryable } from '../pool.js';

export interface PaymentIntentRow {
  id: string;
  merchant_id: string;
  quote_id: string;
  idempotency_key: string;
  amount_micros: bigint;
  status: PaymentStatus;
  selected_chain: Chain;
  destination_address: string;
  created_at: Date;
  updated_at: Date;
  /** A merchant's payout, or the operator's withdrawal of treasury funds (decision 121). */
  kind: IntentKind;
  /** The token it pays (issue 40); `usdc` for every payment made before tokens were configured. */
  token: Token;
}

export type IntentKind = 'payout' | 'withdrawal';

const COLUMNS =
  'id, merchant_id, quote_id, idempotency_key, amount_micros::text, status, selected_chain, destination_address, created_at, updated_at, kind, token';

type RawRow = Omit<PaymentIntentRow, 'amount_micros'> & { amount_micros: string };
const toRow = (r: RawRow): PaymentIntentRow => ({ ...r, amount_micros: BigInt(r.amount_micros) });

/** The intents of these (merchant, idempotency key) pairs that exist. */
export async function readIntentsByKeys(db: Queryable, keys: readonly { merchantId: string; idempotencyKey: string }[]): Promise<PaymentIntentRow[]> {
  if (keys.length === 0) return [];
  const { rows } = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM payment_intents
      WHERE (merchant_id, idempotency_key) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
    [keys.map((k) => k.merchantId), keys.map((k) => k.idempotencyKey)],
  );
  return rows.map(toRow);
}

/** The intent as it is, unlocked (a read; a use case that decides locks it with lockIntents). */
export async function readIntent(db: Queryable, id: string): Promise<PaymentIntentRow | null> {
  const { rows } = await db.query<RawRow>(`SELECT ${COLUMNS} FROM payment_intents WHERE id = $1`, [id]);
  return rows[0] ? toRow(rows[0]) : null;
}

/**
 * The intents `ids`, each locked, in id order (concurrent batches lock shared rows in the same order); gone ones
 * absent, and with `skipLocked` also those another transaction holds.
 */
export async function lockIntents(db: Queryable, ids: readonly string[], options: { skipLocked?: boolean } = {}): Promise<Map<string, PaymentIntentRow>> {
  const { rows } = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM payment_intents WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE${options.skipLocked ? ' SKIP LOCKED' : ''}`,
    [ids],
  );
  return new Map(rows.map((r) => [r.id, toRow(r)]));
}

/** Intents of one kind, newest first; `before` is the previous page's last id (keyset on (created_at, id)). */
export async function listIntentsOfKind(db: Queryable, kind: IntentKind, page: { limit: number; before?: string }): Promise<PaymentIntentRow[]> {
  const { rows } = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM payment_intents
      WHERE kind = $1 AND ($2::text IS NULL OR (created_at, id) < (SELECT created_at, id FROM payment_intents WHERE id = $2))
      ORDER BY created_at DESC, id DESC LIMIT $3`,
    [kind, page.before ?? null, page.limit],
  );
  return rows.map(toRow);
}

export async function listRecentIntents(db: Queryable, limit: number): Promise<PaymentIntentRow[]> {
  // Merchants' payouts only: a withdrawal is the operator's (GET /admin/withdrawals), not a payment (decision 121).
  const { rows } = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM payment_intents WHERE kind = 'payout' ORDER BY created_at DESC, id DESC LIMIT $1`,
    [limit],
  );
  return rows.map(toRow);
}

/** How many times the intent entered `to` (e.g. 'retrying': the execution attempts already failed). */
export async function countTransitions(db: Queryable, intentId: string, to: PaymentStatus): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT COUNT(*)::int AS n FROM payment_intent_transitions WHERE payment_intent_id = $1 AND to_status = $2',
    [intentId, to],
  );
  return rows[0]?.n ?? 0;
}

export interface PaymentCounts {
  total: number;
  settled: number;
  failed: number;
  pending: number;
  settledVolumeMicros: bigint;
}

/** Counts for the admin overview; `pending` counts the intents in one of `openStatuses`. */
export async function countPayments(db: Queryable, openStatuses: readonly PaymentStatus[]): Promise<PaymentCounts> {
  const { rows } = await db.query<{ total: string; settled: string; failed: string; pending: string; volume: string }>(
    `SELECT COUNT(*)::text AS total,
            COUNT(*) FILTER (WHERE status = 'settled')::text AS settled,
            COUNT(*) FILTER (WHERE status = 'failed')::text AS failed,
            COUNT(*) FILTER (WHERE status = ANY($1))::text AS pending,
            COALESCE(SUM(amount_micros) FILTER (WHERE status = 'settled'), 0)::text AS volume
       FROM payment_intents WHERE kind = 'payout'`,
    [openStatuses],
  );
  const c = rows[0]!;
  return {
    total: Number(c.total),
    settled: Number(c.settled),
    failed: Number(c.failed),
    pending: Number(c.pending),
    settledVolumeMicros: BigInt(c.volume),
  };
}

/** Intents and their volume per selected chain, most used first. */
export async function countRoutes(db: Queryable): Promise<{ chain: Chain; count: string; volumeMicros: bigint }[]> {
  const { rows } = await db.query<{ selected_chain: Chain; count: string; volume: string }>(
    `SELECT selected_chain, COUNT(*)::text AS count, SUM(amount_micros)::text AS volume
       FROM payment_intents WHERE kind = 'payout' GROUP BY selected_chain ORDER BY COUNT(*) DESC, selected_chain`,
  );
  return rows.map((r) => ({ chain: r.selected_chain, count: r.count, volumeMicros: BigInt(r.volume) }));
}

// Payment-intent queries. Status changes go through changeStatus only, which enforces the transition table.
import type { Chain } from '../../domain/chain.js';
import { transition, type PaymentStatus } from '../../domain/payment-intent.js';
import { newId } from '../../ids.js';
import { notifyAfterCommit } from '../notify.js';
import { eventsInsertParams, eventsInsertSql, WEBHOOK_CHANNEL, type NewEvent } from './webhook-events.js';
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
}

export type IntentKind = 'payout' | 'withdrawal';

/**
 * NOTIFY channel of intent changes (the operator console's live view, src/api/live). Every insert and status change
 * is announced after its transaction commits, never when it rolls back (src/db/notify.ts). Payload: IntentNotice.
 */
export const INTENT_CHANNEL = 'stableroute_intents';

export interface IntentNotice {
  id: string;
  status: PaymentStatus;
  from: PaymentStatus | null;
  chain: Chain;
  merchant_id: string;
  at: string;
}

/** The notice payload of an intent row `r` (from: `$from`), as JSON text: ids and statuses only, never large. */
const NOTICE_SQL = (from: string) =>
  `json_build_object('id', r.id, 'status', r.status, 'from', ${from}, 'chain', r.selected_chain, 'merchant_id', r.merchant_id,
     'at', to_char(r.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text`;

const COLUMNS =
  'id, merchant_id, quote_id, idempotency_key, amount_micros::text, status, selected_chain, destination_address, created_at, updated_at, kind';

type RawRow = Omit<PaymentIntentRow, 'amount_micros'> & { amount_micros: string };
const toRow = (r: RawRow): PaymentIntentRow => ({ ...r, amount_micros: BigInt(r.amount_micros) });

/**
 * New intents with their creation history (created -> quoted -> route_selected) and the events telling their merchants,
 * all in one statement (a reservation batch, decision 134). Each intent is announced on INTENT_CHANNEL after commit,
 * and the events wake the webhook workers then.
 */
export async function insertCreatedIntents(db: Queryable, rows: readonly PaymentIntentRow[], at: Date, events: readonly NewEvent[] = []): Promise<void> {
  if (rows.length === 0) return;
  const eventIds = events.map(() => newId('evt'));
  const { rows: written } = await db.query<{ notices: string[]; first_event: string | null }>(
    `WITH r AS (
       INSERT INTO payment_intents (id, merchant_id, quote_id, idempotency_key, amount_micros, status, selected_chain,
         destination_address, created_at, updated_at, kind)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[],
                            $9::timestamptz[], $10::timestamptz[], $11::text[])
       RETURNING id, status, selected_chain, merchant_id, updated_at
     ), history AS (
       INSERT INTO payment_intent_transitions (payment_intent_id, from_status, to_status, reason, created_at)
       SELECT i.id, s.from_status, s.to_status, CASE s.n WHEN 2 THEN i.quote_id WHEN 3 THEN i.chain END, $12
         FROM unnest($1::text[], $3::text[], $7::text[]) WITH ORDINALITY AS i(id, quote_id, chain, k)
        CROSS JOIN (VALUES (1, NULL, 'created'), (2, 'created', 'quoted'), (3, 'quoted', 'route_selected')) AS s(n, from_status, to_status)
        ORDER BY i.k, s.n
     )${events.length > 0 ? `, event AS (${eventsInsertSql(13)})` : ''}
     SELECT (SELECT array_agg(${NOTICE_SQL('NULL')}) FROM r) AS notices,
            ${events.length > 0 ? '(SELECT MIN(id) FROM event)' : 'NULL'} AS first_event`,
    [
      rows.map((r) => r.id),
      rows.map((r) => r.merchant_id),
      rows.map((r) => r.quote_id),
      rows.map((r) => r.idempotency_key),
      rows.map((r) => r.amount_micros.toString()),
      rows.map((r) => r.status),
      rows.map((r) => r.selected_chain),
      rows.map((r) => r.destination_address),
      rows.map((r) => r.created_at),
      rows.map((r) => r.updated_at),
      rows.map((r) => r.kind),
      at,
      ...(events.length > 0 ? eventsInsertParams(eventIds, events) : []),
    ],
  );
  const { notices, first_event: firstEvent } = written[0]!;
  await notifyAfterCommit(db, INTENT_CHANNEL, notices);
  if (firstEvent !== null) await notifyAfterCommit(db, WEBHOOK_CHANNEL, [firstEvent]);
}

/** The intents of these (merchant, idempotency key) pairs that exist. */
export async function findIntentsByKeys(db: Queryable, keys: readonly { merchantId: string; idempotencyKey: string }[]): Promise<PaymentIntentRow[]> {
  if (keys.length === 0) return [];
  const { rows } = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM payment_intents
      WHERE (merchant_id, idempotency_key) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
    [keys.map((k) => k.merchantId), keys.map((k) => k.idempotencyKey)],
  );
  return rows.map(toRow);
}

export async function findIntent(db: Queryable, id: string, options: { forUpdate?: boolean } = {}): Promise<PaymentIntentRow | null> {
  const { rows } = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM payment_intents WHERE id = $1${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [id],
  );
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

/**
 * What an execution's claim reads about an intent besides the intent, in one statement: how many times it went to
 * `retrying` (the attempt number is one more) and whether it waits for an operator approval. Read after the intent's
 * row lock is taken, in a statement of its own: a statement that waited for that lock would still see the other tables
 * as they were before the wait.
 */
export async function executionFacts(db: Queryable, id: string): Promise<{ retries: number; awaitsApproval: boolean }> {
  return (await executionFactsOf(db, [id])).get(id)!;
}

/** executionFacts of several intents in one statement. */
export async function executionFactsOf(db: Queryable, ids: readonly string[]): Promise<Map<string, { retries: number; awaitsApproval: boolean }>> {
  const { rows } = await db.query<{ id: string; retries: number; awaits_approval: boolean }>(
    `SELECT i.id,
            (SELECT COUNT(*)::int FROM payment_intent_transitions t WHERE t.payment_intent_id = i.id AND t.to_status = 'retrying') AS retries,
            EXISTS (SELECT 1 FROM payment_approvals a WHERE a.payment_intent_id = i.id AND a.status <> 'approved') AS awaits_approval
       FROM unnest($1::text[]) AS i(id)`,
    [ids],
  );
  return new Map(rows.map((r) => [r.id, { retries: r.retries, awaitsApproval: r.awaits_approval }]));
}

/** The intent, locked, unless another transaction holds it: null when it is held (or gone). */
export async function findIntentIfFree(db: Queryable, id: string): Promise<PaymentIntentRow | null> {
  const { rows } = await db.query<RawRow>(`SELECT ${COLUMNS} FROM payment_intents WHERE id = $1 FOR UPDATE SKIP LOCKED`, [id]);
  return rows[0] ? toRow(rows[0]) : null;
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

export async function recentIntents(db: Queryable, limit: number): Promise<PaymentIntentRow[]> {
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

export class ConcurrentTransitionError extends Error {
  override readonly name = 'ConcurrentTransitionError';
}

/**
 * Moves an intent from its current status to `to`, checked by the transition table, and records the history row.
 * The UPDATE is conditional on the status we decided from, so a concurrent change is detected, never overwritten.
 */
export async function changeStatus(
  db: Queryable,
  intent: Pick<PaymentIntentRow, 'id' | 'status'>,
  to: PaymentStatus,
  at: Date,
  reason: string | null = null,
  event: NewEvent | null = null,
): Promise<PaymentStatus> {
  await changeStatuses(db, [{ intent, to, reason, event }], at);
  return to;
}

/** One checked status change: the intent as the caller read it under its lock, and the event telling its merchant. */
export interface StatusChange {
  intent: Pick<PaymentIntentRow, 'id' | 'status'>;
  to: PaymentStatus;
  reason?: string | null;
  event?: NewEvent | null;
}

/**
 * Moves each intent to its `to` (checked), with its history row and its event, all in one statement: the rows are
 * written only for the intents whose update matched, and unless every one matched, it throws (the caller's transaction
 * rolls back). Distinct intents only.
 */
export async function changeStatuses(db: Queryable, changes: readonly StatusChange[], at: Date): Promise<void> {
  if (changes.length === 0) return;
  for (const change of changes) transition(change.intent.status, change.to);
  const events = changes.flatMap((c) => (c.event ? [c.event] : []));
  const result = await db.query<{ id: string; notice: string; first_event: string | null }>(
    `WITH c AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS c(id, from_status, to_status, reason, k)
     ), r AS (
       UPDATE payment_intents p SET status = c.to_status, updated_at = $5 FROM c WHERE p.id = c.id AND p.status = c.from_status
       RETURNING p.id, p.status, p.selected_chain, p.merchant_id, p.updated_at, c.from_status, c.reason, c.k
     ), history AS (
       INSERT INTO payment_intent_transitions (payment_intent_id, from_status, to_status, reason, created_at)
       SELECT id, from_status, status, reason, $5::timestamptz FROM r ORDER BY k
     )${events.length > 0 ? `, event AS (${eventsInsertSql(6, 'e.payment_intent_id IN (SELECT id FROM r)')})` : ''}
     SELECT r.id, ${NOTICE_SQL('r.from_status')} AS notice, ${events.length > 0 ? '(SELECT MIN(id) FROM event)' : 'NULL'} AS first_event
       FROM r ORDER BY r.k`,
    [
      changes.map((c) => c.intent.id),
      changes.map((c) => c.intent.status),
      changes.map((c) => c.to),
      changes.map((c) => c.reason ?? null),
      at,
      ...(events.length > 0 ? eventsInsertParams(events.map(() => newId('evt')), events) : []),
    ],
  );
  if (result.rows.length !== changes.length) {
    const moved = new Set(result.rows.map((r) => r.id));
    const stale = changes.find((c) => !moved.has(c.intent.id)) ?? changes[0]!;
    throw new ConcurrentTransitionError(`${stale.intent.id} is no longer ${stale.intent.status}`);
  }
  await notifyAfterCommit(db, INTENT_CHANNEL, result.rows.map((r) => r.notice));
  const first = result.rows[0]!.first_event;
  if (first !== null) await notifyAfterCommit(db, WEBHOOK_CHANNEL, [first]);
}

export interface PaymentCounts {
  total: number;
  settled: number;
  failed: number;
  pending: number;
  settledVolumeMicros: bigint;
}

/** Counts for the admin overview; `pending` counts the intents in one of `openStatuses`. */
export async function paymentCounts(db: Queryable, openStatuses: readonly PaymentStatus[]): Promise<PaymentCounts> {
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
export async function routeDistribution(db: Queryable): Promise<{ chain: Chain; count: string; volumeMicros: bigint }[]> {
  const { rows } = await db.query<{ selected_chain: Chain; count: string; volume: string }>(
    `SELECT selected_chain, COUNT(*)::text AS count, SUM(amount_micros)::text AS volume
       FROM payment_intents WHERE kind = 'payout' GROUP BY selected_chain ORDER BY COUNT(*) DESC, selected_chain`,
  );
  return rows.map((r) => ({ chain: r.selected_chain, count: r.count, volumeMicros: BigInt(r.volume) }));
}

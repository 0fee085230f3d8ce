// Every write of a payment intent's status: its creation (created -> quoted -> route_selected) and each change after
// it, checked against the transition table (src/domain/payment-intent.ts), each with its history row, the outbox event
// telling its merchant (outbox.ts's INSERT, in the same statement: decision 140) and the notice announcing it once the
// transaction commits. The UPDATE is conditional on the status the caller decided from, so a concurrent change is
// detected, never overwritten.
import type { Chain } from '../../domain/chain.js';
import { transition, type PaymentStatus } from '../../domain/payment-intent.js';
import { newId } from '../../ids.js';
import { notifyAfterCommit } from '../notify.js';
import type { Queryable } from '../pool.js';
import type { PaymentIntentRow } from './intents.js';
import { eventsInsertParams, eventsInsertSql, WEBHOOK_CHANNEL, type NewEvent } from './outbox.js';

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
         destination_address, created_at, updated_at, kind, token)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[],
                            $9::timestamptz[], $10::timestamptz[], $11::text[], $13::text[])
       RETURNING id, status, selected_chain, merchant_id, updated_at
     ), history AS (
       INSERT INTO payment_intent_transitions (payment_intent_id, from_status, to_status, reason, created_at)
       SELECT i.id, s.from_status, s.to_status, CASE s.n WHEN 2 THEN i.quote_id WHEN 3 THEN i.chain END, $12
         FROM unnest($1::text[], $3::text[], $7::text[]) WITH ORDINALITY AS i(id, quote_id, chain, k)
        CROSS JOIN (VALUES (1, NULL, 'created'), (2, 'created', 'quoted'), (3, 'quoted', 'route_selected')) AS s(n, from_status, to_status)
        ORDER BY i.k, s.n
     )${events.length > 0 ? `, event AS (${eventsInsertSql(14)})` : ''}
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
      rows.map((r) => r.token),
      ...(events.length > 0 ? eventsInsertParams(eventIds, events) : []),
    ],
  );
  const { notices, first_event: firstEvent } = written[0]!;
  await notifyAfterCommit(db, INTENT_CHANNEL, notices);
  if (firstEvent !== null) await notifyAfterCommit(db, WEBHOOK_CHANNEL, [firstEvent]);
}

export class ConcurrentTransitionError extends Error {
  override readonly name = 'ConcurrentTransitionError';
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
 * rolls back). Distinct intents only. The core changes statuses through applyStatusChanges
 * (core/payments/outcomes/status-changes.ts), which also completes the payout batches a final payment finishes.
 */
export async function updateStatuses(db: Queryable, changes: readonly StatusChange[], at: Date): Promise<void> {
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

// The webhook outbox: what goes into webhook_events. An event is written in the same transaction as the state change
// it describes (a status change writes its event in its own statement: transitions.ts uses eventsInsertSql), and
// wakes the webhook workers once that transaction commits. Delivery is webhook-events.ts.
import { newId } from '../../ids.js';
import { notifyAfterCommit } from '../notify.js';
import type { Queryable } from '../pool.js';

export const EVENT_TYPES = [
  'payment.created',
  'payment.broadcasting',
  'payment.broadcasted',
  'payment.settled',
  'payment.failed',
  'payment.manual_review',
  'payment.refunded',
  'payout_batch.completed',
  'webhook.test',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The one NOTIFY channel: a new or re-queued event wakes the webhook workers when its transaction commits. */
export const WEBHOOK_CHANNEL = 'stableroute_webhooks';

export interface NewEvent {
  merchantId: string;
  paymentIntentId: string | null;
  type: EventType;
  payload: Record<string, unknown>;
  at: Date;
}

/**
 * The INSERT of the events whose columns are the arrays at $first..$first+5 (ids, merchant ids, payment intent ids,
 * types, payloads, times), in order, RETURNING id; `guard` (SQL) must hold for any row to be written. A merchant
 * without a webhook_url still gets its events stored (status 'stored'), never sent; one whose endpoint is disabled gets
 * them stored and held, to be queued when it is enabled again.
 */
export function eventsInsertSql(first: number, guard = 'true'): string {
  const $ = (i: number) => `$${first + i}`;
  return `INSERT INTO webhook_events (id, merchant_id, payment_intent_id, event_type, payload, status, next_attempt_at, created_at, held_at)
       SELECT e.id, m.id, e.payment_intent_id, e.event_type, e.payload,
              CASE WHEN m.webhook_url IS NULL OR m.webhook_disabled_at IS NOT NULL THEN 'stored' ELSE 'pending' END, e.at, e.at,
              CASE WHEN m.webhook_url IS NOT NULL AND m.webhook_disabled_at IS NOT NULL THEN e.at END
         FROM unnest(${$(0)}::text[], ${$(1)}::text[], ${$(2)}::text[], ${$(3)}::text[], ${$(4)}::jsonb[], ${$(5)}::timestamptz[]) WITH ORDINALITY
              AS e(id, merchant_id, payment_intent_id, event_type, payload, at, n)
         JOIN merchants m ON m.id = e.merchant_id
        WHERE ${guard}
        ORDER BY e.n
       RETURNING id`;
}

/** The six arrays eventsInsertSql reads, for `events` under `ids`. */
export function eventsInsertParams(ids: readonly string[], events: readonly NewEvent[]): unknown[] {
  return [
    ids,
    events.map((e) => e.merchantId),
    events.map((e) => e.paymentIntentId),
    events.map((e) => e.type),
    events.map((e) => JSON.stringify(e.payload)),
    events.map((e) => e.at),
  ];
}

/** Several events in one statement, in order; their ids. One notice wakes the webhook workers once it commits. */
export async function insertEvents(db: Queryable, events: readonly NewEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const ids = events.map(() => newId('evt'));
  const { rows } = await db.query<{ first: string }>(
    `WITH inserted AS (${eventsInsertSql(1)})
     SELECT MIN(id) AS first FROM inserted HAVING COUNT(*) > 0`,
    eventsInsertParams(ids, events),
  );
  await notifyAfterCommit(db, WEBHOOK_CHANNEL, rows.map((r) => r.first));
  return ids;
}

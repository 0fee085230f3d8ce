// The webhook outbox. Events are inserted in the same transaction as the state change they describe.
import { newId } from '../../ids.js';
import type { Queryable } from '../pool.js';

export const EVENT_TYPES = [
  'payment.created',
  'payment.broadcasting',
  'payment.broadcasted',
  'payment.settled',
  'payment.failed',
  'payment.manual_review',
  'webhook.test',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const WEBHOOK_CHANNEL = 'stableroute_webhooks';

export async function insertEvent(
  db: Queryable,
  event: { merchantId: string; paymentIntentId: string | null; type: EventType; payload: Record<string, unknown>; at: Date },
): Promise<string> {
  const id = newId('evt');
  // A merchant without a webhook_url still gets its events stored (status 'stored'), never sent. The NOTIFY wakes
  // webhook workers when the transaction commits.
  await db.query(
    `WITH inserted AS (
       INSERT INTO webhook_events (id, merchant_id, payment_intent_id, event_type, payload, status, next_attempt_at, created_at)
       SELECT $1, m.id, $3, $4, $5, CASE WHEN m.webhook_url IS NULL THEN 'stored' ELSE 'pending' END, $6, $6
         FROM merchants m WHERE m.id = $2
       RETURNING id)
     SELECT pg_notify($7, id) FROM inserted`,
    [id, event.merchantId, event.paymentIntentId, event.type, event.payload, event.at, WEBHOOK_CHANNEL],
  );
  return id;
}

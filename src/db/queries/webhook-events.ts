// Delivery of the webhook outbox (outbox.ts): every statement that claims, records and re-queues webhook_events and
// writes webhook_deliveries. Delivery functions run on the transaction that holds the event's row lock, so the lock,
// the attempt record and the event update commit together.
import type { DeliveryDecision, WebhookEventStatus } from '../../domain/webhook-delivery.js';
import type { Queryable } from '../pool.js';
import { WEBHOOK_CHANNEL } from './outbox.js';

export interface ClaimedEvent {
  id: string;
  merchantId: string;
  paymentIntentId: string | null;
  eventType: string;
  payload: unknown;
  /** POSTs made so far. */
  attempts: number;
  /** The merchant's webhook_url now, not when the event was written; null once removed. */
  webhookUrl: string | null;
  /** The merchant's endpoint was disabled (a 410 Gone): the event is held, not sent. */
  endpointDisabled: boolean;
  /** When the event was written: delivery lag is measured from here. */
  createdAt: Date;
}

interface ClaimedRow {
  id: string;
  merchant_id: string;
  payment_intent_id: string | null;
  event_type: string;
  payload: unknown;
  attempts: number;
  webhook_url: string | null;
  endpoint_disabled: boolean;
  created_at: Date;
}

const CLAIM_SELECT = `
  SELECT e.id, e.merchant_id, e.payment_intent_id, e.event_type, e.payload, e.attempts, m.webhook_url,
         m.webhook_disabled_at IS NOT NULL AS endpoint_disabled, e.created_at
    FROM webhook_events e
    JOIN merchants m ON m.id = e.merchant_id`;

function toClaimed(row: ClaimedRow | undefined): ClaimedEvent | null {
  if (row === undefined) return null;
  return {
    id: row.id,
    merchantId: row.merchant_id,
    paymentIntentId: row.payment_intent_id,
    eventType: row.event_type,
    payload: row.payload,
    attempts: row.attempts,
    webhookUrl: row.webhook_url,
    endpointDisabled: row.endpoint_disabled,
    createdAt: row.created_at,
  };
}

/**
 * Locks the oldest due pending event that no other transaction holds (SKIP LOCKED) and up to `limit - 1` more due
 * events of the same merchant, oldest first: a claim is one merchant's, so a slow endpoint holds up only its own
 * events (decision 75). `excludeIds`: events this batch already handled, so a zero retry delay cannot make one batch
 * hammer the same event. Only event rows are locked (FOR UPDATE OF e); SKIP LOCKED never waits, so both parts read
 * the same snapshot. The merchant is a value in the second part, not a join: the index then yields the merchant's due
 * events in order and the scan stops at the limit, where a join sorted all of them for every claim (decision 76).
 */
export async function claimDueEvents(tx: Queryable, now: Date, excludeIds: readonly string[], limit: number): Promise<ClaimedEvent[]> {
  const { rows } = await tx.query<ClaimedRow>(
    `WITH first AS (
       SELECT e.id, e.merchant_id FROM webhook_events e
        WHERE e.status = 'pending' AND e.next_attempt_at <= $1 AND NOT (e.id = ANY ($2::text[]))
        ORDER BY e.next_attempt_at, e.created_at, e.id
        LIMIT 1
          FOR UPDATE OF e SKIP LOCKED
     ), more AS (
       SELECT e.id FROM webhook_events e
        WHERE e.merchant_id = (SELECT merchant_id FROM first) AND e.status = 'pending' AND e.next_attempt_at <= $1
          AND e.id <> (SELECT id FROM first) AND NOT (e.id = ANY ($2::text[]))
        ORDER BY e.next_attempt_at, e.created_at, e.id
        LIMIT $3 - 1
          FOR UPDATE OF e SKIP LOCKED
     )
     ${CLAIM_SELECT}
      WHERE e.id IN (SELECT id FROM first UNION ALL SELECT id FROM more)
      ORDER BY e.next_attempt_at, e.created_at, e.id`,
    [now, excludeIds, limit],
  );
  return rows.map((row) => toClaimed(row)!);
}

/** Locks one pending event by id, due or not (the test event is sent at once, inside its creating transaction). */
export async function lockPendingEvent(tx: Queryable, eventId: string): Promise<ClaimedEvent | null> {
  const { rows } = await tx.query<ClaimedRow>(`${CLAIM_SELECT} WHERE e.id = $1 AND e.status = 'pending' FOR UPDATE OF e`, [
    eventId,
  ]);
  return toClaimed(rows[0]);
}


/** The row lock is held, so a pending event that did not move left 'pending' under us: a bug, not a race to paper over. */
function illegalMove(eventId: string, to: string): Error {
  return new Error(`webhook event ${eventId}: illegal transition pending -> ${to}`);
}

function assertOneRow(rowCount: number | null, eventId: string, to: string): void {
  if (rowCount !== 1) throw illegalMove(eventId, to);
}

export interface DeliveryOutcome {
  eventId: string;
  attempt: number;
  url: string;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  at: Date;
}

/**
 * Records POSTs in webhook_deliveries and moves each pending event to what its attempt decided, all in one statement:
 * delivered (when), pending (the next try), or failed (held when the endpoint was disabled). Only 'pending' events move
 * (forward-only); an attempt row is written only with its move.
 */
export async function insertDeliveries(tx: Queryable, records: readonly { delivery: DeliveryOutcome; decision: DeliveryDecision }[]): Promise<void> {
  if (records.length === 0) return;
  const of = <V>(pick: (r: { delivery: DeliveryOutcome; decision: DeliveryDecision }) => V) => records.map(pick);
  const result = await tx.query<{ id: string }>(
    `WITH d AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::timestamptz[], $5::timestamptz[], $6::text[], $7::timestamptz[],
                            $8::text[], $9::int[], $10::int[], $11::text[], $12::timestamptz[])
         AS d(id, status, attempts, delivered_at, next_attempt_at, last_error, held_at, url, status_code, latency_ms, error, at)
     ), moved AS (
       UPDATE webhook_events e
          SET status = d.status, attempts = d.attempts, last_error = d.last_error,
              delivered_at = COALESCE(d.delivered_at, e.delivered_at),
              next_attempt_at = COALESCE(d.next_attempt_at, e.next_attempt_at),
              held_at = CASE WHEN d.status = 'failed' THEN d.held_at ELSE e.held_at END
         FROM d
        WHERE e.id = d.id AND e.status = 'pending'
        RETURNING e.id
     ), delivery AS (
       INSERT INTO webhook_deliveries (event_id, attempt, url, status_code, latency_ms, error, created_at)
       SELECT d.id, d.attempts, d.url, d.status_code, d.latency_ms, d.error, d.at FROM d JOIN moved ON moved.id = d.id
     )
     SELECT id FROM moved`,
    [
      of((r) => r.delivery.eventId),
      of((r) => r.decision.status),
      of((r) => r.decision.attempts),
      of((r) => (r.decision.status === 'delivered' ? r.decision.deliveredAt : null)),
      of((r) => (r.decision.status === 'pending' ? r.decision.nextAttemptAt : null)),
      of((r) => (r.decision.status === 'delivered' ? null : r.decision.lastError)),
      of((r) => (r.decision.status === 'failed' && r.decision.disableEndpoint ? r.delivery.at : null)),
      of((r) => r.delivery.url),
      of((r) => r.delivery.statusCode),
      of((r) => r.delivery.latencyMs),
      of((r) => r.delivery.error),
      of((r) => r.delivery.at),
    ],
  );
  const moved = new Set(result.rows.map((r) => r.id));
  const stray = records.find((r) => !moved.has(r.delivery.eventId));
  if (stray) throw illegalMove(stray.delivery.eventId, stray.decision.status);
}

/** The merchant's endpoint is disabled: the event is kept, and queued again when the endpoint is enabled. */
export async function markHeld(tx: Queryable, eventId: string, at: Date): Promise<void> {
  const result = await tx.query(`UPDATE webhook_events SET status = 'stored', held_at = $2 WHERE id = $1 AND status = 'pending'`, [
    eventId,
    at,
  ]);
  assertOneRow(result.rowCount, eventId, 'stored');
}

/** Queues again, with a fresh retry budget, every event held while the merchant's endpoint was disabled. */
export async function markHeldEventsPending(tx: Queryable, merchantId: string, at: Date): Promise<number> {
  const { rows } = await tx.query<{ id: string }>(
    `WITH requeued AS (
       UPDATE webhook_events SET status = 'pending', attempts = 0, next_attempt_at = $2, last_error = NULL, held_at = NULL
        WHERE merchant_id = $1 AND held_at IS NOT NULL AND status IN ('stored', 'failed')
        RETURNING id)
     SELECT id, pg_notify($3, id) FROM requeued`,
    [merchantId, at, WEBHOOK_CHANNEL],
  );
  return rows.length;
}

/** The merchant removed its webhook_url: the event is kept, like events of merchants that never had one. */
export async function markStored(tx: Queryable, eventId: string): Promise<void> {
  const result = await tx.query(`UPDATE webhook_events SET status = 'stored' WHERE id = $1 AND status = 'pending'`, [eventId]);
  assertOneRow(result.rowCount, eventId, 'stored');
}

export interface WebhookEventRow {
  id: string;
  event_type: string;
  payment_intent_id: string | null;
  merchant_id: string;
  status: WebhookEventStatus;
  attempts: number;
  last_error: string | null;
  next_attempt_at: Date;
  delivered_at: Date | null;
  created_at: Date;
}

/**
 * Puts a failed (or stored) event of a merchant that has an enabled webhook_url back in the queue with a fresh retry budget,
 * and wakes the workers. Null when the event is not in such a state.
 */
export async function markEventPending(db: Queryable, id: string, at: Date): Promise<{ id: string; status: string } | null> {
  const { rows } = await db.query<{ id: string; status: string }>(
    `WITH requeued AS (
       UPDATE webhook_events SET status = 'pending', attempts = 0, next_attempt_at = $2, last_error = NULL, held_at = NULL
        WHERE id = $1 AND status IN ('failed', 'stored')
          AND EXISTS (SELECT 1 FROM merchants m WHERE m.id = webhook_events.merchant_id AND m.webhook_url IS NOT NULL
                                                    AND m.webhook_disabled_at IS NULL)
        RETURNING id, status)
     SELECT id, status, pg_notify($3, id) FROM requeued`,
    [id, at, WEBHOOK_CHANNEL],
  );
  return rows[0] ? { id: rows[0].id, status: rows[0].status } : null;
}

export async function readEventStatus(db: Queryable, id: string): Promise<WebhookEventStatus | null> {
  const { rows } = await db.query<{ status: WebhookEventStatus }>('SELECT status FROM webhook_events WHERE id = $1', [id]);
  return rows[0]?.status ?? null;
}

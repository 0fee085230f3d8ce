// SQL of the webhook worker, one statement per function. Every function runs on the transaction that holds the
// event's row lock, so the lock, the attempt record and the event update commit together.
import type { Queryable } from '../../db/pool.js';
import type { DeliveryDecision } from './decide.js';

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
}

interface ClaimedRow {
  id: string;
  merchant_id: string;
  payment_intent_id: string | null;
  event_type: string;
  payload: unknown;
  attempts: number;
  webhook_url: string | null;
}

const CLAIM_SELECT = `
  SELECT e.id, e.merchant_id, e.payment_intent_id, e.event_type, e.payload, e.attempts, m.webhook_url
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
  };
}

/**
 * Locks the oldest due pending event that no other transaction holds (SKIP LOCKED), leaving out `excludeIds`
 * (events this batch already handled, so a zero retry delay cannot make one batch hammer the same event).
 * Only the event row is locked (FOR UPDATE OF e): events of one merchant are still claimed in parallel.
 */
export async function claimNextDueEvent(tx: Queryable, now: Date, excludeIds: readonly string[]): Promise<ClaimedEvent | null> {
  const { rows } = await tx.query<ClaimedRow>(
    `${CLAIM_SELECT}
      WHERE e.status = 'pending' AND e.next_attempt_at <= $1 AND NOT (e.id = ANY ($2::text[]))
      ORDER BY e.next_attempt_at, e.created_at, e.id
      LIMIT 1
        FOR UPDATE OF e SKIP LOCKED`,
    [now, excludeIds],
  );
  return toClaimed(rows[0]);
}

/** Locks one pending event by id, due or not (the test event is sent at once, inside its creating transaction). */
export async function lockPendingEvent(tx: Queryable, eventId: string): Promise<ClaimedEvent | null> {
  const { rows } = await tx.query<ClaimedRow>(`${CLAIM_SELECT} WHERE e.id = $1 AND e.status = 'pending' FOR UPDATE OF e`, [
    eventId,
  ]);
  return toClaimed(rows[0]);
}

export async function insertDeliveryAttempt(
  tx: Queryable,
  attempt: {
    eventId: string;
    attempt: number;
    url: string;
    statusCode: number | null;
    latencyMs: number;
    error: string | null;
    at: Date;
  },
): Promise<void> {
  await tx.query(
    `INSERT INTO webhook_deliveries (event_id, attempt, url, status_code, latency_ms, error, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [attempt.eventId, attempt.attempt, attempt.url, attempt.statusCode, attempt.latencyMs, attempt.error, attempt.at],
  );
}

function assertOneRow(rowCount: number | null, eventId: string, to: string): void {
  // The row lock is held, so a miss means the event left 'pending' under us: a bug, not a race to paper over.
  if (rowCount !== 1) throw new Error(`webhook event ${eventId}: illegal transition pending -> ${to}`);
}

/** Moves a pending event to what the attempt decided. Only 'pending' events move (forward-only). */
export async function applyDecision(tx: Queryable, eventId: string, decision: DeliveryDecision): Promise<void> {
  let result;
  switch (decision.status) {
    case 'delivered':
      result = await tx.query(
        `UPDATE webhook_events SET status = 'delivered', attempts = $2, delivered_at = $3, last_error = NULL
          WHERE id = $1 AND status = 'pending'`,
        [eventId, decision.attempts, decision.deliveredAt],
      );
      break;
    case 'pending':
      result = await tx.query(
        `UPDATE webhook_events SET attempts = $2, next_attempt_at = $3, last_error = $4
          WHERE id = $1 AND status = 'pending'`,
        [eventId, decision.attempts, decision.nextAttemptAt, decision.lastError],
      );
      break;
    case 'failed':
      result = await tx.query(
        `UPDATE webhook_events SET status = 'failed', attempts = $2, last_error = $3
          WHERE id = $1 AND status = 'pending'`,
        [eventId, decision.attempts, decision.lastError],
      );
      break;
  }
  assertOneRow(result.rowCount, eventId, decision.status);
}

/** The merchant removed its webhook_url: the event is kept, like events of merchants that never had one. */
export async function markStored(tx: Queryable, eventId: string): Promise<void> {
  const result = await tx.query(`UPDATE webhook_events SET status = 'stored' WHERE id = $1 AND status = 'pending'`, [eventId]);
  assertOneRow(result.rowCount, eventId, 'stored');
}

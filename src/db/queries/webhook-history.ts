// The webhook outbox as operators read it: events with their payloads and every delivery attempt, by payment intent
// or by delivery status, page by page. Read-only; writes stay in webhook-events.ts.
import type { Queryable } from '../pool.js';
import type { WebhookEventStatus } from '../../domain/webhook-delivery.js';
import type { WebhookEventRow } from './webhook-events.js';

export type WebhookEventRecord = WebhookEventRow & { payload: unknown };

export interface DeliveryRow {
  attempt: number;
  url: string;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  created_at: Date;
}

const EVENT_COLUMNS =
  'e.id, e.event_type, e.payment_intent_id, e.merchant_id, e.status, e.attempts, e.last_error, e.next_attempt_at, e.delivered_at, e.created_at';

/** A page of events newest first, all statuses or one, after the event `beforeId` (exclusive) when given. */
export async function listEventsPage(
  db: Queryable,
  status: WebhookEventStatus | null,
  beforeId: string | null,
  limit: number,
): Promise<WebhookEventRow[]> {
  const { rows } = await db.query<WebhookEventRow>(
    `SELECT ${EVENT_COLUMNS} FROM webhook_events e
      WHERE ($1::text IS NULL OR e.status = $1)
        AND ($2::text IS NULL OR e.seq < (SELECT seq FROM webhook_events WHERE id = $2))
      ORDER BY e.seq DESC LIMIT $3`,
    [status, beforeId, limit],
  );
  return rows;
}

export async function readEvent(db: Queryable, id: string): Promise<WebhookEventRecord | null> {
  const { rows } = await db.query<WebhookEventRecord>(`SELECT ${EVENT_COLUMNS}, e.payload FROM webhook_events e WHERE e.id = $1`, [id]);
  return rows[0] ?? null;
}

/** Every event of a payment intent, oldest first. */
export async function listEventsOfIntent(db: Queryable, intentId: string): Promise<WebhookEventRecord[]> {
  const { rows } = await db.query<WebhookEventRecord>(
    `SELECT ${EVENT_COLUMNS}, e.payload FROM webhook_events e WHERE e.payment_intent_id = $1 ORDER BY e.seq`,
    [intentId],
  );
  return rows;
}

/** The delivery attempts of each event, in attempt order. */
export async function readDeliveries(db: Queryable, eventIds: readonly string[]): Promise<Map<string, DeliveryRow[]>> {
  const byEvent = new Map<string, DeliveryRow[]>();
  if (eventIds.length === 0) return byEvent;
  const { rows } = await db.query<DeliveryRow & { event_id: string }>(
    `SELECT event_id, attempt, url, status_code, latency_ms, error, created_at FROM webhook_deliveries
      WHERE event_id = ANY($1) ORDER BY event_id, attempt, id`,
    [eventIds],
  );
  for (const { event_id, ...row } of rows) {
    const list = byEvent.get(event_id) ?? [];
    list.push(row);
    byEvent.set(event_id, list);
  }
  return byEvent;
}

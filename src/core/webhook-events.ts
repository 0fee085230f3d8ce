// Operator views of the webhook outbox: failed deliveries are shown, and can be sent again.
import type { Queryable } from '../db/pool.js';
import { AppError } from '../domain/errors.js';

export const WEBHOOK_EVENT_STATUSES = ['pending', 'delivered', 'failed', 'stored'] as const;
export type WebhookEventStatus = (typeof WEBHOOK_EVENT_STATUSES)[number];

export async function listWebhookEvents(db: Queryable, status: WebhookEventStatus, limit: number) {
  const { rows } = await db.query<{
    id: string;
    event_type: string;
    payment_intent_id: string | null;
    merchant_id: string;
    status: string;
    attempts: number;
    last_error: string | null;
    next_attempt_at: Date;
    delivered_at: Date | null;
    created_at: Date;
  }>(
    `SELECT id, event_type, payment_intent_id, merchant_id, status, attempts, last_error, next_attempt_at, delivered_at, created_at
       FROM webhook_events WHERE status = $1 ORDER BY seq DESC LIMIT $2`,
    [status, limit],
  );
  return rows.map((r) => ({
    ...r,
    next_attempt_at: r.next_attempt_at.toISOString(),
    delivered_at: r.delivered_at?.toISOString() ?? null,
    created_at: r.created_at.toISOString(),
  }));
}

/** Puts a failed (or stored) event back in the queue with a fresh retry budget. */
export async function redeliverWebhookEvent(db: Queryable, id: string, at: Date): Promise<{ id: string; status: string }> {
  const { rows } = await db.query<{ id: string; status: string }>(
    `UPDATE webhook_events SET status = 'pending', attempts = 0, next_attempt_at = $2, last_error = NULL
      WHERE id = $1 AND status IN ('failed', 'stored')
        AND EXISTS (SELECT 1 FROM merchants m WHERE m.id = webhook_events.merchant_id AND m.webhook_url IS NOT NULL)
      RETURNING id, status`,
    [id, at],
  );
  if (rows[0]) {
    await db.query("SELECT pg_notify('stableroute_webhooks', $1)", [id]);
    return rows[0];
  }
  const exists = await db.query<{ status: string }>('SELECT status FROM webhook_events WHERE id = $1', [id]);
  if (!exists.rows[0]) throw new AppError('NOT_FOUND', `webhook event ${id} was not found`);
  throw new AppError('INVALID_STATE', `webhook event ${id} is ${exists.rows[0].status}; only failed or stored events (of a merchant with a webhook_url) are redelivered`);
}

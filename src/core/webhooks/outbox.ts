// The operator sends a failed webhook event again (the lists are in src/core/operators/console/webhooks.ts).
import type { Pool, Queryable } from '../../db/pool.js';
import { audited, type AuditConfig, type AuditEntry } from '../operators/audit.js';
import { readEventStatus, markEventPending } from '../../db/queries/webhook-events.js';
import { AppError } from '../../domain/errors.js';

/** Puts a failed (or stored) event back in the queue with a fresh retry budget; its audit record commits with it. */
export async function redeliverWebhookEvent(pool: Pool, config: AuditConfig, id: string, at: Date, audit: AuditEntry): Promise<{ id: string; status: string }> {
  return audited({ pool, config }, audit, at, (tx) => requeue(tx, id, at));
}

async function requeue(db: Queryable, id: string, at: Date): Promise<{ id: string; status: string }> {
  const requeued = await markEventPending(db, id, at);
  if (requeued) return requeued;
  const status = await readEventStatus(db, id);
  if (status === null) throw new AppError('NOT_FOUND', `webhook event ${id} was not found`);
  throw new AppError(
    'INVALID_STATE',
    `webhook event ${id} is ${status}; only failed or stored events of a merchant with an enabled webhook_url are redelivered ` +
      '(an endpoint disabled by a 410 Gone is enabled with `stableroute merchants webhook enable`)',
  );
}

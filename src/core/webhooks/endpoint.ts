// An operator enables a merchant's webhook endpoint that a 410 Gone disabled (decision 69): deliveries resume and
// every event held meanwhile is queued again, with a fresh retry budget, in one transaction.
import type { Pool } from '../../db/pool.js';
import { audited, type AuditConfig, type AuditEntry } from '../operators/audit.js';
import { markWebhookEndpointEnabled as enableEndpoint } from '../../db/queries/merchants.js';
import { markHeldEventsPending } from '../../db/queries/webhook-events.js';
import { AppError } from '../../domain/errors.js';

export interface EnableResult {
  merchant_id: string;
  /** False when the endpoint was enabled already (held events, if any, are still queued). */
  was_disabled: boolean;
  requeued_events: number;
}

export async function enableWebhookEndpoint(pool: Pool, config: AuditConfig, merchantId: string, at: Date, audit: AuditEntry): Promise<EnableResult> {
  return audited({ pool, config }, audit, at, async (tx) => {
    const enabled = await enableEndpoint(tx, merchantId);
    if (enabled === null) throw new AppError('NOT_FOUND', `merchant ${merchantId} was not found`);
    if (enabled.webhookUrl === null) throw new AppError('WEBHOOK_URL_NOT_CONFIGURED', `merchant ${merchantId} has no webhook_url`);
    const requeued = await markHeldEventsPending(tx, merchantId, at);
    return { merchant_id: merchantId, was_disabled: enabled.wasDisabled, requeued_events: requeued };
  });
}

// The webhook outbox for operators: events page by page (one status or all), one event with its payload and every
// delivery attempt. Redelivery is core/webhooks/outbox.ts.
import type { WebhookEventRow } from '../../../db/queries/webhook-events.js';
import type { WebhookEventStatus } from '../../../domain/webhook-delivery.js';
import { readDeliveries, readEvent, listEventsPage, type DeliveryRow, type WebhookEventRecord } from '../../../db/queries/webhook-history.js';
import { AppError } from '../../../domain/errors.js';
import type { AppContext } from '../../context.js';

export async function webhookEventsPage(
  ctx: Pick<AppContext, 'pool'>,
  status: WebhookEventStatus | null,
  beforeId: string | null,
  limit: number,
): Promise<WebhookEventRow[]> {
  return listEventsPage(ctx.pool, status, beforeId, limit);
}

export async function webhookEventRecord(ctx: Pick<AppContext, 'pool'>, id: string): Promise<WebhookEventRecord & { deliveries: DeliveryRow[] }> {
  const event = await readEvent(ctx.pool, id);
  if (!event) throw new AppError('NOT_FOUND', `webhook event ${id} was not found`);
  const deliveries = await readDeliveries(ctx.pool, [id]);
  return { ...event, deliveries: deliveries.get(id) ?? [] };
}

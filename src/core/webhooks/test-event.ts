// POST /webhooks/test: a real webhook.test event, sent at once through the normal delivery path.
import { readMerchant } from '../../db/queries/merchants.js';
import { insertEvents } from '../../db/queries/outbox.js';
import { lockPendingEvent } from '../../db/queries/webhook-events.js';
import { AppError } from '../../domain/errors.js';
import { deliverClaimed, inDeliveryTransaction, type WebhookDeps } from './delivery.js';

export interface TestWebhookResult {
  event_id: string;
  delivered: boolean;
  url: string;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
}

const NO_URL_MESSAGE = 'No webhook_url is configured for this merchant';
const DISABLED_MESSAGE = 'The webhook endpoint was disabled after it answered 410 Gone; events are kept until an operator enables it';

/**
 * Inserts a webhook.test event and makes its first attempt synchronously, recording it like any other attempt.
 * A failed test event stays pending and is retried on the normal schedule.
 *
 * The event is inserted and attempted in one transaction, so no worker can see (and also send) it before this
 * attempt is recorded; the outbox NOTIFY fires on commit.
 */
export async function sendTestWebhook(deps: WebhookDeps, merchantId: string): Promise<TestWebhookResult> {
  return inDeliveryTransaction(deps, async (tx) => {
    // 1. Load: the merchant must have somewhere to send to.
    const merchant = await readMerchant(tx, merchantId);
    if (merchant === null) throw new AppError('NOT_FOUND', 'Merchant not found');
    if (merchant.webhook_url === null) throw new AppError('WEBHOOK_URL_NOT_CONFIGURED', NO_URL_MESSAGE);
    if (merchant.webhook_disabled_at !== null) throw new AppError('WEBHOOK_ENDPOINT_DISABLED', DISABLED_MESSAGE);

    // 2. Write the event, as any producer would.
    const at = deps.clock.now();
    const eventId = (
      await insertEvents(tx, [
        { merchantId, paymentIntentId: null, type: 'webhook.test', payload: { message: 'stableroute test event', sent_at: at.toISOString() }, at },
      ])
    )[0]!;

    // 3. Attempt it through the shared delivery path. A null here means the URL was removed in between.
    const event = await lockPendingEvent(tx, eventId);
    if (event === null) throw new AppError('WEBHOOK_URL_NOT_CONFIGURED', NO_URL_MESSAGE);
    const result = (await deliverClaimed(tx, deps, [event]))[0]!;
    if (result.kind === 'stored') {
      throw event.endpointDisabled ? new AppError('WEBHOOK_ENDPOINT_DISABLED', DISABLED_MESSAGE) : new AppError('WEBHOOK_URL_NOT_CONFIGURED', NO_URL_MESSAGE);
    }

    return {
      event_id: eventId,
      delivered: result.decision.status === 'delivered',
      url: result.url,
      status_code: result.outcome.statusCode,
      latency_ms: result.outcome.latencyMs,
      error: result.outcome.error,
    };
  });
}

// The merchant's view of a status change: one payment.* event in the outbox, written in the transaction of the change.
import type { Queryable } from '../../db/pool.js';
import { insertEvent, type EventType } from '../../db/queries/webhook-events.js';
import type { PaymentIntentRow } from '../../db/queries/intents.js';
import { paymentPayload } from '../../domain/events.js';
import { usdcToNumber } from '../../money.js';

export async function emitPaymentEvent(
  tx: Queryable,
  intent: PaymentIntentRow,
  type: EventType,
  at: Date,
  extra: Parameters<typeof paymentPayload>[1] = {},
): Promise<void> {
  // A withdrawal has no merchant to tell (decision 143); the operator follows it at GET /admin/withdrawals.
  if (intent.kind === 'withdrawal') return;
  await insertEvent(tx, {
    merchantId: intent.merchant_id,
    paymentIntentId: intent.id,
    type,
    payload: paymentPayload(
      {
        amount_usd: usdcToNumber(intent.amount_micros),
        selected_chain: intent.selected_chain,
        destination_address: intent.destination_address,
        status: intent.status,
      },
      extra,
    ),
    at,
  });
}

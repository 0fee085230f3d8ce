// The merchant's view of a status change: one payment.* event in the outbox, written in the transaction of the change.
import type { Queryable } from '../../db/pool.js';
import { insertEvent, type EventType, type NewEvent } from '../../db/queries/webhook-events.js';
import { changeStatus, type PaymentIntentRow } from '../../db/queries/intents.js';
import type { PaymentStatus } from '../../domain/payment-intent.js';
import { paymentPayload } from '../../domain/events.js';
import { usdcToNumber } from '../../money.js';

/** The outbox row telling the merchant of `type`, or null for a withdrawal (no merchant to tell, decision 121). */
export function paymentEventOf(
  intent: PaymentIntentRow,
  type: EventType,
  at: Date,
  extra: Parameters<typeof paymentPayload>[1] = {},
): NewEvent | null {
  if (intent.kind === 'withdrawal') return null;
  const payload = paymentPayload(
    {
      amount_usd: usdcToNumber(intent.amount_micros),
      selected_chain: intent.selected_chain,
      destination_address: intent.destination_address,
      status: intent.status,
    },
    extra,
  );
  return { merchantId: intent.merchant_id, paymentIntentId: intent.id, type, payload, at };
}

/**
 * Moves the intent to `to` (checked, with its history row) and writes `type` telling the merchant, in one statement;
 * `intent.status` follows.
 */
export async function moveAndTell(
  tx: Queryable,
  intent: PaymentIntentRow,
  to: PaymentStatus,
  type: EventType,
  at: Date,
  extra: Parameters<typeof paymentPayload>[1] = {},
  reason: string | null = null,
): Promise<void> {
  const event = paymentEventOf({ ...intent, status: to }, type, at, extra);
  intent.status = await changeStatus(tx, intent, to, at, reason, event);
}

export async function emitPaymentEvent(
  tx: Queryable,
  intent: PaymentIntentRow,
  type: EventType,
  at: Date,
  extra: Parameters<typeof paymentPayload>[1] = {},
): Promise<void> {
  const event = paymentEventOf(intent, type, at, extra);
  if (event) await insertEvent(tx, event);
}

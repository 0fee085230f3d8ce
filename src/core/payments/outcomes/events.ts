// The merchant's view of a status change: one payment.* event in the outbox, written in the transaction of the change.
import { tokenField } from '../../../domain/token.js';
import type { Queryable } from '../../../db/pool.js';
import type { PaymentIntentRow } from '../../../db/queries/intents.js';
import { insertEvents, type EventType, type NewEvent } from '../../../db/queries/outbox.js';
import type { PaymentStatus } from '../../../domain/payment-intent.js';
import { paymentPayload } from '../../../domain/events.js';
import { usdcToNumber } from '../../../money.js';
import { applyStatusChanges } from './status-changes.js';

type EventExtra = Parameters<typeof paymentPayload>[1];

/** The outbox row telling the merchant of `type`, or null for a withdrawal (no merchant to tell, decision 121). */
export function paymentEventOf(intent: PaymentIntentRow, type: EventType, at: Date, extra: EventExtra = {}): NewEvent | null {
  if (intent.kind === 'withdrawal') return null;
  const payload = paymentPayload(
    {
      amount_usd: usdcToNumber(intent.amount_micros),
      selected_chain: intent.selected_chain,
      ...tokenField(intent),
      destination_address: intent.destination_address,
      status: intent.status,
    },
    extra,
  );
  return { merchantId: intent.merchant_id, paymentIntentId: intent.id, type, payload, at };
}

/** One move of a payment: to `to`, told to its merchant as `type` (nothing told when absent), with the history's reason. */
export interface Move {
  intent: PaymentIntentRow;
  to: PaymentStatus;
  type?: EventType;
  extra?: EventExtra;
  reason?: string | null;
}

/**
 * Moves each intent (checked, with its history row) and writes the events telling the merchants, all in one statement
 * (distinct intents); each `intent.status` follows.
 */
export async function moveAndTell(tx: Queryable, moves: readonly Move[], at: Date): Promise<void> {
  await applyStatusChanges(
    tx,
    moves.map(({ intent, to, type, extra, reason }) => ({
      intent,
      to,
      reason: reason ?? null,
      event: type ? paymentEventOf({ ...intent, status: to }, type, at, extra) : null,
    })),
    at,
  );
  for (const { intent, to } of moves) intent.status = to;
}

/** An event about the payment that moves nothing (a refund of a settled payout). */
export async function emitPaymentEvent(tx: Queryable, intent: PaymentIntentRow, type: EventType, at: Date, extra: EventExtra = {}): Promise<void> {
  const event = paymentEventOf(intent, type, at, extra);
  if (event) await insertEvents(tx, [event]);
}

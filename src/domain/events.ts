// Webhook payloads of every event type (spec shows settled; the rest is decided in docs/decisions.md).
import type { FailureReason } from '../domain/chain.js';
import type { PaymentStatus } from './payment-intent.js';

export interface IntentFacts {
  amount_usd: number;
  selected_chain: string;
  destination_address: string;
  status: PaymentStatus;
}

export function paymentPayload(
  facts: IntentFacts,
  extra: {
    tx_id?: string;
    confirmed_at?: string;
    failure_reason?: FailureReason;
    actual_fee_native?: number;
    fee_currency?: string;
    stuck_since?: string;
    /** payment.created of a payment that waits for an operator's approval before broadcast (decision 10). */
    approval?: { status: 'pending' };
    /** payment.refunded: what came back and in which transfer (decision 127). */
    refund?: { amount_usd: number; tx_id: string; from_address: string };
  } = {},
): Record<string, unknown> {
  return { ...facts, ...extra };
}

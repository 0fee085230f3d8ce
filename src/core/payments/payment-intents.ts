// POST /payment_intents and GET /payment_intents/:id.
import { readApproval, type ApprovalRow } from '../../db/queries/approvals.js';
import { readAttempts, type AttemptRow } from '../../db/queries/attempts.js';
import { readIntent, type PaymentIntentRow } from '../../db/queries/intents.js';
import { ledgerEntriesByIntent, type LedgerEntry } from '../../ledger/entries.js';
import type { AppContext } from '../context.js';
import type { CreateIntentResult } from './reserve/reserve-batch.js';
import { tracer } from '../../tracing/tracer.js';

export interface CreateIntentRequest {
  quoteId: string;
  idempotencyKey: string;
}

export type { CreateIntentResult };

/**
 * Creates a payment intent from a quote: the idempotency check, the quote check, the reservation, the intent and its
 * history, payment.created and the execution job commit together, in a transaction the request may share with
 * concurrent creations (src/core/payments/reserve). Refusals throw their AppError.
 */
export async function createPaymentIntent(ctx: AppContext, merchantId: string, request: CreateIntentRequest): Promise<CreateIntentResult> {
  const traceparent = tracer().current(); // the request's span: the payment's trace (payment-traces.ts)
  return ctx.groupCommits.reservations.submit({ merchantId, quoteId: request.quoteId, idempotencyKey: request.idempotencyKey, ...(traceparent && { traceparent }) });
}

export interface PaymentIntentRecord {
  intent: PaymentIntentRow;
  attempts: AttemptRow[];
  entries: LedgerEntry[];
  approval: ApprovalRow | null;
}

/** The intent with its attempts and ledger entries, or null for an unknown id or another merchant's (both 404). */
export async function getPaymentIntent(ctx: AppContext, merchantId: string, id: string): Promise<PaymentIntentRecord | null> {
  const intent = await readIntent(ctx.pool, id);
  if (!intent || intent.merchant_id !== merchantId) return null;
  const [attempts, entries, approval] = await Promise.all([
    readAttempts(ctx.pool, [id]),
    ledgerEntriesByIntent(ctx.pool, [id]),
    readApproval(ctx.pool, id),
  ]);
  return { intent, attempts: attempts.get(id) ?? [], entries: entries.get(id) ?? [], approval };
}

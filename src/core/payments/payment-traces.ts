// A payment is one trace from its POST /payment_intents to its last webhook, across batches, processes and restarts
// (decision 212): its request's traceparent is stored with it, and each batch that carries it (a reservation, an
// execution batch, a confirmation round, a webhook claim) is a trace of its own that links to the payments' traces,
// while each payment gets a span in its own trace, linked back to the batch. Only while traces are on.
import type { Queryable } from '../../db/pool.js';
import type { PaymentIntentRow } from '../../db/queries/intents.js';
import { updatePaymentTraceparents, readTraceparents } from '../../db/queries/traces.js';
import { tracer, type Span, type SpanAttributes } from '../../tracing/tracer.js';

/** The spans of a batch's payments, one each, in the payments' own traces. */
export interface PaymentSpans {
  /** The payment's span, for the attributes of how it came out. */
  set(intentId: string, attributes: SpanAttributes): void;
  /** A payment whose step failed (an outage, a bug). */
  fail(intentId: string, error: unknown): void;
  end(): void;
}

const NO_PAYMENT_SPANS: PaymentSpans = { set: () => undefined, fail: () => undefined, end: () => undefined };

/**
 * One span named `name` per payment of `intentIds`, child of the payment's stored traceparent (or a root, for a payment
 * created while traces were off) and linked to `batch`, which in turn links to each payment's trace. Ended by `end`.
 */
export async function paymentSpans(db: Queryable, batch: Span, name: string, intentIds: readonly string[]): Promise<PaymentSpans> {
  if (!tracer().enabled || intentIds.length === 0) return NO_PAYMENT_SPANS;
  const ids = [...new Set(intentIds)];
  const traces = await readTraceparents(db, 'payment_intents', ids);
  batch.addLinks([...traces.values()]);
  const self = batch.traceparent();
  const spans = new Map(
    ids.map((id) => [id, tracer().startSpan(name, { parent: traces.get(id) ?? null, links: [self], attributes: { 'payment_intent.id': id } })]),
  );
  return {
    set: (id, attributes) => spans.get(id)?.setAttributes(attributes),
    fail: (id, error) => spans.get(id)?.fail(error),
    end: () => spans.forEach((span) => span.end()),
  };
}

/**
 * In a reservation's transaction: stores each new payment's traceparent (its request's; the active span's for one
 * made without a request of its own, such as a payout batch's items) and records its reservation in that trace,
 * linked to its quote's trace and to the reservation's span.
 */
export async function traceCreatedPayments(tx: Queryable, created: readonly { intent: PaymentIntentRow; traceparent: string | null }[]): Promise<void> {
  if (created.length === 0) return;
  const current = tracer().current();
  const traces = created.flatMap(({ intent, traceparent }) => {
    const tp = traceparent ?? current;
    return tp === null ? [] : [{ id: intent.id, traceparent: tp }];
  });
  await updatePaymentTraceparents(tx, traces);
  const quotes = await readTraceparents(tx, 'quotes', [...new Set(created.map((c) => c.intent.quote_id))]);
  const parents = new Map(traces.map((t) => [t.id, t.traceparent]));
  for (const { intent } of created) {
    const span = tracer().startSpan('payment.reserve', {
      parent: parents.get(intent.id) ?? null,
      links: [quotes.get(intent.quote_id), current],
      attributes: { 'payment_intent.id': intent.id, 'quote.id': intent.quote_id, 'stableroute.chain': intent.selected_chain, 'merchant.id': intent.merchant_id },
    });
    span.end();
  }
}

// One reservation transaction for a batch of payment-intent creations (group commit): the creation locks (below),
// the existing intents and the quotes in one query each, the treasury rows of the chains involved locked once, a pure
// decision per request in arrival order (src/domain/reservation.ts), then multi-row inserts of the intents, their
// history, their payment.created events, their execution jobs and their reserve postings, and one commit. A request
// that cannot be served gets its refusal; the others commit.
import { advisoryXactLocksText, withTransaction, type Queryable } from '../../../db/pool.js';
import { readIntentsByKeys, type PaymentIntentRow } from '../../../db/queries/intents.js';
import { insertCreatedIntents } from '../../../db/queries/transitions.js';
import { readApproval, insertApprovals, type ApprovalRow } from '../../../db/queries/approvals.js';
import { readQuoteTerms, type QuoteTerms } from '../../../db/queries/quotes.js';
import { AppError } from '../../../domain/errors.js';
import { paymentEventOf } from '../outcomes/events.js';
import { batchHold, decideReservations, keyOf, type QuoteFacts, type ReservationRequest } from '../../../domain/reservation.js';
import { newId } from '../../../ids.js';
import { enqueueExecutions } from '../../../jobs/queue.js';
import { movements } from '../../../ledger/movements.js';
import { lockAvailable, postMany } from '../../../ledger/store.js';
import type { AppContext } from '../../context.js';
import { loadSpending } from '../../merchants/policies.js';
import { tracer } from '../../../tracing/tracer.js';
import { traceCreatedPayments } from '../payment-traces.js';
import { currencyOf, potOf } from '../../../domain/token.js';

export type { ReservationRequest };

export interface CreateIntentResult {
  intent: PaymentIntentRow;
  /** True when the idempotency key matched an existing intent: the original response is replayed. */
  replayed: boolean;
  /** The operator approval the payment waits for (or got), when its policy asked for one. */
  approval: ApprovalRow | null;
}

export type ReservationOutcome = { ok: true; result: CreateIntentResult } | { ok: false; error: AppError };

type Deps = Pick<AppContext, 'pool' | 'clock' | 'boss' | 'config'>;

function quoteFacts(quote: QuoteTerms): QuoteFacts {
  const destination = quote.destination;
  if (!destination) throw new Error(`quote ${quote.id} recommends ${quote.recommended_route} without a destination`);
  return {
    id: quote.id,
    merchantId: quote.merchant_id,
    amountMicros: quote.amount_micros,
    expiresAt: quote.expires_at,
    chain: quote.recommended_route,
    token: quote.recommended_token,
    destination,
  };
}

/**
 * The locks that keep one (merchant, idempotency key) to one payment (decision 185). A creation that names its keys
 * (the group commit's requests) takes its merchants' creation locks shared, then its keys' locks: concurrent creations
 * of other keys go on, a second one with the same key waits and then replays. A payout batch takes its merchant's
 * creation lock exclusive instead, one lock for all of its items' keys, however many: it waits for the creations under
 * way and they wait for it. Merchants before keys, each set in one fixed order, so none of them deadlock.
 */
export async function lockCreations(tx: Queryable, requests: readonly Pick<ReservationRequest, 'merchantId' | 'idempotencyKey'>[]): Promise<void> {
  await advisoryXactLocksText(tx, [...new Set(requests.map((r) => creationLockOf(r.merchantId)))], { shared: true });
  await advisoryXactLocksText(tx, requests.map((r) => JSON.stringify([r.merchantId, r.idempotencyKey])));
}

/** A payout batch's one lock: every creation of the merchant waits for it, and it for them. */
export async function lockAllCreationsOf(tx: Queryable, merchantId: string): Promise<void> {
  await advisoryXactLocksText(tx, [creationLockOf(merchantId)]);
}

const creationLockOf = (merchantId: string) => JSON.stringify(['payment_creations', merchantId]);

export async function reserveBatch(deps: Deps, requests: readonly ReservationRequest[]): Promise<ReservationOutcome[]> {
  // The batch is a trace of its own, linked to each request's (decision 212); each payment's span is in its request's.
  return tracer().inSpan('reservation batch', { parent: null, links: requests.map((r) => r.traceparent), attributes: { 'batch.size': requests.length } }, () =>
    withTransaction(deps.pool, async (tx) => {
      await lockCreations(tx, requests);
      return reserveInTransaction(tx, deps, requests);
    }),
  );
}

/**
 * The reservation of `requests` in the caller's transaction `tx`, which holds their creation locks: the group
 * commit's own transaction (reserveBatch, lockCreations), or a payout batch's (lockAllCreationsOf), which stores the
 * batch with its payments. The requests are decided together, in order. With `payoutBatchId` (one merchant's payout
 * batch), the batch is held whole or not at all (decision 178).
 */
export async function reserveInTransaction(
  tx: Queryable,
  deps: Omit<Deps, 'pool'>,
  requests: readonly ReservationRequest[],
  options: { payoutBatchId?: string } = {},
): Promise<ReservationOutcome[]> {
  // 1. Load, under the caller's creation locks: same (merchant, key) requests of other batches and processes wait.
  const stored = await readIntentsByKeys(tx, requests);
  const quotes = await readQuoteTerms(tx, [...new Set(requests.map((r) => r.quoteId))]);
  const facts = new Map(quotes.map((q) => [q.id, quoteFacts(q)]));
  const now = deps.clock.now();
  // The spending policies of the merchants whose requests may be reserved (their rows locked when a daily limit
  // applies), then the treasury rows, which serialise every reservation on their chain: two batches cannot both
  // spend the same funds.
  const payable = requests.filter((r) => facts.get(r.quoteId)?.merchantId === r.merchantId);
  const spending = await loadSpending(
    tx,
    deps.config,
    payable.map((r) => r.merchantId),
    payable.map((r) => ({ merchantId: r.merchantId, chain: facts.get(r.quoteId)!.chain, destination: facts.get(r.quoteId)!.destination })),
    now,
  );
  const pots = new Map([...facts.values()].map((q) => [potOf(q.chain, q.token), { chain: q.chain, token: q.token }]));
  const available = await lockAvailable(tx, [...pots.values()]);

  // 2. Decide, in arrival order.
  const existing = new Map(stored.map((i) => [keyOf(i.merchant_id, i.idempotency_key), i]));
  const decisions = decideReservations(requests, {
    existing: new Map([...existing].map(([k, i]) => [k, { id: i.id, quoteId: i.quote_id }])),
    quotes: facts,
    available,
    now,
    check: (request, quote, reservedInBatchMicros, sentInBatchMicros) =>
      spending.check(
        { merchantId: request.merchantId, amountMicros: quote.amountMicros, chain: quote.chain, destination: quote.destination },
        reservedInBatchMicros,
        sentInBatchMicros,
      ),
  });
  const batch = options.payoutBatchId;
  const heldWhole = batch !== undefined && requests.length > 0 ? batchHold(decisions, spending.approvalAboveOf(requests[0]!.merchantId)) : null;

  // 3. Persist the new intents, all at once.
  const created: PaymentIntentRow[] = [];
  const createdFrom: ReservationRequest[] = [];
  for (const [index, decision] of decisions.entries()) {
    if (decision.kind !== 'reserve') continue;
    const request = requests[index]!;
    createdFrom.push(request);
    created.push({
      id: newId('pi'),
      merchant_id: request.merchantId,
      quote_id: decision.quote.id,
      idempotency_key: request.idempotencyKey,
      amount_micros: decision.quote.amountMicros,
      status: 'route_selected',
      selected_chain: decision.quote.chain,
      destination_address: decision.quote.destination,
      created_at: now,
      updated_at: now,
      kind: 'payout',
      token: decision.quote.token,
    });
  }
  // Above its approval threshold a payment's funds are reserved now, but its execution job is queued only by the
  // operator's approval, in the approving transaction (decision 10).
  const awaitingApproval = new Map<string, bigint>();
  for (const decision of decisions) {
    const above = heldWhole ?? (decision.kind === 'reserve' ? decision.approvalAboveMicros : null);
    if (decision.kind === 'reserve' && above !== null) awaitingApproval.set(created[decision.position]!.id, above);
  }
  // The intents, their history and their payment.created events in one statement (decision 134).
  await insertCreatedIntents(
    tx,
    created,
    now,
    created.flatMap(
      (intent) => paymentEventOf(intent, 'payment.created', now, awaitingApproval.has(intent.id) ? { approval: { status: 'pending' } } : {}) ?? [],
    ),
  );
  const approvals = await insertApprovals(
    tx,
    [...awaitingApproval].map(([intentId, thresholdMicros]) => ({ intentId, thresholdMicros, requestedBy: null, payoutBatchId: heldWhole === null ? null : batch! })),
    now,
  );
  await enqueueExecutions(
    deps.boss,
    tx,
    created.filter((intent) => !approvals.has(intent.id)).map((intent) => ({ payment_intent_id: intent.id, attempt: 1 })),
  );
  await postMany(
    tx,
    created.map((intent) => ({ movement: movements.reserve(intent.selected_chain, intent.amount_micros, currencyOf(intent.token)), context: { paymentIntentId: intent.id, at: now } })),
  );
  if (tracer().enabled) await traceCreatedPayments(tx, created.map((intent, i) => ({ intent, traceparent: createdFrom[i]!.traceparent ?? null })));

  // 4. Every request's answer.
  const outcomes: ReservationOutcome[] = [];
  for (const [index, decision] of decisions.entries()) {
    switch (decision.kind) {
      case 'reserve': {
        const intent = created[decision.position]!;
        outcomes.push({ ok: true, result: { intent, replayed: false, approval: approvals.get(intent.id) ?? null } });
        break;
      }
      case 'replay': {
        const request = requests[index]!;
        const intent = existing.get(keyOf(request.merchantId, request.idempotencyKey))!;
        outcomes.push({ ok: true, result: { intent, replayed: true, approval: await readApproval(tx, intent.id) } });
        break;
      }
      case 'same_as': {
        const first = outcomes[decision.index]!;
        outcomes.push(first.ok ? { ok: true, result: { ...first.result, replayed: true } } : first);
        break;
      }
      case 'refuse': {
        const { code, message, details } = decision.refusal;
        outcomes.push({ ok: false, error: new AppError(code, message, details ? { details } : {}) });
        break;
      }
    }
  }
  return outcomes;
}

// POST /payout_batches and GET /payout_batches/:id (issue 28 item 4). A batch is many payment intents requested at
// once, each quoted by the path POST /quotes takes (decideQuotes) and reserved by the one reservation path
// (reserveInTransaction), all in one transaction that also stores the batch and its answer: its items are decided
// together, so a merchant's daily limit counts the whole batch, and a second request with the batch's key replays it.
// The quotes, and so the screening of every recipient (an HTTP call when a provider is set), are decided before that
// transaction, with no lock held (decision 185); the transaction takes one lock, whatever the number of items.
import { withReadSnapshot, withTransaction, type Queryable } from '../../db/pool.js';
import { readIntentsByKeys } from '../../db/queries/intents.js';
import {
  countBatchStatuses,
  readPayoutBatch,
  readPayoutBatchByKey,
  insertPayoutBatch,
  type PayoutBatchRow,
} from '../../db/queries/payout-batches.js';
import { readQuoteRequests, insertQuotes } from '../../db/queries/quotes.js';
import { AppError } from '../../domain/errors.js';
import { batchProgress, planItems, requestHash, type BatchProgress, type PayoutItem, type StoredTerms } from '../../domain/payout-batch.js';
import type { ReservationRequest } from '../../domain/reservation.js';
import { newId } from '../../ids.js';
import type { AppContext } from '../context.js';
import { completeBatchesOf } from './outcomes/status-changes.js';
import { decideQuotes, type QuoteOutcome } from './quotes.js';
import { lockAllCreationsOf, reserveInTransaction, type CreateIntentResult } from './reserve/reserve-batch.js';

export interface PayoutBatchRequest {
  idempotencyKey: string;
  items: readonly PayoutItem[];
}

export type PayoutItemOutcome = { kind: 'created' | 'replayed'; result: CreateIntentResult } | { kind: 'refused'; error: AppError };

/** The answer the edge gives for a new batch: stored with it, and replayed as it is for the same key and body. */
export type BatchAnswer = (batch: Pick<PayoutBatchRow, 'id' | 'idempotencyKey' | 'createdAt'>, items: readonly PayoutItemOutcome[]) => Record<string, unknown>;

export interface PayoutBatchResult {
  answer: Record<string, unknown>;
  replayed: boolean;
}

/**
 * Creates the batch, or replays the stored answer of the one created with this key and the same items; the same key
 * with other items is refused (409 IDEMPOTENCY_KEY_REUSED) and changes nothing.
 */
export async function createPayoutBatch(ctx: AppContext, merchantId: string, request: PayoutBatchRequest, answerOf: BatchAnswer): Promise<PayoutBatchResult> {
  const hash = requestHash(request.items);
  const quotedAhead = await quoteAhead(ctx, merchantId, request);
  return withTransaction(ctx.pool, async (tx) => {
    // 1. Load, under the merchant's creation lock, one for the batch (decision 185): a concurrent request with the same
    // batch key waits here and then replays, and so does a payment created meanwhile under one of its items' keys.
    await lockAllCreationsOf(tx, merchantId);
    const stored = await readPayoutBatchByKey(tx, merchantId, request.idempotencyKey);
    if (stored) {
      if (stored.requestHash !== hash) {
        throw new AppError('IDEMPOTENCY_KEY_REUSED', `idempotency_key was already used by payout batch ${stored.id} with other items; use a new key`);
      }
      return { answer: stored.response, replayed: true };
    }
    const storedTerms = await storedTermsOf(tx, merchantId, request.items);

    // 2. Decide: each item's plan, the new items' quotes (decided ahead, the POST /quotes path), then every item's
    // reservation in one call, in order, so the batch's own reservations count against its merchant's limits item
    // after item. Payments are never removed, so an item to quote now was one to quote ahead too.
    const plans = planItems(request.items, storedTerms);
    const toQuote = plans.flatMap((plan, index) => (plan.kind === 'quote' ? [index] : []));
    const quoteOf = new Map(
      toQuote.map((index) => {
        const outcome = quotedAhead?.get(index);
        if (!outcome) throw new Error(`payout batch item ${index} was not quoted ahead of its transaction`);
        return [index, outcome];
      }),
    );
    const quoted = [...quoteOf.values()];
    const early = new Map<number, AppError>();
    const reservations: { index: number; request: ReservationRequest }[] = [];
    for (const [index, plan] of plans.entries()) {
      const item = request.items[index]!;
      const source = plan.kind === 'same_as' ? plan.index : index;
      const effective = plan.kind === 'same_as' ? plans[plan.index]! : plan;
      if (effective.kind === 'refuse') {
        early.set(index, new AppError(effective.refusal.code, effective.refusal.message));
        continue;
      }
      let quoteId: string;
      if (effective.kind === 'existing') quoteId = effective.quoteId;
      else {
        const outcome = quoteOf.get(source)!;
        if (!outcome.ok) {
          early.set(index, outcome.error);
          continue;
        }
        quoteId = outcome.quote.id;
      }
      reservations.push({ index, request: { merchantId, quoteId, idempotencyKey: item.idempotencyKey } });
    }

    // 3. Persist: the quotes, the reservations (intents, postings, events, jobs), the batch with its answer. Above its
    // merchant's approval threshold the batch waits whole, under its id (decision 178).
    const batchId = newId('pob');
    await insertQuotes(
      tx,
      quoted.flatMap((o) => (o.ok ? [o.quote] : [])),
    );
    const reserved = await reserveInTransaction(
      tx,
      ctx,
      reservations.map((r) => r.request),
      { payoutBatchId: batchId },
    );
    const outcomes: PayoutItemOutcome[] = request.items.map((_, index) => ({ kind: 'refused', error: early.get(index)! }));
    for (const [n, { index }] of reservations.entries()) {
      const outcome = reserved[n]!;
      outcomes[index] = outcome.ok ? { kind: outcome.result.replayed ? 'replayed' : 'created', result: outcome.result } : { kind: 'refused', error: outcome.error };
    }
    const batch: PayoutBatchRow = {
      id: batchId,
      merchantId,
      idempotencyKey: request.idempotencyKey,
      requestHash: hash,
      response: {},
      itemsTotal: request.items.length,
      itemsRefused: outcomes.filter((o) => o.kind === 'refused').length,
      createdAt: ctx.clock.now(),
      completedAt: null,
    };
    batch.response = answerOf(batch, outcomes);
    await insertPayoutBatch(
      tx,
      batch,
      outcomes.flatMap((o) => (o.kind === 'refused' ? [] : [o.result.intent.id])),
    );
    // Every item refused, or every payment it names already final: the batch is complete at once.
    await completeBatchesOf(tx, [batch.id], [], batch.createdAt);
    return { answer: batch.response, replayed: false };
  });
}

/** The terms of the payments the items' keys already hold, by key. */
async function storedTermsOf(db: Queryable, merchantId: string, items: readonly PayoutItem[]): Promise<Map<string, StoredTerms>> {
  const existing = await readIntentsByKeys(
    db,
    items.map((item) => ({ merchantId, idempotencyKey: item.idempotencyKey })),
  );
  const terms = new Map((await readQuoteRequests(db, [...new Set(existing.map((i) => i.quote_id))])).map((q) => [q.id, q]));
  return new Map(
    existing.map((intent) => {
      const quote = terms.get(intent.quote_id)!;
      return [intent.idempotency_key, { quoteId: quote.id, amountMicros: quote.amount_micros, destinations: quote.destinations, priority: quote.priority }];
    }),
  );
}

/**
 * The quotes of the items that look new, decided before the batch's transaction and its lock (screening may ask a
 * provider over HTTP); null when a batch is stored under the key already (its answer is replayed, nothing asked).
 * Read without locks: an item a concurrent creation takes meanwhile is found under the lock and its quote dropped.
 */
async function quoteAhead(ctx: AppContext, merchantId: string, request: PayoutBatchRequest): Promise<Map<number, QuoteOutcome> | null> {
  if (await readPayoutBatchByKey(ctx.pool, merchantId, request.idempotencyKey)) return null;
  const toQuote = planItems(request.items, await storedTermsOf(ctx.pool, merchantId, request.items)).flatMap((plan, index) => (plan.kind === 'quote' ? [index] : []));
  const quoted = await decideQuotes(
    ctx,
    merchantId,
    toQuote.map((index) => request.items[index]!),
  );
  return new Map(toQuote.map((index, n) => [index, quoted[n]!]));
}

/** The batch with its progress, or null for an unknown id or another merchant's (both 404). */
export async function getPayoutBatch(ctx: AppContext, merchantId: string, id: string): Promise<{ batch: PayoutBatchRow; progress: BatchProgress } | null> {
  // One snapshot: the batch's completion and its payments' statuses were committed together.
  return withReadSnapshot(ctx.pool, async (tx) => {
    const batch = await readPayoutBatch(tx, id);
    if (!batch || batch.merchantId !== merchantId) return null;
    const totals = await countBatchStatuses(tx, [id]);
    return { batch, progress: batchProgress(totals.get(id)!) };
  });
}

// POST /payment_intents and GET /payment_intents/:id. Creation is one transaction: idempotency check, quote check,
// balance lock and check, reserve posting, intent + history, payment.created event, execution job.
import { paymentPayload } from '../domain/events.js';
import { AppError } from '../domain/errors.js';
import { withTransaction } from '../db/pool.js';
import { attemptsOf } from '../db/queries/attempts.js';
import { insertEvent } from '../db/queries/events.js';
import { findIntent, findIntentByKey, insertIntent, recordTransitions, type PaymentIntentRow } from '../db/queries/intents.js';
import { findQuote } from '../db/queries/quotes.js';
import { newId } from '../ids.js';
import { enqueueExecution } from '../jobs/queue.js';
import { ledgerEntriesByIntent } from '../ledger/entries.js';
import { movements } from '../ledger/movements.js';
import { lockBalance, post } from '../ledger/store.js';
import { formatUsdc, usdcToNumber } from '../money.js';
import type { AppContext } from './context.js';
import { readView } from './views.js';

export interface CreateIntentRequest {
  quoteId: string;
  idempotencyKey: string;
}

export interface CreateIntentResult {
  intent: PaymentIntentRow;
  /** True when the idempotency key matched an existing intent: the original response is replayed. */
  replayed: boolean;
}

export async function createPaymentIntent(ctx: AppContext, merchantId: string, request: CreateIntentRequest): Promise<CreateIntentResult> {
  return withTransaction(ctx.pool, async (tx) => {
    // Same (merchant, key) requests queue up here; the loser then finds the winner's intent.
    await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [JSON.stringify([merchantId, request.idempotencyKey])]);
    const existing = await findIntentByKey(tx, merchantId, request.idempotencyKey);
    if (existing) {
      if (existing.quote_id !== request.quoteId) {
        throw new AppError(
          'IDEMPOTENCY_KEY_REUSED',
          `idempotency_key was already used with quote ${existing.quote_id}; use a new key for a different payment`,
        );
      }
      return { intent: existing, replayed: true };
    }

    const quote = await findQuote(tx, request.quoteId);
    if (!quote || quote.merchant_id !== merchantId) throw new AppError('QUOTE_NOT_FOUND', `quote ${request.quoteId} was not found`);
    const now = ctx.clock.now();
    if (quote.expires_at.getTime() <= now.getTime()) {
      throw new AppError('QUOTE_EXPIRED', `quote ${quote.id} expired at ${quote.expires_at.toISOString()}; request a new quote`);
    }
    const chain = quote.recommended_route;
    const destination = quote.destinations[chain];
    if (!destination) throw new Error(`quote ${quote.id} recommends ${chain} without a destination`);

    const intent: PaymentIntentRow = {
      id: newId('pi'),
      merchant_id: merchantId,
      quote_id: quote.id,
      idempotency_key: request.idempotencyKey,
      amount_micros: quote.amount_micros,
      status: 'route_selected',
      selected_chain: chain,
      destination_address: destination,
      created_at: now,
      updated_at: now,
    };
    await insertIntent(tx, intent);
    await recordTransitions(
      tx,
      intent.id,
      [
        { from: null, to: 'created', reason: null },
        { from: 'created', to: 'quoted', reason: quote.id },
        { from: 'quoted', to: 'route_selected', reason: chain },
      ],
      now,
    );
    await insertEvent(tx, {
      merchantId,
      paymentIntentId: intent.id,
      type: 'payment.created',
      payload: paymentPayload({
        amount_usd: usdcToNumber(intent.amount_micros),
        selected_chain: chain,
        destination_address: destination,
        status: intent.status,
      }),
      at: now,
    });
    await enqueueExecution(ctx.boss, tx, { payment_intent_id: intent.id, attempt: 1 });

    // Last, so the chain's balance row stays locked only for the check, the posting and the commit: the row lock
    // serialises every reservation on this chain, and two requests cannot both spend the same funds. A failed
    // check rolls back everything above.
    const available = await lockBalance(tx, chain, 'USDC', 'treasury_available');
    if (available < quote.amount_micros) {
      throw new AppError(
        'INSUFFICIENT_BALANCE',
        `treasury on ${chain} has ${formatUsdc(available)} USDC available, ${formatUsdc(quote.amount_micros)} needed`,
      );
    }
    await post(tx, movements.reserve(chain, intent.amount_micros), { paymentIntentId: intent.id, at: now });
    return { intent, replayed: false };
  });
}

/** The read shape, or null for an unknown id or another merchant's intent (both answer 404). */
export async function getPaymentIntent(ctx: AppContext, merchantId: string, id: string) {
  const intent = await findIntent(ctx.pool, id);
  if (!intent || intent.merchant_id !== merchantId) return null;
  const [attempts, entries] = await Promise.all([attemptsOf(ctx.pool, [id]), ledgerEntriesByIntent(ctx.pool, [id])]);
  return readView(intent, attempts.get(id) ?? [], entries.get(id) ?? []);
}

// POST /quotes: load health and balances, score (pure), persist the quote with everything it was decided from.
import { addSeconds } from '../clock.js';
import { AppError } from '../domain/errors.js';
import { findQuote, insertQuote, type QuoteRow } from '../db/queries/quotes.js';
import { latestSnapshots, snapshotView } from '../db/queries/snapshots.js';
import { newId } from '../ids.js';
import { treasuryBalances } from '../ledger/store.js';
import { usdcToNumber } from '../money.js';
import { scoreRoutes, type Priority } from '../routing/score.js';
import { CHAINS, type Chain } from '../chains/port.js';
import type { AppContext } from './context.js';

export interface QuoteRequest {
  amountMicros: bigint;
  destinations: Partial<Record<Chain, string>>;
  priority: Priority;
}

export function quoteView(q: QuoteRow) {
  return {
    quote_id: q.id,
    amount_usd: usdcToNumber(q.amount_micros),
    candidate_routes: q.candidate_routes,
    recommended_route: q.recommended_route,
    expires_at: q.expires_at.toISOString(),
  };
}

/** The stored quote with what it was decided from, for GET /routes/debug. */
export function fullQuoteView(q: QuoteRow) {
  return {
    ...quoteView(q),
    merchant_id: q.merchant_id,
    priority: q.priority,
    destination: {
      ...(q.destinations.ethereum ? { ethereum_address: q.destinations.ethereum } : {}),
      ...(q.destinations.solana ? { solana_address: q.destinations.solana } : {}),
    },
    scoring_details: q.scoring_details,
    created_at: q.created_at.toISOString(),
  };
}

export async function createQuote(ctx: AppContext, merchantId: string, request: QuoteRequest): Promise<QuoteRow> {
  for (const chain of CHAINS) {
    const address = request.destinations[chain];
    if (address !== undefined && !ctx.adapters[chain].isValidAddress(address)) {
      throw new AppError('INVALID_DESTINATION', `destination.${chain}_address is not a valid ${chain} recipient (an address, not the treasury)`);
    }
  }
  const [snapshots, balances] = await Promise.all([latestSnapshots(ctx.pool), treasuryBalances(ctx.pool)]);
  const decision = scoreRoutes(
    request.amountMicros,
    request.priority,
    CHAINS.map((chain) => ({
      chain,
      snapshot: snapshots.find((s) => s.chain === chain)!,
      availableMicros: balances.find((b) => b.chain === chain)?.availableMicros ?? 0n,
      destination: request.destinations[chain] ?? null,
    })),
  );
  if (decision.recommended === null) {
    const reasons = decision.details.filter((d) => d.disqualification_reason !== 'no_destination');
    if (reasons.length > 0 && reasons.every((d) => d.disqualification_reason === 'insufficient_balance')) {
      throw new AppError('INSUFFICIENT_BALANCE', 'treasury funds are insufficient for this amount on every requested chain');
    }
    throw new AppError('NO_ROUTE_AVAILABLE', 'no requested chain can take this payment right now', {
      details: { scoring_details: decision.details },
    });
  }
  const now = ctx.clock.now();
  const quote: QuoteRow = {
    id: newId('quo'),
    merchant_id: merchantId,
    amount_micros: request.amountMicros,
    priority: request.priority,
    destinations: request.destinations,
    candidate_routes: decision.candidates,
    recommended_route: decision.recommended,
    scoring_details: decision.details,
    chain_health: snapshots.map(snapshotView),
    treasury_balances: balances.map((b) => ({
      chain: b.chain,
      available_balance: usdcToNumber(b.availableMicros),
      reserved_balance: usdcToNumber(b.reservedMicros),
    })),
    created_at: now,
    expires_at: addSeconds(now, ctx.config.quoteTtlSeconds),
  };
  await insertQuote(ctx.pool, quote);
  return quote;
}

export { findQuote };

// Response shapes of quotes: the spec's Quote, and the full stored quote that GET /routes/debug shows.
import type { QuoteRow } from '../../db/queries/quotes.js';
import type { PaymentIntentRow } from '../../db/queries/intents.js';
import { usdcToNumber } from '../../money.js';

export function quoteView(q: QuoteRow) {
  return {
    quote_id: q.id,
    amount_usd: usdcToNumber(q.amount_micros),
    candidate_routes: q.candidate_routes,
    recommended_route: q.recommended_route,
    // Only for a request that named tokens: the spec's quote has exactly its five fields (decision 237).
    ...(q.tokens === null ? {} : { recommended_token: q.recommended_token }),
    expires_at: q.expires_at.toISOString(),
  };
}

/** The stored quote with what it was decided from. */
export function fullQuoteView(q: QuoteRow) {
  return {
    ...quoteView(q),
    merchant_id: q.merchant_id,
    priority: q.priority,
    destination: Object.fromEntries(Object.entries(q.destinations).map(([chain, address]) => [`${chain}_address`, address])),
    scoring_details: q.scoring_details,
    created_at: q.created_at.toISOString(),
  };
}

/** GET /routes/debug/:id: health and balances as they were when the route was chosen, so the scores re-derive. */
export function routeDebugView(intent: PaymentIntentRow, quote: QuoteRow) {
  return {
    payment_intent_id: intent.id,
    quote: fullQuoteView(quote),
    chain_health: quote.chain_health,
    treasury_balances: quote.treasury_balances,
    scoring_details: quote.scoring_details,
    selected_chain: intent.selected_chain,
  };
}

import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../core/context.js';
import { createQuote, type QuoteRequest } from '../../core/payments/quotes.js';
import { quoteView } from '../views/quotes.js';
import { AppError } from '../../domain/errors.js';
import { usdcFromJsonNumber } from '../../money.js';
import type { Priority } from '../../domain/priority.js';
import { merchantOf } from '../auth.js';
import { amountUsdSchema, candidateRouteSchema, destinationSchemaFor, errorRef, timestamp, tokenSchema } from '../schemas/common.js';
import type { Chain } from '../../domain/chain.js';

export interface QuoteBody {
  amount_usd: number;
  /** `<chain>_address` for each configured chain (the spec's ethereum_address and solana_address). */
  destination: Record<string, string | undefined>;
  priority: Priority;
  /** The tokens the recipient accepts (issue 40); absent: USDC, as the spec's clients ask. */
  tokens?: string[];
}

/** The request of a service paying out on `chains`: a destination field per chain, at least one of them given. */
export function quoteBodySchemaFor(chains: readonly Chain[]) {
  const destination = destinationSchemaFor(chains, { maxLength: 128 });
  return {
    type: 'object',
    required: ['amount_usd', 'destination', 'priority'],
    properties: {
      amount_usd: amountUsdSchema,
      destination: { ...destination, anyOf: chains.map((chain) => ({ required: [`${chain}_address`] })) },
      priority: { type: 'string', enum: ['low_fee', 'fast', 'reliable'] },
      tokens: { type: 'array', minItems: 1, maxItems: 8, items: { type: 'string', maxLength: 16 } },
    },
  } as const;
}

/** "destination.ethereum_address or destination.solana_address is required", for whatever CHAINS lists. */
export function missingDestinationMessage(chains: readonly Chain[]): string {
  const fields = chains.map((chain) => `destination.${chain}_address`);
  return `${fields.length > 1 ? `${fields.slice(0, -1).join(', ')} or ${fields.at(-1)}` : fields[0]} is required`;
}

export const quoteSchema = {
  type: 'object',
  properties: {
    quote_id: { type: 'string' },
    amount_usd: { type: 'number' },
    candidate_routes: { type: 'array', items: candidateRouteSchema },
    recommended_route: { type: 'string' },
    recommended_token: tokenSchema,
    expires_at: timestamp,
  },
} as const;

export function quoteRoutes(app: FastifyInstance, ctx: AppContext): void {
  const chains = ctx.config.chainNames;
  const missingDestination = missingDestinationMessage(chains);
  app.post<{ Body: QuoteBody }>(
    '/quotes',
    {
      schema: {
        tags: ['merchant'],
        summary: 'Score the chains for a payout and return a quote',
        body: quoteBodySchemaFor(chains),
        response: { 201: quoteSchema, 400: errorRef, 401: errorRef, 422: errorRef },
      },
      config: {
        validationCodes: {
          '': 'INVALID_AMOUNT',
          amount_usd: 'INVALID_AMOUNT',
          destination: 'MISSING_DESTINATION',
          'destination:type': 'INVALID_DESTINATION',
          'destination:maxLength': 'INVALID_DESTINATION',
          priority: 'INVALID_PRIORITY',
          tokens: 'INVALID_TOKEN',
        },
        validationMessages: { MISSING_DESTINATION: missingDestination },
      },
    },
    async (request, reply) => {
      // 1. authenticate (onRequest hook)  2. validate  3. act  4. shape the reply
      const merchant = merchantOf(request);
      const quote = await createQuote(ctx, merchant.id, quoteRequestOf(request.body, chains, missingDestination));
      return reply.code(201).send(quoteView(quote));
    },
  );
}

/** A validated quote body as the core takes it (POST /quotes, and each item of POST /payout_batches). */
export function quoteRequestOf(body: QuoteBody, chains: readonly Chain[], missingDestination: string): QuoteRequest {
  const amountMicros = usdcFromJsonNumber(body.amount_usd);
  // A chain gets a payout only where the merchant named an address for it: no address is ever inferred.
  const destinations: Record<Chain, string> = {};
  for (const chain of chains) {
    const address = body.destination[`${chain}_address`]?.trim();
    if (address) destinations[chain] = address;
  }
  if (Object.keys(destinations).length === 0) throw new AppError('MISSING_DESTINATION', missingDestination);
  return { amountMicros, destinations, priority: body.priority, ...(body.tokens === undefined ? {} : { tokens: body.tokens }) };
}

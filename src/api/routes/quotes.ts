import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../core/context.js';
import { createQuote } from '../../core/quotes.js';
import { quoteView } from '../views/quotes.js';
import { AppError } from '../../domain/errors.js';
import { usdcFromJsonNumber } from '../../money.js';
import type { Priority } from '../../routing/score.js';
import { merchantOf } from '../auth.js';
import { amountUsdSchema, candidateRouteSchema, errorRef, timestamp } from '../schemas/common.js';

interface QuoteBody {
  amount_usd: number;
  destination: { ethereum_address?: string; solana_address?: string };
  priority: Priority;
}

const bodySchema = {
  type: 'object',
  required: ['amount_usd', 'destination', 'priority'],
  properties: {
    amount_usd: amountUsdSchema,
    destination: {
      type: 'object',
      properties: {
        ethereum_address: { type: 'string', maxLength: 128 },
        solana_address: { type: 'string', maxLength: 128 },
      },
      anyOf: [{ required: ['ethereum_address'] }, { required: ['solana_address'] }],
    },
    priority: { type: 'string', enum: ['low_fee', 'fast', 'reliable'] },
  },
} as const;

const MISSING_DESTINATION_MESSAGE = 'destination.ethereum_address or destination.solana_address is required';

export const quoteSchema = {
  type: 'object',
  properties: {
    quote_id: { type: 'string' },
    amount_usd: { type: 'number' },
    candidate_routes: { type: 'array', items: candidateRouteSchema },
    recommended_route: { type: 'string' },
    expires_at: timestamp,
  },
} as const;

export function quoteRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Body: QuoteBody }>(
    '/quotes',
    {
      schema: {
        tags: ['merchant'],
        summary: 'Score the chains for a payout and return a quote',
        body: bodySchema,
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
        },
        validationMessages: { MISSING_DESTINATION: MISSING_DESTINATION_MESSAGE },
      },
    },
    async (request, reply) => {
      // 1. authenticate (onRequest hook)  2. validate  3. act  4. shape the reply
      const merchant = merchantOf(request);
      const amountMicros = usdcFromJsonNumber(request.body.amount_usd);
      const ethereum = request.body.destination.ethereum_address?.trim() || undefined;
      const solana = request.body.destination.solana_address?.trim() || undefined;
      if (!ethereum && !solana) {
        throw new AppError('MISSING_DESTINATION', MISSING_DESTINATION_MESSAGE);
      }
      const quote = await createQuote(ctx, merchant.id, {
        amountMicros,
        destinations: { ...(ethereum ? { ethereum } : {}), ...(solana ? { solana } : {}) },
        priority: request.body.priority,
      });
      return reply.code(201).send(quoteView(quote));
    },
  );
}

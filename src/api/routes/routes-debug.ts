import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../core/context.js';
import { routeDecision } from '../../core/payments/quotes.js';
import { AppError } from '../../domain/errors.js';
import { routeDebugView } from '../views/quotes.js';
import { merchantOf } from '../auth.js';
import { candidateRouteSchema, chainSchema, destinationSchemaFor, errorRef, healthSnapshotSchema, idParams, scoringDetailSchema, timestamp, tokenSchema } from '../schemas/common.js';

export function routesDebugRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Params: { id: string } }>(
    '/routes/debug/:id',
    {
      schema: {
        tags: ['merchant'],
        summary: 'Why a payment intent went to its chain: the quote, the health and balances it saw, the scores',
        params: idParams,
        response: {
          200: {
            type: 'object',
            properties: {
              payment_intent_id: { type: 'string' },
              quote: {
                type: 'object',
                properties: {
                  quote_id: { type: 'string' },
                  merchant_id: { type: 'string' },
                  amount_usd: { type: 'number' },
                  priority: { type: 'string' },
                  destination: destinationSchemaFor(ctx.config.chainNames),
                  candidate_routes: { type: 'array', items: candidateRouteSchema },
                  recommended_route: { type: 'string' },
                  recommended_token: tokenSchema,
                  scoring_details: { type: 'array', items: scoringDetailSchema },
                  created_at: timestamp,
                  expires_at: timestamp,
                },
              },
              chain_health: { type: 'array', items: healthSnapshotSchema },
              treasury_balances: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: { chain: chainSchema, available_balance: { type: 'number' }, reserved_balance: { type: 'number' } },
                },
              },
              scoring_details: { type: 'array', items: scoringDetailSchema },
              selected_chain: chainSchema,
            },
          },
          401: errorRef,
          404: errorRef,
        },
      },
      config: { validationCodes: { '': 'PAYMENT_INTENT_NOT_FOUND', id: 'PAYMENT_INTENT_NOT_FOUND' } },
    },
    async (request) => {
      const decision = await routeDecision(ctx, merchantOf(request).id, request.params.id);
      if (!decision) throw new AppError('PAYMENT_INTENT_NOT_FOUND', `payment intent ${request.params.id} was not found`);
      return routeDebugView(decision.intent, decision.quote);
    },
  );
}

import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../core/context.js';
import { createPaymentIntent, getPaymentIntent } from '../../core/payments/payment-intents.js';
import { creationView, readView } from '../views/payment-intents.js';
import { AppError } from '../../domain/errors.js';
import { merchantOf } from '../auth.js';
import { checkIdempotencyKey, idempotencyKeySchema } from '../idempotency-key.js';
import { errorRef, idParams, paymentIntentCreationSchema, paymentIntentReadSchema } from '../schemas/common.js';

interface CreateBody {
  quote_id: string;
  idempotency_key: string;
}

const createBody = {
  type: 'object',
  required: ['quote_id', 'idempotency_key'],
  properties: {
    quote_id: { type: 'string', minLength: 1, maxLength: 128, pattern: '^\\s*[A-Za-z0-9_]*\\s*$' },
    idempotency_key: idempotencyKeySchema,
  },
} as const;

export function paymentIntentRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Body: CreateBody }>(
    '/payment_intents',
    {
      schema: {
        tags: ['merchant'],
        summary: 'Create a payment intent from a quote; reserves treasury funds and queues execution',
        body: createBody,
        response: { 201: paymentIntentCreationSchema, 400: errorRef, 401: errorRef, 404: errorRef, 409: errorRef, 422: errorRef },
      },
      config: {
        validationCodes: {
          '': 'MISSING_QUOTE_ID',
          quote_id: 'MISSING_QUOTE_ID',
          'quote_id:type': 'INVALID_QUOTE_ID',
          'quote_id:pattern': 'INVALID_QUOTE_ID',
          'quote_id:maxLength': 'INVALID_QUOTE_ID',
          idempotency_key: 'MISSING_IDEMPOTENCY_KEY',
          'idempotency_key:type': 'INVALID_IDEMPOTENCY_KEY',
          'idempotency_key:pattern': 'INVALID_IDEMPOTENCY_KEY',
          'idempotency_key:maxLength': 'INVALID_IDEMPOTENCY_KEY',
        },
      },
    },
    async (request, reply) => {
      const merchant = merchantOf(request);
      const quoteId = request.body.quote_id.trim();
      const idempotencyKey = request.body.idempotency_key;
      if (!quoteId) throw new AppError('MISSING_QUOTE_ID', 'quote_id is required');
      checkIdempotencyKey(idempotencyKey);
      const { intent, replayed, approval } = await createPaymentIntent(ctx, merchant.id, { quoteId, idempotencyKey });
      // A repeated key replays the original response (Stripe): same status and body, flagged by a header.
      if (replayed) reply.header('idempotent-replayed', 'true');
      return reply.code(201).send(creationView(intent, approval));
    },
  );

  app.get<{ Params: { id: string } }>(
    '/payment_intents/:id',
    {
      schema: {
        tags: ['merchant'],
        summary: 'Read a payment intent with its attempts and ledger entries',
        params: idParams,
        response: { 200: paymentIntentReadSchema, 401: errorRef, 404: errorRef },
      },
      config: { validationCodes: { '': 'PAYMENT_INTENT_NOT_FOUND', id: 'PAYMENT_INTENT_NOT_FOUND' } },
    },
    async (request) => {
      const found = await getPaymentIntent(ctx, merchantOf(request).id, request.params.id);
      if (!found) throw new AppError('PAYMENT_INTENT_NOT_FOUND', `payment intent ${request.params.id} was not found`);
      return readView(found.intent, found.attempts, found.entries, found.approval);
    },
  );
}

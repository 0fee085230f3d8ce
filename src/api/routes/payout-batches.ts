// POST /payout_batches and GET /payout_batches/:id: a payroll of up to PAYOUT_BATCH_ITEMS_MAX payments in one request,
// each item a quote request with its own idempotency key, answered item by item (src/core/payments/payout-batches.ts).
import type { FastifyInstance } from 'fastify';
import { PAYOUT_BATCH_BODY_MAX_BYTES, PAYOUT_BATCH_ITEMS_MAX } from '../../bounds.js';
import type { AppContext } from '../../core/context.js';
import { createPayoutBatch, getPayoutBatch } from '../../core/payments/payout-batches.js';
import { AppError } from '../../domain/errors.js';
import type { PayoutItem } from '../../domain/payout-batch.js';
import { AmountError } from '../../money.js';
import { merchantOf } from '../auth.js';
import { checkIdempotencyKey, idempotencyKeySchema } from '../idempotency-key.js';
import { errorRef, idParams, nullableTimestamp, paymentIntentCreationSchema, timestamp } from '../schemas/common.js';
import { batchCreationView, batchReadView } from '../views/payout-batches.js';
import { missingDestinationMessage, quoteBodySchemaFor, quoteRequestOf, type QuoteBody } from './quotes.js';

interface ItemBody extends QuoteBody {
  idempotency_key: string;
}

interface CreateBody {
  idempotency_key: string;
  items: ItemBody[];
}

function bodySchemaFor(chains: AppContext['config']['chainNames']) {
  const item = quoteBodySchemaFor(chains);
  return {
    type: 'object',
    required: ['idempotency_key', 'items'],
    properties: {
      idempotency_key: idempotencyKeySchema,
      items: {
        type: 'array',
        minItems: 1,
        maxItems: PAYOUT_BATCH_ITEMS_MAX,
        items: { ...item, required: [...item.required, 'idempotency_key'], properties: { ...item.properties, idempotency_key: idempotencyKeySchema } },
      },
    },
  } as const;
}

const counts = { type: 'object', properties: { created: { type: 'integer' }, replayed: { type: 'integer' }, refused: { type: 'integer' } } } as const;

const creationSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    idempotency_key: { type: 'string' },
    created_at: timestamp,
    counts,
    items: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          index: { type: 'integer' },
          idempotency_key: { type: 'string' },
          result: { type: 'string', enum: ['created', 'replayed', 'refused'] },
          payment_intent: paymentIntentCreationSchema,
          error: errorRef,
        },
      },
    },
  },
} as const;

export const payoutBatchReadSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    idempotency_key: { type: 'string' },
    status: { type: 'string', enum: ['processing', 'completed'] },
    items: { type: 'object', properties: { total: { type: 'integer' }, payments: { type: 'integer' }, refused: { type: 'integer' } } },
    payments_by_status: { type: 'object', additionalProperties: { type: 'integer' } },
    totals: {
      type: 'object',
      properties: { requested_usd: { type: 'number' }, settled_usd: { type: 'number' }, failed_usd: { type: 'number' } },
    },
    created_at: timestamp,
    completed_at: nullableTimestamp,
  },
} as const;

export function payoutBatchRoutes(app: FastifyInstance, ctx: AppContext): void {
  const chains = ctx.config.chainNames;
  const missingDestination = missingDestinationMessage(chains);
  app.post<{ Body: CreateBody }>(
    '/payout_batches',
    {
      bodyLimit: PAYOUT_BATCH_BODY_MAX_BYTES,
      schema: {
        tags: ['merchant'],
        summary: `Create up to ${PAYOUT_BATCH_ITEMS_MAX} payment intents at once, each quoted and reserved; answered item by item`,
        body: bodySchemaFor(chains),
        response: { 201: creationSchema, 400: errorRef, 401: errorRef, 409: errorRef, 413: errorRef },
      },
      config: {
        validationCodes: {
          '': 'INVALID_REQUEST',
          idempotency_key: 'MISSING_IDEMPOTENCY_KEY',
          'idempotency_key:type': 'INVALID_IDEMPOTENCY_KEY',
          'idempotency_key:pattern': 'INVALID_IDEMPOTENCY_KEY',
          'idempotency_key:maxLength': 'INVALID_IDEMPOTENCY_KEY',
          items: 'INVALID_REQUEST',
          'items:maxItems': 'TOO_MANY_ITEMS',
        },
        validationMessages: { TOO_MANY_ITEMS: `a payout batch takes at most ${PAYOUT_BATCH_ITEMS_MAX} items` },
      },
    },
    async (request, reply) => {
      // 1. authenticate (onRequest hook)  2. validate: a malformed item refuses the whole batch, naming it
      const merchant = merchantOf(request);
      checkIdempotencyKey(request.body.idempotency_key, 'idempotency_key');
      const items: PayoutItem[] = request.body.items.map((item, index) => {
        checkIdempotencyKey(item.idempotency_key, `items[${index}].idempotency_key`);
        try {
          return { idempotencyKey: item.idempotency_key, ...quoteRequestOf(item, chains, missingDestination) };
        } catch (error) {
          if (error instanceof AppError) throw new AppError(error.code, `items[${index}]: ${error.message}`);
          if (error instanceof AmountError) throw new AppError('INVALID_AMOUNT', `items[${index}].amount_usd: ${error.message}`);
          throw error;
        }
      });
      // 3. act  4. shape the reply (a replay answers the stored one, flagged like POST /payment_intents's)
      const { answer, replayed } = await createPayoutBatch(
        ctx,
        merchant.id,
        { idempotencyKey: request.body.idempotency_key, items },
        batchCreationView(items.map((i) => i.idempotencyKey)),
      );
      if (replayed) reply.header('idempotent-replayed', 'true');
      return reply.code(201).send(answer);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/payout_batches/:id',
    {
      schema: {
        tags: ['merchant'],
        summary: "A payout batch's progress (payments per status) and totals (USD requested, settled, failed)",
        params: idParams,
        response: { 200: payoutBatchReadSchema, 401: errorRef, 404: errorRef },
      },
      config: { validationCodes: { '': 'PAYOUT_BATCH_NOT_FOUND', id: 'PAYOUT_BATCH_NOT_FOUND' } },
    },
    async (request) => {
      const found = await getPayoutBatch(ctx, merchantOf(request).id, request.params.id);
      if (!found) throw new AppError('PAYOUT_BATCH_NOT_FOUND', `payout batch ${request.params.id} was not found`);
      return batchReadView(found.batch, found.progress);
    },
  );
}

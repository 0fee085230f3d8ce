// GET /admin/deposits: transfers into the treasuries that the deposit scanner booked, newest first; and an operator
// attaching a returned payout to its payment (decision 126).
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../core/context.js';
import { attachRefund } from '../../core/treasury/deposits/attach.js';
import { auditEntryOf } from '../audit.js';
import { DEPOSIT_STATUS_FILTERS, depositsPage, type DepositStatusFilter } from '../../core/treasury/deposits/list.js';
import type { Chain } from '../../domain/chain.js';
import { chainSchema, errorRef, idParams } from '../schemas/common.js';
import { depositSchema } from '../schemas/deposits.js';
import { depositView } from '../views/deposits.js';
import { ADMIN_PAGE_ROWS_DEFAULT } from '../../bounds.js';

export function adminDepositRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Querystring: { status?: DepositStatusFilter; chain?: Chain; limit?: string; before?: string } }>(
    '/admin/deposits',
    {
      schema: {
        tags: ['admin'],
        summary:
          'Inbound transfers booked as funding or as a payment\'s refund, newest first, paged by `before` (next_before). ' +
          '`status=unmatched`: USDC from a past payout\'s recipient waiting for an operator (unmatched or ambiguous)',
        querystring: {
          type: 'object',
          properties: {
            status: { type: 'string', enum: [...DEPOSIT_STATUS_FILTERS] },
            chain: chainSchema,
            limit: { type: 'string', pattern: '^(?:[1-9][0-9]{0,1}|1[0-9]{2}|200)$' },
            before: { type: 'string', pattern: '^[1-9][0-9]{0,17}$' },
          },
        },
        response: {
          200: { type: 'object', properties: { data: { type: 'array', items: depositSchema }, next_before: { type: ['string', 'null'] } } },
          400: errorRef,
        },
      },
      config: { validationCodes: { '': 'INVALID_FILTER' } },
    },
    async (request) => {
      const page = await depositsPage(ctx, {
        status: request.query.status ?? 'all',
        chain: request.query.chain ?? null,
        before: request.query.before === undefined ? null : Number(request.query.before),
        limit: Number(request.query.limit ?? ADMIN_PAGE_ROWS_DEFAULT),
      });
      return { data: page.data.map(depositView), next_before: page.next === null ? null : String(page.next) };
    },
  );

  app.post<{ Params: { id: string }; Body: { tx_id: string } }>(
    '/admin/payments/:id/refund',
    {
      schema: {
        tags: ['admin'],
        summary:
          'Book an inbound USDC transfer the deposit scanner saw (from the payout\'s destination, same chain, no more than the payout) ' +
          'as the settled payment\'s refund, as `stableroute intents refund`',
        params: idParams,
        body: { type: 'object', required: ['tx_id'], additionalProperties: false, properties: { tx_id: { type: 'string', minLength: 1, maxLength: 128 } } },
        response: {
          200: {
            type: 'object',
            properties: { payment_intent_id: { type: 'string' }, status: { type: 'string' }, tx_id: { type: 'string' }, refund_usdc: { type: 'string' } },
          },
          400: errorRef,
          404: errorRef,
          409: errorRef,
        },
      },
      config: { validationCodes: { '': 'INVALID_REQUEST', id: 'PAYMENT_INTENT_NOT_FOUND' } },
    },
    async (request) => attachRefund(ctx, request.params.id, request.body.tx_id, auditEntryOf(request)),
  );
}

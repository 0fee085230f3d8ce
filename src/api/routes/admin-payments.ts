// /admin/payments: the console's payment list (keyset pages, filters, search), one payment in full, and the
// operator's actions on it. Thin: validate, call src/core, shape. Resolve and cancel run the same use cases and
// chain checks as `stableroute intents resolve|cancel`.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../core/context.js';
import { cancelPaymentByOperator, resolvePayment } from '../../core/operators/console/actions.js';
import { auditEntryOf } from '../audit.js';
import { ADMIN_PAGE_ROWS_DEFAULT, ADMIN_PAGE_ROWS_MAX } from '../../bounds.js';
import { listPayments, paymentCounts, paymentRecord } from '../../core/operators/console/payments.js';
import type { Chain } from '../../domain/chain.js';
import { AppError } from '../../domain/errors.js';
import type { Resolution } from '../../domain/operator-actions.js';
import type { PaymentStatus } from '../../domain/payment-intent.js';
import { errorRef, idParams } from '../schemas/common.js';
import {
  paymentCountsSchema,
  paymentListQuery,
  paymentPageSchema,
  paymentRecordSchema,
  resolutionResultSchema,
  resolveBody,
} from '../schemas/operator.js';
import { decodeCursor } from '../views/cursor.js';
import { paymentCountsView, paymentPageView, paymentRecordView } from '../views/operator.js';

interface ListQuery {
  status?: PaymentStatus;
  chain?: Chain;
  merchant_id?: string;
  created_from?: string;
  created_before?: string;
  q?: string;
  limit?: string;
  cursor?: string;
}

const notFound = { validationCodes: { '': 'PAYMENT_INTENT_NOT_FOUND', id: 'PAYMENT_INTENT_NOT_FOUND' } } as const;

export function adminPaymentRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Querystring: ListQuery }>(
    '/admin/payments',
    {
      schema: {
        tags: ['admin'],
        summary: 'Payment intents newest first, one page at a time, filtered and searched (id, tx id or destination address)',
        querystring: paymentListQuery,
        response: { 200: paymentPageSchema, 400: errorRef },
      },
      config: { validationCodes: { '': 'INVALID_FILTER', cursor: 'INVALID_CURSOR' } },
    },
    async (request) => {
      const query = request.query;
      const limit = Number(query.limit ?? ADMIN_PAGE_ROWS_DEFAULT);
      if (limit < 1 || limit > ADMIN_PAGE_ROWS_MAX) throw new AppError('INVALID_FILTER', `limit must be between 1 and ${ADMIN_PAGE_ROWS_MAX}`);
      const page = await listPayments(
        ctx,
        {
          status: query.status,
          chain: query.chain,
          merchantId: query.merchant_id,
          createdFrom: query.created_from ? new Date(query.created_from) : undefined,
          createdBefore: query.created_before ? new Date(query.created_before) : undefined,
          search: query.q?.trim() || undefined,
        },
        query.cursor ? decodeCursor(query.cursor) : null,
        limit,
      );
      return paymentPageView(page);
    },
  );

  app.get(
    '/admin/payment-counts',
    {
      schema: { tags: ['admin'], summary: 'How many payment intents are in each status', response: { 200: paymentCountsSchema } },
    },
    async () => paymentCountsView(await paymentCounts(ctx)),
  );

  app.get<{ Params: { id: string } }>(
    '/admin/payments/:id',
    {
      schema: {
        tags: ['admin'],
        summary: 'One payment intent: status timeline, attempts, ledger postings, webhook events and deliveries, allowed actions',
        params: idParams,
        response: { 200: paymentRecordSchema, 404: errorRef },
      },
      config: notFound,
    },
    async (request) => paymentRecordView(await paymentRecord(ctx, request.params.id), ctx.config.chains),
  );

  app.post<{ Params: { id: string }; Body: { resolution: Resolution; force?: boolean } }>(
    '/admin/payments/:id/resolve',
    {
      schema: {
        tags: ['admin'],
        summary:
          'Resolve a payment in manual_review: settled, failed, replace, retry or cancel_on_chain (checked against the chain; force overrides where it may)',
        params: idParams,
        body: resolveBody,
        response: { 200: resolutionResultSchema, 400: errorRef, 403: errorRef, 404: errorRef, 409: errorRef, 502: errorRef },
      },
      config: {
        validationCodes: { '': 'INVALID_RESOLUTION', resolution: 'INVALID_RESOLUTION', force: 'INVALID_REQUEST', id: 'PAYMENT_INTENT_NOT_FOUND' },
      },
    },
    async (request) => resolvePayment(ctx, request.params.id, request.body.resolution, request.body.force ?? false, auditEntryOf(request)),
  );

  app.post<{ Params: { id: string } }>(
    '/admin/payments/:id/cancel',
    {
      schema: {
        tags: ['admin'],
        summary: 'Cancel a payment that has not reached the chain (route_selected, or retrying with nothing that can land)',
        params: idParams,
        response: { 200: resolutionResultSchema, 404: errorRef, 409: errorRef, 502: errorRef },
      },
      config: notFound,
    },
    async (request) => cancelPaymentByOperator(ctx, request.params.id, auditEntryOf(request)),
  );
}

// Running a treasury: operator alerts, continuous reconciliation history, withdrawals. Thin: validate, call core, shape.
import type { FastifyInstance } from 'fastify';
import { alertPage, alertView } from '../../core/operators/alerts.js';
import type { AppContext } from '../../core/context.js';
import { reconciliationRunPage } from '../../core/treasury/reconcile-runs.js';
import { createWithdrawal, getWithdrawal, withdrawals } from '../../core/treasury/withdrawals.js';
import { withdrawalView } from '../views/withdrawals.js';
import { AppError } from '../../domain/errors.js';
import { ALERT_KINDS, type AlertStatus } from '../../domain/alert.js';
import type { Chain } from '../../domain/chain.js';
import { chainSchema, errorRef, idParams, nullableTimestamp, operatorApprovalSchema, timestamp } from '../schemas/common.js';
import { auditEntryOf } from '../audit.js';
import { checkIdempotencyKey, idempotencyKeySchema } from '../idempotency-key.js';
import { ADMIN_PAGE_ROWS_DEFAULT, ADMIN_PAGE_ROWS_MAX } from '../../bounds.js';

const limitSchema = { type: 'string', pattern: '^[0-9]{1,3}$' } as const;
const pageLimit = (raw: string | undefined) => Math.min(ADMIN_PAGE_ROWS_MAX, Math.max(1, Number(raw ?? ADMIN_PAGE_ROWS_DEFAULT)));
const filterCodes = { validationCodes: { '': 'INVALID_FILTER' } } as const;

const alertSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    kind: { type: 'string', enum: [...ALERT_KINDS] },
    chain: { type: ['string', 'null'], description: 'A chain of CHAINS; null for an alert about no one chain (screening_list_rejected, database_not_synchronous)' },
    message: { type: 'string' },
    status: { type: 'string', enum: ['open', 'resolved'] },
    first_seen_at: timestamp,
    last_seen_at: timestamp,
    resolved_at: nullableTimestamp,
  },
} as const;

const reconciliationRunSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    chain: chainSchema,
    status: { type: 'string', enum: ['ok', 'in_flight', 'mismatch', 'error'] },
    address: { type: 'string' },
    ledger_usdc: { type: 'string' },
    in_flight_usdc: { type: 'string' },
    on_chain_usdc: { type: ['string', 'null'] },
    difference_usdc: { type: ['string', 'null'] },
    error: { type: ['string', 'null'] },
    created_at: timestamp,
  },
} as const;

const withdrawalSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    chain: chainSchema,
    to: { type: 'string' },
    amount_usdc: { type: 'string' },
    token: { type: 'string' },
    status: { type: 'string' },
    idempotency_key: { type: 'string' },
    tx_id: { type: ['string', 'null'] },
    fee_native: { type: ['string', 'null'] },
    fee_currency: { type: 'string' },
    created_at: timestamp,
    updated_at: timestamp,
    approval: operatorApprovalSchema,
  },
} as const;

export function adminTreasuryOpsRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Querystring: { status?: AlertStatus; limit?: string; cursor?: string } }>(
    '/admin/alerts',
    {
      schema: {
        tags: ['admin'],
        summary: 'Operator alerts (low gas, reconciliation mismatch, screening hit, screening list rejected), newest first; `cursor` is the previous page\'s next_cursor',
        querystring: {
          type: 'object',
          properties: { status: { type: 'string', enum: ['open', 'resolved'] }, limit: limitSchema, cursor: { type: 'string', pattern: '^alt_[0-9a-z]{1,64}$' } },
        },
        response: {
          200: { type: 'object', properties: { data: { type: 'array', items: alertSchema }, next_cursor: { type: ['string', 'null'] } } },
          400: errorRef,
        },
      },
      config: filterCodes,
    },
    async (request) => {
      const page = await alertPage(ctx.pool, { status: request.query.status, limit: pageLimit(request.query.limit), before: request.query.cursor });
      return { data: page.alerts.map(alertView), next_cursor: page.nextCursor };
    },
  );

  app.get<{ Querystring: { chain?: Chain; limit?: string; cursor?: string } }>(
    '/admin/reconciliations',
    {
      schema: {
        tags: ['admin'],
        summary: "Continuous reconciliation's history, per chain and run, newest first",
        querystring: {
          type: 'object',
          properties: { chain: chainSchema, limit: limitSchema, cursor: { type: 'string', pattern: '^[0-9]{1,18}$' } },
        },
        response: {
          200: {
            type: 'object',
            properties: { data: { type: 'array', items: reconciliationRunSchema }, next_cursor: { type: ['string', 'null'] } },
          },
          400: errorRef,
        },
      },
      config: filterCodes,
    },
    async (request) => {
      const before = request.query.cursor === undefined ? undefined : Number(request.query.cursor);
      const page = await reconciliationRunPage(ctx.pool, { chain: request.query.chain, limit: pageLimit(request.query.limit), before });
      return { data: page.runs.map((r) => ({ ...r, created_at: r.created_at.toISOString() })), next_cursor: page.nextCursor };
    },
  );

  app.post<{ Body: { chain: string; to: string; amount_usdc: string; token?: string; idempotency_key?: string } }>(
    '/admin/withdrawals',
    {
      schema: {
        tags: ['admin'],
        summary:
          'Withdraw treasury USDC (or `token`: one of the chain\'s NAME_TOKENS) to an address: reserved from available funds now, then signed once and confirmed like a payout. ' +
          'The same idempotency_key answers the first withdrawal (200)',
        body: {
          type: 'object',
          required: ['chain', 'to', 'amount_usdc'],
          additionalProperties: false,
          properties: {
            chain: { type: 'string', maxLength: 32 },
            to: { type: 'string', minLength: 1, maxLength: 128 },
            amount_usdc: { type: 'string', minLength: 1, maxLength: 40 },
            token: { type: 'string', minLength: 1, maxLength: 16 },
            idempotency_key: idempotencyKeySchema,
          },
        },
        response: { 200: withdrawalSchema, 201: withdrawalSchema, 400: errorRef, 409: errorRef, 422: errorRef },
      },
      config: { validationCodes: { '': 'INVALID_REQUEST', chain: 'INVALID_CHAIN', to: 'INVALID_DESTINATION', amount_usdc: 'INVALID_AMOUNT', token: 'INVALID_TOKEN', idempotency_key: 'INVALID_IDEMPOTENCY_KEY' } },
    },
    async (request, reply) => {
      if (request.body.idempotency_key !== undefined) checkIdempotencyKey(request.body.idempotency_key);
      const result = await createWithdrawal(ctx, {
        chain: request.body.chain,
        to: request.body.to,
        amountUsdc: request.body.amount_usdc,
        token: request.body.token,
        idempotencyKey: request.body.idempotency_key,
        audit: auditEntryOf(request),
      });
      return reply.code(result.replayed ? 200 : 201).send(withdrawalView(result, ctx.config.chains));
    },
  );

  app.get<{ Querystring: { limit?: string; cursor?: string } }>(
    '/admin/withdrawals',
    {
      schema: {
        tags: ['admin'],
        summary: 'Withdrawals, newest first',
        querystring: { type: 'object', properties: { limit: limitSchema, cursor: { type: 'string', pattern: '^pi_[0-9a-z]{1,64}$' } } },
        response: {
          200: { type: 'object', properties: { data: { type: 'array', items: withdrawalSchema }, next_cursor: { type: ['string', 'null'] } } },
          400: errorRef,
        },
      },
      config: filterCodes,
    },
    async (request) => {
      const limit = pageLimit(request.query.limit);
      // One more than the page: a next cursor only when there is a next page.
      const rows = await withdrawals(ctx, { limit: limit + 1, before: request.query.cursor });
      const page = rows.slice(0, limit);
      return { data: page.map((record) => withdrawalView(record, ctx.config.chains)), next_cursor: rows.length > limit ? page[page.length - 1]!.intent.id : null };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/admin/withdrawals/:id',
    {
      schema: {
        tags: ['admin'],
        summary: 'One withdrawal',
        params: idParams,
        response: { 200: withdrawalSchema, 404: errorRef },
      },
      config: { validationCodes: { '': 'WITHDRAWAL_NOT_FOUND', id: 'WITHDRAWAL_NOT_FOUND' } },
    },
    async (request) => {
      const record = await getWithdrawal(ctx, request.params.id);
      if (!record) throw new AppError('WITHDRAWAL_NOT_FOUND', `no withdrawal ${request.params.id}`);
      return withdrawalView(record, ctx.config.chains);
    },
  );
}

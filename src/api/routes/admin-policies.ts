// /admin/merchants/:id/policy, /admin/merchants/:id/addresses and /admin/approvals: spending policies, address books
// and payments waiting for approval (decisions 6-11). Served wherever /admin/* is, with the same protection.
import type { FastifyInstance } from 'fastify';
import { addAddress, addressBook, removeAddress } from '../../core/merchants/address-book.js';
import type { AppContext } from '../../core/context.js';
import { approvePayment, listPendingApprovals, rejectPayment } from '../../core/operators/transitions/approve.js';
import { approvePayoutBatch, rejectPayoutBatch } from '../../core/operators/transitions/approve-batch.js';
import { getMerchantPolicy } from '../../core/merchants/policies.js';
import type { Chain } from '../../domain/chain.js';
import { auditEntryOf } from '../audit.js';
import { arrayOf, chainSchema, errorRef, idParams, timestamp } from '../schemas/common.js';
import { addressView, pendingApprovalView, policyView } from '../views/policies.js';

const usdOrNull = { type: ['number', 'null'] } as const;
const source = { type: 'string', enum: ['default', 'merchant'] } as const;

const policySchema = {
  type: 'object',
  properties: {
    merchant_id: { type: 'string' },
    max_payment_usd: usdOrNull,
    daily_limit_usd: usdOrNull,
    approval_above_usd: usdOrNull,
    approval_above_usd_per_day: usdOrNull,
    allowlist: { type: 'boolean' },
    address_cooling_off_seconds: { type: 'number' },
    rate_limit_per_minute: { type: 'number' },
    sources: {
      type: 'object',
      properties: {
        max_payment_usd: source,
        daily_limit_usd: source,
        approval_above_usd: source,
        approval_above_usd_per_day: source,
        allowlist: source,
        rate_limit_per_minute: source,
      },
    },
  },
} as const;

const addressProperties = {
  chain: chainSchema,
  address: { type: 'string' },
  label: { type: ['string', 'null'] },
  created_at: timestamp,
  usable_from: timestamp,
} as const;
const addressSchema = { type: 'object', properties: addressProperties } as const;

const merchantParams = idParams;
const addressParams = {
  type: 'object',
  required: ['id', 'chain', 'address'],
  properties: { id: idParams.properties.id, chain: chainSchema, address: { type: 'string', minLength: 1, maxLength: 128 } },
} as const;

const decisionSchema = {
  type: 'object',
  properties: {
    payment_intent_id: { type: 'string' },
    status: { type: 'string' },
    approval: { type: 'string', enum: ['pending', 'approved', 'rejected'] },
    approvals: { type: 'integer' },
    approvals_required: { type: 'integer' },
    requested_action: { type: 'string', enum: ['force_fail'] },
  },
} as const;

const batchDecisionSchema = {
  type: 'object',
  properties: {
    payout_batch_id: { type: 'string' },
    approval: { type: 'string', enum: ['pending', 'approved', 'rejected'] },
    approvals: { type: 'integer' },
    approvals_required: { type: 'integer' },
    payments: { type: 'integer' },
  },
} as const;

const decisionBody = { type: 'object', properties: { reason: { type: 'string', maxLength: 500 } } } as const;

export function policyAdminRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Querystring: { limit?: string } }>(
    '/admin/approvals',
    {
      schema: {
        tags: ['admin'],
        summary:
          'Payments and withdrawals waiting for an operator approval before broadcast (funds reserved), oldest first, with who requested, who gave a first approval, and the approvals given and needed. A payout batch held whole is one entry: its payout_batch_id, its first payment, the sum of its waiting payments and their count (payments). requested_action force_fail: a payment in manual_review whose forced failure waits for a second operator (its funds still reserved or in flight)',
        querystring: { type: 'object', properties: { limit: { type: 'string', pattern: '^[0-9]{1,3}$' } } },
        response: {
          200: arrayOf({
            payment_intent_id: { type: 'string' },
            kind: { type: 'string', enum: ['payout', 'withdrawal'] },
            requested_by: { type: ['string', 'null'] },
            first_approved_by: { type: ['string', 'null'] },
            approvals: { type: 'integer' },
            approvals_required: { type: 'integer' },
            merchant_id: { type: 'string' },
            amount_usd: { type: 'number' },
            selected_chain: chainSchema,
            destination_address: { type: 'string' },
            approval_above_usd: { type: 'number' },
            requested_at: timestamp,
            payout_batch_id: { type: ['string', 'null'] },
            payments: { type: 'integer' },
            requested_action: { type: 'string', enum: ['send', 'force_fail'] },
          }),
          400: errorRef,
        },
      },
    },
    async (request) => {
      const limit = Math.min(500, Math.max(1, Number(request.query.limit ?? 100)));
      return (await listPendingApprovals(ctx, limit)).map(pendingApprovalView);
    },
  );

  for (const action of ['approve', 'reject'] as const) {
    app.post<{ Params: { id: string }; Body: { reason?: string } | undefined }>(
      `/admin/payment_intents/:id/${action}`,
      {
        schema: {
          tags: ['admin'],
          summary:
            action === 'approve'
              ? 'Approve a payment waiting for approval: its execution is queued now. For a forced failure another operator requested (requested_action force_fail), the payment fails now, unless it moved on or its transfer landed meanwhile (409)'
              : 'Reject a payment waiting for approval: it fails (approval_rejected) and its funds are released. A forced failure is dropped instead: the payment stays in manual_review',
          params: idParams,
          body: decisionBody,
          response: { 200: decisionSchema, 400: errorRef, 404: errorRef, 409: errorRef },
        },
        config: { validationCodes: { '': 'INVALID_REQUEST', id: 'PAYMENT_INTENT_NOT_FOUND', reason: 'INVALID_REQUEST' } },
        // The body is optional: no body is an empty one.
        preValidation: async (request) => {
          if (request.body === undefined || request.body === null) request.body = {};
        },
      },
      async (request) => {
        const input = { reason: request.body?.reason ?? null, audit: auditEntryOf(request) };
        return action === 'approve' ? approvePayment(ctx, request.params.id, input) : rejectPayment(ctx, request.params.id, input);
      },
    );

    app.post<{ Params: { id: string }; Body: { reason?: string } | undefined }>(
      `/admin/payout_batches/:id/${action}`,
      {
        schema: {
          tags: ['admin'],
          summary:
            action === 'approve'
              ? 'Approve a payout batch held whole (decision 178): the executions of all its waiting payments are queued now'
              : 'Reject a payout batch held whole: each of its waiting payments fails (approval_rejected) and its funds are released',
          params: idParams,
          body: decisionBody,
          response: { 200: batchDecisionSchema, 400: errorRef, 404: errorRef, 409: errorRef },
        },
        config: { validationCodes: { '': 'INVALID_REQUEST', id: 'PAYOUT_BATCH_NOT_FOUND', reason: 'INVALID_REQUEST' } },
        preValidation: async (request) => {
          if (request.body === undefined || request.body === null) request.body = {};
        },
      },
      async (request) => {
        const input = { reason: request.body?.reason ?? null, audit: auditEntryOf(request) };
        return action === 'approve' ? approvePayoutBatch(ctx, request.params.id, input) : rejectPayoutBatch(ctx, request.params.id, input);
      },
    );
  }

  app.get<{ Params: { id: string } }>(
    '/admin/merchants/:id/policy',
    {
      schema: {
        tags: ['admin'],
        summary: "The merchant's spending policy in force: service defaults with its overrides, and where each comes from",
        params: merchantParams,
        response: { 200: policySchema, 404: errorRef },
      },
      config: { validationCodes: { '': 'MERCHANT_NOT_FOUND', id: 'MERCHANT_NOT_FOUND' } },
    },
    async (request) => policyView(await getMerchantPolicy(ctx.pool, ctx.config, request.params.id)),
  );

  app.get<{ Params: { id: string }; Querystring: { chain?: Chain } }>(
    '/admin/merchants/:id/addresses',
    {
      schema: {
        tags: ['admin'],
        summary: "The merchant's address book (recipients it may pay when its allowlist is on)",
        params: merchantParams,
        querystring: { type: 'object', properties: { chain: chainSchema } },
        response: { 200: arrayOf(addressProperties), 400: errorRef, 404: errorRef },
      },
      config: { validationCodes: { '': 'MERCHANT_NOT_FOUND', id: 'MERCHANT_NOT_FOUND', chain: 'INVALID_CHAIN' } },
    },
    async (request) => (await addressBook(ctx.pool, request.params.id, request.query.chain ?? null)).map(addressView),
  );

  app.post<{ Params: { id: string }; Body: { chain: Chain; address: string; label?: string } }>(
    '/admin/merchants/:id/addresses',
    {
      schema: {
        tags: ['admin'],
        summary: 'Add a recipient to the address book: 201 when added, 200 when it was listed already (unchanged)',
        params: merchantParams,
        body: {
          type: 'object',
          required: ['chain', 'address'],
          properties: {
            chain: chainSchema,
            address: { type: 'string', minLength: 1, maxLength: 128 },
            label: { type: 'string', maxLength: 200 },
          },
        },
        response: { 200: addressSchema, 201: addressSchema, 400: errorRef, 404: errorRef },
      },
      config: {
        validationCodes: { '': 'INVALID_REQUEST', id: 'MERCHANT_NOT_FOUND', chain: 'INVALID_CHAIN', address: 'INVALID_DESTINATION' },
      },
    },
    async (request, reply) => {
      const { entry, created } = await addAddress(ctx, request.params.id, request.body, auditEntryOf(request));
      return reply.code(created ? 201 : 200).send(addressView(entry));
    },
  );

  app.delete<{ Params: { id: string; chain: Chain; address: string } }>(
    '/admin/merchants/:id/addresses/:chain/:address',
    {
      schema: {
        tags: ['admin'],
        summary: 'Remove a recipient from the address book; payments to it are refused from now on when the allowlist is on',
        params: addressParams,
        response: { 200: addressSchema, 400: errorRef, 404: errorRef },
      },
      config: { validationCodes: { '': 'INVALID_REQUEST', id: 'MERCHANT_NOT_FOUND', chain: 'INVALID_CHAIN', address: 'ADDRESS_NOT_FOUND' } },
    },
    async (request) => addressView(await removeAddress(ctx, request.params.id, request.params.chain, request.params.address, auditEntryOf(request))),
  );
}

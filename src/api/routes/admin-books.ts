// The books against the chains after a database failover or restore (decisions 198-200): GET /admin/books lists the
// holds (open first) with what each check found that the books do not know; an operator attaches an unknown
// transaction to the payments it paid, or declares it (or an EVM nonce) foreign, as `stableroute books` does.
import type { FastifyInstance } from 'fastify';
import { attachUnknownTransaction, declareForeign, listHolds } from '../../core/treasury/books/operator.js';
import type { AppContext } from '../../core/context.js';
import type { Chain } from '../../domain/chain.js';
import { auditEntryOf } from '../audit.js';
import { chainSchema, errorRef } from '../schemas/common.js';

const holdSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    chain: { type: 'string' },
    state: { type: 'string', enum: ['checking', 'behind', 'lifted'] },
    opened_at: { type: 'string' },
    history_from: { type: 'string' },
    history_to: { type: 'string' },
    checked_at: { type: ['string', 'null'] },
    lifted_at: { type: ['string', 'null'] },
    lifted_by: { type: ['string', 'null'] },
    unknown_transactions: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          tx_id: { type: 'string' },
          nonce: { type: ['integer', 'null'] },
          failed: { type: 'boolean' },
          memo: { type: ['string', 'null'] },
          transfers: { type: 'array', items: { type: 'object', properties: { to: { type: 'string' }, amount_micros: { type: 'string' } } } },
        },
      },
    },
    unknown_nonces: { type: 'array', items: { type: 'integer' } },
    incomplete: { type: 'boolean' },
  },
} as const;

const chainParams = { type: 'object', required: ['chain'], properties: { chain: chainSchema } } as const;
const txIdSchema = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[0-9A-Za-z]+$' } as const;

export function adminBooksRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get(
    '/admin/books',
    {
      schema: {
        tags: ['admin'],
        summary:
          'Chains whose signing is held since the database history changed (a failover, a restore): open holds first, each with ' +
          'what its last check found on chain that the books do not know; then the latest lifted',
        response: { 200: { type: 'object', properties: { data: { type: 'array', items: holdSchema } } } },
      },
    },
    async () => ({ data: await listHolds(ctx.pool) }),
  );

  app.post<{ Params: { chain: Chain }; Body: { tx_id: string; payment_intent_ids?: string[] } }>(
    '/admin/books/:chain/attach',
    {
      schema: {
        tags: ['admin'],
        summary:
          'Record an unknown treasury transaction the last check found as the attempt of the payments it paid (found by memo, or ' +
          'recipient and amount among the chain\'s unsigned payments; or named, in its order): they settle from the chain, never paid again',
        params: chainParams,
        body: {
          type: 'object',
          required: ['tx_id'],
          additionalProperties: false,
          properties: {
            tx_id: txIdSchema,
            payment_intent_ids: { type: 'array', minItems: 1, maxItems: 1000, items: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_]+$' } },
          },
        },
        response: {
          200: { type: 'object', properties: { chain: { type: 'string' }, tx_id: { type: 'string' }, payment_intent_ids: { type: 'array', items: { type: 'string' } } } },
          400: errorRef,
          404: errorRef,
          409: errorRef,
        },
      },
      config: { validationCodes: { '': 'INVALID_REQUEST', chain: 'INVALID_CHAIN' } },
    },
    async (request) =>
      attachUnknownTransaction(ctx, {
        chain: request.params.chain,
        txId: request.body.tx_id,
        payments: request.body.payment_intent_ids ?? null,
        audit: auditEntryOf(request),
      }),
  );

  app.post<{ Params: { chain: Chain }; Body: { tx_id?: string; nonce?: number; reason: string } }>(
    '/admin/books/:chain/foreign',
    {
      schema: {
        tags: ['admin'],
        summary:
          'Declare an unknown treasury transaction (or an EVM nonce used with no transaction found) paid none of our payments. ' +
          'The first operator\'s declaration waits (409 FOREIGN_DECLARATION_PENDING); a different operator\'s same declaration counts',
        params: chainParams,
        body: {
          type: 'object',
          required: ['reason'],
          additionalProperties: false,
          oneOf: [{ required: ['tx_id'] }, { required: ['nonce'] }],
          properties: { tx_id: txIdSchema, nonce: { type: 'integer', minimum: 0, maximum: 9007199254740991 }, reason: { type: 'string', minLength: 1, maxLength: 500 } },
        },
        response: {
          200: {
            type: 'object',
            properties: {
              chain: { type: 'string' },
              tx_id: { type: ['string', 'null'] },
              nonce: { type: ['integer', 'null'] },
              declared_by: { type: 'string' },
              approved_by: { type: 'string' },
            },
          },
          400: errorRef,
          403: errorRef,
          404: errorRef,
          409: errorRef,
        },
      },
      config: { validationCodes: { '': 'INVALID_REQUEST', chain: 'INVALID_CHAIN' } },
    },
    async (request) =>
      declareForeign(ctx, {
        chain: request.params.chain,
        txId: request.body.tx_id ?? null,
        nonce: request.body.nonce ?? null,
        reason: request.body.reason,
        audit: auditEntryOf(request),
      }),
  );
}

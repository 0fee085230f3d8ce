// /admin/*: unauthenticated operator views, meant for an internal network (ADMIN_PORT puts them on their own listener).
import type { FastifyInstance } from 'fastify';
import { failures, overview, recordChainHealth, routeDistribution, type ChainHealthInput } from '../../core/operators/admin.js';
import type { AppContext } from '../../core/context.js';
import { auditEntryOf } from '../audit.js';
import { reconcile } from '../../core/treasury/reconcile.js';
import { webhookEventsPage } from '../../core/operators/console/webhooks.js';
import { redeliverWebhookEvent } from '../../core/webhooks/outbox.js';
import { WEBHOOK_EVENT_STATUSES, type WebhookEventStatus } from '../../domain/webhook-delivery.js';
import { overviewView, routeDistributionView, snapshotView, webhookEventView } from '../views/admin.js';
import { arrayOf, chainSchema, errorRef, healthSnapshotSchema, idParams, paymentIntentReadSchema, treasuryBalanceSchema } from '../schemas/common.js';
import { webhookEventSchema } from '../schemas/operator.js';
import { depositSchema } from '../schemas/deposits.js';
import { chainHealthBody } from '../schemas/chain-health.js';
import { tokensOfConfig } from '../../config.js';

export function adminRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get(
    '/admin/overview',
    {
      schema: {
        tags: ['admin'],
        summary: 'Payment counts and volume, chain health, treasury balances, the last 20 payments',
        response: {
          200: {
            type: 'object',
            properties: {
              payments: {
                type: 'object',
                properties: {
                  total: { type: 'number' },
                  settled: { type: 'number' },
                  failed: { type: 'number' },
                  pending: { type: 'number' },
                  total_volume_usd: { type: 'number' },
                },
              },
              chain_health: { type: 'array', items: healthSnapshotSchema },
              treasury_balances: { type: 'array', items: treasuryBalanceSchema },
              recent_payments: { type: 'array', items: paymentIntentReadSchema },
              recent_deposits: { type: 'array', items: depositSchema },
            },
          },
        },
      },
    },
    async () => overviewView(await overview(ctx)),
  );

  app.get(
    '/admin/route-distribution',
    {
      schema: {
        tags: ['admin'],
        summary: 'Payment intents per selected chain',
        response: {
          200: arrayOf({ selected_chain: chainSchema, count: { type: 'string' }, volume: { type: 'string' } }),
        },
      },
    },
    async () => routeDistributionView(await routeDistribution(ctx)),
  );

  app.get(
    '/admin/failures',
    {
      schema: {
        tags: ['admin'],
        summary: 'Failed attempts grouped by reason and chain, most common first',
        response: {
          200: arrayOf({ failure_reason: { type: 'string' }, chain: chainSchema, count: { type: 'string' } }),
        },
      },
    },
    async () => failures(ctx),
  );

  app.get(
    '/admin/reconciliation',
    {
      schema: {
        tags: ['admin'],
        summary: "Each treasury's ledger USDC balance against its on-chain balance",
        response: {
          200: arrayOf({
            chain: chainSchema,
            address: { type: 'string' },
            adapter: { type: 'string' },
            ledger_usdc: { type: 'string' },
            in_flight_usdc: { type: 'string' },
            landed_usdc: { type: ['string', 'null'] },
            on_chain_usdc: { type: ['string', 'null'] },
            difference_usdc: { type: ['string', 'null'] },
            status: { type: 'string', enum: ['ok', 'in_flight', 'mismatch', 'error'] },
            error: { type: 'string' },
          }),
        },
      },
    },
    async () => reconcile(ctx.pool, ctx.adapters, tokensOfConfig(ctx.config)),
  );

  app.get<{ Querystring: { status?: WebhookEventStatus | 'all'; limit?: string; before?: string } }>(
    '/admin/webhook-events',
    {
      schema: {
        tags: ['admin'],
        summary: 'Webhook events by delivery status (default: failed; `all` for every status), newest first, paged by `before` (an event id)',
        querystring: {
          type: 'object',
          properties: {
            status: { type: 'string', enum: [...WEBHOOK_EVENT_STATUSES, 'all'] },
            limit: { type: 'string', pattern: '^[0-9]{1,3}$' },
            before: { type: 'string', maxLength: 128, pattern: '^[A-Za-z0-9_]+$' },
          },
        },
        response: { 200: { type: 'array', items: webhookEventSchema }, 400: errorRef },
      },
    },
    async (request) => {
      const limit = Math.min(500, Math.max(1, Number(request.query.limit ?? 100)));
      const status = request.query.status ?? 'failed';
      return (await webhookEventsPage(ctx, status === 'all' ? null : status, request.query.before ?? null, limit)).map(webhookEventView);
    },
  );

  app.post<{ Params: { id: string } }>(
    '/admin/webhook-events/:id/redeliver',
    {
      schema: {
        tags: ['admin'],
        summary: 'Queue a failed or stored webhook event again with a fresh retry budget',
        params: idParams,
        response: { 200: { type: 'object', properties: { id: { type: 'string' }, status: { type: 'string' } } }, 404: errorRef, 409: errorRef },
      },
      config: { validationCodes: { '': 'NOT_FOUND', id: 'NOT_FOUND' } },
    },
    async (request) => redeliverWebhookEvent(ctx.pool, ctx.config, request.params.id, ctx.clock.now(), auditEntryOf(request)),
  );

  app.post<{ Body: ChainHealthInput }>(
    '/admin/chain-health',
    {
      schema: {
        tags: ['admin'],
        summary: 'Insert a chain-health snapshot; missing metrics take chain-specific defaults',
        body: chainHealthBody,
        response: { 201: healthSnapshotSchema, 400: errorRef },
      },
      config: {
        validationCodes: {
          '': 'INVALID_CHAIN',
          chain: 'INVALID_CHAIN',
          health_status: 'INVALID_HEALTH_STATUS',
          estimated_fee_usd: 'INVALID_CHAIN_HEALTH',
          avg_confirmation_seconds: 'INVALID_CHAIN_HEALTH',
          rpc_error_rate: 'INVALID_CHAIN_HEALTH',
        },
      },
    },
    async (request, reply) => reply.code(201).send(snapshotView(await recordChainHealth(ctx, request.body, auditEntryOf(request)))),
  );
}


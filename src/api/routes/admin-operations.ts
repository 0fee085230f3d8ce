// Operator views behind the console's treasury, chain-health and webhook pages. Thin: validate, call core, shape.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../core/context.js';
import { ADMIN_HEALTH_HISTORY_POINTS_DEFAULT, ADMIN_HEALTH_HISTORY_POINTS_MAX, ADMIN_TIMESTAMP_CHARS_MAX } from '../../bounds.js';
import { chainHealthHistory } from '../../core/operators/console/chain-health.js';
import { readReplicaStatus } from '../../core/operators/console/read-replica.js';
import { treasuryStates } from '../../core/operators/console/treasury.js';
import { webhookEventRecord } from '../../core/operators/console/webhooks.js';
import type { Chain } from '../../domain/chain.js';
import { chainSchema, errorRef, healthSnapshotSchema, idParams } from '../schemas/common.js';
import { treasurySchema, webhookEventRecordSchema } from '../schemas/operator.js';
import { snapshotView } from '../views/admin.js';
import { treasuryView, webhookEventRecordView } from '../views/operator.js';

export function adminOperationRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get(
    '/admin/treasury',
    {
      schema: {
        tags: ['admin'],
        summary: "Each chain's treasury as the ledger books it: USDC available, reserved, in flight; native currency for fees; unconfirmed transfers",
        response: { 200: treasurySchema },
      },
    },
    async () => treasuryView(await treasuryStates(ctx)),
  );

  app.get<{ Querystring: { chain?: Chain; since?: string; points?: string } }>(
    '/admin/chain-health',
    {
      schema: {
        tags: ['admin'],
        summary: 'Chain-health snapshots over time, oldest first, at most `points` per chain (default 240)',
        querystring: {
          type: 'object',
          properties: {
            chain: chainSchema,
            since: { type: 'string', maxLength: ADMIN_TIMESTAMP_CHARS_MAX, format: 'date-time' },
            points: { type: 'string', pattern: '^[0-9]{1,4}$' },
          },
        },
        response: { 200: { type: 'array', items: { ...healthSnapshotSchema, properties: { ...healthSnapshotSchema.properties, source: { type: 'string' } } } }, 400: errorRef },
      },
      config: { validationCodes: { '': 'INVALID_FILTER' } },
    },
    async (request) => {
      const points = Math.min(ADMIN_HEALTH_HISTORY_POINTS_MAX, Math.max(1, Number(request.query.points ?? ADMIN_HEALTH_HISTORY_POINTS_DEFAULT)));
      const since = request.query.since ? new Date(request.query.since) : undefined;
      const rows = await chainHealthHistory(ctx, { chain: request.query.chain, since, points });
      return rows.map((s) => ({ ...snapshotView(s), source: s.source }));
    },
  );

  app.get(
    '/admin/read-replica',
    {
      schema: {
        tags: ['admin'],
        summary: 'The read server (DATABASE_READ_URL) of console lists, exports and metrics gauges, and how far behind the primary it is',
        response: {
          200: {
            type: 'object',
            required: ['configured', 'standby', 'lag_seconds'],
            properties: { configured: { type: 'boolean' }, standby: { type: ['boolean', 'null'] }, lag_seconds: { type: ['number', 'null'] } },
          },
          503: errorRef,
        },
      },
    },
    async () => {
      const status = await readReplicaStatus(ctx);
      return { configured: status.configured, standby: status.standby, lag_seconds: status.lagSeconds };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/admin/webhook-events/:id',
    {
      schema: {
        tags: ['admin'],
        summary: 'One webhook event with its payload and every delivery attempt',
        params: idParams,
        response: { 200: webhookEventRecordSchema, 404: errorRef },
      },
      config: { validationCodes: { '': 'NOT_FOUND', id: 'NOT_FOUND' } },
    },
    async (request) => webhookEventRecordView(await webhookEventRecord(ctx, request.params.id)),
  );
}

import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../core/context.js';
import { sendTestWebhook } from '../../core/webhooks/test-event.js';
import { merchantOf } from '../auth.js';
import { errorRef } from '../schemas/common.js';

export function webhookRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post(
    '/webhooks/test',
    {
      schema: {
        tags: ['merchant'],
        summary: "Send a signed webhook.test event to the merchant's webhook_url now and report the outcome",
        response: {
          200: {
            type: 'object',
            properties: {
              event_id: { type: 'string' },
              delivered: { type: 'boolean' },
              url: { type: 'string' },
              status_code: { type: ['number', 'null'] },
              latency_ms: { type: 'number' },
              error: { type: ['string', 'null'] },
            },
          },
          401: errorRef,
          422: errorRef,
        },
      },
    },
    async (request) =>
      sendTestWebhook(
        { pool: ctx.pool, clock: ctx.clock, config: ctx.config, log: ctx.log.child({ component: 'webhooks' }) },
        merchantOf(request).id,
      ),
  );
}

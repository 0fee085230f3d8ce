// GET /metrics on the admin listener: Prometheus text format. The database gauges are read first (bounded, see
// src/core/health/metrics.ts); everything else was observed as it happened.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../core/context.js';
import { refreshDatabaseGauges } from '../../core/health/metrics.js';

export function metricsRoute(app: FastifyInstance, ctx: AppContext): void {
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    await refreshDatabaseGauges(ctx);
    return reply.type(ctx.metrics.registry.contentType).send(await ctx.metrics.registry.metrics());
  });
}

/** Times every request by method, route pattern (never the raw URL: ids would explode the series) and status. */
export function registerHttpMetrics(app: FastifyInstance, ctx: Pick<AppContext, 'metrics'>): void {
  app.addHook('onResponse', async (request, reply) => {
    ctx.metrics.httpRequestDuration.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });
}

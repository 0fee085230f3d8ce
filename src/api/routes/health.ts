import type { FastifyInstance } from 'fastify';
import { databaseAnswers } from '../../core/health/availability.js';
import type { AppContext } from '../../core/context.js';
import { errorRef } from '../schemas/common.js';

export interface Readiness {
  ready: boolean;
}

/** GET /health: no key needed (load balancers call it); 200 once the service takes requests and the database answers. */
export function healthRoutes(app: FastifyInstance, ctx: AppContext, readiness: Readiness): void {
  app.get(
    '/health',
    {
      schema: {
        tags: ['health'],
        summary: 'Readiness: 200 when the service can take requests',
        response: {
          200: { type: 'object', properties: { status: { type: 'string' }, database: { type: 'string' } } },
          503: errorRef,
        },
      },
    },
    async (_request, reply) => {
      if (!readiness.ready) {
        return reply.code(503).send({ statusCode: 503, error: 'Service Unavailable', message: 'starting or stopping', code: 'SERVICE_UNAVAILABLE' });
      }
      if (!(await databaseAnswers(ctx.pool))) {
        return reply
          .code(503)
          .send({ statusCode: 503, error: 'Service Unavailable', message: 'database unreachable', code: 'SERVICE_UNAVAILABLE' });
      }
      return { status: 'ok', database: 'ok' };
    },
  );
}

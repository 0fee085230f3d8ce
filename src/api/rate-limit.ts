// Per-merchant rate limits on the merchant API (decision 93): @fastify/rate-limit, keyed by the authenticated
// merchant (its hook runs after authentication), counted in PostgreSQL so that the limit holds across every api
// process, and answered with 429 RATE_LIMITED in the error body with a Retry-After header.
import rateLimit, { type FastifyRateLimitStore } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../core/context.js';
import { countHit } from '../db/queries/rate-limits.js';
import { AppError } from '../domain/errors.js';
import { merchantOf } from './auth.js';

export const RATE_LIMIT_WINDOW_MS = 60_000;

/** The limit in force for the request's merchant: its own, or RATE_LIMIT_PER_MINUTE; 0 = none. */
function limitOf(ctx: AppContext, request: FastifyRequest): number {
  return merchantOf(request).rateLimitPerMinute ?? ctx.config.rateLimitPerMinute;
}

/** A @fastify/rate-limit store over rate_limit_windows; time comes from the injected clock. */
function postgresStore(ctx: AppContext) {
  return class PostgresRateLimitStore implements FastifyRateLimitStore {
    incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number): void {
      const now = ctx.clock.now();
      countHit(ctx.pool, key, now, timeWindow).then(
        ({ hits, windowStart }) => callback(null, { current: hits, ttl: Math.max(1, windowStart.getTime() + timeWindow - now.getTime()) }),
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
      );
    }

    child(): FastifyRateLimitStore {
      return this;
    }
  };
}

/** Limits every route registered after it in `scope`, which must authenticate merchants first. */
export async function registerMerchantRateLimit(scope: FastifyInstance, ctx: AppContext): Promise<void> {
  await scope.register(rateLimit, {
    global: true,
    hook: 'onRequest', // route-level: after the scope's authentication hook
    timeWindow: RATE_LIMIT_WINDOW_MS,
    keyGenerator: (request) => `merchant:${merchantOf(request).id}`,
    max: (request) => limitOf(ctx, request),
    // Unlimited merchants cost no counter write.
    allowList: (request) => limitOf(ctx, request) === 0,
    store: postgresStore(ctx),
    // A counter the database cannot update does not refuse the request; the request itself will meet the outage.
    skipOnError: true,
    errorResponseBuilder: (_request, context) =>
      new AppError('RATE_LIMITED', `more than ${context.max} requests in a minute; retry in ${context.after}`),
  });
}

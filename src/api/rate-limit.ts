// Rate limits (decisions 93, 217, 224), all through @fastify/rate-limit and all answered 429 RATE_LIMITED in the error
// body with Retry-After and the X-RateLimit-* headers:
//   - the merchant API, per authenticated merchant, counted in PostgreSQL so that the limit holds across api processes;
//   - merchant requests refused 401 (no valid X-Api-Key), per client address, counted in PostgreSQL too: merchant
//     authentication calls the limiter once it has refused, so the 401 carries the headers and a key guesser or an
//     anonymous flood from one address meets a 429 (a valid key never counts here);
//   - admin routes (/admin/*, /console, /metrics), per operator (its token's identity) or, without one, per client
//     address, counted in PostgreSQL too, refusals included (the guard calls the limiter once it knows the caller);
//   - GET /health, per client address, counted in each process's memory: a probe reaches one process, and a flood
//     must not cost the database a write per request.
// A client address is `request.ip`: the socket's peer, since the app sets no trustProxy; X-Forwarded-For is the
// client's own words and changes nothing. normalizeIP counts an IPv6 client by its /64, what one host is given.
import rateLimit, { normalizeIP, type FastifyRateLimitStore } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HEALTH_RATE_LIMIT_ADDRESSES_MAX } from '../bounds.js';
import type { Clock } from '../clock.js';
import type { AppContext } from '../core/context.js';
import { countRequest } from '../core/rate-limits.js';
import { AppError } from '../domain/errors.js';
import { merchantOf } from './auth.js';

export const RATE_LIMIT_WINDOW_MS = 60_000;

type StoreCallback = (error: Error | null, result?: { current: number; ttl: number }) => void;

/** The limit in force for the request's merchant: its own, or RATE_LIMIT_PER_MINUTE; 0 = none. */
function limitOf(ctx: AppContext, request: FastifyRequest): number {
  return merchantOf(request).rateLimitPerMinute ?? ctx.config.rateLimitPerMinute;
}

/** A @fastify/rate-limit store over the counters in PostgreSQL (core/rate-limits.ts). */
function postgresStore(ctx: AppContext) {
  return class PostgresRateLimitStore implements FastifyRateLimitStore {
    incr(key: string, callback: StoreCallback, timeWindow: number): void {
      countRequest(ctx, key, timeWindow).then(
        ({ hits, ttlMs }) => callback(null, { current: hits, ttl: ttlMs }),
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
      );
    }

    child(): FastifyRateLimitStore {
      return this;
    }
  };
}

/** A store in this process's memory, on the injected clock, holding at most HEALTH_RATE_LIMIT_ADDRESSES_MAX keys. */
function memoryStore(clock: Clock) {
  const windows = new Map<string, { hits: number; startMs: number }>();
  return class MemoryRateLimitStore implements FastifyRateLimitStore {
    incr(key: string, callback: StoreCallback, timeWindow: number): void {
      const nowMs = clock.now().getTime();
      let window = windows.get(key);
      if (window === undefined || window.startMs + timeWindow <= nowMs) {
        windows.delete(key);
        if (windows.size >= HEALTH_RATE_LIMIT_ADDRESSES_MAX) {
          for (const [k, w] of windows) if (w.startMs + timeWindow <= nowMs) windows.delete(k);
          // Still full of live windows: the oldest goes (Map order is insertion order).
          if (windows.size >= HEALTH_RATE_LIMIT_ADDRESSES_MAX) windows.delete(windows.keys().next().value!);
        }
        window = { hits: 0, startMs: nowMs };
        windows.set(key, window);
      }
      window.hits += 1;
      callback(null, { current: window.hits, ttl: Math.max(1, window.startMs + timeWindow - nowMs) });
    }

    child(): FastifyRateLimitStore {
      return this;
    }
  };
}

const rateLimited = (_request: FastifyRequest, context: { max: number; after: string }) =>
  new AppError('RATE_LIMITED', `more than ${context.max} requests in a minute; retry in ${context.after}`);

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
    errorResponseBuilder: rateLimited,
  });
}

/** Who a merchant request refused for its key counts against: its address (an IPv6 one by its /64). */
export function apiKeyFailureRateLimitKey(request: FastifyRequest): string {
  return `api-key-failure-address:${normalizeIP(request.ip)}`;
}

/** A limiter for a hook to call once it knows whom the request counts against: it sets the headers, or throws the 429. */
export type CallerRateLimit = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/**
 * A limiter for a caller the route's own hook identifies (it calls it, and the limiter throws the 429); null when
 * `max` is 0. Registered in a scope of its own, so that its handler is this limiter's whatever else `scope` registers.
 */
async function registerCallerRateLimit(
  scope: FastifyInstance,
  ctx: AppContext,
  max: number,
  keyGenerator: (request: FastifyRequest) => string,
  errorResponseBuilder: typeof rateLimited,
): Promise<CallerRateLimit | null> {
  if (max === 0) return null;
  const made: { limit?: ReturnType<FastifyInstance['rateLimit']> } = {};
  await scope.register(async (own) => {
    await own.register(rateLimit, {
      global: false, // called by the caller's hook, not added to any route
      timeWindow: RATE_LIMIT_WINDOW_MS,
      keyGenerator,
      max,
      store: postgresStore(ctx),
      skipOnError: true,
      errorResponseBuilder,
    });
    made.limit = own.rateLimit();
  });
  const limit = made.limit!;
  return async (request, reply) => {
    await limit.call(scope, request, reply);
  };
}

/**
 * The limiter of merchant requests refused 401, for merchant authentication to call before it answers; null when
 * API_KEY_FAILURE_RATE_LIMIT_PER_MINUTE is 0. Its 429 says the key is the problem, not the client's pace.
 */
export function registerApiKeyFailureRateLimit(scope: FastifyInstance, ctx: AppContext): Promise<CallerRateLimit | null> {
  return registerCallerRateLimit(scope, ctx, ctx.config.apiKeyFailureRateLimitPerMinute, apiKeyFailureRateLimitKey, (_request, context) =>
    new AppError('RATE_LIMITED', `more than ${context.max} requests without a valid API key in a minute from this address; retry in ${context.after}`),
  );
}

/** Who an admin request counts against: the operator the guard identified (request.adminActor), else its address. */
export function adminRateLimitKey(request: FastifyRequest): string {
  const actor = request.adminActor;
  return actor === null ? `admin-address:${normalizeIP(request.ip)}` : `admin-operator:${actor.id}`;
}

/** The admin limiter, for the guard to call once it knows the caller; null when ADMIN_RATE_LIMIT_PER_MINUTE is 0. */
export function registerAdminRateLimit(scope: FastifyInstance, ctx: AppContext): Promise<CallerRateLimit | null> {
  return registerCallerRateLimit(scope, ctx, ctx.config.adminRateLimitPerMinute, adminRateLimitKey, rateLimited);
}

/** Limits every route registered after it in `scope` (GET /health) per client address, in this process's memory. */
export async function registerHealthRateLimit(scope: FastifyInstance, ctx: AppContext): Promise<void> {
  const max = ctx.config.healthRateLimitPerMinute;
  if (max === 0) return;
  await scope.register(rateLimit, {
    global: true,
    hook: 'onRequest',
    timeWindow: RATE_LIMIT_WINDOW_MS,
    keyGenerator: (request) => `health-address:${normalizeIP(request.ip)}`,
    max,
    store: memoryStore(ctx.clock),
    errorResponseBuilder: rateLimited,
  });
}

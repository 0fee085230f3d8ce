// Merchant authentication (X-Api-Key), run before the body is even parsed so a bad key costs nothing. A request it
// refuses counts against its client address before the 401 (decision 224): the 401 carries the X-RateLimit-* headers,
// and over the limit the answer is 429. A valid key never counts there: its merchant's own limit follows (decision 93).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { keyUseRecorder } from '../core/merchants/api-keys.js';
import { authenticate, type Authenticated } from '../core/merchants/merchants.js';
import type { AppContext } from '../core/context.js';
import { AppError } from '../domain/errors.js';
import type { CallerRateLimit } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    merchant: Authenticated | null;
  }
}

/** `limitRefused`: counts a refused request against its address, throwing the 429; null: refusals are not limited. */
export function registerMerchantAuth(app: FastifyInstance, ctx: AppContext, limitRefused: CallerRateLimit | null): void {
  app.decorateRequest('merchant', null);
  // The key row is read for every request (grouped with concurrent ones, never cached): a revoked key is refused at
  // once, in every process.
  const recordUse = keyUseRecorder(ctx.pool, ctx.clock, ctx.log);
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers['x-api-key'];
    const key = Array.isArray(header) ? header[0] : header;
    const merchant = await authenticate(ctx.groupCommits.keyLookups, ctx.config, key?.trim());
    if (!merchant) {
      await limitRefused?.(request, reply);
      throw new AppError('UNAUTHORIZED', key ? 'The API key is not valid' : 'Missing X-Api-Key header');
    }
    request.merchant = merchant;
    recordUse(merchant);
  });
}

/** The authenticated merchant; routes behind registerMerchantAuth always have one. */
export function merchantOf(request: FastifyRequest): Authenticated {
  if (!request.merchant) throw new AppError('UNAUTHORIZED', 'Missing X-Api-Key header');
  return request.merchant;
}

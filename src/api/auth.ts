// Merchant authentication (X-Api-Key), run before the body is even parsed so a bad key costs nothing.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { keyUseRecorder } from '../core/api-keys.js';
import { authenticate, type Authenticated } from '../core/merchants.js';
import type { AppContext } from '../core/context.js';
import { AppError } from '../domain/errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    merchant: Authenticated | null;
  }
}

export function registerMerchantAuth(app: FastifyInstance, ctx: AppContext): void {
  app.decorateRequest('merchant', null);
  // The key row is read for every request (grouped with concurrent ones, never cached): a revoked key is refused at
  // once, in every process.
  const recordUse = keyUseRecorder(ctx.pool, ctx.clock, ctx.log);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const header = request.headers['x-api-key'];
    const key = Array.isArray(header) ? header[0] : header;
    const merchant = await authenticate(ctx.groupCommits.keyLookups, ctx.config, key?.trim());
    if (!merchant) throw new AppError('UNAUTHORIZED', key ? 'The API key is not valid' : 'Missing X-Api-Key header');
    request.merchant = merchant;
    recordUse(merchant);
  });
}

/** The authenticated merchant; routes behind registerMerchantAuth always have one. */
export function merchantOf(request: FastifyRequest): Authenticated {
  if (!request.merchant) throw new AppError('UNAUTHORIZED', 'Missing X-Api-Key header');
  return request.merchant;
}

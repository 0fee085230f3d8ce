// Merchant authentication (X-Api-Key), run before the body is even parsed so a bad key costs nothing.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authenticate, type Merchant } from '../core/merchants.js';
import type { AppContext } from '../core/context.js';
import { AppError } from '../domain/errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    merchant: Merchant | null;
  }
}

export function registerMerchantAuth(app: FastifyInstance, ctx: AppContext): void {
  app.decorateRequest('merchant', null);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const header = request.headers['x-api-key'];
    const key = Array.isArray(header) ? header[0] : header;
    const merchant = await authenticate(ctx.pool, ctx.config, key?.trim());
    if (!merchant) throw new AppError('UNAUTHORIZED', key ? 'The API key is not valid' : 'Missing X-Api-Key header');
    request.merchant = merchant;
  });
}

/** The authenticated merchant; routes behind registerMerchantAuth always have one. */
export function merchantOf(request: FastifyRequest): Merchant {
  if (!request.merchant) throw new AppError('UNAUTHORIZED', 'Missing X-Api-Key header');
  return request.merchant;
}

// Builds the Fastify app (tests use inject()); src/runtime.ts owns listening and graceful shutdown.
import swagger from '@fastify/swagger';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { AppContext } from '../core/context.js';
import { authenticateOperator } from '../core/operators/operators.js';
import { registerAdminGuard } from './admin-guard.js';
import { registerRefusalAudit } from './audit.js';
import { registerStorableInput } from './storable-input.js';
import { registerMerchantAuth } from './auth.js';
import { registerAdminRateLimit, registerApiKeyFailureRateLimit, registerHealthRateLimit, registerMerchantRateLimit } from './rate-limit.js';
import { registerServedOrigin } from './served-origin.js';
import { handleClientError } from './client-errors.js';
import { chainSchemaFor } from './schemas/common.js';
import { errorResponseSchema, registerErrorHandling, sendError } from './errors.js';
import { registerDocs } from './docs.js';
import { registerRequestTracing } from './tracing.js';
import { swaggerOptions } from './openapi/document.js';
import { ROUTE_PARAM_CHARS_MAX } from '../bounds.js';
import { adminRoutes } from './routes/admin.js';
import { policyAdminRoutes } from './routes/admin-policies.js';
import { adminEventRoutes } from './routes/admin-events.js';
import { adminOperationRoutes } from './routes/admin-operations.js';
import { adminDepositRoutes } from './routes/admin-deposits.js';
import { adminBooksRoutes } from './routes/admin-books.js';
import { adminExportRoutes } from './routes/admin-exports.js';
import { adminAuditRoutes } from './routes/admin-audit.js';
import { adminPaymentRoutes } from './routes/admin-payments.js';
import { adminStatusRoutes } from './routes/admin-statuses.js';
import { adminTreasuryOpsRoutes } from './routes/admin-treasury-ops.js';
import { healthRoutes, type Readiness } from './routes/health.js';
import { metricsRoute, registerHttpMetrics } from './routes/metrics.js';
import { consoleRoutes } from './routes/console.js';
import { paymentIntentRoutes } from './routes/payment-intents.js';
import { quoteRoutes } from './routes/quotes.js';
import { lazyRequestLogger } from './request-logger.js';
import { payoutBatchRoutes } from './routes/payout-batches.js';
import { routesDebugRoutes } from './routes/routes-debug.js';
import { webhookRoutes } from './routes/webhooks.js';

/** Request bodies are small JSON documents; anything larger is refused with 413. */
export const BODY_LIMIT_BYTES = 64 * 1024;

export interface AppOptions {
  /** Serve the merchant API and /health. */
  merchant: boolean;
  /** Serve /admin/*. */
  admin: boolean;
  readiness: Readiness;
}

export async function buildApp(ctx: AppContext, options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: ctx.log.child({ component: 'http' }) as FastifyBaseLogger,
    childLoggerFactory: lazyRequestLogger,
    bodyLimit: BODY_LIMIT_BYTES,
    // Bodies are validated as sent: "10" is not an amount. Defaults come from our code, not from the schema. Every
    // issue is collected so that the error handler answers the one about the earliest field (bodies are capped small).
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: true } },
    return503OnClosing: true,
    routerOptions: { maxParamLength: ROUTE_PARAM_CHARS_MAX },
    // Errors the router raises before any route runs (bad URL encoding, over-long parameters) use our body too.
    frameworkErrors: (error, _request, reply) => {
      const status = error.statusCode === 414 ? 414 : 400;
      return sendError(reply, status, status === 414 ? 'URI_TOO_LONG' : 'INVALID_REQUEST', error.message);
    },
    clientErrorHandler: handleClientError,
    http: { requireHostHeader: false }, // Node's own refusal has an empty body; errors.ts answers in ours (decision 84)
    connectionTimeout: 30_000,
    requestTimeout: 30_000,
  });
  app.addSchema(errorResponseSchema);
  app.addSchema(chainSchemaFor(ctx.config.chainNames));
  // JSON only: a text/plain body is refused with 415 rather than parsed into a string.
  app.removeContentTypeParser('text/plain');
  // An empty body with a JSON content type means "no body" (POST /webhooks/test), not malformed JSON.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (typeof body === 'string' && body.trim() === '') return done(null, undefined);
    return parseJson(request, body.toString(), done);
  });
  registerServedOrigin(app);
  registerErrorHandling(app);
  registerHttpMetrics(app, ctx);
  registerRequestTracing(app);
  await app.register(swagger, swaggerOptions);

  // GET /health, on every listener, limited per client address (decision 217).
  await app.register(async (healthScope) => {
    await registerHealthRateLimit(healthScope, ctx);
    healthRoutes(healthScope, ctx, options.readiness);
  });
  if (options.merchant) {
    await registerDocs(app);
    await app.register(async (merchantScope) => {
      // Refused keys count per address (decision 224), accepted ones per merchant (decision 93).
      registerMerchantAuth(merchantScope, ctx, await registerApiKeyFailureRateLimit(merchantScope, ctx));
      await registerMerchantRateLimit(merchantScope, ctx);
      quoteRoutes(merchantScope, ctx);
      paymentIntentRoutes(merchantScope, ctx);
      payoutBatchRoutes(merchantScope, ctx);
      routesDebugRoutes(merchantScope, ctx);
      webhookRoutes(merchantScope, ctx);
    });
  }
  if (options.admin) {
    if (ctx.config.production && ctx.config.adminToken === null) {
      ctx.log.info('ADMIN_TOKEN is not set: admin routes other than the spec\'s four need an operator token (`stableroute operators create`)');
    }
    await app.register(async (adminScope) => {
      registerAdminGuard(adminScope, {
        allowedHosts: ctx.config.adminAllowedHosts,
        listenHost: options.merchant ? ctx.config.host : ctx.config.adminHost,
        adminToken: ctx.config.adminToken,
        production: ctx.config.production,
        publicListener: options.merchant,
        exposeOpenEndpoints: ctx.config.adminExposeOpenEndpoints,
        authenticate: (token) => authenticateOperator(ctx.pool, ctx.config, token),
        limit: await registerAdminRateLimit(adminScope, ctx),
      });
      registerRefusalAudit(adminScope, ctx);
      registerStorableInput(adminScope);
      adminRoutes(adminScope, ctx);
      policyAdminRoutes(adminScope, ctx);
      adminPaymentRoutes(adminScope, ctx);
      adminStatusRoutes(adminScope);
      adminOperationRoutes(adminScope, ctx);
      adminDepositRoutes(adminScope, ctx);
      adminBooksRoutes(adminScope, ctx);
      adminEventRoutes(adminScope, ctx);
      adminTreasuryOpsRoutes(adminScope, ctx);
      adminAuditRoutes(adminScope, ctx);
      adminExportRoutes(adminScope, ctx);
      metricsRoute(adminScope, ctx);
      consoleRoutes(adminScope);
    });
  }

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.ready();
  return app;
}

// What the linters clients run on /openapi.json ask for (Spectral's `spectral:oas` and the OWASP API security ruleset,
// decision 211), said about the service as it is: nothing here changes validation, a status code or a field. Every
// operation gets an operationId (SDK method names), the credentials it needs, the shared error body for 401, 429 and
// 500 where it can answer them, the rate-limit and Access-Control-Allow-Origin headers it sends (decision 217), and
// bounds on every string, list and integer: the route schema's own where it has one, else a bound the service's edge
// already enforces or a documented ceiling (bounds.ts).
import { OPENAPI_LIST_ITEMS_MAX, OPENAPI_TEXT_CHARS_MAX, ROUTE_PARAM_CHARS_MAX } from '../../bounds.js';
import { ERROR_CODES } from '../../domain/errors.js';
import { PAYMENT_STATUSES } from '../../domain/payment-intent.js';
import { adminAccessOf } from '../admin-access.js';
import { RATE_LIMIT_WINDOW_MS } from '../rate-limit.js';
import { isObject, type JsonObject } from './openapi-30.js';

export const ADMIN_TOKEN_SCHEME = 'adminToken';
const JSON_MEDIA = 'application/json';
const ERROR_REF = '#/components/schemas/Error';
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const SAFE_INTEGER = { minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER };

export const ADMIN_TOKEN_SCHEME_OBJECT = {
  type: 'http',
  scheme: 'bearer',
  description:
    'An operator token (`stableroute operators create`) or ADMIN_TOKEN. Required in production; in development only from a peer other than loopback',
};

/** SDK method names for the merchant operations; the others are named from their method and path. */
const MERCHANT_OPERATION_IDS: Readonly<Record<string, string>> = {
  'post /quotes': 'createQuote',
  'post /payment_intents': 'createPaymentIntent',
  'get /payment_intents/{id}': 'getPaymentIntent',
  'post /payout_batches': 'createPayoutBatch',
  'get /payout_batches/{id}': 'getPayoutBatch',
  'get /routes/debug/{id}': 'getRouteDebug',
  'post /webhooks/test': 'sendTestWebhook',
};

const VERBS: Readonly<Record<string, string>> = { get: 'get', post: 'post', put: 'put', delete: 'delete', patch: 'patch' };

function camel(words: string[]): string {
  return words.map((word, i) => (i === 0 ? word : word.charAt(0).toUpperCase() + word.slice(1))).join('');
}

/** `post /admin/payments/{id}/refund` -> `postAdminPaymentsByIdRefund`: unique, since method and path are. */
export function operationIdOf(method: string, path: string): string {
  const named = MERCHANT_OPERATION_IDS[`${method} ${path}`];
  if (named !== undefined) return named;
  const words = [VERBS[method] ?? method];
  for (const segment of path.split('/').filter((s) => s !== '')) {
    const parameter = /^\{(.+)\}$/.exec(segment);
    words.push(...(parameter ? ['by', ...parameter[1]!.split(/[^A-Za-z0-9]+/)] : segment.split(/[^A-Za-z0-9]+/)));
  }
  return camel(words.filter((w) => w !== '').map((w) => w.toLowerCase()));
}

type Side = 'request' | 'response' | 'path';

/** Bounds on one schema and everything nested in it, where the route schema left them out. */
function bound(schema: unknown, side: Side): void {
  if (!isObject(schema)) return;
  const bounded = 'enum' in schema || 'const' in schema;
  if (schema.type === 'string' && !bounded && schema.maxLength === undefined) {
    schema.maxLength = side === 'path' ? ROUTE_PARAM_CHARS_MAX : OPENAPI_TEXT_CHARS_MAX;
  }
  if (schema.type === 'array' && schema.maxItems === undefined) schema.maxItems = OPENAPI_LIST_ITEMS_MAX;
  // The service's maps are keyed by a payment status (counts by status): at most one entry per status.
  if (schema.type === 'object' && isObject(schema.additionalProperties)) schema.maxProperties ??= PAYMENT_STATUSES.length;
  if (schema.type === 'integer') {
    // JSON numbers are JavaScript numbers here: no integer outside the safe range survives the trip.
    schema.format ??= 'int64';
    schema.minimum ??= SAFE_INTEGER.minimum;
    schema.maximum ??= SAFE_INTEGER.maximum;
  }
  if (isObject(schema.properties)) for (const property of Object.values(schema.properties)) bound(property, side);
  for (const key of ['items', 'additionalProperties', 'not']) bound(schema[key], side);
  for (const key of ['allOf', 'anyOf', 'oneOf']) {
    if (Array.isArray(schema[key])) for (const member of schema[key] as unknown[]) bound(member, side);
  }
}

function mediaSchemas(holder: unknown): Array<[string, unknown]> {
  if (!isObject(holder) || !isObject(holder.content)) return [];
  return Object.entries(holder.content).map(([type, media]) => [type, isObject(media) ? media.schema : undefined]);
}

/** A streamed export (text/csv) is as long as its period's rows: no length bound but the safe integer. */
function boundStream(schema: unknown): void {
  if (isObject(schema) && schema.type === 'string') schema.maxLength ??= Number.MAX_SAFE_INTEGER;
}

function errorResponse(description: string, examples?: JsonObject): JsonObject {
  return { description, content: { [JSON_MEDIA]: { schema: { $ref: ERROR_REF }, ...(examples && { examples }) } } };
}

const INTERNAL_ERROR_EXAMPLES = {
  internal_error: {
    summary: 'INTERNAL_ERROR',
    value: { statusCode: 500, error: 'Internal Server Error', message: 'An internal error occurred; it has been logged.', code: 'INTERNAL_ERROR' },
  },
};

function header(description: string, schema: JsonObject): JsonObject {
  return { description, schema };
}

/** What served-origin.ts sends on every answer (decision 217). */
const SERVED_ORIGIN = header(
  'The origin this answer was served from (scheme and Host). The service offers no cross-origin access: a page of any other origin cannot read the answer',
  { type: 'string', format: 'uri', maxLength: OPENAPI_TEXT_CHARS_MAX },
);

type Limiter = 'merchant' | 'apiKeyFailure' | 'admin' | 'health';

/** Whom each limit counts (src/api/rate-limit.ts, decisions 93, 217 and 224), and when its headers are absent. */
const LIMIT_WORDS: Readonly<Record<Limiter, { limit: string; absent: string }>> = {
  merchant: {
    limit: 'Requests the merchant may make per minute (its own limit, or RATE_LIMIT_PER_MINUTE)',
    absent: 'absent when the merchant has no limit',
  },
  apiKeyFailure: {
    limit: 'Requests without a valid API key the client address may make per minute (API_KEY_FAILURE_RATE_LIMIT_PER_MINUTE)',
    absent: 'absent when API_KEY_FAILURE_RATE_LIMIT_PER_MINUTE is 0',
  },
  admin: {
    limit: 'Requests per minute the operator (its token), or the client address without one, may make (ADMIN_RATE_LIMIT_PER_MINUTE)',
    absent: 'absent when ADMIN_RATE_LIMIT_PER_MINUTE is 0',
  },
  health: {
    limit: 'Requests per minute the client address may make to the process that answers (HEALTH_RATE_LIMIT_PER_MINUTE)',
    absent: 'absent when HEALTH_RATE_LIMIT_PER_MINUTE is 0',
  },
};

/** What @fastify/rate-limit sends on a limited operation's answers. */
function rateLimitHeaders(limiter: Limiter): JsonObject {
  const count = { type: 'integer', format: 'int64', minimum: 0, maximum: SAFE_INTEGER.maximum };
  const { limit, absent } = LIMIT_WORDS[limiter];
  return {
    'X-RateLimit-Limit': header(`${limit}; ${absent}`, count),
    'X-RateLimit-Remaining': header(`Requests left in the current minute; ${absent}`, count),
    'X-RateLimit-Reset': header(`Seconds until the current minute ends; ${absent}`, { ...count, maximum: RATE_LIMIT_WINDOW_MS / 1000 }),
  };
}

/** The 429 of an admin route or /health (the merchant operations document theirs in merchant-examples.ts). */
function rateLimitedResponse(limiter: Limiter): JsonObject {
  const seconds = { type: 'integer', format: 'int64', minimum: 1, maximum: RATE_LIMIT_WINDOW_MS / 1000 };
  return {
    ...errorResponse(`More requests in a minute than the limit: ${LIMIT_WORDS[limiter].limit}`, {
      rate_limited: {
        summary: 'RATE_LIMITED',
        value: { statusCode: 429, error: 'Too Many Requests', message: 'more than 600 requests in a minute; retry in 42 seconds', code: 'RATE_LIMITED' },
      },
    }),
    headers: { 'Retry-After': header('Seconds until the next minute opens', seconds) },
  };
}

function limiterOf(path: string, operation: JsonObject): Limiter | null {
  if (Array.isArray(operation.tags) && operation.tags.includes('merchant')) return 'merchant';
  if (path.startsWith('/admin')) return 'admin';
  if (path === '/health') return 'health';
  return null;
}

/** Path and method as admin-access.ts knows them (`/admin/payments/:id`). */
function accessOf(method: string, path: string): ReturnType<typeof adminAccessOf> | null {
  if (!path.startsWith('/admin')) return null;
  return adminAccessOf(method.toUpperCase(), path.replace(/\{([^}]+)\}/g, ':$1'));
}

function finishOperation(method: string, path: string, operation: JsonObject): void {
  operation.operationId = operationIdOf(method, path);
  const responses = isObject(operation.responses) ? operation.responses : {};
  const access = accessOf(method, path);
  if (access === 'open' || access === 'page') {
    operation.security = [{}]; // no credentials (spec, Authentication 5)
  } else if (access !== null) {
    operation.security = [{ [ADMIN_TOKEN_SCHEME]: [] }];
    responses['401'] ??= errorResponse('Authorization: Bearer is missing, or not an active operator\'s token');
    responses['403'] ??= errorResponse('The operator\'s role may not do this, or the request came from another site or Host');
  }
  const parameters = Array.isArray(operation.parameters) ? operation.parameters : [];
  const validated = operation.requestBody !== undefined || parameters.some((p) => isObject(p) && p.in === 'query');
  // Its schema validates a body or a query: a route that has no 400 of its own still answers one for a bad value.
  if (validated && responses['400'] === undefined) responses['400'] = errorResponse('A value does not match the route\'s schema');
  responses['500'] ??= errorResponse('An unexpected failure, logged by the service', INTERNAL_ERROR_EXAMPLES);
  const limiter = limiterOf(path, operation);
  if (limiter !== null) responses['429'] ??= rateLimitedResponse(limiter);
  for (const [status, response] of Object.entries(responses)) {
    if (!isObject(response)) continue;
    const headers = isObject(response.headers) ? response.headers : {};
    // The limiter runs before the route, so its answers carry the headers; a 5xx may come before it counted. A merchant
    // 401 names no merchant: it carries the headers of the count of refusals by address (decision 224).
    const answeredBy = limiter === 'merchant' && status === '401' ? 'apiKeyFailure' : limiter;
    if (answeredBy !== null && /^[24]/.test(status)) Object.assign(headers, { ...rateLimitHeaders(answeredBy), ...headers });
    headers['Access-Control-Allow-Origin'] ??= SERVED_ORIGIN;
    response.headers = headers;
    for (const h of Object.values(headers)) if (isObject(h)) bound(h.schema, 'response');
    for (const [type, schema] of mediaSchemas(response)) {
      if (type === JSON_MEDIA) bound(schema, 'response');
      else boundStream(schema);
    }
  }
  for (const parameter of parameters) if (isObject(parameter)) bound(parameter.schema, parameter.in === 'path' ? 'path' : 'request');
  for (const [, schema] of mediaSchemas(operation.requestBody)) bound(schema, 'request');
}

/** The document, finished in place for the linters: see the file's comment. */
export function makeLintReady(document: JsonObject): void {
  const components = isObject(document.components) ? document.components : {};
  const schemes = isObject(components.securitySchemes) ? components.securitySchemes : {};
  schemes[ADMIN_TOKEN_SCHEME] = ADMIN_TOKEN_SCHEME_OBJECT;
  components.securitySchemes = schemes;
  if (isObject(components.schemas)) {
    for (const schema of Object.values(components.schemas)) bound(schema, 'response');
    // Clients branch on the error's code (docs/errors.md): say which codes there are.
    const error = components.schemas.Error;
    if (isObject(error) && isObject(error.properties) && isObject(error.properties.code)) {
      error.properties.code = { type: 'string', enum: Object.keys(ERROR_CODES) };
    }
  }
  document.components = components;
  const paths = isObject(document.paths) ? document.paths : {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    for (const method of METHODS) if (isObject(item[method])) finishOperation(method, path, item[method]);
  }
}

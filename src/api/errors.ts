// One error handler for every route: every error leaves as {statusCode, error, message, code}. Client mistakes get a
// precise 4xx; a database outage a 503; anything unexpected is logged with its detail and answered with a bare 500.
import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { outageError } from '../core/health/availability.js';
import { AppError, ERROR_CODES, type ErrorCode } from '../domain/errors.js';
import { AmountError } from '../money.js';

export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
  code: string;
}

export function errorBody(statusCode: number, code: string, message: string): ErrorBody {
  return { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', message, code };
}

export const errorResponseSchema = {
  $id: 'Error',
  type: 'object',
  required: ['statusCode', 'error', 'message', 'code'],
  properties: {
    statusCode: { type: 'number' },
    error: { type: 'string' },
    message: { type: 'string' },
    code: { type: 'string' },
  },
} as const;

/**
 * Per-route map from a field (or '' for the whole body/params) to the code its validation failure answers with.
 * A 'field:keyword' entry (e.g. 'idempotency_key:pattern') overrides the field's code for that one rule.
 */
export type ValidationCodes = Record<string, ErrorCode>;

declare module 'fastify' {
  interface FastifyContextConfig {
    validationCodes?: ValidationCodes;
    /** A fixed message for a code, where the schema rule behind it reads badly (an `anyOf`, say). */
    validationMessages?: Partial<Record<ErrorCode, string>>;
  }
}

const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'INVALID_REQUEST',
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
};

interface ValidationIssue {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

/** The top-level field an issue is about ('' for the whole body or params). */
function fieldOf(issue: ValidationIssue): string {
  const field =
    issue.keyword === 'required'
      ? [issue.instancePath.split('/')[1], issue.params.missingProperty].filter(Boolean)[0]
      : issue.instancePath.split('/')[1];
  return String(field ?? '');
}

function validationCode(issue: ValidationIssue, codes: ValidationCodes | undefined): ErrorCode {
  const name = fieldOf(issue);
  return codes?.[`${name}:${issue.keyword}`] ?? codes?.[name] ?? codes?.[''] ?? 'INVALID_REQUEST';
}

/**
 * Ajv collects every issue; the one answered is about the earliest field in the schema's property order (the spec's
 * field order), so `{"amount_usd": -1}` is INVALID_AMOUNT whatever else is missing. Ajv's own order would put every
 * missing required field first.
 */
function firstIssue(issues: ValidationIssue[], schema: unknown): ValidationIssue {
  const order = Object.keys((schema as { properties?: object } | undefined)?.properties ?? {});
  const rank = (issue: ValidationIssue) => {
    const field = fieldOf(issue);
    return field === '' ? -1 : order.includes(field) ? order.indexOf(field) : order.length;
  };
  return issues.reduce((best, issue) => (rank(issue) < rank(best) ? issue : best));
}

function validationMessage(issue: ValidationIssue, context: string | undefined): string {
  const where = `${context ?? 'body'}${issue.instancePath.replaceAll('/', '.')}`;
  if (issue.keyword === 'required') return `${where}.${String(issue.params.missingProperty)} is required`;
  return `${where} ${issue.message ?? 'is invalid'}`;
}

export function sendError(reply: FastifyReply, statusCode: number, code: string, message: string): FastifyReply {
  return reply.code(statusCode).type('application/json').send(errorBody(statusCode, code, message));
}

const MISSING_HOST_MESSAGE = 'An HTTP/1.1 request must carry a Host header';

/**
 * RFC 9112 3.2: a server answers 400 to an HTTP/1.1 request without Host. Node does it itself unless told not to, with
 * an empty body, so the server is told not to (app.ts) and the refusal is made here, first of every hook, in the
 * spec's body; the connection closes as Node's would (decision 84). HTTP/1.0 has no Host to require.
 */
function refuseMissingHost(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    const { httpVersionMajor, httpVersionMinor } = request.raw;
    if (httpVersionMajor === 1 && httpVersionMinor >= 1 && request.headers.host === undefined) {
      return sendError(reply.header('connection', 'close'), 400, 'MALFORMED_REQUEST', MISSING_HOST_MESSAGE);
    }
  });
}

export function registerErrorHandling(app: FastifyInstance): void {
  refuseMissingHost(app);
  app.setErrorHandler((error: FastifyError & { validationContext?: string }, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof AppError) {
      if (error.statusCode >= 500) request.log.error({ err: error }, error.message);
      return sendError(reply, error.statusCode, error.code, error.message);
    }
    if (error instanceof AmountError) return sendError(reply, 400, 'INVALID_AMOUNT', error.message);
    if (error.validation && error.validation.length > 0) {
      const context = error.validationContext ?? 'body';
      const schema = (request.routeOptions.schema as Record<string, unknown> | undefined)?.[context];
      const issue = firstIssue(error.validation as ValidationIssue[], schema);
      const { validationCodes, validationMessages } = request.routeOptions.config;
      const code = validationCode(issue, validationCodes);
      const message = validationMessages?.[code] ?? validationMessage(issue, context);
      return sendError(reply, ERROR_CODES[code], code, message);
    }
    const mapped = error.code ? FASTIFY_CODES[error.code] : undefined;
    if (mapped) return sendError(reply, ERROR_CODES[mapped], mapped, error.message);
    if (error.statusCode === 414) return sendError(reply, 414, 'URI_TOO_LONG', 'The request URL is too long');
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      return sendError(reply, error.statusCode, 'INVALID_REQUEST', error.message);
    }
    // An outage answers 503, which a client retries, not the 500 of a bug; its detail stays in the logs.
    const outage = outageError(error);
    if (outage) {
      request.log.warn({ err: error }, 'database unavailable');
      return sendError(reply.header('retry-after', '1'), outage.statusCode, outage.code, outage.message);
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, 500, 'INTERNAL_ERROR', 'An internal error occurred; it has been logged.');
  });

  app.setNotFoundHandler((request, reply) =>
    sendError(reply, 404, 'NOT_FOUND', `Route ${request.method} ${request.url.split('?')[0]} not found`),
  );
}

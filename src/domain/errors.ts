// Stable error codes. Never renamed once shipped; each is documented in docs/errors.md (a test checks it).
// Handlers branch on codes, never on message text.

export const ERROR_CODES = {
  // From the spec.
  INVALID_AMOUNT: 400,
  MISSING_DESTINATION: 400,
  INVALID_PRIORITY: 400,
  MISSING_QUOTE_ID: 400,
  MISSING_IDEMPOTENCY_KEY: 400,
  QUOTE_EXPIRED: 400,
  INSUFFICIENT_BALANCE: 400,
  UNAUTHORIZED: 401,
  // Decided where the spec says "not shown" (docs/decisions.md).
  INVALID_DESTINATION: 400,
  INVALID_REQUEST: 400,
  INVALID_JSON: 400,
  INVALID_CHAIN: 400,
  INVALID_TOKEN: 400,
  INVALID_HEALTH_STATUS: 400,
  INVALID_CHAIN_HEALTH: 400,
  INVALID_QUOTE_ID: 400,
  INVALID_IDEMPOTENCY_KEY: 400,
  MALFORMED_REQUEST: 400,
  // Payout batches (issue 28).
  TOO_MANY_ITEMS: 400,
  PAYOUT_BATCH_NOT_FOUND: 404,
  HOST_NOT_ALLOWED: 403,
  CROSS_SITE_REQUEST: 403,
  ADMIN_NOT_EXPOSED: 403,
  FORBIDDEN: 403,
  SELF_APPROVAL: 403,
  NAMED_OPERATOR_REQUIRED: 403,
  // Operator endpoints behind the console (decisions 104, 108, 126).
  INVALID_RESOLUTION: 400,
  INVALID_FILTER: 400,
  INVALID_CURSOR: 400,
  QUOTE_NOT_FOUND: 404,
  PAYMENT_INTENT_NOT_FOUND: 404,
  WITHDRAWAL_NOT_FOUND: 404,
  NOT_FOUND: 404,
  MERCHANT_NOT_FOUND: 404,
  ADDRESS_NOT_FOUND: 404,
  API_KEY_NOT_FOUND: 404,
  OPERATOR_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  IDEMPOTENCY_KEY_REUSED: 409,
  INVALID_STATE: 409,
  TRANSFER_MAY_STILL_LAND: 409,
  // Screening that fails safe (issue 35).
  REPLACEMENT_SCREENED: 409,
  SCREENING_OVERRIDE_PENDING: 409,
  // Books behind the chain after a database failover (issue 36).
  CHAIN_HELD: 409,
  FOREIGN_DECLARATION_PENDING: 409,
  PAYLOAD_TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  UNSUPPORTED_MEDIA_TYPE: 415,
  NO_ROUTE_AVAILABLE: 422,
  WEBHOOK_URL_NOT_CONFIGURED: 422,
  POLICY_MAX_PAYMENT_EXCEEDED: 422,
  POLICY_DAILY_LIMIT_EXCEEDED: 422,
  RECIPIENT_NOT_ALLOWED: 422,
  RECIPIENT_COOLING_OFF: 422,
  RECIPIENT_SCREENED: 422,
  WEBHOOK_ENDPOINT_DISABLED: 422,
  RATE_LIMITED: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  CHAIN_ERROR: 502,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** A failure the client can act on. The message is public; internal detail goes to `cause` and the logs only. */
export class AppError extends Error {
  override readonly name = 'AppError';
  readonly statusCode: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    options: { cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(message, { cause: options.cause });
    this.statusCode = ERROR_CODES[code];
    this.details = options.details;
  }
  readonly details: Record<string, unknown> | undefined;
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

// Request and response examples of every merchant endpoint, for /openapi.json. Values are what the service answers
// (ids, numbers and messages taken from real replies); test/api/openapi.test.ts checks each one against its schema
// and each error example against the error code table.
import type { ErrorCode } from '../../domain/errors.js';
import { ERROR_CODES } from '../../domain/errors.js';
import { errorBody } from '../errors.js';

export interface Example {
  summary: string;
  value: unknown;
}

export interface ResponseDoc {
  description: string;
  examples: Record<string, Example>;
  /** Response headers, as OpenAPI Header Objects. */
  headers?: Record<string, unknown>;
}

export interface OperationDoc {
  /** Path parameter name -> example value. */
  parameters?: Record<string, string>;
  /** Named examples of the JSON request body. */
  request?: Record<string, Example>;
  /** Status -> response. An error status the route schema does not list is added with the shared Error body. */
  responses: Record<string, ResponseDoc>;
}

const SOLANA_ADDRESS = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const ETHEREUM_ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';
const QUOTE_ID = 'quo_ex7eakk7t1xsq9e7';
const INTENT_ID = 'pi_z2naznfs5m5hapyr';
const CREATED_AT = '2026-03-01T12:00:00.605Z';
const PAYOUT_BATCH_ID = 'pob_3kq8v0x2m7dj4c1t';

function error(code: ErrorCode, message: string): Example {
  return { summary: code, value: errorBody(ERROR_CODES[code], code, message) };
}

const UNAUTHORIZED: ResponseDoc = {
  description: 'X-Api-Key is missing or not a valid key',
  examples: {
    missing: error('UNAUTHORIZED', 'Missing X-Api-Key header'),
    invalid: error('UNAUTHORIZED', 'The API key is not valid'),
  },
};

const PAYLOAD_TOO_LARGE: ResponseDoc = {
  description: 'The body is larger than 64 KiB',
  examples: { too_large: error('PAYLOAD_TOO_LARGE', 'Request body is too large') },
};

const UNSUPPORTED_MEDIA_TYPE: ResponseDoc = {
  description: 'The body is not application/json',
  examples: { not_json: error('UNSUPPORTED_MEDIA_TYPE', 'Unsupported Media Type') },
};

const RATE_LIMITED: ResponseDoc = {
  description:
    "More requests in a minute than the merchant's rate limit (RATE_LIMIT_PER_MINUTE, or its own), or, without a valid API key, than its address's (API_KEY_FAILURE_RATE_LIMIT_PER_MINUTE)",
  headers: {
    'Retry-After': { description: 'Seconds until the next window opens', schema: { type: 'integer' } },
    'X-RateLimit-Limit': { description: 'Requests allowed per minute', schema: { type: 'integer' } },
  },
  examples: { rate_limited: error('RATE_LIMITED', 'more than 600 requests in a minute; retry in 42 seconds') },
};

const INTENT_NOT_FOUND: ResponseDoc = {
  description: 'No payment intent with this id belongs to the caller',
  examples: { not_found: error('PAYMENT_INTENT_NOT_FOUND', `payment intent pi_0000000000000000 was not found`) },
};

const candidateRoutes = [
  { chain: 'solana', estimated_fee_usd: 0.00075, estimated_settlement_seconds: 13, reliability_score: 0.99, final_score: 0.891 },
  { chain: 'ethereum', estimated_fee_usd: 1.95, estimated_settlement_seconds: 156, reliability_score: 0.99, final_score: 0.4325 },
];

const scoringDetails = [
  { chain: 'ethereum', fee_score: 0.339, latency_score: 0.2778, reliability_score: 0.99, final_score: 0.4325, disqualified: false, disqualification_reason: null },
  { chain: 'solana', fee_score: 0.9993, latency_score: 0.8219, reliability_score: 0.99, final_score: 0.891, disqualified: false, disqualification_reason: null },
];

const quote = {
  quote_id: QUOTE_ID,
  amount_usd: 25,
  candidate_routes: candidateRoutes,
  recommended_route: 'solana',
  expires_at: '2026-03-01T12:05:00.410Z',
};

const createdIntent = {
  payment_intent_id: INTENT_ID,
  status: 'route_selected',
  amount_usd: 25,
  selected_chain: 'solana',
  destination_address: SOLANA_ADDRESS,
  created_at: CREATED_AT,
};

const settledIntent = {
  id: INTENT_ID,
  merchant_id: 'mer_test',
  amount_usd: 25,
  status: 'settled',
  selected_chain: 'solana',
  destination_address: SOLANA_ADDRESS,
  quote_id: QUOTE_ID,
  idempotency_key: 'order-1042',
  attempts: [
    {
      id: 'att_ez1r6cxfn5nc1x8z',
      chain: 'solana',
      tx_id: '62nyA8U1E8oMHbtjHgwto4TGDkRviq7aQQgoNYqaKHfNhJby9PaTwd4VGB4nv6DeVJik6vGWeYos8bYzrro1SDF2',
      status: 'confirmed',
      estimated_fee_usd: 0.00075,
      actual_fee_native: 0.000005,
      failure_reason: null,
      broadcast_at: '2026-03-01T12:00:00.702Z',
      confirmed_at: '2026-03-01T12:00:13.717Z',
      created_at: '2026-03-01T12:00:00.677Z',
    },
  ],
  ledger_entries: [
    { type: 'reserve', amount: 25, currency: 'USDC', chain: 'solana', created_at: CREATED_AT },
    { type: 'debit', amount: 25, currency: 'USDC', chain: 'solana', created_at: '2026-03-01T12:00:00.677Z' },
    { type: 'fee', amount: 0.000005, currency: 'SOL', chain: 'solana', created_at: '2026-03-01T12:00:13.717Z' },
  ],
  created_at: CREATED_AT,
  updated_at: '2026-03-01T12:00:13.717Z',
};

const healthSnapshots = [
  {
    chain: 'ethereum',
    health_status: 'healthy',
    estimated_fee_usd: 1.95,
    avg_confirmation_seconds: 156,
    rpc_error_rate: 0.01,
    p95_latency_ms: 54,
    congestion_score: 0.29,
    recorded_at: '2026-03-01T11:59:58.078Z',
    status_reason: null,
  },
  {
    chain: 'solana',
    health_status: 'healthy',
    estimated_fee_usd: 0.00075,
    avg_confirmation_seconds: 13,
    rpc_error_rate: 0.01,
    p95_latency_ms: 37,
    congestion_score: 0.13,
    recorded_at: '2026-03-01T11:59:58.101Z',
    status_reason: null,
  },
];

export const MERCHANT_OPERATIONS: Record<string, OperationDoc> = {
  'post /quotes': {
    request: {
      solana: {
        summary: 'Pay $25 to a Solana address, fastest route',
        value: { amount_usd: 25, destination: { solana_address: SOLANA_ADDRESS }, priority: 'fast' },
      },
      either_chain: {
        summary: 'Let the cheapest chain take it: both addresses given',
        value: { amount_usd: 1250.5, destination: { ethereum_address: ETHEREUM_ADDRESS, solana_address: SOLANA_ADDRESS }, priority: 'low_fee' },
      },
    },
    responses: {
      201: { description: 'The quote: scored routes, best first, valid for 5 minutes', examples: { quote: { summary: 'Solana recommended', value: quote } } },
      400: {
        description: 'The request is malformed or cannot be paid',
        examples: {
          invalid_amount: error('INVALID_AMOUNT', 'body.amount_usd must be > 0'),
          missing_destination: error('MISSING_DESTINATION', 'destination.ethereum_address or destination.solana_address is required'),
          invalid_priority: error('INVALID_PRIORITY', 'body.priority must be equal to one of the allowed values'),
          invalid_destination: error(
            'INVALID_DESTINATION',
            'destination.ethereum_address is not a valid ethereum recipient (an address, not the treasury)',
          ),
          insufficient_balance: error('INSUFFICIENT_BALANCE', 'treasury funds are insufficient for this amount on every requested chain'),
          invalid_json: error('INVALID_JSON', "Body is not valid JSON but content-type is set to 'application/json'"),
        },
      },
      401: UNAUTHORIZED,
      429: RATE_LIMITED,
      413: PAYLOAD_TOO_LARGE,
      415: UNSUPPORTED_MEDIA_TYPE,
      422: {
        description:
          "No requested chain can take the payment now (unhealthy, or its treasury cannot pay the fee), the amount is above the merchant's per-payment maximum, or a destination is refused by sanctions screening",
        examples: {
          no_route: error('NO_ROUTE_AVAILABLE', 'no requested chain can take this payment right now (solana: unhealthy)'),
          max_payment: error('POLICY_MAX_PAYMENT_EXCEEDED', "amount 2500 USD is above this merchant's per-payment maximum of 1000 USD"),
          recipient_screened: error('RECIPIENT_SCREENED', 'the recipient on ethereum is refused by sanctions screening'),
        },
      },
    },
  },

  'post /payment_intents': {
    request: {
      create: { summary: 'Pay out a quote; the key names this payment', value: { quote_id: QUOTE_ID, idempotency_key: 'order-1042' } },
    },
    responses: {
      201: {
        description: 'The payment intent, funds reserved. A repeated idempotency_key answers the same intent, again 201',
        headers: {
          'Idempotent-Replayed': {
            description: '`true` when the idempotency_key was seen before and the existing intent is returned',
            schema: { type: 'string', enum: ['true'] },
          },
        },
        examples: { created: { summary: 'Created, funds reserved on Solana', value: createdIntent } },
      },
      400: {
        description: 'The request is malformed, the quote has expired or the treasury lacks funds',
        examples: {
          missing_quote_id: error('MISSING_QUOTE_ID', 'body.quote_id is required'),
          missing_idempotency_key: error('MISSING_IDEMPOTENCY_KEY', 'body.idempotency_key is required'),
          quote_expired: error('QUOTE_EXPIRED', `quote ${QUOTE_ID} expired at 2026-03-01T12:05:00.410Z; request a new quote`),
          insufficient_balance: error('INSUFFICIENT_BALANCE', 'treasury on solana has 10.5 USDC available, 25 USDC needed'),
          invalid_quote_id: error('INVALID_QUOTE_ID', 'body.quote_id must match pattern "^\\s*[A-Za-z0-9_]*\\s*$"'),
        },
      },
      401: UNAUTHORIZED,
      429: RATE_LIMITED,
      404: {
        description: 'No quote with this id belongs to the caller',
        examples: { quote_not_found: error('QUOTE_NOT_FOUND', 'quote quo_0000000000000000 was not found') },
      },
      409: {
        description: 'The idempotency_key was already used for another quote',
        examples: {
          key_reused: error('IDEMPOTENCY_KEY_REUSED', `idempotency_key was already used with quote ${QUOTE_ID}; use a new key for a different payment`),
        },
      },
      422: {
        description: "The merchant's spending policy refuses the payment; nothing is reserved",
        examples: {
          max_payment: error('POLICY_MAX_PAYMENT_EXCEEDED', "amount 25 USD is above this merchant's per-payment maximum of 20 USD"),
          daily_limit: error(
            'POLICY_DAILY_LIMIT_EXCEEDED',
            "amount 25 USD would exceed this merchant's 24-hour limit of 1000 USD (10 USD left)",
          ),
          not_allowed: error('RECIPIENT_NOT_ALLOWED', "the destination is not in this merchant's solana address book"),
          cooling_off: error(
            'RECIPIENT_COOLING_OFF',
            'the destination was added to the address book recently and can be paid from 2026-03-02T12:00:00.000Z',
          ),
        },
      },
      413: PAYLOAD_TOO_LARGE,
      415: UNSUPPORTED_MEDIA_TYPE,
    },
  },

  'post /payout_batches': {
    request: {
      payroll: {
        summary: 'A payroll: each item a quote request with its own idempotency key; the batch has its own key',
        value: {
          idempotency_key: 'payroll-2026-03',
          items: [
            { idempotency_key: 'payroll-2026-03-alice', amount_usd: 25, destination: { solana_address: SOLANA_ADDRESS }, priority: 'low_fee' },
            { idempotency_key: 'payroll-2026-03-bob', amount_usd: 40, destination: { ethereum_address: ETHEREUM_ADDRESS }, priority: 'fast' },
          ],
        },
      },
    },
    responses: {
      201: {
        description:
          'Each item answered on its own: created, replayed (its key names a payment with the same terms) or refused with its error. ' +
          'The same batch key and items replay this answer, again 201',
        headers: {
          'Idempotent-Replayed': {
            description: '`true` when the batch idempotency_key was seen before with the same items and the stored answer is returned',
            schema: { type: 'string', enum: ['true'] },
          },
        },
        examples: {
          created: {
            summary: 'One payment created, one refused by the daily limit',
            value: {
              id: PAYOUT_BATCH_ID,
              idempotency_key: 'payroll-2026-03',
              created_at: CREATED_AT,
              counts: { created: 1, replayed: 0, refused: 1 },
              items: [
                { index: 0, idempotency_key: 'payroll-2026-03-alice', result: 'created', payment_intent: createdIntent },
                {
                  index: 1,
                  idempotency_key: 'payroll-2026-03-bob',
                  result: 'refused',
                  error: errorBody(422, 'POLICY_DAILY_LIMIT_EXCEEDED', "amount 40 USD would exceed this merchant's 24-hour limit of 50 USD (25 USD left)"),
                },
              ],
            },
          },
        },
      },
      400: {
        description: 'The body or one of its items is malformed, or there are too many items; nothing is created',
        examples: {
          too_many: error('TOO_MANY_ITEMS', 'a payout batch takes at most 1000 items'),
          bad_item: error('INVALID_AMOUNT', 'items[3].amount_usd: "25.0000001" has more than 6 decimals'),
          missing_key: error('MISSING_IDEMPOTENCY_KEY', 'body.idempotency_key is required'),
        },
      },
      401: UNAUTHORIZED,
      429: RATE_LIMITED,
      409: {
        description: 'The batch idempotency_key was already used with other items',
        examples: {
          key_reused: error('IDEMPOTENCY_KEY_REUSED', `idempotency_key was already used by payout batch ${PAYOUT_BATCH_ID} with other items; use a new key`),
        },
      },
      413: { description: 'The body is larger than 1 MiB', examples: { too_large: error('PAYLOAD_TOO_LARGE', 'Request body is too large') } },
      415: UNSUPPORTED_MEDIA_TYPE,
    },
  },

  'get /payout_batches/{id}': {
    parameters: { id: PAYOUT_BATCH_ID },
    responses: {
      200: {
        description: "The batch's progress (payments per status) and totals; `completed` once every payment is final",
        examples: {
          completed: {
            summary: 'Completed: one payment settled',
            value: {
              id: PAYOUT_BATCH_ID,
              idempotency_key: 'payroll-2026-03',
              status: 'completed',
              items: { total: 2, payments: 1, refused: 1 },
              payments_by_status: { settled: 1 },
              totals: { requested_usd: 25, settled_usd: 25, failed_usd: 0 },
              created_at: CREATED_AT,
              completed_at: '2026-03-01T12:00:14.220Z',
            },
          },
        },
      },
      401: UNAUTHORIZED,
      429: RATE_LIMITED,
      404: {
        description: 'No payout batch with this id belongs to the caller',
        examples: { not_found: error('PAYOUT_BATCH_NOT_FOUND', 'payout batch pob_0000000000000000 was not found') },
      },
    },
  },

  'get /payment_intents/{id}': {
    parameters: { id: INTENT_ID },
    responses: {
      200: { description: 'The payment intent with its attempts and ledger entries', examples: { settled: { summary: 'Settled on Solana', value: settledIntent } } },
      401: UNAUTHORIZED,
      429: RATE_LIMITED,
      404: INTENT_NOT_FOUND,
    },
  },

  'get /routes/debug/{id}': {
    parameters: { id: INTENT_ID },
    responses: {
      200: {
        description: 'The quote, chain health and balances the route was chosen from, and every chain’s scores',
        examples: {
          debug: {
            summary: 'Why Solana was chosen',
            value: {
              payment_intent_id: INTENT_ID,
              quote: {
                ...quote,
                merchant_id: 'mer_test',
                priority: 'fast',
                destination: { ethereum_address: ETHEREUM_ADDRESS, solana_address: SOLANA_ADDRESS },
                scoring_details: scoringDetails,
                created_at: '2026-03-01T12:00:00.410Z',
              },
              chain_health: healthSnapshots,
              treasury_balances: [
                { chain: 'ethereum', available_balance: 1000000, reserved_balance: 0 },
                { chain: 'solana', available_balance: 1000000, reserved_balance: 0 },
              ],
              scoring_details: scoringDetails,
              selected_chain: 'solana',
            },
          },
        },
      },
      401: UNAUTHORIZED,
      429: RATE_LIMITED,
      404: INTENT_NOT_FOUND,
    },
  },

  'post /webhooks/test': {
    responses: {
      200: {
        description: 'A signed webhook.test event was sent once; `delivered` says whether the receiver answered 2xx',
        examples: {
          delivered: {
            summary: 'The receiver answered 204',
            value: {
              event_id: 'evt_3k9v0q7d2m5x8c1h',
              delivered: true,
              url: 'https://merchant.example/hooks/stableroute',
              status_code: 204,
              latency_ms: 41,
              error: null,
            },
          },
          refused: {
            summary: 'The receiver refused it; the event stays queued for the normal retries',
            value: {
              event_id: 'evt_7p2n4r6t8v0x2z4b',
              delivered: false,
              url: 'https://merchant.example/hooks/stableroute',
              status_code: 400,
              latency_ms: 12,
              error: 'HTTP 400',
            },
          },
        },
      },
      401: UNAUTHORIZED,
      429: RATE_LIMITED,
      422: {
        description: 'The merchant has no webhook_url, or its endpoint was disabled after a 410 Gone',
        examples: {
          no_url: error('WEBHOOK_URL_NOT_CONFIGURED', 'No webhook_url is configured for this merchant'),
          endpoint_disabled: error(
            'WEBHOOK_ENDPOINT_DISABLED',
            'The webhook endpoint was disabled after it answered 410 Gone; events are kept until an operator enables it',
          ),
        },
      },
    },
  },
};

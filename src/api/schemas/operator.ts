// JSON schemas of the operator endpoints behind the console (validation, serialisation, the OpenAPI document).
import { ADMIN_TIMESTAMP_CHARS_MAX } from '../../bounds.js';
import { PAYMENT_STATUSES } from '../../domain/payment-intent.js';
import { RESOLUTIONS } from '../../domain/operator-actions.js';
import { WEBHOOK_EVENT_STATUSES } from '../../domain/webhook-delivery.js';
import { attemptSchema, chainSchema, nullableTimestamp, operatorApprovalSchema, paymentIntentProperties, timestamp } from './common.js';

const idPattern = '^[A-Za-z0-9_]+$';

export const paymentListQuery = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: [...PAYMENT_STATUSES] },
    chain: chainSchema,
    merchant_id: { type: 'string', maxLength: 128, pattern: idPattern },
    created_from: { type: 'string', maxLength: ADMIN_TIMESTAMP_CHARS_MAX, format: 'date-time' },
    created_before: { type: 'string', maxLength: ADMIN_TIMESTAMP_CHARS_MAX, format: 'date-time' },
    q: { type: 'string', maxLength: 256 },
    limit: { type: 'string', pattern: '^[0-9]{1,3}$' },
    cursor: { type: 'string', maxLength: 512 },
  },
} as const;

const actionsSchema = {
  type: 'object',
  properties: {
    resolve: { type: 'array', items: { type: 'string', enum: [...RESOLUTIONS] } },
    cancel: { type: 'boolean' },
  },
} as const;

export const paymentRowSchema = {
  type: 'object',
  properties: {
    ...paymentIntentProperties,
    tx_id: { type: ['string', 'null'] },
    actions: actionsSchema,
    created_at: timestamp,
    updated_at: timestamp,
  },
} as const;

export const paymentPageSchema = {
  type: 'object',
  properties: {
    data: { type: 'array', items: paymentRowSchema },
    next_cursor: { type: ['string', 'null'] },
  },
} as const;

export const paymentCountsSchema = {
  type: 'object',
  properties: {
    total: { type: 'number' },
    by_status: { type: 'object', additionalProperties: { type: 'number' } },
  },
} as const;

const paymentStatusList = { type: 'array', items: { type: 'string', enum: [...PAYMENT_STATUSES] } } as const;

/** The statuses the console offers and counts (GET /admin/statuses), in the domain's order: it keeps no copy. */
export const statusesSchema = {
  type: 'object',
  required: ['payment_statuses', 'final_payment_statuses', 'webhook_event_statuses'],
  additionalProperties: false,
  properties: {
    payment_statuses: paymentStatusList,
    final_payment_statuses: paymentStatusList,
    webhook_event_statuses: { type: 'array', items: { type: 'string', enum: [...WEBHOOK_EVENT_STATUSES] } },
  },
} as const;

const deliverySchema = {
  type: 'object',
  properties: {
    attempt: { type: 'number' },
    url: { type: 'string' },
    status_code: { type: ['number', 'null'] },
    latency_ms: { type: 'number' },
    error: { type: ['string', 'null'] },
    created_at: timestamp,
  },
} as const;

export const webhookEventSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    event_type: { type: 'string' },
    payment_intent_id: { type: ['string', 'null'] },
    merchant_id: { type: 'string' },
    status: { type: 'string' },
    attempts: { type: 'number' },
    last_error: { type: ['string', 'null'] },
    next_attempt_at: timestamp,
    delivered_at: nullableTimestamp,
    created_at: timestamp,
  },
} as const;

export const webhookEventRecordSchema = {
  type: 'object',
  properties: {
    ...webhookEventSchema.properties,
    payload: { type: 'object', additionalProperties: true },
    deliveries: { type: 'array', items: deliverySchema },
  },
} as const;

/** An attempt as operators see it: the merchant's (decision 226), its fee paid exact, and what only operators see. */
const operatorAttemptSchema = {
  type: 'object',
  properties: {
    ...attemptSchema.properties,
    // An exact decimal string where the merchant's is a number (decision 109).
    actual_fee_native: { type: ['string', 'null'] },
    purpose: { type: 'string', enum: ['transfer', 'cancel'] },
    fee_currency: { type: 'string' },
    failure_detail: { type: ['string', 'null'] },
    chain_meta: { type: 'object', additionalProperties: true },
    included_at: nullableTimestamp,
  },
} as const;

export const paymentRecordSchema = {
  type: 'object',
  properties: {
    ...paymentIntentProperties,
    quote_id: { type: 'string' },
    idempotency_key: { type: 'string' },
    created_at: timestamp,
    updated_at: timestamp,
    actions: actionsSchema,
    timeline: {
      type: 'array',
      items: {
        type: 'object',
        properties: { from: { type: ['string', 'null'] }, to: { type: 'string' }, reason: { type: ['string', 'null'] }, at: timestamp },
      },
    },
    attempts: { type: 'array', items: operatorAttemptSchema },
    ledger: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'number' },
          type: { type: 'string' },
          chain: chainSchema,
          created_at: timestamp,
          postings: {
            type: 'array',
            items: { type: 'object', properties: { account: { type: 'string' }, currency: { type: 'string' }, amount: { type: 'string' } } },
          },
        },
      },
    },
    webhook_events: { type: 'array', items: webhookEventRecordSchema },
    /** Present only on a payment or withdrawal that waited for an operator approval (decision 103). */
    approval: {
      type: 'object',
      properties: { ...operatorApprovalSchema.properties, approvals: { type: 'integer' }, approvals_required: { type: 'integer' } },
    },
  },
} as const;

export const resolveBody = {
  type: 'object',
  required: ['resolution'],
  additionalProperties: false,
  properties: {
    resolution: { type: 'string', enum: [...RESOLUTIONS] },
    force: { type: 'boolean' },
  },
} as const;

export const resolutionResultSchema = {
  type: 'object',
  properties: {
    payment_intent_id: { type: 'string' },
    status: { type: 'string' },
    tx_id: { type: ['string', 'null'] },
    // A failure forced over a transfer that may still land waits for another operator's approval (decision 181).
    approval: { type: 'string', enum: ['pending'] },
  },
} as const;

export const treasurySchema = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      chain: chainSchema,
      address: { type: 'string' },
      adapter: { type: 'string', enum: ['simulated', 'rpc'] },
      available_usdc: { type: 'string' },
      reserved_usdc: { type: 'string' },
      in_flight_usdc: { type: 'string' },
      native_currency: { type: 'string' },
      native_balance: { type: 'string' },
      gas_low_water: { type: 'string' },
      gas_low: { type: 'boolean' },
      unconfirmed_transfers: { type: 'number' },
      oldest_unconfirmed_at: nullableTimestamp,
    },
  },
} as const;

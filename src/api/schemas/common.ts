// Shared JSON schemas: they validate requests, serialise responses and make up the OpenAPI document.
import { MAX_AMOUNT_USD } from '../../money.js';

/** An array of objects with these properties (response schemas). */
export function arrayOf<P extends Record<string, unknown>>(properties: P) {
  return { type: 'array', items: { type: 'object', properties } } as const;
}

/** A requested USD amount (decision 1): positive, at most 6 decimals (money.ts checks those), at most MAX_AMOUNT_USD. */
export const amountUsdSchema = {
  type: 'number',
  exclusiveMinimum: 0,
  maximum: MAX_AMOUNT_USD,
  description: 'USD amount, at most 6 decimals',
} as const;

/** A chain: one of CHAINS. The enum is the service's configuration, registered by the app as `Chain` (chainSchemaFor). */
export const chainSchema = { $ref: 'Chain#' } as const;

/** The shared `Chain` schema of a service paying out on `chains`: every chain field's enum, in validation and OpenAPI. */
export function chainSchemaFor(chains: readonly string[]) {
  return { $id: 'Chain', type: 'string', enum: [...chains], description: 'A chain this service pays out on (CHAINS)' } as const;
}

/** `<chain>_address` for each configured chain: the quote's destination fields (the spec's ethereum_address and solana_address). */
export function destinationSchemaFor(chains: readonly string[], extra: { maxLength?: number } = {}) {
  const fields = chains.map((chain) => `${chain}_address`);
  return {
    type: 'object',
    properties: Object.fromEntries(fields.map((field) => [field, { type: 'string', ...extra }])),
  } as const;
}
export const timestamp = { type: 'string', format: 'date-time' } as const;
export const nullableTimestamp = { type: ['string', 'null'], format: 'date-time' } as const;
export const errorRef = { $ref: 'Error#' } as const;

/** A route's or a payment's token: present only in a quote whose request named `tokens`, or a payment not in USDC (decision 237). */
export const tokenSchema = { type: 'string', enum: ['usdc', 'usdt', 'pyusd'] } as const;

export const healthSnapshotSchema = {
  type: 'object',
  properties: {
    chain: chainSchema,
    health_status: { type: 'string', enum: ['healthy', 'degraded', 'unhealthy'] },
    estimated_fee_usd: { type: 'number' },
    avg_confirmation_seconds: { type: 'number' },
    rpc_error_rate: { type: 'number' },
    p95_latency_ms: { type: ['number', 'null'] },
    congestion_score: { type: ['number', 'null'] },
    recorded_at: timestamp,
    status_reason: { type: ['string', 'null'] },
  },
} as const;

export const candidateRouteSchema = {
  type: 'object',
  properties: {
    chain: chainSchema,
    token: tokenSchema,
    estimated_fee_usd: { type: 'number' },
    estimated_settlement_seconds: { type: 'number' },
    reliability_score: { type: 'number' },
    final_score: { type: 'number' },
  },
} as const;

export const scoringDetailSchema = {
  type: 'object',
  properties: {
    token: tokenSchema,
    chain: chainSchema,
    fee_score: { type: 'number' },
    latency_score: { type: 'number' },
    reliability_score: { type: 'number' },
    final_score: { type: 'number' },
    disqualified: { type: 'boolean' },
    disqualification_reason: { type: ['string', 'null'] },
  },
} as const;

export const attemptSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    chain: chainSchema,
    tx_id: { type: 'string' },
    status: { type: 'string' },
    estimated_fee_usd: { type: 'number' },
    actual_fee_native: { type: ['number', 'null'] },
    failure_reason: { type: ['string', 'null'] },
    broadcast_at: nullableTimestamp,
    confirmed_at: nullableTimestamp,
    created_at: timestamp,
  },
} as const;

export const ledgerEntrySchema = {
  type: 'object',
  properties: {
    type: { type: 'string', enum: ['reserve', 'debit', 'fee', 'release', 'refund'] },
    amount: { type: 'number' },
    currency: { type: 'string' },
    chain: chainSchema,
    created_at: timestamp,
  },
} as const;

/** Present only on payments that waited for an operator's approval (decision 10). */
export const approvalSchema = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['pending', 'approved', 'rejected', 'cancelled'] },
    requested_at: timestamp,
    decided_at: nullableTimestamp,
  },
} as const;

/** What every shape of a payment intent starts with: the spec's read shape, the operator's row and record. */
export const paymentIntentProperties = {
  id: { type: 'string' },
  merchant_id: { type: 'string' },
  amount_usd: { type: 'number' },
  status: { type: 'string' },
  selected_chain: chainSchema,
  /** Present only when the payment pays a token other than USDC (decision 237). */
  token: tokenSchema,
  destination_address: { type: 'string' },
} as const;

/** A payment intent as POST /payment_intents answers it (spec: "Returned on creation"). */
export const paymentIntentCreationSchema = {
  type: 'object',
  properties: {
    payment_intent_id: { type: 'string' },
    status: { type: 'string' },
    amount_usd: { type: 'number' },
    selected_chain: chainSchema,
    token: tokenSchema,
    destination_address: { type: 'string' },
    created_at: timestamp,
    approval: approvalSchema,
  },
} as const;

export const paymentIntentReadSchema = {
  type: 'object',
  properties: {
    ...paymentIntentProperties,
    quote_id: { type: 'string' },
    idempotency_key: { type: 'string' },
    attempts: { type: 'array', items: attemptSchema },
    ledger_entries: { type: 'array', items: ledgerEntrySchema },
    approval: approvalSchema,
    created_at: timestamp,
    updated_at: timestamp,
  },
} as const;

export const treasuryBalanceSchema = {
  type: 'object',
  properties: {
    chain: chainSchema,
    address: { type: 'string' },
    available_balance: { type: 'number' },
    reserved_balance: { type: 'number' },
  },
} as const;

export const idParams = {
  type: 'object',
  required: ['id'],
  // Ids are opaque but never contain anything outside [A-Za-z0-9_]; anything else cannot exist (404).
  properties: { id: { type: 'string', maxLength: 128, pattern: '^[A-Za-z0-9_]+$' } },
} as const;

/** An approval as operators see it (decision 103): the merchant's (decision 226), and who asked, approved, decided. */
export const operatorApprovalSchema = {
  type: 'object',
  properties: {
    ...approvalSchema.properties,
    requested_by: { type: ['string', 'null'] },
    first_approved_by: { type: ['string', 'null'] },
    first_approved_at: nullableTimestamp,
    decided_by: { type: ['string', 'null'] },
    reason: { type: ['string', 'null'] },
  },
} as const;

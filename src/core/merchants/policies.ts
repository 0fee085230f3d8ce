// Merchant spending policies: the policy in force (service defaults + the merchant's overrides), operator changes,
// and the check the reservation transaction runs (decisions 6-8). The decision itself is
// src/domain/spending-policy.ts; this file loads its facts under the right locks.
import type { Config } from '../../config.js';
import type { Pool, Queryable } from '../../db/pool.js';
import { audited, type AuditConfig, type AuditEntry } from '../operators/audit.js';
import { readAddress } from '../../db/queries/addresses.js';
import { readPolicy, readMerchantVolume, upsertPolicy, readVolumeWithoutApproval, type StoredPolicy } from '../../db/queries/policies.js';
import type { Chain } from '../../domain/chain.js';
import { AppError } from '../../domain/errors.js';
import type { Refusal } from '../../domain/reservation.js';
import {
  addressKey,
  DAY_MS,
  decideQuoteAmount,
  decideSpending,
  effectivePolicy,
  RELEASED_STATUSES,
  type EffectivePolicy,
  type PolicyOverrides,
  type SpendingVerdict,
} from '../../domain/spending-policy.js';

type PolicyConfig = Pick<Config, 'policy' | 'rateLimitPerMinute'>;

export interface MerchantPolicy {
  merchant_id: string;
  policy: EffectivePolicy;
  /** Merchant API requests per minute in force; 0 = no limit. */
  rateLimitPerMinute: number;
  rateLimitSource: 'default' | 'merchant';
  addressCoolingOffSeconds: number;
}

function merchantPolicy(config: PolicyConfig, merchantId: string, stored: StoredPolicy): MerchantPolicy {
  return {
    merchant_id: merchantId,
    policy: effectivePolicy(config.policy, stored.overrides),
    rateLimitPerMinute: stored.rateLimitPerMinute ?? config.rateLimitPerMinute,
    rateLimitSource: stored.rateLimitPerMinute === undefined ? 'default' : 'merchant',
    addressCoolingOffSeconds: config.policy.addressCoolingOffSeconds,
  };
}

function notFound(merchantId: string): AppError {
  return new AppError('MERCHANT_NOT_FOUND', `merchant ${merchantId} was not found`);
}

export async function getMerchantPolicy(db: Queryable, config: PolicyConfig, merchantId: string): Promise<MerchantPolicy> {
  const stored = await readPolicy(db, merchantId);
  if (!stored) throw notFound(merchantId);
  return merchantPolicy(config, merchantId, stored);
}

/** One setting's change: 'default' drops the override, null is "no limit" for this merchant, a value replaces it. */
export type LimitChange = bigint | null | 'default';

export interface PolicyChange {
  maxPaymentMicros?: LimitChange;
  dailyLimitMicros?: LimitChange;
  approvalAboveMicros?: LimitChange;
  approvalAbovePerDayMicros?: LimitChange;
  allowlist?: boolean | 'default';
  /** 0 = no limit. */
  rateLimitPerMinute?: number | 'default';
  /** Drop every override first (the merchant follows the service defaults). */
  reset?: boolean;
}

/** Applies an operator's change under the merchant's lock, so it is ordered with the reservations that read it. */
export async function updateMerchantPolicy(
  pool: Pool,
  config: PolicyConfig & AuditConfig,
  merchantId: string,
  change: PolicyChange,
  at: Date,
  audit: AuditEntry,
): Promise<MerchantPolicy> {
  return audited({ pool, config }, audit, at, async (tx) => {
    const stored = await readPolicy(tx, merchantId, { lock: true });
    if (!stored) throw notFound(merchantId);
    const overrides: PolicyOverrides = change.reset ? {} : { ...stored.overrides };
    let rateLimitPerMinute = change.reset ? undefined : stored.rateLimitPerMinute;
    for (const key of ['maxPaymentMicros', 'dailyLimitMicros', 'approvalAboveMicros', 'approvalAbovePerDayMicros'] as const) {
      const value = change[key];
      if (value === 'default') delete overrides[key];
      else if (value !== undefined) overrides[key] = value;
    }
    if (change.allowlist === 'default') delete overrides.allowlist;
    else if (change.allowlist !== undefined) overrides.allowlist = change.allowlist;
    if (change.rateLimitPerMinute === 'default') rateLimitPerMinute = undefined;
    else if (change.rateLimitPerMinute !== undefined) rateLimitPerMinute = change.rateLimitPerMinute;
    const next: StoredPolicy = { overrides, ...(rateLimitPerMinute === undefined ? {} : { rateLimitPerMinute }) };
    await upsertPolicy(tx, merchantId, next, at);
    return merchantPolicy(config, merchantId, next);
  });
}

function refusal(verdict: Extract<SpendingVerdict, { kind: 'refuse' }>): AppError {
  return new AppError(verdict.code, verdict.message, { details: verdict.details });
}

/** One payment a reservation batch may make, as the policy sees it. */
export interface SpendingRequest {
  merchantId: string;
  amountMicros: bigint;
  chain: Chain;
  destination: string;
}

export type SpendingCheck = (request: SpendingRequest, reservedInBatchMicros: bigint, sentInBatchMicros: bigint) => Refusal | { approvalAboveMicros: bigint | null };

/** The check of one payment, and the approval threshold of a merchant whose policy was loaded (a batch's, decision 178). */
export interface Spending {
  check: SpendingCheck;
  approvalAboveOf(merchantId: string): bigint | null;
}

/**
 * Loads, on the reservation's transaction, what the spending policies of `merchantIds` decide from, and returns the
 * check of one payment (pure from then on). When a merchant has a daily limit or a limit per day on what leaves
 * without approval (decision 179), its merchant row is locked (`FOR NO KEY UPDATE`, merchants in id order, so two
 * batches never deadlock) before its volumes are read, so concurrent reservations of one merchant, in any process, are
 * checked one after the other against each other's committed payments; the policy is read again under that lock.
 * `wanted` are the (merchant, chain, destination) the batch may pay, for the address books.
 */
export async function loadSpending(
  tx: Queryable,
  config: PolicyConfig,
  merchantIds: readonly string[],
  wanted: readonly Omit<SpendingRequest, 'amountMicros'>[],
  now: Date,
): Promise<Spending> {
  const facts = new Map<string, { policy: EffectivePolicy; volume24hMicros: bigint; withoutApproval24hMicros: bigint }>();
  const rolling = (p: EffectivePolicy) => p.dailyLimitMicros !== null || p.approvalAbovePerDayMicros !== null;
  for (const merchantId of [...new Set(merchantIds)].sort()) {
    let stored = await readPolicy(tx, merchantId);
    if (!stored) throw notFound(merchantId);
    let policy = effectivePolicy(config.policy, stored.overrides);
    if (rolling(policy)) {
      stored = (await readPolicy(tx, merchantId, { lock: true }))!;
      policy = effectivePolicy(config.policy, stored.overrides);
    }
    // No upper bound on created_at: another process's clock may run a little ahead of ours, and its payment counts.
    const since = new Date(now.getTime() - DAY_MS);
    const volume24hMicros = policy.dailyLimitMicros === null ? 0n : await readMerchantVolume(tx, merchantId, since, RELEASED_STATUSES);
    const withoutApproval24hMicros =
      policy.approvalAbovePerDayMicros === null ? 0n : await readVolumeWithoutApproval(tx, merchantId, since, RELEASED_STATUSES);
    facts.set(merchantId, { policy, volume24hMicros, withoutApproval24hMicros });
  }
  const addresses = new Map<string, Date | null>();
  for (const w of wanted) {
    const key = [w.merchantId, w.chain, addressKey(w.chain, w.destination)].join('\u0000');
    if (addresses.has(key) || !facts.get(w.merchantId)?.policy.allowlist) continue;
    const entry = await readAddress(tx, w.merchantId, w.chain, addressKey(w.chain, w.destination));
    addresses.set(key, entry?.usable_from ?? null);
  }
  const check: SpendingCheck = (request, reservedInBatchMicros, sentInBatchMicros) => {
    const merchant = facts.get(request.merchantId);
    if (!merchant) throw new Error(`no policy loaded for ${request.merchantId}`);
    const usableFrom = addresses.get([request.merchantId, request.chain, addressKey(request.chain, request.destination)].join('\u0000')) ?? null;
    const verdict = decideSpending(merchant.policy, {
      amountMicros: request.amountMicros,
      chain: request.chain,
      address: usableFrom ? { usableFrom } : null,
      volume24hMicros: merchant.volume24hMicros + reservedInBatchMicros,
      withoutApproval24hMicros: merchant.withoutApproval24hMicros + sentInBatchMicros,
      now,
    });
    if (verdict.kind === 'refuse') return { code: verdict.code, message: verdict.message, details: verdict.details };
    return { approvalAboveMicros: verdict.needsApproval ? (verdict.heldAboveMicros ?? null) : null };
  };
  return { check, approvalAboveOf: (merchantId) => facts.get(merchantId)?.policy.approvalAboveMicros ?? null };
}

/** Quote time: an amount above the per-payment maximum is refused before anything is stored; `stored` null: no such merchant. */
export function checkQuoteAmount(config: PolicyConfig, merchantId: string, stored: StoredPolicy | null, amountMicros: bigint): void {
  if (!stored) throw notFound(merchantId);
  const verdict = decideQuoteAmount(effectivePolicy(config.policy, stored.overrides), amountMicros);
  if (verdict.kind === 'refuse') throw refusal(verdict);
}

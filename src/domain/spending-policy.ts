// Merchant spending policies: what a merchant may pay out, decided as one pure function over facts the reservation
// transaction loaded under its locks (decisions 6-9). Amounts are USDC micro-units; time comes in as `now`.
import { formatUsdc as usd } from '../money.js';
import { familyOf, type Chain } from './chain.js';
import type { ErrorCode } from './errors.js';
import type { PaymentStatus } from './payment-intent.js';

export const DAY_MS = 24 * 60 * 60 * 1000;

/** Payments whose funds went back to the treasury: they do not count towards a daily limit. */
export const RELEASED_STATUSES: readonly PaymentStatus[] = ['failed', 'cancelled', 'expired'];

/** The policy in force for one merchant: service defaults with the merchant's overrides applied. null = no limit. */
export interface SpendingPolicy {
  maxPaymentMicros: bigint | null;
  /** Rolling 24 hours of reserved, in-flight and settled payouts, by creation time. */
  dailyLimitMicros: bigint | null;
  /** Payments strictly above this wait for an operator's approval before broadcast. */
  approvalAboveMicros: bigint | null;
  /**
   * A payment waits too when it would bring the merchant's payments sent without approval in the last 24 hours (not
   * failed, cancelled or expired) above this (decision 179): splitting cannot beat the threshold.
   */
  approvalAbovePerDayMicros: bigint | null;
  /** Only addresses in the merchant's address book can be paid. */
  allowlist: boolean;
}

export type PolicyLimit = 'maxPaymentMicros' | 'dailyLimitMicros' | 'approvalAboveMicros' | 'approvalAbovePerDayMicros';
export const POLICY_LIMITS: readonly PolicyLimit[] = ['maxPaymentMicros', 'dailyLimitMicros', 'approvalAboveMicros', 'approvalAbovePerDayMicros'];

/**
 * A merchant's overrides. A limit that is `undefined` inherits the service default; `null` is "no limit" even when
 * the default has one; a number replaces the default. `allowlist` undefined inherits.
 */
export interface PolicyOverrides {
  maxPaymentMicros?: bigint | null;
  dailyLimitMicros?: bigint | null;
  approvalAboveMicros?: bigint | null;
  approvalAbovePerDayMicros?: bigint | null;
  allowlist?: boolean;
}

export type PolicySource = 'default' | 'merchant';

export interface EffectivePolicy extends SpendingPolicy {
  /** Where each setting comes from, for operators. */
  sources: Record<PolicyLimit | 'allowlist', PolicySource>;
}

export function effectivePolicy(defaults: SpendingPolicy, overrides: PolicyOverrides): EffectivePolicy {
  const pick = <K extends keyof PolicyOverrides>(key: K): [SpendingPolicy[K], PolicySource] =>
    overrides[key] === undefined ? [defaults[key], 'default'] : [overrides[key] as SpendingPolicy[K], 'merchant'];
  const [maxPaymentMicros, maxSource] = pick('maxPaymentMicros');
  const [dailyLimitMicros, dailySource] = pick('dailyLimitMicros');
  const [approvalAboveMicros, approvalSource] = pick('approvalAboveMicros');
  const [approvalAbovePerDayMicros, perDaySource] = pick('approvalAbovePerDayMicros');
  const [allowlist, allowlistSource] = pick('allowlist');
  return {
    maxPaymentMicros,
    dailyLimitMicros,
    approvalAboveMicros,
    approvalAbovePerDayMicros,
    allowlist,
    sources: {
      maxPaymentMicros: maxSource,
      dailyLimitMicros: dailySource,
      approvalAboveMicros: approvalSource,
      approvalAbovePerDayMicros: perDaySource,
      allowlist: allowlistSource,
    },
  };
}

/** An address-book entry as the decision needs it: from when it may be paid (after its cooling-off period). */
export interface AddressEntry {
  usableFrom: Date;
}

export interface SpendingFacts {
  amountMicros: bigint;
  chain: Chain;
  /** The destination's entry in the merchant's address book, or null when it has none. */
  address: AddressEntry | null;
  /** The merchant's payouts of the last 24 hours that still hold or spent funds; read only when a daily limit applies. */
  volume24hMicros: bigint;
  /** Of those, the ones sent without an operator's approval (none was asked); read only when a limit per day applies. */
  withoutApproval24hMicros: bigint;
  now: Date;
}

export type SpendingVerdict =
  /** `heldAboveMicros`: the threshold a payment that needs approval is above (per payment, or per day). */
  | { kind: 'allow'; needsApproval: boolean; heldAboveMicros?: bigint }
  | { kind: 'refuse'; code: Extract<ErrorCode, `POLICY_${string}` | `RECIPIENT_${string}`>; message: string; details: Record<string, string> };

/**
 * The decision. Checks run cheapest-to-explain first: the per-payment maximum, then the recipient, then the daily
 * volume; a payment that passes them all needs approval when it is strictly above the approval threshold, or when it
 * would bring what left without approval in 24 hours above the limit per day.
 */
export function decideSpending(policy: SpendingPolicy, facts: SpendingFacts): SpendingVerdict {
  if (policy.maxPaymentMicros !== null && facts.amountMicros > policy.maxPaymentMicros) {
    return {
      kind: 'refuse',
      code: 'POLICY_MAX_PAYMENT_EXCEEDED',
      message: `amount ${usd(facts.amountMicros)} USD is above this merchant's per-payment maximum of ${usd(policy.maxPaymentMicros)} USD`,
      details: { max_payment_usd: usd(policy.maxPaymentMicros) },
    };
  }
  if (policy.allowlist) {
    if (facts.address === null) {
      return {
        kind: 'refuse',
        code: 'RECIPIENT_NOT_ALLOWED',
        message: `the destination is not in this merchant's ${facts.chain} address book`,
        details: {},
      };
    }
    if (facts.address.usableFrom.getTime() > facts.now.getTime()) {
      return {
        kind: 'refuse',
        code: 'RECIPIENT_COOLING_OFF',
        message: `the destination was added to the address book recently and can be paid from ${facts.address.usableFrom.toISOString()}`,
        details: { usable_from: facts.address.usableFrom.toISOString() },
      };
    }
  }
  if (policy.dailyLimitMicros !== null && facts.volume24hMicros + facts.amountMicros > policy.dailyLimitMicros) {
    const left = policy.dailyLimitMicros > facts.volume24hMicros ? policy.dailyLimitMicros - facts.volume24hMicros : 0n;
    return {
      kind: 'refuse',
      code: 'POLICY_DAILY_LIMIT_EXCEEDED',
      message: `amount ${usd(facts.amountMicros)} USD would exceed this merchant's 24-hour limit of ${usd(policy.dailyLimitMicros)} USD (${usd(left)} USD left)`,
      details: { daily_limit_usd: usd(policy.dailyLimitMicros), remaining_usd: usd(left) },
    };
  }
  if (policy.approvalAboveMicros !== null && facts.amountMicros > policy.approvalAboveMicros) {
    return { kind: 'allow', needsApproval: true, heldAboveMicros: policy.approvalAboveMicros };
  }
  const perDay = policy.approvalAbovePerDayMicros;
  if (perDay !== null && facts.withoutApproval24hMicros + facts.amountMicros > perDay) {
    return { kind: 'allow', needsApproval: true, heldAboveMicros: perDay };
  }
  return { kind: 'allow', needsApproval: false };
}

/** Quote time: only the per-payment maximum can be judged before a route and a reservation exist. */
export function decideQuoteAmount(policy: SpendingPolicy, amountMicros: bigint): SpendingVerdict {
  const maximumOnly: SpendingPolicy = { ...policy, allowlist: false, dailyLimitMicros: null, approvalAbovePerDayMicros: null };
  return decideSpending(maximumOnly, { amountMicros, chain: '', address: null, volume24hMicros: 0n, withoutApproval24hMicros: 0n, now: new Date(0) });
}

/**
 * The address book's key for an address: EVM addresses are hex, so case only carries the EIP-55 checksum and
 * two spellings of one address must match; Solana's base58 is case-sensitive and kept as is.
 */
export function addressKey(chain: Chain, address: string): string {
  return familyOf(chain) === 'evm' ? address.trim().toLowerCase() : address.trim();
}

// Payout batches (POST /payout_batches): what each item of a batch becomes, the fingerprint that tells a replayed
// batch from a different body under the same key, and a batch's progress. Pure: the caller loads and persists.
import { createHash } from 'node:crypto';
import type { Chain } from './chain.js';
import { TERMINAL_STATUSES, type PaymentStatus } from './payment-intent.js';
import type { Priority } from './priority.js';
import type { Refusal } from './reservation.js';
import { usdcToNumber } from '../money.js';

/** One item as a quote request plus the idempotency key its payment intent is created under. */
export interface PayoutItem {
  idempotencyKey: string;
  amountMicros: bigint;
  /** `<chain>` -> address, for the chains the merchant named an address on. */
  destinations: Partial<Record<Chain, string>>;
  priority: Priority;
}

/** The terms a stored payment was quoted with, for an item whose key it already holds. */
export interface StoredTerms {
  quoteId: string;
  amountMicros: bigint;
  destinations: Partial<Record<Chain, string>>;
  priority: Priority;
}

export type ItemPlan =
  /** The key holds a payment quoted with the same terms: reserve against its quote, which replays it. */
  | { kind: 'existing'; quoteId: string }
  /** A new payment: quote it, then reserve. */
  | { kind: 'quote' }
  /** The same key and terms as an earlier item of this batch: it shares that item's quote (and so its payment). */
  | { kind: 'same_as'; index: number }
  | { kind: 'refuse'; refusal: Refusal };

function sameTerms(a: Omit<StoredTerms, 'quoteId'>, b: Omit<StoredTerms, 'quoteId'>): boolean {
  return a.amountMicros === b.amountMicros && a.priority === b.priority && canonicalDestinations(a.destinations) === canonicalDestinations(b.destinations);
}

function canonicalDestinations(destinations: Partial<Record<Chain, string>>): string {
  return JSON.stringify(Object.entries(destinations).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * What each item becomes, in order. A key already used with other terms (before, or earlier in this batch) is refused
 * as IDEMPOTENCY_KEY_REUSED, like POST /payment_intents refuses a key used with another quote.
 */
export function planItems(items: readonly PayoutItem[], stored: ReadonlyMap<string, StoredTerms>): ItemPlan[] {
  const first = new Map<string, number>();
  return items.map((item, index) => {
    const earlier = stored.get(item.idempotencyKey);
    if (earlier) {
      return sameTerms(earlier, item) ? { kind: 'existing', quoteId: earlier.quoteId } : reused(item.idempotencyKey, `payment ${earlier.quoteId}'s quote`);
    }
    const sibling = first.get(item.idempotencyKey);
    if (sibling !== undefined) {
      return sameTerms(items[sibling]!, item) ? { kind: 'same_as', index: sibling } : reused(item.idempotencyKey, `item ${sibling}`);
    }
    first.set(item.idempotencyKey, index);
    return { kind: 'quote' };
  });
}

function reused(key: string, usedBy: string): ItemPlan {
  return {
    kind: 'refuse',
    refusal: {
      code: 'IDEMPOTENCY_KEY_REUSED',
      message: `idempotency_key ${JSON.stringify(key)} was already used with other terms (${usedBy}); use a new key for a different payment`,
    },
  };
}

/** The fingerprint of a batch's items (their order counts): equal for the same body however its JSON was spelled. */
export function requestHash(items: readonly PayoutItem[]): string {
  const canonical = items.map((i) => [i.idempotencyKey, i.amountMicros.toString(), canonicalDestinations(i.destinations), i.priority]);
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

/** Payments of a batch in one status, with their amount. */
export interface StatusTotal {
  status: PaymentStatus;
  payments: number;
  amountMicros: bigint;
}

export interface BatchProgress {
  /** Payments per status (statuses with none are absent). */
  byStatus: Partial<Record<PaymentStatus, number>>;
  payments: number;
  requestedMicros: bigint;
  settledMicros: bigint;
  /** Payments that ended without paying: failed, cancelled or expired (their funds went back to the treasury). */
  failedMicros: bigint;
  /** Every payment is final (settled, failed, cancelled or expired); true for a batch whose items were all refused. */
  final: boolean;
}

export function batchProgress(totals: readonly StatusTotal[]): BatchProgress {
  const progress: BatchProgress = { byStatus: {}, payments: 0, requestedMicros: 0n, settledMicros: 0n, failedMicros: 0n, final: true };
  for (const t of totals) {
    progress.byStatus[t.status] = (progress.byStatus[t.status] ?? 0) + t.payments;
    progress.payments += t.payments;
    progress.requestedMicros += t.amountMicros;
    if (t.status === 'settled') progress.settledMicros += t.amountMicros;
    else if (TERMINAL_STATUSES.includes(t.status)) progress.failedMicros += t.amountMicros;
    else progress.final = false;
  }
  return progress;
}

export interface BatchFacts {
  id: string;
  idempotencyKey: string;
  itemsTotal: number;
  itemsRefused: number;
  createdAt: Date;
  completedAt: Date | null;
}

/** GET /payout_batches/:id and the payload of payout_batch.completed: one shape, amounts in USD at this edge. */
export function batchSummary(batch: BatchFacts, progress: BatchProgress) {
  return {
    id: batch.id,
    idempotency_key: batch.idempotencyKey,
    status: batch.completedAt ? 'completed' : 'processing',
    items: { total: batch.itemsTotal, payments: progress.payments, refused: batch.itemsRefused },
    payments_by_status: progress.byStatus,
    totals: {
      requested_usd: usdcToNumber(progress.requestedMicros),
      settled_usd: usdcToNumber(progress.settledMicros),
      failed_usd: usdcToNumber(progress.failedMicros),
    },
    created_at: batch.createdAt.toISOString(),
    completed_at: batch.completedAt?.toISOString() ?? null,
  };
}

// The pure parts of a payout batch: what each item becomes, the fingerprint of a batch's items, and its progress.
import { describe, expect, it } from 'vitest';
import { batchProgress, planItems, requestHash, type PayoutItem, type StoredTerms } from '../../src/domain/payout-batch.js';

const item = (key: string, amountMicros: bigint, destinations: PayoutItem['destinations'] = { solana: 'S' }): PayoutItem => ({
  idempotencyKey: key,
  amountMicros,
  destinations,
  priority: 'fast',
});

describe('planItems', () => {
  it('quotes new keys, replays a stored key with the same terms, shares an earlier item with the same key and terms', () => {
    const stored = new Map<string, StoredTerms>([['old', { quoteId: 'quo_1', amountMicros: 5n, destinations: { solana: 'S' }, priority: 'fast' }]]);
    const plans = planItems([item('a', 1n), item('old', 5n), item('a', 1n), item('b', 2n)], stored);
    expect(plans).toEqual([{ kind: 'quote' }, { kind: 'existing', quoteId: 'quo_1' }, { kind: 'same_as', index: 0 }, { kind: 'quote' }]);
  });

  it('refuses a key used with other terms, stored or earlier in the batch (amount, destination or priority)', () => {
    const stored = new Map<string, StoredTerms>([['old', { quoteId: 'quo_1', amountMicros: 5n, destinations: { solana: 'S' }, priority: 'fast' }]]);
    const plans = planItems(
      [item('old', 6n), item('old', 5n, { ethereum: 'E' }), { ...item('old', 5n), priority: 'low_fee' }, item('a', 1n), item('a', 2n)],
      stored,
    );
    expect(plans.map((p) => (p.kind === 'refuse' ? p.refusal.code : p.kind))).toEqual([
      'IDEMPOTENCY_KEY_REUSED',
      'IDEMPOTENCY_KEY_REUSED',
      'IDEMPOTENCY_KEY_REUSED',
      'quote',
      'IDEMPOTENCY_KEY_REUSED',
    ]);
  });

  it('compares destinations whatever their order', () => {
    const stored = new Map<string, StoredTerms>([['k', { quoteId: 'q', amountMicros: 1n, destinations: { solana: 'S', ethereum: 'E' }, priority: 'fast' }]]);
    expect(planItems([item('k', 1n, { ethereum: 'E', solana: 'S' })], stored)).toEqual([{ kind: 'existing', quoteId: 'q' }]);
  });
});

describe('requestHash', () => {
  it('is the same for the same items however spelled, and differs for any change or another order', () => {
    const items = [item('a', 1n, { solana: 'S', ethereum: 'E' }), item('b', 2n)];
    expect(requestHash(items)).toBe(requestHash([item('a', 1n, { ethereum: 'E', solana: 'S' }), item('b', 2n)]));
    expect(requestHash(items)).not.toBe(requestHash([items[1]!, items[0]!]));
    expect(requestHash(items)).not.toBe(requestHash([items[0]!, item('b', 3n)]));
  });
});

describe('batchProgress', () => {
  it('counts payments per status, totals requested, settled and failed (failed, cancelled, expired), final when none is open', () => {
    const open = batchProgress([
      { status: 'settled', payments: 2, amountMicros: 30n },
      { status: 'cancelled', payments: 1, amountMicros: 5n },
      { status: 'failed', payments: 1, amountMicros: 7n },
      { status: 'broadcasted', payments: 1, amountMicros: 11n },
    ]);
    expect(open).toEqual({
      byStatus: { settled: 2, cancelled: 1, failed: 1, broadcasted: 1 },
      payments: 5,
      requestedMicros: 53n,
      settledMicros: 30n,
      failedMicros: 12n,
      final: false,
    });
    expect(batchProgress([{ status: 'settled', payments: 1, amountMicros: 1n }, { status: 'expired', payments: 1, amountMicros: 2n }]).final).toBe(true);
    expect(batchProgress([]).final).toBe(true);
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ALONE, feeShare } from '../../src/domain/fee-share.js';

describe('a transaction fee shared by the payments it pays', () => {
  it('a transaction of its own books the whole fee', () => {
    expect(feeShare(21_000_000_000_000n, ALONE)).toBe(21_000_000_000_000n);
    expect(feeShare(0n, ALONE)).toBe(0n);
  });

  it('splits evenly, the units left over one each to the first payments', () => {
    expect([0, 1, 2].map((index) => feeShare(10n, { payments: 3, index }))).toEqual([4n, 3n, 3n]);
    expect([0, 1, 2, 3].map((index) => feeShare(2n, { payments: 4, index }))).toEqual([1n, 1n, 0n, 0n]);
  });

  it('the shares add up to exactly what the chain charged, and differ by at most one unit', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 24n }), fc.integer({ min: 1, max: 1000 }), (fee, payments) => {
        const shares = Array.from({ length: payments }, (_, index) => feeShare(fee, { payments, index }));
        expect(shares.reduce((a, b) => a + b, 0n)).toBe(fee);
        const sorted = [...shares].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        expect(sorted.at(-1)! - sorted[0]!).toBeLessThanOrEqual(1n);
      }),
    );
  });

  it('refuses a place outside the transaction', () => {
    expect(() => feeShare(10n, { payments: 2, index: 2 })).toThrow(RangeError);
    expect(() => feeShare(10n, { payments: 0, index: 0 })).toThrow(RangeError);
    expect(() => feeShare(10n, { payments: 2, index: -1 })).toThrow(RangeError);
  });
});

// What a difference between books and wallet means (decision 117): only transfers the chain reports included or final
// explain a shortfall, each payment once.
import { describe, expect, it } from 'vitest';
import type { TxStatus } from '../../src/domain/chain.js';
import { landedUnbookedMicros, needsLandedTransfers, reconciliationStatus } from '../../src/domain/reconciliation.js';

const transfer = (paymentIntentId: string, amountMicros: bigint, status: TxStatus) => ({ paymentIntentId, amountMicros, status });

describe('reconciliation', () => {
  it('asks about transfers in flight only for a shortfall no larger than what is in flight', () => {
    expect(needsLandedTransfers(0n, 200n)).toBe(false);
    expect(needsLandedTransfers(5n, 200n)).toBe(false);
    expect(needsLandedTransfers(-150n, 200n)).toBe(true);
    expect(needsLandedTransfers(-200n, 200n)).toBe(true);
    expect(needsLandedTransfers(-201n, 200n)).toBe(false);
    expect(needsLandedTransfers(-1n, 0n)).toBe(false);
  });

  it('counts what is included or final, once per payment; signed, pending, reverted or expired transfers moved nothing', () => {
    const landed = landedUnbookedMicros('ethereum', [
      transfer('pi_final', 100n, { state: 'final', feeNative: 1n }),
      transfer('pi_included', 20n, { state: 'included', confirmations: 1 }),
      transfer('pi_pending', 3n, { state: 'pending' }),
      transfer('pi_unknown', 4n, { state: 'unknown' }),
      transfer('pi_reverted', 5n, { state: 'failed', reason: 'reverted', feeNative: 1n }),
      transfer('pi_expired', 6n, { state: 'expired' }),
      // A fee-bumped replacement and the transfer it replaced: one nonce, one payout.
      transfer('pi_bumped', 7n, { state: 'final', feeNative: 1n }),
      transfer('pi_bumped', 7n, { state: 'included', confirmations: 3 }),
    ]);
    expect(landed).toBe(127n);
    expect(landedUnbookedMicros('solana', [])).toBe(0n);
  });

  it('is in_flight only when short by no more than what landed', () => {
    expect(reconciliationStatus(0n, 0n)).toBe('ok');
    expect(reconciliationStatus(-150n, 0n)).toBe('mismatch'); // 200 in flight, nothing landed
    expect(reconciliationStatus(-200n, 200n)).toBe('in_flight');
    expect(reconciliationStatus(-150n, 200n)).toBe('in_flight');
    expect(reconciliationStatus(-201n, 200n)).toBe('mismatch');
    expect(reconciliationStatus(1n, 200n)).toBe('mismatch');
  });
});

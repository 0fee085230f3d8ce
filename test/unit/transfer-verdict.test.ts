// The one answer to "what does this transfer mean now?", for every chain status on both chains, and what the
// confirmation worker does with each verdict.
import { describe, expect, it } from 'vitest';
import { decideConfirmation, type ConfirmationAction } from '../../src/domain/confirmation.js';
import type { Chain, TxStatus } from '../../src/domain/chain.js';
import { hasReachedChain, mayStillLand, transferVerdict, type TransferVerdict } from '../../src/domain/transfer-verdict.js';

const reverted: TxStatus = { state: 'failed', reason: 'reverted', feeNative: 21_000n, details: 'execution reverted' };

describe('transferVerdict', () => {
  const cases: [string, Chain, TxStatus | null, TransferVerdict, boolean, boolean][] = [
    // name, chain, status, verdict, reached the chain, may still land
    ['final', 'ethereum', { state: 'final', feeNative: 7n }, { kind: 'final', feeNative: 7n }, true, true],
    ['final', 'solana', { state: 'final', feeNative: 5_000n }, { kind: 'final', feeNative: 5_000n }, true, true],
    ['included', 'ethereum', { state: 'included', confirmations: 2 }, { kind: 'included', confirmations: 2 }, true, true],
    ['included', 'solana', { state: 'included', confirmations: 1 }, { kind: 'included', confirmations: 1 }, true, true],
    ['pending', 'ethereum', { state: 'pending' }, { kind: 'pending' }, true, true],
    ['pending', 'solana', { state: 'pending' }, { kind: 'pending' }, true, true],
    ['unknown to the node', 'ethereum', { state: 'unknown' }, { kind: 'unknown', reachable: true }, false, true],
    ['unknown to the node', 'solana', { state: 'unknown' }, { kind: 'unknown', reachable: true }, false, true],
    ['node unreachable', 'ethereum', null, { kind: 'unknown', reachable: false }, false, true],
    ['node unreachable', 'solana', null, { kind: 'unknown', reachable: false }, false, true],
    [
      'mined and reverted',
      'ethereum',
      reverted,
      { kind: 'cannot_land', onChain: true, reason: 'reverted', feeNative: 21_000n, detail: 'execution reverted' },
      false,
      false,
    ],
    [
      'failed without details',
      'solana',
      { state: 'failed', reason: 'insufficient_funds', feeNative: 5_000n },
      { kind: 'cannot_land', onChain: true, reason: 'insufficient_funds', feeNative: 5_000n, detail: 'insufficient_funds' },
      false,
      false,
    ],
    [
      'expired',
      'ethereum',
      { state: 'expired' },
      { kind: 'cannot_land', onChain: false, reason: 'dropped', feeNative: 0n, detail: 'the transaction can no longer land' },
      false,
      false,
    ],
    [
      'expired',
      'solana',
      { state: 'expired' },
      { kind: 'cannot_land', onChain: false, reason: 'blockhash_expired', feeNative: 0n, detail: 'the transaction can no longer land' },
      false,
      false,
    ],
  ];

  it.each(cases)('%s on %s', (_name, chain, status, verdict, reached, mayLand) => {
    const actual = transferVerdict(status, { chain });
    expect(actual).toEqual(verdict);
    expect(hasReachedChain(actual)).toBe(reached);
    expect(mayStillLand(actual)).toBe(mayLand);
  });

  it('covers every state a chain can report', () => {
    const states = new Set(cases.map(([, , status]) => status?.state ?? 'unreachable'));
    expect([...states].sort()).toEqual(['expired', 'failed', 'final', 'included', 'pending', 'unknown', 'unreachable']);
  });
});

describe('decideConfirmation', () => {
  const broadcastAt = new Date('2026-03-01T12:00:00.000Z');
  const fresh = new Date('2026-03-01T12:01:00.000Z'); // 60 s after broadcast
  const late = new Date('2026-03-01T12:10:01.000Z'); // 601 s after broadcast
  const v = (status: TxStatus | null) => transferVerdict(status, { chain: 'solana' });
  const cases: [string, TransferVerdict, 'broadcasted' | 'pending_confirmation' | 'manual_review', Date, ConfirmationAction][] = [
    ['final settles', v({ state: 'final', feeNative: 9n }), 'broadcasted', fresh, { kind: 'settle', feeNative: 9n }],
    ['final settles even when late', v({ state: 'final', feeNative: 9n }), 'pending_confirmation', late, { kind: 'settle', feeNative: 9n }],
    ['final settles from manual review', v({ state: 'final', feeNative: 9n }), 'manual_review', late, { kind: 'settle', feeNative: 9n }],
    ['reverted fails', v(reverted), 'broadcasted', fresh, { kind: 'fail', reason: 'reverted', feeNative: 21_000n, detail: 'execution reverted' }],
    [
      'expired fails from manual review',
      v({ state: 'expired' }),
      'manual_review',
      late,
      { kind: 'fail', reason: 'blockhash_expired', feeNative: 0n, detail: 'the transaction can no longer land' },
    ],
    ['included moves to pending_confirmation', v({ state: 'included', confirmations: 1 }), 'broadcasted', fresh, { kind: 'pending_confirmation' }],
    ['included waits once pending_confirmation', v({ state: 'included', confirmations: 5 }), 'pending_confirmation', fresh, { kind: 'wait' }],
    ['pending waits', v({ state: 'pending' }), 'broadcasted', fresh, { kind: 'wait' }],
    ['unknown is re-sent', v({ state: 'unknown' }), 'broadcasted', fresh, { kind: 'resend' }],
    ['unreachable waits', v(null), 'broadcasted', fresh, { kind: 'wait' }],
    ['pending past the threshold goes to manual review', v({ state: 'pending' }), 'broadcasted', late, { kind: 'manual_review' }],
    ['included past the threshold goes to manual review', v({ state: 'included', confirmations: 1 }), 'pending_confirmation', late, { kind: 'manual_review' }],
    ['unknown past the threshold goes to manual review', v({ state: 'unknown' }), 'broadcasted', late, { kind: 'manual_review' }],
    ['in manual review, unknown is re-sent', v({ state: 'unknown' }), 'manual_review', late, { kind: 'resend' }],
    ['in manual review, pending waits', v({ state: 'pending' }), 'manual_review', late, { kind: 'wait' }],
    ['in manual review, unreachable waits', v(null), 'manual_review', late, { kind: 'wait' }],
  ];
  it.each(cases)('%s', (_name, verdict, intentStatus, now, action) => {
    expect(decideConfirmation({ verdict, intentStatus, purpose: 'transfer', txPayments: 1, broadcastAt, now, stuckAfterSeconds: 600 })).toEqual(action);
  });

  it('an on-chain batch that cannot land retries each of its payments alone instead of failing them', () => {
    const input = { intentStatus: 'broadcasted' as const, purpose: 'transfer' as const, broadcastAt, now: fresh, stuckAfterSeconds: 600 };
    expect(decideConfirmation({ ...input, verdict: v(reverted), txPayments: 5 })).toEqual({
      kind: 'retry_alone',
      reason: 'reverted',
      feeNative: 21_000n,
      detail: 'execution reverted',
    });
    expect(decideConfirmation({ ...input, verdict: v({ state: 'expired' }), txPayments: 2 }).kind).toBe('retry_alone');
    // Settling, waiting and escalating are the same for a batch as for one payment.
    expect(decideConfirmation({ ...input, verdict: v({ state: 'final', feeNative: 9n }), txPayments: 5 }).kind).toBe('settle');
    expect(decideConfirmation({ ...input, verdict: v({ state: 'pending' }), txPayments: 5, now: late }).kind).toBe('manual_review');
  });

  it('the stuck threshold is "more than" STUCK_AFTER_SECONDS', () => {
    const exactly = new Date(broadcastAt.getTime() + 600_000);
    const input = { verdict: v({ state: 'pending' }), intentStatus: 'broadcasted' as const, purpose: 'transfer' as const, txPayments: 1, broadcastAt, stuckAfterSeconds: 600 };
    expect(decideConfirmation({ ...input, now: exactly }).kind).toBe('wait');
    expect(decideConfirmation({ ...input, now: new Date(exactly.getTime() + 1) }).kind).toBe('manual_review');
  });
});

describe('decideConfirmation of a cancel on chain', () => {
  const at = new Date('2026-03-01T12:00:00.000Z');
  const v = (status: TxStatus | null) => transferVerdict(status, { chain: 'ethereum' });
  const decide = (verdict: TransferVerdict) =>
    decideConfirmation({ verdict, intentStatus: 'manual_review', purpose: 'cancel', txPayments: 1, broadcastAt: at, now: at, stuckAfterSeconds: 600 });

  it('final fails the payment with the cancel\'s fee, never settles it', () => {
    expect(decide(v({ state: 'final', feeNative: 21_000n }))).toEqual({ kind: 'cancelled', feeNative: 21_000n });
  });

  it('its nonce taken by another transaction (the transfer, landed after all) is handled as a failed attempt', () => {
    const taken = v({ state: 'failed', reason: 'nonce_conflict', feeNative: 0n, details: 'nonce used' });
    expect(decide(taken)).toEqual({ kind: 'fail', reason: 'nonce_conflict', feeNative: 0n, detail: 'nonce used' });
  });

  it('unknown to the node is re-sent; pending and included wait', () => {
    expect(decide(v({ state: 'unknown' })).kind).toBe('resend');
    expect(decide(v({ state: 'pending' })).kind).toBe('wait');
    expect(decide(v({ state: 'included', confirmations: 1 })).kind).toBe('wait');
  });
});

// How an inbound transfer is booked, and when an operator may attach one to a payment (decisions 125, 126).
import { describe, expect, it } from 'vitest';
import { attachRefusal, classifyInbound } from '../../src/domain/inbound-match.js';

describe('classifyInbound', () => {
  it('books native currency as gas funding, whoever sent it', () => {
    expect(classifyInbound({ currency: 'native', candidates: ['pi_1'], senderWasPaid: true })).toEqual({ kind: 'funding', status: 'native' });
  });
  it('refunds the one candidate payout; funds with none or several', () => {
    expect(classifyInbound({ currency: 'USDC', candidates: ['pi_1'], senderWasPaid: true })).toEqual({ kind: 'refund', paymentIntentId: 'pi_1' });
    expect(classifyInbound({ currency: 'USDC', candidates: ['pi_1', 'pi_2'], senderWasPaid: true })).toEqual({ kind: 'funding', status: 'ambiguous' });
    expect(classifyInbound({ currency: 'USDC', candidates: [], senderWasPaid: true })).toEqual({ kind: 'funding', status: 'unmatched' });
    expect(classifyInbound({ currency: 'USDC', candidates: [], senderWasPaid: false })).toEqual({ kind: 'funding', status: 'funding' });
  });
});

describe('attachRefusal', () => {
  const transfer = { chain: 'ethereum', currency: 'USDC', from: '0xAbC0000000000000000000000000000000000001', amount: 5_000_000n, paymentIntentId: null };
  const intent = { chain: 'ethereum', status: 'settled', destination: '0xabc0000000000000000000000000000000000001', amountMicros: 5_000_000n };
  const ok = { transfer, intent, intentRefundedBy: null };

  it('accepts a USDC return from the destination (any hex case), up to the payout', () => {
    expect(attachRefusal(ok)).toBeNull();
    expect(attachRefusal({ ...ok, transfer: { ...transfer, amount: 1n } })).toBeNull();
  });
  it('refuses everything else, saying why', () => {
    expect(attachRefusal({ ...ok, transfer: { ...transfer, paymentIntentId: 'pi_x' } })).toContain('already booked');
    expect(attachRefusal({ ...ok, intentRefundedBy: '0xdead' })).toContain('already refunded');
    expect(attachRefusal({ ...ok, intent: { ...intent, status: 'broadcasted' } })).toContain('only a settled payout');
    expect(attachRefusal({ ...ok, transfer: { ...transfer, chain: 'solana' } })).toContain('on solana');
    expect(attachRefusal({ ...ok, transfer: { ...transfer, currency: 'ETH' } })).toContain('not USDC');
    expect(attachRefusal({ ...ok, transfer: { ...transfer, from: '0xabc0000000000000000000000000000000000002' } })).toContain('not from');
    expect(attachRefusal({ ...ok, transfer: { ...transfer, amount: 5_000_001n } })).toContain('larger');
    const solana = { transfer: { ...transfer, chain: 'solana', from: 'AbC' }, intent: { ...intent, chain: 'solana', destination: 'abc' }, intentRefundedBy: null };
    expect(attachRefusal(solana)).toContain('not from'); // base58 is case-sensitive
  });
});

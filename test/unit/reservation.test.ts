// The reservation decision of a batch, as a table: arrival order, funds per chain, idempotency, quotes, checks.
import { potOf } from '../../src/domain/token.js';
import { describe, expect, it } from 'vitest';
import { decideReservations, keyOf, type BatchFacts, type QuoteFacts, type ReservationRequest } from '../../src/domain/reservation.js';

const now = new Date('2026-03-01T12:00:00.000Z');
const later = new Date('2026-03-01T12:05:00.000Z');
const quote = (id: string, amountMicros: bigint, chain: 'ethereum' | 'solana' = 'solana', merchantId = 'mer_a'): QuoteFacts => ({
  id,
  merchantId,
  amountMicros,
  expiresAt: later,
  chain,
  token: 'usdc',
  destination: 'dest',
});
const req = (quoteId: string, idempotencyKey: string, merchantId = 'mer_a'): ReservationRequest => ({ merchantId, quoteId, idempotencyKey });
const facts = (over: Partial<BatchFacts> = {}): BatchFacts => ({
  existing: new Map(),
  quotes: new Map([
    ['q10', quote('q10', 10n)],
    ['q30', quote('q30', 30n)],
    ['qeth', quote('qeth', 30n, 'ethereum')],
    ['qb', quote('qb', 5n, 'solana', 'mer_b')],
    ['qold', { ...quote('qold', 1n), expiresAt: now }],
  ]),
  available: new Map([
    [potOf('solana', 'usdc'), 35n],
    [potOf('ethereum', 'usdc'), 30n],
  ]),
  now,
  ...over,
});
const kinds = (requests: ReservationRequest[], f = facts()) =>
  decideReservations(requests, f).map((d) => (d.kind === 'refuse' ? d.refusal.code : d.kind === 'same_as' ? `same_as ${d.index}` : d.kind));

describe('decideReservations', () => {
  it.each<[string, ReservationRequest[], string[]]>([
    ['one fits', [req('q10', 'a')], ['reserve']],
    ['arrival order spends first', [req('q30', 'a'), req('q10', 'b')], ['reserve', 'INSUFFICIENT_BALANCE']],
    ['a smaller one after a refusal fits', [req('q10', 'a'), req('q30', 'b'), req('q10', 'c'), req('q10', 'd')], ['reserve', 'INSUFFICIENT_BALANCE', 'reserve', 'reserve']],
    ['chains have their own funds', [req('q30', 'a'), req('qeth', 'b')], ['reserve', 'reserve']],
    ['unknown quote', [req('nope', 'a')], ['QUOTE_NOT_FOUND']],
    ["another merchant's quote", [req('qb', 'a', 'mer_a')], ['QUOTE_NOT_FOUND']],
    ['the quote of its merchant', [req('qb', 'a', 'mer_b')], ['reserve']],
    ['expired exactly at now', [req('qold', 'a')], ['QUOTE_EXPIRED']],
    ['same key twice, same quote', [req('q10', 'a'), req('q10', 'a')], ['reserve', 'same_as 0']],
    ['same key twice, another quote', [req('q10', 'a'), req('q30', 'a')], ['reserve', 'IDEMPOTENCY_KEY_REUSED']],
    ['same key after a refusal is decided again', [req('nope', 'a'), req('nope', 'a')], ['QUOTE_NOT_FOUND', 'QUOTE_NOT_FOUND']],
    // A refused request stores nothing, so it does not claim its key: as when the two are sent one after the other.
    ['same key, an expired quote then another', [req('qold', 'a'), req('q10', 'a')], ['QUOTE_EXPIRED', 'reserve']],
    ['same key, an unknown quote then another', [req('nope', 'a'), req('q10', 'a'), req('q10', 'a')], ['QUOTE_NOT_FOUND', 'reserve', 'same_as 1']],
    ['same key, refused for funds then a smaller quote', [req('q10', 'x'), req('q30', 'a'), req('q10', 'a')], ['reserve', 'INSUFFICIENT_BALANCE', 'reserve']],
    ['same key, refused then created, then the refused quote again', [req('qold', 'a'), req('q10', 'a'), req('qold', 'a')], ['QUOTE_EXPIRED', 'reserve', 'IDEMPOTENCY_KEY_REUSED']],
    ['keys are per merchant', [req('q10', 'a', 'mer_a'), req('qb', 'a', 'mer_b')], ['reserve', 'reserve']],
  ])('%s', (_name, requests, expected) => expect(kinds(requests)).toEqual(expected));

  it('replays a stored intent for its quote and refuses its key with another', () => {
    const existing = new Map([[keyOf('mer_a', 'a'), { id: 'pi_1', quoteId: 'q10' }]]);
    const decisions = decideReservations([req('q10', 'a'), req('q30', 'a')], facts({ existing }));
    expect(decisions[0]).toEqual({ kind: 'replay', intentId: 'pi_1' });
    expect(decisions[1]).toMatchObject({ kind: 'refuse', refusal: { code: 'IDEMPOTENCY_KEY_REUSED' } });
  });

  it('numbers new intents in order and lets a check refuse one without spending its funds', () => {
    const check = (r: ReservationRequest) =>
      r.idempotencyKey === 'b' ? { code: 'INVALID_REQUEST' as const, message: 'no' } : { approvalAboveMicros: null };
    const decisions = decideReservations([req('q10', 'a'), req('q30', 'b'), req('q10', 'c')], facts({ check }));
    expect(decisions.map((d) => (d.kind === 'reserve' ? d.position : d.kind))).toEqual([0, 'refuse', 1]);
  });

  it('a request its spending policy refuses does not claim its key', () => {
    const check = (_r: ReservationRequest, q: QuoteFacts) =>
      q.id === 'q30' ? { code: 'POLICY_MAX_PAYMENT_EXCEEDED' as const, message: 'too much' } : { approvalAboveMicros: null };
    expect(kinds([req('q30', 'a'), req('q10', 'a')], facts({ check }))).toEqual(['POLICY_MAX_PAYMENT_EXCEEDED', 'reserve']);
  });

  it('tells the check what the batch already reserved for the merchant, and carries its approval threshold', () => {
    const seen: bigint[] = [];
    const check = (r: ReservationRequest, _q: QuoteFacts, reserved: bigint) => {
      seen.push(reserved);
      return r.idempotencyKey === 'c' ? { approvalAboveMicros: 5n } : { approvalAboveMicros: null };
    };
    const decisions = decideReservations([req('q10', 'a'), req('qb', 'x', 'mer_b'), req('q30', 'b'), req('q10', 'c')], facts({ check }));
    // q30 does not fit after q10 (35 available): refused for funds, so it adds nothing to what mer_a reserved.
    expect(decisions.map((d) => (d.kind === 'reserve' ? d.approvalAboveMicros : d.kind))).toEqual([null, null, 'refuse', 5n]);
    expect(seen).toEqual([0n, 0n, 10n, 10n]);
  });
});

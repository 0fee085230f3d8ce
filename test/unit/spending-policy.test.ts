// The spending decision as a table: each policy refuses exactly what it should, in a fixed order, and the merchant's
// overrides replace, lift or inherit the service defaults.
import { describe, expect, it } from 'vitest';
import {
  addressKey,
  decideQuoteAmount,
  decideSpending,
  effectivePolicy,
  type SpendingFacts,
  type SpendingPolicy,
} from '../../src/domain/spending-policy.js';

const usd = (n: number) => BigInt(Math.round(n * 1_000_000));
const NOW = new Date('2026-03-01T12:00:00.000Z');
const OPEN: SpendingPolicy = { maxPaymentMicros: null, dailyLimitMicros: null, approvalAboveMicros: null, approvalAbovePerDayMicros: null, allowlist: false };

function facts(over: Partial<SpendingFacts> = {}): SpendingFacts {
  return { amountMicros: usd(100), chain: 'solana', address: null, volume24hMicros: 0n, withoutApproval24hMicros: 0n, now: NOW, ...over };
}

const listed = (secondsFromNow: number) => ({ usableFrom: new Date(NOW.getTime() + secondsFromNow * 1000) });

describe('decideSpending', () => {
  const cases: Array<[string, Partial<SpendingPolicy>, Partial<SpendingFacts>, string]> = [
    ['no policy', {}, {}, 'allow'],
    ['at the maximum', { maxPaymentMicros: usd(100) }, {}, 'allow'],
    ['one micro above the maximum', { maxPaymentMicros: usd(100) }, { amountMicros: usd(100) + 1n }, 'POLICY_MAX_PAYMENT_EXCEEDED'],
    ['a maximum of 0 freezes payouts', { maxPaymentMicros: 0n }, { amountMicros: 1n }, 'POLICY_MAX_PAYMENT_EXCEEDED'],
    ['daily volume exactly at the limit', { dailyLimitMicros: usd(1000) }, { volume24hMicros: usd(900) }, 'allow'],
    ['daily volume one micro over', { dailyLimitMicros: usd(1000) }, { volume24hMicros: usd(900) + 1n }, 'POLICY_DAILY_LIMIT_EXCEEDED'],
    ['volume already past the limit', { dailyLimitMicros: usd(1000) }, { volume24hMicros: usd(5000) }, 'POLICY_DAILY_LIMIT_EXCEEDED'],
    ['allowlist off: any recipient', { allowlist: false }, { address: null }, 'allow'],
    ['allowlist on, not listed', { allowlist: true }, { address: null }, 'RECIPIENT_NOT_ALLOWED'],
    ['allowlist on, listed and usable', { allowlist: true }, { address: listed(-1) }, 'allow'],
    ['allowlist on, usable exactly now', { allowlist: true }, { address: listed(0) }, 'allow'],
    ['allowlist on, still cooling off', { allowlist: true }, { address: listed(1) }, 'RECIPIENT_COOLING_OFF'],
    ['maximum is judged before the recipient', { maxPaymentMicros: usd(1), allowlist: true }, {}, 'POLICY_MAX_PAYMENT_EXCEEDED'],
    ['recipient is judged before the volume', { dailyLimitMicros: 0n, allowlist: true }, {}, 'RECIPIENT_NOT_ALLOWED'],
    ['approval at the threshold: none needed', { approvalAboveMicros: usd(100) }, {}, 'allow'],
    ['approval above the threshold', { approvalAboveMicros: usd(99.999999) }, {}, 'approval'],
    ['a refusal wins over approval', { approvalAboveMicros: 0n, maxPaymentMicros: usd(50) }, {}, 'POLICY_MAX_PAYMENT_EXCEEDED'],
    ['per day: exactly at the limit with what left unapproved', { approvalAbovePerDayMicros: usd(1000) }, { withoutApproval24hMicros: usd(900) }, 'allow'],
    ['per day: one micro over it', { approvalAbovePerDayMicros: usd(1000) }, { withoutApproval24hMicros: usd(900) + 1n }, 'approval'],
    ['per day: approved volume does not count', { approvalAbovePerDayMicros: usd(1000) }, { volume24hMicros: usd(5000), withoutApproval24hMicros: 0n }, 'allow'],
  ];

  it.each(cases)('%s', (_name, policy, given, expected) => {
    const verdict = decideSpending({ ...OPEN, ...policy }, facts(given));
    const outcome = verdict.kind === 'refuse' ? verdict.code : verdict.needsApproval ? 'approval' : 'allow';
    expect(outcome).toBe(expected);
  });

  it('says how much of the daily limit is left', () => {
    const verdict = decideSpending({ ...OPEN, dailyLimitMicros: usd(1000) }, facts({ volume24hMicros: usd(950) }));
    expect(verdict).toMatchObject({ kind: 'refuse', details: { daily_limit_usd: '1000', remaining_usd: '50' } });
    expect(verdict.kind === 'refuse' && verdict.message).toContain('50 USD left');
  });

  it('tells when a cooling-off recipient becomes payable', () => {
    const verdict = decideSpending({ ...OPEN, allowlist: true }, facts({ address: listed(3600) }));
    expect(verdict).toMatchObject({ kind: 'refuse', details: { usable_from: '2026-03-01T13:00:00.000Z' } });
  });
});

describe('decideQuoteAmount', () => {
  it('refuses only amounts above the maximum; the allowlist and the daily limit wait for the reservation', () => {
    const strict: SpendingPolicy = { maxPaymentMicros: usd(10), dailyLimitMicros: 0n, approvalAboveMicros: null, approvalAbovePerDayMicros: 0n, allowlist: true };
    expect(decideQuoteAmount(strict, usd(10))).toMatchObject({ kind: 'allow' });
    expect(decideQuoteAmount(strict, usd(10) + 1n)).toMatchObject({ kind: 'refuse', code: 'POLICY_MAX_PAYMENT_EXCEEDED' });
  });
});

describe('effectivePolicy', () => {
  const defaults: SpendingPolicy = { maxPaymentMicros: usd(500), dailyLimitMicros: usd(5000), approvalAboveMicros: null, approvalAbovePerDayMicros: usd(300), allowlist: true };

  it('inherits every default without overrides', () => {
    expect(effectivePolicy(defaults, {})).toEqual({
      ...defaults,
      sources: { maxPaymentMicros: 'default', dailyLimitMicros: 'default', approvalAboveMicros: 'default', approvalAbovePerDayMicros: 'default', allowlist: 'default' },
    });
  });

  it('a value replaces the default, null lifts it, false turns the allowlist off', () => {
    const policy = effectivePolicy(defaults, { maxPaymentMicros: usd(50), dailyLimitMicros: null, approvalAboveMicros: usd(10), approvalAbovePerDayMicros: null, allowlist: false });
    expect(policy).toEqual({
      maxPaymentMicros: usd(50),
      dailyLimitMicros: null,
      approvalAboveMicros: usd(10),
      approvalAbovePerDayMicros: null,
      allowlist: false,
      sources: { maxPaymentMicros: 'merchant', dailyLimitMicros: 'merchant', approvalAboveMicros: 'merchant', approvalAbovePerDayMicros: 'merchant', allowlist: 'merchant' },
    });
  });
});

describe('addressKey', () => {
  it('compares Ethereum addresses without case, Solana addresses exactly', () => {
    expect(addressKey('ethereum', '0x52908400098527886E0F7030069857D2E4169EE7')).toBe(addressKey('ethereum', '0x52908400098527886e0f7030069857d2e4169ee7'));
    expect(addressKey('solana', '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM')).not.toBe(addressKey('solana', '9wzdxwbbmkg8ztbnmquxvqrayrzzdsgydlvl9zytawwm'));
  });
});

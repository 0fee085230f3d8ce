// The policy and rate-limit settings: documented defaults (no limits, 600 requests a minute), USD amounts as exact
// micro-units, and a bad value stops start-up naming the variable.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('policy settings', () => {
  it('default to no limits, allowlist off, no cooling-off, 600 requests a minute', () => {
    const c = loadConfig({});
    expect(c.policy).toEqual({ maxPaymentMicros: null, dailyLimitMicros: null, approvalAboveMicros: null, approvalAbovePerDayMicros: null, allowlist: false, addressCoolingOffSeconds: 0 });
    expect(c.rateLimitPerMinute).toBe(600);
  });

  it('parse USD amounts exactly and the other values as documented', () => {
    const c = loadConfig({
      POLICY_MAX_PAYMENT_USD: '2500.5',
      POLICY_DAILY_LIMIT_USD: '0.000001',
      POLICY_APPROVAL_ABOVE_USD: '0',
      POLICY_APPROVAL_ABOVE_USD_PER_DAY: '1000.25',
      POLICY_ALLOWLIST: 'on',
      POLICY_ADDRESS_COOLING_OFF_SECONDS: '86400',
      RATE_LIMIT_PER_MINUTE: '0',
    });
    expect(c.policy).toEqual({
      maxPaymentMicros: 2_500_500_000n,
      dailyLimitMicros: 1n,
      approvalAboveMicros: 0n,
      approvalAbovePerDayMicros: 1_000_250_000n,
      allowlist: true,
      addressCoolingOffSeconds: 86400,
    });
    expect(c.rateLimitPerMinute).toBe(0);
  });

  it.each([
    ['POLICY_MAX_PAYMENT_USD', '-5'],
    ['POLICY_DAILY_LIMIT_USD', '1.0000001'],
    ['POLICY_APPROVAL_ABOVE_USD', 'lots'],
    ['POLICY_MAX_PAYMENT_USD', '1000000000'], // above the largest amount (decision 1)
    ['POLICY_DAILY_LIMIT_USD', '99999999999999999999'],
    ['POLICY_ALLOWLIST', 'yes'],
    ['POLICY_ADDRESS_COOLING_OFF_SECONDS', '-1'],
    ['RATE_LIMIT_PER_MINUTE', '1.5'],
  ])('%s=%s stops start-up naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name}`));
  });
});

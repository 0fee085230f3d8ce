// Gas (decision 28) as pure functions and settings: the low-water reason, a USD fee in native units (rounded up),
// routing's insufficient_gas disqualification, and the new settings' parsing.
import { describe, expect, it } from 'vitest';
import { lowGasReason, usdToNativeUnits } from '../../src/domain/gas.js';
import { loadConfig } from '../../src/config.js';
import { scoreRoutes, type RouteInput } from '../../src/routing/score.js';
import { refusal } from '../helpers/config.js';

const ETH = 10n ** 18n;

describe('lowGasReason', () => {
  const facts = { chain: 'ethereum' as const, currency: 'ETH' as const, decimals: 18, lowWaterUnits: ETH / 20n };
  it('is null at or above the mark', () => {
    expect(lowGasReason({ ...facts, bookedUnits: ETH / 20n })).toBeNull();
    expect(lowGasReason({ ...facts, bookedUnits: ETH })).toBeNull();
  });
  it('names the balance and the mark below it (a negative balance too)', () => {
    expect(lowGasReason({ ...facts, bookedUnits: ETH / 20n - 1n })).toBe(
      'low_gas: the ethereum treasury has 0.049999999999999999 ETH for fees, below the low-water mark of 0.05 ETH',
    );
    expect(lowGasReason({ ...facts, bookedUnits: -5n })).toContain('has -0.000000000000000005 ETH');
  });
});

describe('usdToNativeUnits', () => {
  it.each([
    [1.5, 3000, 18, 500_000_000_000_000n], // 1.5 USD at 3000 USD/ETH = 0.0005 ETH
    [0.00075, 150, 9, 5_000n], // 0.00075 USD at 150 USD/SOL = 5000 lamports
    [0.000001, 150, 9, 7n], // rounded up: a fee is never underestimated
    [0, 3000, 18, 0n],
    [-1, 3000, 18, 0n],
    // What cannot be computed exactly is null, never a RangeError (decision 26).
    [1e308, 3000, 18, null],
    [Number.POSITIVE_INFINITY, 3000, 18, null],
    [Number.NaN, 3000, 18, null],
    [1.5, Number.POSITIVE_INFINITY, 18, null],
    [1e10, 3000, 18, null],
  ])('%f USD at %f USD per unit, %i decimals = %s', (usd, price, decimals, units) => expect(usdToNativeUnits(usd, price, decimals)).toBe(units));
});

describe('routing: insufficient_gas', () => {
  const snapshot = { health_status: 'healthy' as const, estimated_fee_usd: 1, avg_confirmation_seconds: 60, rpc_error_rate: 0 };
  const input = (chain: 'ethereum' | 'solana', gas?: RouteInput['gas'], availableMicros = 1_000_000_000n): RouteInput => ({
    chain,
    snapshot: { chain, ...snapshot },
    availableMicros,
    destination: 'x',
    ...(gas ? { gas } : {}),
  });

  it('disqualifies a chain whose booked gas is below the fee estimate, and only that', () => {
    const decision = scoreRoutes(5_000_000n, 'fast', [input('ethereum', { bookedUnits: 99n, feeUnits: 100n }), input('solana', { bookedUnits: 100n, feeUnits: 100n })]);
    expect(decision.details.map((d) => d.disqualification_reason)).toEqual(['insufficient_gas', null]);
    expect(decision.recommended).toBe('solana');
  });

  it('reports insufficient_balance first when the USDC is missing too, and skips the check without gas facts', () => {
    const decision = scoreRoutes(5_000_000n, 'fast', [input('ethereum', { bookedUnits: 0n, feeUnits: 1n }, 1n), input('solana')]);
    expect(decision.details.map((d) => d.disqualification_reason)).toEqual(['insufficient_balance', null]);
  });
});

describe('settings', () => {
  it('defaults', () => {
    const c = loadConfig({});
    expect([c.chains.ethereum!.gasLowWater, c.chains.solana!.gasLowWater]).toEqual([ETH / 20n, 50_000_000n]);
    expect(c.reconcileIntervalSeconds).toBe(60);
    expect(c.reconcileSurplusGraceSeconds).toBe(300);
    expect(c.operatorWebhookUrl).toBeNull();
    expect(c.operatorWebhookSecret).toBe(c.webhookSigningSecret);
  });

  it('parses decimal native amounts and an operator secret of its own', () => {
    const c = loadConfig({ ETHEREUM_GAS_LOW_WATER: '1.5', SOLANA_GAS_LOW_WATER: '0.000000001', OPERATOR_WEBHOOK_SECRET: 'op-secret' });
    expect([c.chains.ethereum!.gasLowWater, c.chains.solana!.gasLowWater]).toEqual([15n * 10n ** 17n, 1n]);
    expect(c.operatorWebhookSecret).toBe('op-secret');
  });

  it.each([
    ['ETHEREUM_GAS_LOW_WATER', '-1'],
    ['ETHEREUM_GAS_LOW_WATER', '0.0000000000000000001'],
    ['SOLANA_GAS_LOW_WATER', '0.0000000001'],
    ['SOLANA_GAS_LOW_WATER', 'lots'],
    ['RECONCILE_INTERVAL_SECONDS', '0'],
    ['OPERATOR_WEBHOOK_URL', 'not a url'],
    ['OPERATOR_WEBHOOK_SECRET', 'whsec_!!'],
    ['ETH_USD_PRICE', `1${'0'.repeat(400)}`], // Infinity as a number (decision 1)
    ['SOL_USD_PRICE', '1000000001'],
    ['SOL_USD_PRICE', '0'],
  ])('%s=%s stops start-up', (name, value) => {
    expect(refusal({ [name]: value }).variable).toBe(name);
  });
});

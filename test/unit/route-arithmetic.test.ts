// Routing's arithmetic over every number a snapshot or a setting can hold (decision 26): it never throws, every score
// stays a number in 0..1, and a metric outside the accepted ranges disqualifies its chain instead.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { usdToNativeUnits } from '../../src/domain/gas.js';
import type { HealthStatus } from '../../src/domain/health.js';
import type { Priority } from '../../src/domain/priority.js';
import { scoreRoutes, type RouteInput } from '../../src/routing/score.js';
import { AVG_CONFIRMATION_SECONDS_MAX, ESTIMATED_FEE_USD_MAX } from '../../src/routing/snapshot-bounds.js';

const status = fc.constantFrom<HealthStatus>('healthy', 'degraded', 'unhealthy');
const priority = fc.constantFrom<Priority>('low_fee', 'fast', 'reliable');
const decimals = fc.constantFrom(6, 9, 18);
const anyDouble = fc.double(); // NaN, infinities, -0, subnormals and the largest doubles included

/** One chain's route input, its gas from the USD estimate at `price` as the quote path computes it. */
const routeInput = (chain: 'ethereum' | 'solana', metric: fc.Arbitrary<number>, rate: fc.Arbitrary<number>) =>
  routeInputOf(chain, { fee: metric, seconds: metric, rate, price: anyDouble });

const routeInputOf = (
  chain: 'ethereum' | 'solana',
  metrics: { fee: fc.Arbitrary<number>; seconds: fc.Arbitrary<number>; rate: fc.Arbitrary<number>; price: fc.Arbitrary<number> },
) =>
  fc.record({ status, ...metrics, decimals, booked: fc.bigInt() }).map(
    ({ status: health_status, fee, seconds, rate: rpc_error_rate, price, decimals: d, booked }): RouteInput => ({
      chain,
      snapshot: { chain, health_status, estimated_fee_usd: fee, avg_confirmation_seconds: seconds, rpc_error_rate },
      availableMicros: 10n ** 15n,
      destination: 'x',
      gas: { bookedUnits: booked, feeUnits: usdToNativeUnits(fee, price, d) },
    }),
  );

describe('scoreRoutes over any number', () => {
  it('never throws; every score is a number in 0..1 and every candidate is finite', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 15n }),
        priority,
        routeInput('ethereum', anyDouble, anyDouble),
        routeInput('solana', anyDouble, anyDouble),
        (amount, p, ethereum, solana) => {
          const decision = scoreRoutes(amount, p, [ethereum, solana]);
          for (const d of decision.details) {
            for (const score of [d.fee_score, d.latency_score, d.reliability_score, d.final_score]) {
              expect(score).toBeGreaterThanOrEqual(0);
              expect(score).toBeLessThanOrEqual(1);
            }
          }
          for (const c of decision.candidates) {
            expect(Number.isFinite(c.estimated_fee_usd) && Number.isFinite(c.estimated_settlement_seconds)).toBe(true);
          }
        },
      ),
      { numRuns: 2_000 },
    );
  });
});

describe('scoreRoutes over the accepted ranges', () => {
  // What POST /admin/chain-health accepts, and the prices the settings accept (config.ts).
  const accepted = (chain: 'ethereum' | 'solana') =>
    routeInputOf(chain, {
      fee: fc.double({ min: 0, max: ESTIMATED_FEE_USD_MAX, noNaN: true }),
      seconds: fc.double({ min: 0, max: AVG_CONFIRMATION_SECONDS_MAX, noNaN: true }),
      rate: fc.double({ min: 0, max: 1, noNaN: true }),
      price: fc.double({ min: Number.MIN_VALUE, max: 1_000_000_000, noNaN: true }),
    });

  it('prices every fee in native units and never refuses a snapshot as invalid', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 999_999_999_999_999n }), priority, accepted('ethereum'), accepted('solana'), (amount, p, ethereum, solana) => {
        for (const input of [ethereum, solana]) expect(typeof input.gas?.feeUnits).toBe('bigint');
        const decision = scoreRoutes(amount, p, [ethereum, solana]);
        expect(decision.details.map((d) => d.disqualification_reason)).not.toContain('invalid_chain_health');
        for (const d of decision.details) expect(Number.isFinite(d.final_score)).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });
});

// The scoring formula (decisions 21-22), as a table: scores, weights per priority, disqualification and ordering.
import { describe, expect, it } from 'vitest';
import type { Chain } from '../../src/domain/chain.js';
import type { HealthStatus } from '../../src/domain/health.js';
import type { Priority } from '../../src/domain/priority.js';
import {
  feeScore,
  latencyScore,
  reliabilityScore,
  scoreRoutes,
  WEIGHTS,
  type HealthSnapshot,
  type RouteInput,
} from '../../src/routing/score.js';

describe('component scores', () => {
  it.each([
    [0, 1],
    [0.001, 0.999],
    [1, 0.5],
    [3, 0.25],
    [-5, 1], // a negative fee is no fee
  ])('fee %f USD scores %f', (fee, score) => expect(feeScore(fee)).toBe(score));

  it.each([
    [0, 1],
    [13, 0.8219],
    [60, 0.5],
    [180, 0.25],
  ])('settlement in %f s scores %f', (seconds, score) => expect(latencyScore(seconds)).toBe(score));

  it.each<[HealthStatus, number, number]>([
    ['healthy', 0, 1],
    ['healthy', 0.01, 0.99],
    ['degraded', 0, 0.6],
    ['degraded', 0.5, 0.3],
    ['unhealthy', 0, 0],
    ['healthy', 2, 0], // error rates are clamped to 0..1
  ])('%s with error rate %f scores %f', (status, rate, score) => expect(reliabilityScore(status, rate)).toBe(score));
});

const snapshot = (chain: Chain, over: Partial<HealthSnapshot> = {}): HealthSnapshot => ({
  chain,
  health_status: 'healthy',
  estimated_fee_usd: chain === 'ethereum' ? 1.5 : 0.001,
  avg_confirmation_seconds: chain === 'ethereum' ? 180 : 13,
  rpc_error_rate: 0.01,
  ...over,
});

describe('scoreRoutes', () => {
  const both = (eth: Partial<HealthSnapshot> = {}, sol: Partial<HealthSnapshot> = {}, available = [10_000_000n, 10_000_000n]): RouteInput[] => [
    { chain: 'ethereum', snapshot: snapshot('ethereum', eth), availableMicros: available[0]!, destination: '0xabc' },
    { chain: 'solana', snapshot: snapshot('solana', sol), availableMicros: available[1]!, destination: 'So1' },
  ];

  it.each<[Priority, number, number]>([
    // final = w.fee * fee + w.latency * latency + w.reliability * reliability
    ['low_fee', 0.6 * 0.4 + 0.2 * 0.25 + 0.2 * 0.99, 0.6 * 0.999 + 0.2 * 0.8219 + 0.2 * 0.99],
    ['fast', 0.2 * 0.4 + 0.6 * 0.25 + 0.2 * 0.99, 0.2 * 0.999 + 0.6 * 0.8219 + 0.2 * 0.99],
    ['reliable', 0.2 * 0.4 + 0.2 * 0.25 + 0.6 * 0.99, 0.2 * 0.999 + 0.2 * 0.8219 + 0.6 * 0.99],
  ])('%s weighs the scores as documented', (priority, ethereum, solana) => {
    const decision = scoreRoutes(1_000_000n, priority, both());
    expect(decision.details.map((d) => d.final_score)).toEqual([Math.round(ethereum * 1e4) / 1e4, Math.round(solana * 1e4) / 1e4]);
    expect(WEIGHTS[priority].fee + WEIGHTS[priority].latency + WEIGHTS[priority].reliability).toBeCloseTo(1, 10);
    expect(decision.recommended).toBe('solana');
    expect(decision.candidates.map((c) => c.chain)).toEqual(['solana', 'ethereum']);
  });

  it.each<[string, RouteInput[], Chain[], string]>([
    ['no destination', both().map((r) => (r.chain === 'solana' ? { ...r, destination: null } : r)), ['ethereum'], 'no_destination'],
    ['unhealthy', both({}, { health_status: 'unhealthy' }), ['ethereum'], 'unhealthy'],
    ['insufficient balance', both({}, {}, [10_000_000n, 999_999n]), ['ethereum'], 'insufficient_balance'],
  ])('disqualifies solana for %s', (_name, inputs, candidates, reason) => {
    const decision = scoreRoutes(1_000_000n, 'fast', inputs);
    expect(decision.candidates.map((c) => c.chain)).toEqual(candidates);
    expect(decision.details[1]).toMatchObject({ chain: 'solana', disqualified: true, disqualification_reason: reason });
    expect(decision.details[0]).toMatchObject({ chain: 'ethereum', disqualified: false, disqualification_reason: null });
  });

  it('a balance of exactly the amount qualifies', () => {
    expect(scoreRoutes(1_000_000n, 'fast', both({}, {}, [1_000_000n, 1_000_000n])).candidates).toHaveLength(2);
  });

  it('a degraded chain scores lower than the same chain healthy, and can lose the recommendation', () => {
    const healthy = scoreRoutes(1_000_000n, 'reliable', both({ estimated_fee_usd: 0.01, avg_confirmation_seconds: 13 }));
    const degraded = scoreRoutes(1_000_000n, 'reliable', both({ estimated_fee_usd: 0.01, avg_confirmation_seconds: 13 }, { health_status: 'degraded' }));
    expect(degraded.details[1]!.reliability_score).toBe(0.594);
    expect(degraded.details[1]!.final_score).toBeLessThan(healthy.details[1]!.final_score);
    expect(healthy.recommended).toBe('solana');
    expect(degraded.recommended).toBe('ethereum');
  });

  it('breaks ties on the cheaper route, then the faster one', () => {
    const reference = { estimated_fee_usd: 1, avg_confirmation_seconds: 60, rpc_error_rate: 0 }; // 0.2*0.5 + 0.6*0.5 + 0.2*1
    const cheaper = scoreRoutes(1n, 'fast', both(reference, { estimated_fee_usd: 0, avg_confirmation_seconds: 60, rpc_error_rate: 0.5 }));
    expect(cheaper.details.map((d) => d.final_score)).toEqual([0.6, 0.6]);
    expect(cheaper.recommended).toBe('solana');
    const faster = scoreRoutes(1n, 'fast', both(reference, { estimated_fee_usd: 1, avg_confirmation_seconds: 20, rpc_error_rate: 0.75 }));
    expect(faster.details.map((d) => d.final_score)).toEqual([0.6, 0.6]);
    expect(faster.recommended).toBe('solana');
    expect(scoreRoutes(1n, 'fast', both(reference, reference)).recommended).toBe('ethereum'); // a full tie keeps input order
  });

  it('recommends nothing when every chain is disqualified', () => {
    const decision = scoreRoutes(1_000_000n, 'fast', both({ health_status: 'unhealthy' }, { health_status: 'unhealthy' }));
    expect(decision.recommended).toBeNull();
    expect(decision.candidates).toEqual([]);
  });
});

// The chain-health collector (decision 27) against real PostgreSQL: what one collection records, the thresholds, the
// probe window, measured settlement times, that routing reads the latest snapshot, and one snapshot per period
// however many collectors run. Probes are scripted by replacing the adapter's probe(); time moves on the ManualClock.
import pino from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Chain, HealthProbe } from '../../src/chains/port.js';
import { assess, percentile, type ProbeSample } from '../../src/domain/health.js';
import { recordHealthSnapshots } from '../../src/core/health/health-snapshots.js';
import { createTestContext, ETH_ADDRESS, KEY, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { confirm, drainExecution } from '../helpers/workers.js';

const quiet = pino({ level: 'silent' });
const PERIOD_S = 15;
const PERIOD_MS = PERIOD_S * 1000;

/** A probe window from a pattern, newest first: '.' a successful probe, 'x' a failed one. */
function window(pattern: string, latencyMs = 100): ProbeSample[] {
  return [...pattern].map((c) => ({ ok: c === '.', latencyMs }));
}
const oks = (...latencies: number[]): ProbeSample[] => latencies.map((latencyMs) => ({ ok: true, latencyMs }));

describe('assess: the documented thresholds over a window of probes', () => {
  it.each([
    // name, newest-first probes, congestion, status, error rate
    ['no probes yet', window(''), null, 'healthy', 0],
    ['all probes answer', window('.'.repeat(20)), null, 'healthy', 0],
    ['one failure in 20', window('.x' + '.'.repeat(18)), null, 'healthy', 0.05],
    ['error rate exactly 0.1', window('.x.x' + '.'.repeat(16)), null, 'degraded', 0.1],
    ['error rate 0.45', window('.' + 'xx.'.repeat(4) + 'x' + '.'.repeat(6)), null, 'degraded', 0.45],
    ['error rate exactly 0.5', window('.x'.repeat(10)), null, 'unhealthy', 0.5],
    ['two failures in a row', window('xx' + '.'.repeat(18)), null, 'degraded', 0.1],
    ['three failures in a row', window('xxx' + '.'.repeat(17)), null, 'unhealthy', 0.15],
    ['three failures, the newest probe answered', window('.xxx' + '.'.repeat(16)), null, 'degraded', 0.15],
    ['three probes, all failed', window('xxx'), null, 'unhealthy', 1],
    ['only the last 20 probes count', window('.'.repeat(18) + 'xx' + 'x'.repeat(20)), null, 'degraded', 0.1],
    ['older failures fall out of the window', window('.'.repeat(20) + 'x'.repeat(20)), null, 'healthy', 0],
    ['congestion exactly 0.8', window('.'.repeat(20)), 0.8, 'healthy', 0],
    ['congestion above 0.8', window('.'.repeat(20)), 0.81, 'degraded', 0],
    ['unhealthy outranks congestion', window('xxx' + '.'.repeat(17)), 0.95, 'unhealthy', 0.15],
  ] as const)('%s', (_name, probes, congestion, status, rate) => {
    const result = assess(probes, congestion);
    expect(result.health_status).toBe(status);
    expect(result.rpc_error_rate).toBe(rate);
  });

  it('P95 latency: over successful probes of the window, degraded only above 2 s', () => {
    expect(assess([], null).p95_latency_ms).toBeNull();
    expect(assess(window('xxx'), null).p95_latency_ms).toBeNull();
    const ramp = oks(...Array.from({ length: 20 }, (_, i) => (i + 1) * 100));
    expect(assess(ramp, null)).toEqual({ health_status: 'healthy', rpc_error_rate: 0, p95_latency_ms: 1900 });
    expect(assess(oks(...Array<number>(20).fill(2000)), null).health_status).toBe('healthy');
    expect(assess(oks(...Array<number>(20).fill(2001)), null)).toEqual({ health_status: 'degraded', rpc_error_rate: 0, p95_latency_ms: 2001 });
    // Two slow answers in 20 are 10%: above the 95th percentile line.
    expect(assess(oks(2500, 2500, ...Array<number>(18).fill(100)), null)).toEqual({ health_status: 'degraded', rpc_error_rate: 0, p95_latency_ms: 2500 });
    // One slow answer in 20 is the top 5%, which P95 leaves out.
    const single = assess(oks(5000, ...Array<number>(19).fill(100)), null);
    expect(single.health_status).toBe('healthy');
    expect(single.p95_latency_ms).toBeLessThan(2000);
    // A failed probe's latency (a timeout) is not a latency of the node.
    const withTimeouts = assess([{ ok: false, latencyMs: 10_000 }, { ok: false, latencyMs: 10_000 }, ...oks(...Array<number>(18).fill(100))], null);
    expect(withTimeouts).toEqual({ health_status: 'degraded', rpc_error_rate: 0.1, p95_latency_ms: 100 });
    // Slow probes older than the window do not count.
    expect(assess([...oks(...Array<number>(20).fill(100)), ...oks(9000, 9000, 9000)], null).p95_latency_ms).toBe(100);
  });

  it('percentile is nearest-rank', () => {
    expect(percentile([], 95)).toBeNull();
    expect(percentile([7], 95)).toBe(7);
    expect(percentile([5, 1, 4, 2, 3], 50)).toBe(3);
    expect(percentile([5, 1, 4, 2, 3], 100)).toBe(5);
  });
});

// ---------------------------------------------------------------------------------------------------------------

type Step = HealthProbe | 'hang' | 'reject' | 'throw';

interface Snapshot {
  chain: Chain;
  health_status: string;
  estimated_fee_usd: number;
  avg_confirmation_seconds: number;
  rpc_error_rate: number;
  p95_latency_ms: number | null;
  congestion_score: number | null;
  source: string;
  created_at: Date;
}

const ok = (latencyMs = 100, extra: Partial<HealthProbe> = {}): HealthProbe => ({ ok: true, latencyMs, ...extra });
const failed: HealthProbe = { ok: false, latencyMs: 30, error: 'connection refused' };

function useCollector(getContext: () => TestContext) {
  const originals = new Map<Chain, () => Promise<HealthProbe>>();

  /** Makes the chain's next probes answer `step`; a chain not scripted keeps its simulated probe. */
  function script(chain: Chain, step: Step): void {
    const adapter = getContext().ctx.adapters[chain]!;
    if (!originals.has(chain)) originals.set(chain, adapter.probe);
    adapter.probe = () => {
      if (step === 'hang') return new Promise<HealthProbe>(() => undefined);
      if (step === 'reject') return Promise.reject(new Error('ECONNRESET'));
      if (step === 'throw') throw new Error('adapter bug: threw before returning a promise');
      return Promise.resolve(step);
    };
  }

  function restore(): void {
    for (const [chain, probe] of originals) getContext().ctx.adapters[chain]!.probe = probe;
    originals.clear();
  }

  async function collect(steps: Partial<Record<Chain, Step>> = {}): Promise<number> {
    for (const [chain, step] of Object.entries(steps) as [Chain, Step][]) script(chain, step);
    return recordHealthSnapshots({ ...getContext().ctx, log: quiet });
  }

  /** One period later, one collection. */
  async function tick(steps: Partial<Record<Chain, Step>> = {}): Promise<number> {
    getContext().clock.advance(PERIOD_MS);
    return collect(steps);
  }

  async function snapshots(chain?: Chain): Promise<Snapshot[]> {
    const { rows } = await getContext().db.pool.query<Snapshot>(
      `SELECT chain, health_status, estimated_fee_usd, avg_confirmation_seconds, rpc_error_rate, p95_latency_ms,
              congestion_score, source, created_at
         FROM chain_health_snapshots WHERE source = 'collector' AND ($1::text IS NULL OR chain = $1)
        ORDER BY created_at, id`,
      [chain ?? null],
    );
    return rows;
  }

  async function latest(chain: Chain): Promise<Snapshot> {
    const all = await snapshots(chain);
    expect(all.length).toBeGreaterThan(0);
    return all[all.length - 1]!;
  }

  return { script, restore, collect, tick, snapshots, latest };
}

describe('recordHealthSnapshots', () => {
  let t: TestContext;
  const c = useCollector(() => t);

  beforeAll(async () => {
    t = await createTestContext({ HEALTH_COLLECT_SECONDS: String(PERIOD_S), RPC_TIMEOUT_SECONDS: '0.1' });
  });
  afterAll(async () => t.close());
  beforeEach(async () => {
    await t.db.pool.query('TRUNCATE chain_health_snapshots, chain_probes');
    t.clock.advance(PERIOD_MS);
  });
  afterEach(() => c.restore());

  it('records one snapshot per chain with status, fee, settlement time, error rate, P95 latency and congestion', async () => {
    const ethFee = { feeNative: 3_000_000_000_000n, feeUsd: 2.25 };
    const recorded = await c.collect({ ethereum: ok(340, { fee: ethFee, congestion: 0.35 }) });
    expect(recorded).toBe(2);

    const all = await c.snapshots();
    expect(all.map((s) => s.chain).sort()).toEqual(['ethereum', 'solana']);
    const eth = all.find((s) => s.chain === 'ethereum')!;
    expect(eth).toEqual({
      chain: 'ethereum',
      health_status: 'healthy',
      estimated_fee_usd: 2.25,
      // No settled payouts yet and no finality estimate in the probe: the adapter's typical finality.
      avg_confirmation_seconds: t.ctx.adapters.ethereum!.typicalFinalitySeconds,
      rpc_error_rate: 0,
      p95_latency_ms: 340,
      congestion_score: 0.35,
      source: 'collector',
      created_at: t.clock.now(),
    });

    // Solana through the simulated adapter's own probe.
    const sol = all.find((s) => s.chain === 'solana')!;
    const solFee = await t.ctx.adapters.solana!.estimateFee();
    expect(sol.health_status).toBe('healthy');
    expect(sol.estimated_fee_usd).toBe(solFee.feeUsd);
    expect(sol.avg_confirmation_seconds).toBe(t.ctx.adapters.solana!.typicalFinalitySeconds);
    expect(sol.rpc_error_rate).toBe(0);
    expect(sol.p95_latency_ms).toBeGreaterThanOrEqual(20);
    expect(sol.p95_latency_ms).toBeLessThan(80);
    expect(sol.congestion_score).toBeGreaterThanOrEqual(0);
    expect(sol.congestion_score).toBeLessThanOrEqual(0.3);

    // The admin overview shows what the collector measured, P95 and congestion included.
    const overview = (await t.app.inject({ method: 'GET', url: '/admin/overview' })).json();
    expect(overview.chain_health).toContainEqual({
      chain: 'ethereum',
      health_status: 'healthy',
      estimated_fee_usd: 2.25,
      avg_confirmation_seconds: t.ctx.adapters.ethereum!.typicalFinalitySeconds,
      rpc_error_rate: 0,
      p95_latency_ms: 340,
      congestion_score: 0.35,
      recorded_at: t.clock.now().toISOString(),
      status_reason: null,
    });
  });

  it('unhealthy after 3 failed probes in a row; error rate over the last 20 probes', async () => {
    const seen: [string, number][] = [];
    for (let i = 0; i < 17; i++) await c.tick({ ethereum: ok() });
    for (let i = 0; i < 3; i++) {
      await c.tick({ ethereum: failed });
      const s = await c.latest('ethereum');
      seen.push([s.health_status, s.rpc_error_rate]);
    }
    // 1/18, 2/19, then the third failure in a row.
    expect(seen).toEqual([
      ['healthy', 0.0556],
      ['degraded', 0.1053],
      ['unhealthy', 0.15],
    ]);
    // The streak is broken but 3 of the last 20 failed.
    await c.tick({ ethereum: ok() });
    expect(await c.latest('ethereum')).toMatchObject({ health_status: 'degraded', rpc_error_rate: 0.15 });
    // 17 more answers push the first failure out of the window: 2 of 20.
    for (let i = 0; i < 17; i++) await c.tick({ ethereum: ok() });
    expect(await c.latest('ethereum')).toMatchObject({ health_status: 'degraded', rpc_error_rate: 0.1 });
    await c.tick({ ethereum: ok() });
    expect(await c.latest('ethereum')).toMatchObject({ health_status: 'healthy', rpc_error_rate: 0.05 });
    await c.tick({ ethereum: ok() });
    expect(await c.latest('ethereum')).toMatchObject({ health_status: 'healthy', rpc_error_rate: 0 });
    // The other chain's probes are its own.
    const solana = await c.snapshots('solana');
    expect(solana).toHaveLength(40);
    expect(solana.every((s) => s.health_status === 'healthy' && s.rpc_error_rate === 0)).toBe(true);
    // Probes beyond the window are pruned, but never below it.
    const kept = await t.db.pool.query<{ n: number }>("SELECT COUNT(*)::int AS n FROM chain_probes WHERE chain = 'ethereum'");
    expect(kept.rows[0]!.n).toBeGreaterThanOrEqual(20);
    expect(kept.rows[0]!.n).toBeLessThanOrEqual(100);
  });

  it('unhealthy at an error rate of 0.5 without a streak', async () => {
    for (let i = 0; i < 5; i++) {
      await c.tick({ ethereum: failed });
      await c.tick({ ethereum: ok() });
    }
    expect(await c.latest('ethereum')).toMatchObject({ health_status: 'unhealthy', rpc_error_rate: 0.5 });
    await c.tick({ ethereum: ok() });
    expect(await c.latest('ethereum')).toMatchObject({ health_status: 'degraded', rpc_error_rate: 0.4545 });
  });

  it('degraded while the P95 latency of the window is above 2 s, and while congestion is above 0.8', async () => {
    await c.tick({ ethereum: ok(2500) });
    await c.tick({ ethereum: ok(2500) });
    expect(await c.latest('ethereum')).toMatchObject({ health_status: 'degraded', p95_latency_ms: 2500, rpc_error_rate: 0 });
    for (let i = 0; i < 18; i++) await c.tick({ ethereum: ok(100) });
    // 2 slow answers of 20: still above the 95th percentile.
    expect(await c.latest('ethereum')).toMatchObject({ health_status: 'degraded', p95_latency_ms: 2500 });
    await c.tick({ ethereum: ok(100) });
    // The first slow answer left the window; one in 20 is the top 5%.
    expect(await c.latest('ethereum')).toMatchObject({ health_status: 'healthy', p95_latency_ms: 100 });

    await c.tick({ ethereum: ok(100, { congestion: 0.9 }) });
    expect(await c.latest('ethereum')).toMatchObject({ health_status: 'degraded', congestion_score: 0.9 });
    // Congestion is the chain's state now, not an average.
    await c.tick({ ethereum: ok(100, { congestion: 0.2 }) });
    expect(await c.latest('ethereum')).toMatchObject({ health_status: 'healthy', congestion_score: 0.2 });
  });

  it('a probe that hangs past RPC_TIMEOUT_SECONDS, rejects or throws is a failed probe, and the other chain is still collected', async () => {
    await c.tick({ ethereum: ok() });
    for (const step of ['hang', 'reject', 'throw'] as const) expect(await c.tick({ ethereum: step })).toBe(2);
    expect(await c.latest('ethereum')).toMatchObject({ health_status: 'unhealthy', rpc_error_rate: 0.75, p95_latency_ms: 100 });
    const probes = await t.db.pool.query<{ ok: boolean; error: string | null }>(
      "SELECT ok, error FROM chain_probes WHERE chain = 'ethereum' ORDER BY created_at, id",
    );
    expect(probes.rows.map((p) => p.ok)).toEqual([true, false, false, false]);
    expect(probes.rows.slice(1).every((p) => typeof p.error === 'string' && p.error.length > 0)).toBe(true);
    expect(await c.snapshots('solana')).toHaveLength(4);
  });

  it('with several collectors at once, one snapshot per chain and period', async () => {
    for (let period = 1; period <= 4; period++) {
      const recorded = await Promise.all(Array.from({ length: 6 }, () => c.collect()));
      expect(recorded.reduce((a, b) => a + b, 0)).toBe(2);
      expect(await c.snapshots('ethereum')).toHaveLength(period);
      expect(await c.snapshots('solana')).toHaveLength(period);
      t.clock.advance(PERIOD_MS);
    }
  });

  it.each([[[0, 0.3]], [[0, 0.6]], [[0, 0.95]], [[0, 1 / 3, 2 / 3]], [[0, 0.25, 0.5, 0.75]], [[0, 0.1, 0.55, 0.6, 0.9]]])(
    'collectors in several processes, ticking every period at phases %j, record one snapshot per chain and period',
    async (phases) => {
      const periods = 8;
      const start = t.clock.now().getTime() + 0.4 * PERIOD_MS;
      const ticks = Array.from({ length: periods }, (_, k) => phases.map((phase) => start + (k + phase) * PERIOD_MS)).flat();
      ticks.sort((a, b) => a - b);
      for (const at of ticks) {
        t.clock.set(new Date(at));
        await c.collect();
      }
      for (const chain of ['ethereum', 'solana'] as const) {
        const n = (await c.snapshots(chain)).length;
        expect(n).toBeGreaterThanOrEqual(periods);
        expect(n).toBeLessThanOrEqual(periods + 1);
      }
    },
  );

  it('a lone collector records at every tick, even when a tick comes a little early or late', async () => {
    const jitter = [0, 40, -40, 120, -120, 0, 15, -15];
    const start = t.clock.now().getTime();
    for (const [k, ms] of jitter.entries()) {
      t.clock.set(new Date(start + k * PERIOD_MS + ms));
      expect(await c.collect()).toBe(2);
    }
    expect(await c.snapshots('ethereum')).toHaveLength(jitter.length);
  });
});

describe('avg_confirmation_seconds', () => {
  let t: TestContext;
  const c = useCollector(() => t);
  beforeAll(async () => {
    t = await createTestContext({ HEALTH_COLLECT_SECONDS: String(PERIOD_S) });
  });
  afterAll(async () => t.close());

  /** Pays out `count` intents on Solana that reach finality `seconds` after broadcast (confirmed by the worker then). */
  async function settleOnSolana(count: number, seconds: number, key: string): Promise<void> {
    const quote = await t.app.inject({ method: 'POST', url: '/quotes', headers: KEY, payload: { amount_usd: 1, destination: { solana_address: SOL_ADDRESS }, priority: 'fast' } });
    expect(quote.statusCode).toBe(201);
    for (let i = 0; i < count; i++) {
      const res = await t.app.inject({ method: 'POST', url: '/payment_intents', headers: KEY, payload: { quote_id: quote.json().quote_id, idempotency_key: `${key}-${i}` } });
      expect(res.statusCode).toBe(201);
    }
    await drainExecution(t);
    t.clock.advance(seconds * 1000);
    expect((await confirm(t)).settled).toBe(count);
  }

  it("is the adapter's typical finality until 3 payouts settled, then the mean of the last 50, per chain", async () => {
    const typical = { ethereum: t.ctx.adapters.ethereum!.typicalFinalitySeconds, solana: t.ctx.adapters.solana!.typicalFinalitySeconds };
    await c.tick();
    expect((await c.latest('solana')).avg_confirmation_seconds).toBe(typical.solana);

    await settleOnSolana(1, 40, 'a');
    await settleOnSolana(1, 20, 'b');
    await c.tick();
    expect((await c.latest('solana')).avg_confirmation_seconds).toBe(typical.solana);

    await settleOnSolana(1, 33, 'c');
    await c.tick();
    expect((await c.latest('solana')).avg_confirmation_seconds).toBe(31);
    expect((await c.latest('ethereum')).avg_confirmation_seconds).toBe(typical.ethereum);

    // 50 newer payouts at 17 s: the 3 older ones no longer count (with them the mean would be 17.8).
    await settleOnSolana(50, 17, 'd');
    await c.tick();
    expect((await c.latest('solana')).avg_confirmation_seconds).toBe(17);
    expect((await c.latest('ethereum')).avg_confirmation_seconds).toBe(typical.ethereum);
  });
});

describe('routing reads the latest snapshot of each chain', () => {
  let t: TestContext;
  const c = useCollector(() => t);
  beforeAll(async () => {
    t = await createTestContext({ HEALTH_COLLECT_SECONDS: String(PERIOD_S) });
  });
  afterAll(async () => t.close());
  afterEach(() => c.restore());

  const both = { ethereum_address: ETH_ADDRESS, solana_address: SOL_ADDRESS };
  const quote = (destination: object) =>
    t.app.inject({ method: 'POST', url: '/quotes', headers: KEY, payload: { amount_usd: 10, destination, priority: 'low_fee' } });
  const cheapFastEth = (feeUsd: number) => ok(100, { fee: { feeNative: 1n, feeUsd }, finalitySeconds: 5 });

  it('a chain the collector finds unhealthy is disqualified; recovered but degraded, it scores lower', async () => {
    await c.tick({ ethereum: cheapFastEth(0.0001) });
    await c.tick({ ethereum: cheapFastEth(0.0002) });
    let res = await quote(both);
    expect(res.statusCode).toBe(201);
    expect(res.json().recommended_route).toBe('ethereum');
    expect(res.json().candidate_routes[0]).toMatchObject({
      chain: 'ethereum',
      estimated_fee_usd: 0.0002,
      estimated_settlement_seconds: 5,
      reliability_score: 1,
    });

    for (let i = 0; i < 3; i++) await c.tick({ ethereum: failed });
    res = await quote(both);
    expect(res.statusCode).toBe(201);
    expect(res.json().candidate_routes.map((r: { chain: string }) => r.chain)).toEqual(['solana']);
    expect(res.json().recommended_route).toBe('solana');
    const created = await t.app.inject({ method: 'POST', url: '/payment_intents', headers: KEY, payload: { quote_id: res.json().quote_id, idempotency_key: 'route-1' } });
    expect(created.json().selected_chain).toBe('solana');
    const debug = (await t.app.inject({ method: 'GET', url: `/routes/debug/${created.json().payment_intent_id}`, headers: KEY })).json();
    expect(debug.scoring_details.find((d: { chain: string }) => d.chain === 'ethereum')).toMatchObject({ disqualified: true, disqualification_reason: 'unhealthy' });
    expect(debug.chain_health.find((s: { chain: string }) => s.chain === 'ethereum')).toMatchObject({ health_status: 'unhealthy', rpc_error_rate: 0.6 });

    const ethOnly = await quote({ ethereum_address: ETH_ADDRESS });
    expect(ethOnly.statusCode).toBe(422);
    expect(ethOnly.json().code).toBe('NO_ROUTE_AVAILABLE');

    // Answers again: 3 of the last 8 probes failed, so degraded, and reliability 0.6 x (1 - 0.375).
    for (let i = 0; i < 3; i++) await c.tick({ ethereum: cheapFastEth(0.0002) });
    res = await quote(both);
    const eth = res.json().candidate_routes.find((r: { chain: string }) => r.chain === 'ethereum');
    expect(eth).toMatchObject({ reliability_score: 0.375, estimated_fee_usd: 0.0002 });
    expect(res.json().recommended_route).toBe('solana');
  });
});

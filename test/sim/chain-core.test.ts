// The real core (execution and confirmation, as the workers run them) against the simulated chain world: payments on
// both chains settle once each, with and without the chain faults of issue 37.
import type { FastifyInstance } from 'fastify';
import { getAddress } from 'viem';
import { getBase58Decoder } from '@solana/kit';
import { createHash } from 'node:crypto';
import pino from 'pino';
import type PgBoss from 'pg-boss';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { ManualClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import type { AppContext } from '../../src/core/context.js';
import { createGroupCommits } from '../../src/core/group-commits.js';
import { ensureTestMerchant } from '../../src/core/merchants.js';
import { createScreener } from '../../src/core/screening/screener.js';
import { ensureTreasuries } from '../../src/core/treasury.js';
import { startQueue } from '../../src/jobs/queue.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createMetrics } from '../../src/metrics/registry.js';
import { createSimChains, type SimChains } from '../../sim/chain/index.js';
import { scriptedFaults, type ScriptedFaults } from '../../sim/chain/scripted-faults.js';
import { Rng } from '../../sim/rng.js';
import { createPayment, type TestContext } from '../helpers/context.js';
import { createTestDatabase } from '../helpers/db.js';
import { confirm, drainExecution } from '../helpers/workers.js';

interface SimWorld {
  t: TestContext;
  sim: SimChains;
  faults: ScriptedFaults;
}

let world: SimWorld | undefined;
afterEach(async () => {
  await world?.t.close();
  world = undefined;
});

/** A context as test/helpers/context.ts builds it, with the simulated chain world for its adapters. */
async function simWorld(env: Record<string, string> = {}): Promise<SimWorld> {
  const db = await createTestDatabase();
  const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '1000000', ...env, DATABASE_URL: db.url });
  const clock = new ManualClock('2026-03-01T12:00:00.000Z');
  const faults = scriptedFaults();
  const sim = createSimChains({ clock, rng: new Rng(37), faults, chains: config.chainNames });
  const log = pino({ level: 'silent' });
  const boss: PgBoss = await startQueue({ connectionString: db.url, jobTimeoutSeconds: 60, retryDelaySeconds: config.executionRetryDelaySeconds, supervise: false });
  const groupCommits = createGroupCommits({ pool: db.pool, clock, boss, log, config });
  const screener = await createScreener(config, clock, log);
  const ctx: AppContext = { config, pool: db.pool, clock, log, adapters: sim.adapters, boss, metrics: createMetrics(), groupCommits, screener };
  await ensureTreasuries(db.pool, sim.adapters, clock.now());
  await ensureTestMerchant(db.pool, config.devMerchantWebhookUrl, clock.now());
  const app: FastifyInstance = await buildApp(ctx, { merchant: true, admin: true, readiness: { ready: true } });
  const t: TestContext = {
    ctx,
    db,
    clock,
    app,
    boss,
    close: async () => {
      await app.close();
      await screener.close();
      await boss.stop({ graceful: false, wait: true });
      await db.drop();
    },
  };
  world = { t, sim, faults };
  return world;
}

let recipients = 0;
const ethRecipient = () => getAddress(`0x${(++recipients).toString(16).padStart(40, '5')}`);
const solRecipient = () => getBase58Decoder().decode(createHash('sha256').update(`core recipient ${++recipients}`).digest());

async function statuses(t: TestContext): Promise<Map<string, string>> {
  const { rows } = await t.db.pool.query<{ id: string; status: string }>('SELECT id, status FROM payment_intents');
  return new Map(rows.map((r) => [r.id, r.status]));
}

/**
 * The workers' steps by hand, as the clock moves `stepMs` at a time: execution drained, chains brought to the clock,
 * a confirmation round; until every payment is settled or failed, within `steps`.
 */
async function runUntilFinal(w: SimWorld, stepMs: number, steps: number): Promise<Map<string, string>> {
  for (let step = 0; step < steps; step++) {
    await drainExecution(w.t, 1000, { together: true });
    w.t.clock.advance(stepMs);
    w.sim.tick();
    await confirm(w.t);
    const now = await statuses(w.t);
    if ([...now.values()].every((s) => s === 'settled' || s === 'failed')) return now;
  }
  return statuses(w.t);
}

/** Per payment: the transfers of it the chains hold (included or final). */
function landedPerPayment(sim: SimChains): Map<string, number> {
  const counts = new Map<string, number>();
  for (const landed of sim.landedTransfers()) counts.set(landed.paymentId, (counts.get(landed.paymentId) ?? 0) + 1);
  return counts;
}

describe('the core against the simulated chain world', () => {
  it('settles payments on both chains, each paid once on chain, the books matching the chains', async () => {
    const w = await simWorld();
    const { app } = w.t;
    const ids = [
      await createPayment(app, 10, { ethereum_address: ethRecipient() }),
      await createPayment(app, 20, { ethereum_address: ethRecipient() }),
      await createPayment(app, 30, { solana_address: solRecipient() }),
      await createPayment(app, 40, { solana_address: solRecipient() }),
    ];
    const final = await runUntilFinal(w, 15_000, 40);
    expect(ids.map((id) => final.get(id))).toEqual(['settled', 'settled', 'settled', 'settled']);
    const landed = landedPerPayment(w.sim);
    expect(ids.map((id) => landed.get(id))).toEqual([1, 1, 1, 1]);
    expect(w.sim.landedTransfers().every((l) => l.state === 'final')).toBe(true);
    expect((await verifyLedger(w.t.db.pool)).ok).toBe(true);
    for (const chain of ['ethereum', 'solana']) {
      const adapter = w.sim.adapters[chain]!;
      const { rows } = await w.t.db.pool.query<{ n: string }>(
        `SELECT COALESCE(SUM(amount_micros), 0)::text AS n FROM payment_intents WHERE selected_chain = $1 AND status = 'settled'`,
        [chain],
      );
      const paid = w.sim.landedTransfers().filter((l) => l.chain === chain).reduce((sum, l) => sum + l.amountMicros, 0n);
      expect(paid).toBe(BigInt(rows[0]!.n));
      expect(await adapter.treasuryUsdcBalance()).toBe(1_000_000_000_000n - paid);
    }
  });

  it('under every chain fault, no payment is paid twice and every one ends settled or failed', { timeout: 120_000 }, async () => {
    const w = await simWorld();
    const { app } = w.t;
    w.faults.arm('chain.send_timeout_after_accept', 2);
    w.faults.arm('chain.nonce_too_low', 1);
    w.faults.arm('chain.already_known', 1);
    w.faults.arm('chain.blockhash_expired_but_landed', 1);
    w.faults.arm('chain.node_lags', 4);
    w.faults.arm('chain.reorg_below_finality', 3);
    w.faults.arm('chain.dropped_from_pool', 2);
    w.faults.arm('chain.batch_reverted_by_recipient', 1);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await createPayment(app, 5 + i, { ethereum_address: ethRecipient() }));
    for (let i = 0; i < 4; i++) ids.push(await createPayment(app, 5 + i, { solana_address: solRecipient() }));
    const final = await runUntilFinal(w, 15_000, 80);
    expect(ids.map((id) => final.get(id)).filter((s) => s !== 'settled' && s !== 'failed')).toEqual([]);
    const landed = landedPerPayment(w.sim);
    for (const id of ids) {
      expect(landed.get(id) ?? 0, id).toBeLessThanOrEqual(1);
      expect(landed.get(id) ?? 0, id).toBe(final.get(id) === 'settled' ? 1 : 0);
    }
    expect((await verifyLedger(w.t.db.pool)).ok).toBe(true);
    // Every fault armed was injected somewhere along the way.
    const kinds = ['chain.send_timeout_after_accept', 'chain.nonce_too_low', 'chain.already_known', 'chain.blockhash_expired_but_landed', 'chain.node_lags', 'chain.reorg_below_finality', 'chain.dropped_from_pool', 'chain.batch_reverted_by_recipient'] as const;
    expect(Object.fromEntries(kinds.map((kind) => [kind, w.faults.armed(kind)]))).toEqual(Object.fromEntries(kinds.map((kind) => [kind, 0])));
  });
});

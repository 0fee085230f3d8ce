// The simulated chain world under a real application context, as test/helpers/context.ts builds one, and the workers'
// steps by hand: what the chain-*.test.ts files that run the core against the simulated chains share.
import type { FastifyInstance } from 'fastify';
import { getAddress } from 'viem';
import { getBase58Decoder } from '@solana/kit';
import { createHash } from 'node:crypto';
import pino from 'pino';
import type PgBoss from 'pg-boss';
import { buildApp } from '../../src/api/app.js';
import { ManualClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import type { AppContext } from '../../src/core/context.js';
import { createGroupCommits } from '../../src/core/group-commits.js';
import { ensureTestMerchant } from '../../src/core/merchants/merchants.js';
import { createScreener } from '../../src/core/screening/screener.js';
import { ensureTreasuries } from '../../src/core/treasury/treasury.js';
import { startQueue } from '../../src/jobs/queue.js';
import { createMetrics } from '../../src/metrics/registry.js';
import { reconcile } from '../../src/core/treasury/reconcile.js';
import { treasuryNativeBalances } from '../../src/ledger/native-balances.js';
import { createSimChains, type SimChains } from '../../sim/chain/index.js';
import { scriptedFaults, type ScriptedFaults } from '../../sim/chain/scripted-faults.js';
import type { FaultPlan } from '../../sim/faults/plan.js';
import { Rng } from '../../sim/rng.js';
import type { TestContext } from '../helpers/context.js';
import { createTestDatabase } from '../helpers/db.js';
import { confirm, drainExecution } from '../helpers/workers.js';

export interface SimWorld {
  t: TestContext;
  sim: SimChains;
  faults: ScriptedFaults;
}

/**
 * A context as test/helpers/context.ts builds it, with the simulated chain world for its adapters: faults from `plan`,
 * or armed by hand on the scripted plan it answers.
 */
export async function simWorld(env: Record<string, string> = {}, plan?: FaultPlan, seed = 37): Promise<SimWorld> {
  const db = await createTestDatabase();
  const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '1000000', ADMIN_RATE_LIMIT_PER_MINUTE: '0', ...env, DATABASE_URL: db.url });
  const clock = new ManualClock('2026-03-01T12:00:00.000Z');
  const faults = scriptedFaults();
  const sim = createSimChains({ clock, rng: new Rng(seed), faults: plan ?? faults, chains: config.chainNames });
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
  return { t, sim, faults };
}

let recipients = 0;
export const ethRecipient = () => getAddress(`0x${(++recipients).toString(16).padStart(40, '5')}`);
export const solRecipient = () => getBase58Decoder().decode(createHash('sha256').update(`core recipient ${++recipients}`).digest());

export async function statuses(t: TestContext): Promise<Map<string, string>> {
  const { rows } = await t.db.pool.query<{ id: string; status: string }>('SELECT id, status FROM payment_intents');
  return new Map(rows.map((r) => [r.id, r.status]));
}

/**
 * The workers' steps by hand, as the clock moves `stepMs` at a time: execution drained, chains brought to the clock,
 * a confirmation round; until every payment is settled or failed, within `steps`.
 */
export async function runUntilFinal(w: SimWorld, stepMs: number, steps: number): Promise<Map<string, string>> {
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
export function landedPerPayment(sim: SimChains): Map<string, number> {
  const counts = new Map<string, number>();
  for (const landed of sim.landedTransfers()) counts.set(landed.paymentId, (counts.get(landed.paymentId) ?? 0) + 1);
  return counts;
}



/**
 * Once every payment is final: the books and the chains agree, USDC by reconciliation, and the native currency the
 * fees took (a fee booked twice, or on the wrong transaction, shows here). Per chain: [books, chain].
 */
export async function booksAgainstChains(w: SimWorld): Promise<{ usdc: Record<string, string>; native: Record<string, readonly [bigint, bigint]> }> {
  const report = await reconcile(w.t.db.pool, w.sim.adapters);
  const native = await treasuryNativeBalances(w.t.db.pool);
  return {
    usdc: Object.fromEntries(report.map((r) => [r.chain, r.status])),
    native: Object.fromEntries(
      await Promise.all(native.map(async (n) => [n.chain, [n.units, await w.sim.adapters[n.chain]!.treasuryNativeBalance()]] as const)),
    ),
  };
}

/** What booksAgainstChains answers when they agree. */
export async function agreeing(w: SimWorld) {
  const { native } = await booksAgainstChains(w);
  return {
    usdc: Object.fromEntries(Object.keys(w.sim.adapters).map((chain) => [chain, 'ok'])),
    native: Object.fromEntries(Object.entries(native).map(([chain, [, onChain]]) => [chain, [onChain, onChain]])),
  };
}

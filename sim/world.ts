// The world a simulation runs in: a fresh database, the AppContext the service builds (as src/runtime.ts and
// test/helpers/context.ts build it) on a ManualClock only the simulator moves, the simulated chains, a second process on
// the same database (its own pool, queue, adapters and group commits) for the races, and the outside: a webhook
// receiver and a screening provider on loopback, both with faults. Merchant and operator calls go through app.inject().
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getBase58Decoder } from '@solana/kit';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import pino from 'pino';
import type PgBoss from 'pg-boss';
import { buildApp } from '../src/api/app.js';
import { createAdapters } from '../src/chains/factory.js';
import type { ChainAdapters } from '../src/chains/port.js';
import { ManualClock } from '../src/clock.js';
import { loadConfig, type Config } from '../src/config.js';
import type { AppContext } from '../src/core/context.js';
import { createGroupCommits } from '../src/core/group-commits.js';
import { createMerchant, ensureTestMerchant } from '../src/core/merchants/merchants.js';
import { updateMerchantPolicy } from '../src/core/merchants/policies.js';
import { cliAudit } from '../src/cli/actor.js';
import { createScreener } from '../src/core/screening/screener.js';
import { ensureTreasuries } from '../src/core/treasury/treasury.js';
import { migrate } from '../src/db/migrate.js';
import { createPool, type Pool } from '../src/db/pool.js';
import { startQueue } from '../src/jobs/queue.js';
import { createMetrics } from '../src/metrics/registry.js';
import { getAddress } from 'viem';
import { createSimChains, type SimChains } from './chain/index.js';
import { wrapPool } from './faults/db.js';
import type { FaultPlan } from './faults/plan.js';
import { startReceiver, type SimReceiver } from './outside/receiver.js';
import { startScreening, type SimScreening } from './outside/screening.js';
import type { Rng } from './rng.js';

export const SIM_START = '2026-03-01T12:00:00.000Z';
/**
 * The settings a simulated service runs with. The HTTP timeouts are real time: long enough that only a hang (a fault)
 * runs out, never a loaded machine's slow answer, which would make one seed's runs part (decision 222); a hang costs
 * the run one timeout.
 */
export const SIM_SETTINGS = {
  quoteTtlSeconds: 300,
  executionLeaseSeconds: 10,
  stuckAfterSeconds: 600,
  confirmSeconds: 20,
  approvalAboveUsd: 2000,
  webhookTimeoutSeconds: 1,
  webhookRetryDelaySeconds: 1,
  screeningTimeoutSeconds: 1,
  /** Small enough that creations meet INSUFFICIENT_BALANCE now and then, and withdrawals and deposits move it. */
  treasuryUsdc: 3_000,
  /** The splitter merchant's limit per day on what leaves without approval; its payouts are 100 to 500 USD. */
  approvalAboveUsdPerDay: 1_000,
} as const;

/** One process of the service on the world's database. */
export type Process = AppContext;

export interface World {
  seed: string;
  /** The run's own database. */
  databaseUrl: string;
  config: Config;
  clock: ManualClock;
  /** The first process: its app answers the merchants' and operators' calls. */
  ctx: Process;
  /** A second process on the same database (pool, queue, adapters, group commits of its own). */
  second: Process;
  app: FastifyInstance;
  pool: Pool;
  adapters: ChainAdapters;
  /** The simulated chain world (sim/chain), or null on the built-in simulated chains (src/chains/simulated). */
  chains: SimChains | null;
  receiver: SimReceiver;
  screening: SimScreening;
  /** Recipients the merchants pay, per chain, fixed by the seed. */
  recipients: { ethereum: string[]; solana: string[] };
  /**
   * A second merchant, onboarded as an operator does (the CLI's createMerchant and policy change), whose payouts wait
   * for approval once what left without approval in 24 hours would pass SIM_SETTINGS.approvalAboveUsdPerDay
   * (decision 179): the simulator splits payouts under it.
   */
  splitter: { id: string; apiKey: string };
  close(): Promise<void>;
}

export interface WorldOptions {
  seed: string;
  rng: Rng;
  /** The outside world's faults (receiver, screening provider). */
  faults: FaultPlan;
  /** The database's faults, on the processes' pools (sim/faults/db.ts); the simulator's own reads stay clean. */
  dbFaults: FaultPlan;
  /** The chain world's faults; null: the built-in simulated chains (their own SIM_FAILURE_RATE) instead of sim/chain. */
  chainFaults: FaultPlan | null;
  /** Share of sends the simulated chains fail (SIM_FAILURE_RATE). */
  chainFailureRate: number;
  /** The server to create the run's database in; the run's own database is dropped at close. */
  databaseUrl: string;
}

const RECIPIENTS_PER_CHAIN = 12;
/**
 * The recipient of each chain whose screening lookups time out a minute in two (sim/outside/screening.ts): not one of
 * the recipients the simulator may sanction (the first three), so that a refusal is only ever the timeout's.
 */
export const FLAKY_RECIPIENT = 4;

function recipientsOf(seed: string): World['recipients'] {
  const bytes = (chain: string, i: number) => createHash('sha256').update(`${seed}\u0000recipient\u0000${chain}\u0000${i}`).digest();
  return {
    ethereum: Array.from({ length: RECIPIENTS_PER_CHAIN }, (_, i) => getAddress(`0x${bytes('ethereum', i).subarray(0, 20).toString('hex')}`)),
    solana: Array.from({ length: RECIPIENTS_PER_CHAIN }, (_, i) => getBase58Decoder().decode(bytes('solana', i))),
  };
}

export async function createWorld(options: WorldOptions): Promise<World> {
  const closers: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const step of closers.reverse()) await step().catch(() => undefined);
  };
  try {
    const name = `sr_sim_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: options.databaseUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(options.databaseUrl);
    url.pathname = `/${name}`;
    closers.push(async () => {
      if (process.env.SIM_KEEP_DATABASE) return process.stderr.write(`kept database ${name}\n`);
      const dropper = new pg.Client({ connectionString: options.databaseUrl });
      await dropper.connect();
      await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await dropper.end();
    });
    const receiver = await startReceiver(options.faults, { slowMs: Math.floor(SIM_SETTINGS.webhookTimeoutSeconds * 1000 * 0.1) });
    closers.push(() => receiver.close());
    const clock = new ManualClock(SIM_START);
    const recipients = recipientsOf(options.seed);
    const flaky = new Set(FLAKY_RECIPIENT < RECIPIENTS_PER_CHAIN ? [recipients.ethereum[FLAKY_RECIPIENT]!, recipients.solana[FLAKY_RECIPIENT]!] : []);
    const screening = await startScreening(options.faults, { nowMs: () => clock.now().getTime(), flaky });
    closers.push(() => screening.close());
    const dataDir = await mkdtemp(join(tmpdir(), 'sr-sim-'));
    closers.push(() => rm(dataDir, { recursive: true, force: true }));

    const config = loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: process.env.SIM_LOG_LEVEL ?? 'silent',
      DATA_DIR: dataDir,
      DATABASE_URL: url.toString(),
      RATE_LIMIT_PER_MINUTE: '1000000',
      // Operators' calls cost no counter write: a seed replays the same statements, and so the same database faults.
      ADMIN_RATE_LIMIT_PER_MINUTE: '0',
      SIM_SEED: options.seed,
      SIM_CONFIRM_SECONDS: String(SIM_SETTINGS.confirmSeconds),
      SIM_TREASURY_USDC: String(SIM_SETTINGS.treasuryUsdc),
      // The built-in simulated chains' own faults until sim/chain lands: sends that time out (half of them after the
      // node took the bytes), refusals, nonce conflicts; decided by SIM_SEED, so replayed by the seed.
      SIM_FAILURE_RATE: String(options.chainFailureRate),
      QUOTE_TTL_SECONDS: String(SIM_SETTINGS.quoteTtlSeconds),
      EXECUTION_LEASE_SECONDS: String(SIM_SETTINGS.executionLeaseSeconds),
      STUCK_AFTER_SECONDS: String(SIM_SETTINGS.stuckAfterSeconds),
      POLICY_APPROVAL_ABOVE_USD: String(SIM_SETTINGS.approvalAboveUsd),
      DEV_MERCHANT_WEBHOOK_URL: receiver.url,
      WEBHOOK_TIMEOUT_SECONDS: String(SIM_SETTINGS.webhookTimeoutSeconds),
      WEBHOOK_RETRY_DELAY_SECONDS: String(SIM_SETTINGS.webhookRetryDelaySeconds),
      SCREENING_URL: screening.url,
      SCREENING_SECRET: 'sim-screening-secret-0123456789abcdef',
      SCREENING_TIMEOUT_SECONDS: String(SIM_SETTINGS.screeningTimeoutSeconds),
      SCREENING_FAIL: 'closed',
    });
    const log = pino({ level: config.logLevel });
    const chains = options.chainFaults ? createSimChains({ clock, rng: options.rng.fork('chains'), faults: options.chainFaults, chains: config.chainNames, openingUsdcMicros: BigInt(SIM_SETTINGS.treasuryUsdc) * 1_000_000n }) : null;
    const pool = createPool(url.toString(), 10);
    closers.push(() => pool.end());
    await migrate(pool);

    const processOn = async (processPool: Pool, first: boolean): Promise<{ ctx: Process; boss: PgBoss }> => {
      const boss = await startQueue({ connectionString: url.toString(), jobTimeoutSeconds: 60, retryDelaySeconds: config.executionRetryDelaySeconds, supervise: false });
      closers.push(() => boss.stop({ graceful: false, wait: true }));
      const metrics = createMetrics();
      // One chain world, seen by both processes, as two processes see one network.
      const adapters = chains ? chains.adapters : await createAdapters(config, processPool, clock, log, metrics);
      const screener = await createScreener(config, clock, log);
      closers.push(() => screener.close());
      if (first) screener.reportListTo({ pool: processPool, clock, log, config });
      const base = { config, pool: processPool, clock, log, adapters, boss, metrics, screener };
      return { ctx: { ...base, groupCommits: createGroupCommits(base) }, boss };
    };
    const { ctx } = await processOn(wrapPool(pool, options.dbFaults, options.rng.fork('db:first')), true);
    await ensureTreasuries(pool, ctx.adapters, clock.now());
    await ensureTestMerchant(pool, config.devMerchantWebhookUrl, clock.now());
    const onboarding = cliAudit('merchant.create', [], { name: 'sim splitter' });
    const { merchant, apiKey } = await createMerchant(pool, config, { name: 'sim splitter', webhookUrl: receiver.url }, clock.now(), onboarding);
    const perDay = { approvalAbovePerDayMicros: BigInt(SIM_SETTINGS.approvalAboveUsdPerDay) * 1_000_000n };
    await updateMerchantPolicy(pool, config, merchant.id, perDay, clock.now(), cliAudit('merchant.policy', [merchant.id], { approval_above_usd_per_day: SIM_SETTINGS.approvalAboveUsdPerDay }));
    const secondPool = createPool(url.toString(), 6);
    closers.push(() => secondPool.end());
    const { ctx: second } = await processOn(wrapPool(secondPool, options.dbFaults, options.rng.fork('db:second')), false);
    const app = await buildApp(ctx, { merchant: true, admin: true, readiness: { ready: true } });
    closers.push(() => app.close());
    return { seed: options.seed, databaseUrl: url.toString(), config, clock, ctx, second, app, pool, adapters: ctx.adapters, chains, receiver, screening, recipients, splitter: { id: merchant.id, apiKey }, close };
  } catch (error) {
    await close();
    throw error;
  }
}

// A full application context on a fresh database: simulated chains, a manual clock, the real queue.
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import type PgBoss from 'pg-boss';
import { buildApp } from '../../src/api/app.js';
import { createAdapters } from '../../src/chains/factory.js';
import { ManualClock } from '../../src/clock.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { AppContext } from '../../src/core/context.js';
import { createGroupCommits } from '../../src/core/group-commits.js';
import { createScreener } from '../../src/core/screening/screener.js';
import { ensureTestMerchant } from '../../src/core/merchants/merchants.js';
import { ensureTreasuries } from '../../src/core/treasury/treasury.js';
import { startQueue } from '../../src/jobs/queue.js';
import { createMetrics } from '../../src/metrics/registry.js';
import { createTestDatabase, type TestDatabase } from './db.js';

export interface TestContext {
  ctx: AppContext;
  db: TestDatabase;
  clock: ManualClock;
  app: FastifyInstance;
  boss: PgBoss;
  close(): Promise<void>;
}

/** `database`: another context's, as a restart of the service on it would find it (left for its owner to drop). */
export async function createTestContext(env: Record<string, string> = {}, options: { admin?: boolean; database?: TestDatabase } = {}): Promise<TestContext> {
  const db = options.database ?? (await createTestDatabase());
  // Test files send many requests as one merchant on a clock that barely moves: a limit only where a test sets one.
  const config: Config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    RATE_LIMIT_PER_MINUTE: '1000000',
    ADMIN_RATE_LIMIT_PER_MINUTE: '1000000',
    HEALTH_RATE_LIMIT_PER_MINUTE: '1000000',
    API_KEY_FAILURE_RATE_LIMIT_PER_MINUTE: '1000000',
    ...env,
    DATABASE_URL: db.url,
  });
  const clock = new ManualClock('2026-03-01T12:00:00.000Z');
  const log = pino({ level: config.logLevel });
  const boss = await startQueue({
    connectionString: db.url,
    jobTimeoutSeconds: 60,
    retryDelaySeconds: config.executionRetryDelaySeconds,
    supervise: false,
  });
  const metrics = createMetrics();
  const adapters = await createAdapters(config, db.pool, clock, log, metrics);
  const groupCommits = createGroupCommits({ pool: db.pool, clock, boss, log, config });
  const screener = await createScreener(config, clock, log);
  screener.reportListTo({ pool: db.pool, clock, log, config });
  const ctx: AppContext = { config, pool: db.pool, clock, log, adapters, boss, metrics, groupCommits, screener };
  await ensureTreasuries(db.pool, adapters, clock.now(), (chain) => config.chains[chain]?.tokens.map((t) => t.token) ?? []);
  if (!config.production) await ensureTestMerchant(db.pool, config.devMerchantWebhookUrl, clock.now());
  const app = await buildApp(ctx, { merchant: true, admin: options.admin ?? true, readiness: { ready: true } });
  return {
    ctx,
    db,
    clock,
    app,
    boss,
    close: async () => {
      await app.close();
      await screener.close();
      await boss.stop({ graceful: false, wait: true });
      if (!options.database) await db.drop();
    },
  };
}

/**
 * The context of a second process on the same database (another pool, queue or adapters): its own group commits, as
 * its runtime would build them, never the first context's.
 */
export function secondProcess(ctx: AppContext, overrides: Partial<AppContext>): AppContext {
  const own = { ...ctx, ...overrides };
  return { ...own, groupCommits: createGroupCommits(own) };
}

export const ETH_ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';
export const SOL_ADDRESS = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

export const KEY = { 'x-api-key': 'test-key' };

let paymentKeys = 0;

/** A payment created the way a merchant does it: POST /quotes, then POST /payment_intents. Returns its id. */
export async function createPayment(
  app: FastifyInstance,
  amountUsd: number,
  destination: { ethereum_address?: string; solana_address?: string } = { solana_address: SOL_ADDRESS },
  idempotencyKey = `payment-${process.pid}-${++paymentKeys}`,
): Promise<string> {
  const quote = await app.inject({ method: 'POST', url: '/quotes', headers: KEY, payload: { amount_usd: amountUsd, destination, priority: 'fast' } });
  if (quote.statusCode !== 201) throw new Error(`quote refused: ${quote.body}`);
  const created = await app.inject({
    method: 'POST',
    url: '/payment_intents',
    headers: KEY,
    payload: { quote_id: quote.json().quote_id, idempotency_key: idempotencyKey },
  });
  if (created.statusCode !== 201) throw new Error(`payment intent refused: ${created.body}`);
  return created.json().payment_intent_id as string;
}

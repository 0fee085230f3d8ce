// The api's cache of quote facts (decision 136) against real PostgreSQL: an answer is reused until a committed change
// of a table it was read from sends its topic's notice, from any connection; a rolled-back change sends none; while
// the LISTEN connection is down nothing is cached. The entries' age limit is an hour here, so only a notice can
// refresh them. And the key lookups of concurrent requests share one query without ever reusing an answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticate, createKeyLookups, createMerchant, ensureTestMerchant } from '../../src/core/merchants/merchants.js';
import { revokeApiKey } from '../../src/core/merchants/api-keys.js';
import { NoticeCache } from '../../src/db/notice-cache.js';
import type { FactTopic } from '../../src/db/notify.js';
import { withTransaction } from '../../src/db/pool.js';
import { insertSnapshot } from '../../src/db/queries/snapshots.js';
import { upsertPolicy } from '../../src/db/queries/policies.js';
import { movements } from '../../src/ledger/movements.js';
import { postMany } from '../../src/ledger/store.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/process.js';
import { TEST_AUDIT_CONFIG, testAudit } from '../helpers/audit.js';

const HOUR_MS = 3_600_000;
const AT = new Date('2026-03-01T12:00:00Z');
const CONFIG = { apiKeySalt: 'salt-for-the-cache-test-0123456789', production: true, webhookSsrfGuard: false, webhookAllowedHosts: [], ...TEST_AUDIT_CONFIG };

let db: TestDatabase;
let cache: NoticeCache;

beforeAll(async () => {
  db = await createTestDatabase();
  cache = new NoticeCache(db.pool, { maxAgeMs: HOUR_MS });
  await waitFor('the cache listening', async () => cache.serving, 10_000, 20);
});

afterAll(async () => {
  await cache.close();
  await db.drop();
});

/** An operator's chain-health snapshot, committed on its own. */
async function recordHealth(chain: 'ethereum' | 'solana', status: 'healthy' | 'degraded'): Promise<void> {
  await insertSnapshot(db.pool, {
    chain,
    health_status: status,
    estimated_fee_usd: 0.01,
    avg_confirmation_seconds: 2,
    rpc_error_rate: 0,
    p95_latency_ms: null,
    congestion_score: null,
    source: 'admin',
    created_at: AT,
  });
}

let keys = 0;

/** A loader that counts its calls and answers with that count, cached under a key of its own. */
function counter() {
  let calls = 0;
  return { key: `k${++keys}`, load: async () => ++calls, calls: () => calls };
}

/** Reads the topic until a notice has dropped the answer `before` (the loader then answers something newer). */
async function refreshed(topic: FactTopic, loader: ReturnType<typeof counter>, before: number): Promise<number> {
  return waitFor(`a ${topic} notice`, async () => {
    const value = await cache.get(topic, loader.key, loader.load);
    return value > before ? value : undefined;
  }, 10_000, 10);
}

describe('NoticeCache', () => {
  it('answers from the cache until the topic changes', async () => {
    const loader = counter();
    const first = await cache.get('health', loader.key, loader.load);
    expect(await Promise.all([1, 2, 3].map(() => cache.get('health', loader.key, loader.load)))).toEqual([first, first, first]);
    expect(loader.calls()).toBe(1);
  });

  it('a chain-health snapshot committed elsewhere drops the health facts, and only them', async () => {
    const health = counter();
    const balances = counter();
    const before = await cache.get('health', health.key, health.load);
    const balancesBefore = await cache.get('balances', balances.key, balances.load);
    await recordHealth('solana', 'degraded');
    expect(await refreshed('health', health, before)).toBe(before + 1);
    expect(await cache.get('balances', balances.key, balances.load)).toBe(balancesBefore);
  });

  it('a ledger posting drops the balances when it commits, not when it is rolled back', async () => {
    const balances = counter();
    const before = await cache.get('balances', balances.key, balances.load);
    await withTransaction(db.pool, async (tx) => {
      await postMany(tx, [{ movement: movements.fundUsdc('ethereum', 5_000_000n, 'USDC'), context: { at: AT } }]);
      throw new Error('roll back');
    }).catch(() => undefined);
    // The notice of a later, committed change arrives after any the rollback could have sent: the rollback sent none.
    const health = counter();
    const healthBefore = await cache.get('health', health.key, health.load);
    await recordHealth('ethereum', 'healthy');
    await refreshed('health', health, healthBefore);
    expect(await cache.get('balances', balances.key, balances.load)).toBe(before);

    await withTransaction(db.pool, (tx) => postMany(tx, [{ movement: movements.fundUsdc('ethereum', 5_000_000n, 'USDC'), context: { at: AT } }]));
    expect(await refreshed('balances', balances, before)).toBe(before + 1);
  });

  it('a policy change or a new merchant drops every merchant policy', async () => {
    const policies = counter();
    const before = await cache.get('policies', policies.key, policies.load);
    const { merchant } = await createMerchant(db.pool, CONFIG, { name: 'Cache Test Ltd', webhookUrl: null }, AT, testAudit());
    const afterMerchant = await refreshed('policies', policies, before);
    await upsertPolicy(db.pool, merchant.id, { overrides: { maxPaymentMicros: 10_000_000n } }, AT);
    expect(await refreshed('policies', policies, afterMerchant)).toBe(afterMerchant + 1);
  });

  it('a failed load is not kept', async () => {
    let calls = 0;
    const failing = async () => {
      calls++;
      throw new Error('database away');
    };
    await expect(cache.get('policies', 'mer_x', failing)).rejects.toThrow('database away');
    await expect(cache.get('policies', 'mer_x', failing)).rejects.toThrow('database away');
    expect(calls).toBe(2);
  });

  it('caches nothing while the LISTEN connection is down', async () => {
    const closed = new NoticeCache(db.pool, { maxAgeMs: HOUR_MS });
    await closed.close();
    const loader = counter();
    expect(closed.serving).toBe(false);
    await closed.get('health', loader.key, loader.load);
    await closed.get('health', loader.key, loader.load);
    expect(loader.calls()).toBe(2);
  });

  it('an entry older than its age limit is read again without a notice', async () => {
    let now = 0;
    const aging = new NoticeCache(db.pool, { maxAgeMs: 1_000, monotonicMs: () => now });
    try {
      await waitFor('the second cache listening', async () => aging.serving, 10_000, 20);
      const loader = counter();
      await aging.get('health', loader.key, loader.load);
      now = 1_000;
      await aging.get('health', loader.key, loader.load);
      expect(loader.calls()).toBe(1);
      now = 1_001;
      await aging.get('health', loader.key, loader.load);
      expect(loader.calls()).toBe(2);
    } finally {
      await aging.close();
    }
  });
});

describe('grouped key lookups', () => {
  it('concurrent requests share a query, each gets its own answer, and a revoked key is refused by the next request', async () => {
    const a = await createMerchant(db.pool, CONFIG, { name: 'Group A', webhookUrl: null }, AT, testAudit());
    const b = await createMerchant(db.pool, CONFIG, { name: 'Group B', webhookUrl: null }, AT, testAudit());
    const keys = [a.apiKey, b.apiKey, 'sr_live_unknown', a.apiKey, b.apiKey];
    const lookups = createKeyLookups(db.pool);
    const answers = await Promise.all(keys.map((key) => authenticate(lookups, CONFIG, key)));
    expect(answers.map((m) => m?.id ?? null)).toEqual([a.merchant.id, b.merchant.id, null, a.merchant.id, b.merchant.id]);

    await revokeApiKey(db.pool, CONFIG, a.merchant.id, a.apiKey, AT, testAudit());
    const after = await Promise.all(keys.map((key) => authenticate(lookups, CONFIG, key)));
    expect(after.map((m) => m?.id ?? null)).toEqual([null, b.merchant.id, null, null, b.merchant.id]);
  });

  it('development: an unknown key is the test merchant, an issued key its own merchant, in the same batch', async () => {
    const dev = { ...CONFIG, production: false };
    await ensureTestMerchant(db.pool, null, AT);
    const c = await createMerchant(db.pool, CONFIG, { name: 'Group C', webhookUrl: null }, AT, testAudit());
    const lookups = createKeyLookups(db.pool);
    const answers = await Promise.all(['anything', c.apiKey, 'else'].map((key) => authenticate(lookups, dev, key)));
    expect(answers.map((m) => m?.id)).toEqual(['mer_test', c.merchant.id, 'mer_test']);
    expect(answers[0]!.keyId).toBeNull();
  });
});

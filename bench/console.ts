// `npm run bench:console`: the operator console's reads on a database of 100k payments (BENCH_PAYMENTS). For each
// page the console asks for, the time through the real HTTP route (in-process inject: routing, validation, the use
// case, serialisation), p50 and p95 over repeated runs, and the plan PostgreSQL chose for its SQL: every payment page
// must be an index scan, never a sequential scan of payment_intents. Writes bench/results/console.json. Timings are
// for reading, never asserted: the machine is shared.
//   BENCH_PAYMENTS=100000   payments seeded
//   BENCH_RUNS=30           runs per scenario
import { seedMerchantsAndQuotes } from './lib/seed.js';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApp } from '../src/api/app.js';
import { createAdapters } from '../src/chains/factory.js';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { createGroupCommits } from '../src/core/group-commits.js';
import { createScreener } from '../src/core/screening/screener.js';
import type { AppContext } from '../src/core/context.js';
import { ensureTestMerchant } from '../src/core/merchants/merchants.js';
import { refreshDatabaseGauges } from '../src/core/health/metrics.js';
import { ensureTreasuries } from '../src/core/treasury/treasury.js';
import { listIntents } from '../src/db/queries/intent-list.js';
import { migrate } from '../src/db/migrate.js';
import { createPool, type Queryable } from '../src/db/pool.js';
import { startQueue } from '../src/jobs/queue.js';
import { createMetrics } from '../src/metrics/registry.js';
import { percentile, round } from './lib/load.js';
import { benchServer, createBenchDatabase } from './lib/service.js';

const PAYMENTS = Number(process.env.BENCH_PAYMENTS ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 30);

/** 100k payments over about a month, 20 merchants, 1,000 destinations, both chains; one attempt and event each. */
async function seed(db: Queryable, n: number): Promise<void> {
  await seedMerchantsAndQuotes(db);
  await db.query(
    `INSERT INTO payment_intents (id, merchant_id, quote_id, idempotency_key, amount_micros, status, selected_chain,
       destination_address, created_at, updated_at)
     SELECT 'pi_b' || lpad(g::text, 9, '0'), 'mer_b' || (g % 20 + 1), 'quo_b' || (g % 20 + 1), 'key-' || g, 1000000 + (g % 997) * 10000,
            CASE WHEN g % 1000 = 0 THEN 'manual_review' WHEN g % 100 = 1 THEN 'failed' WHEN g % 500 = 2 THEN 'cancelled'
                 WHEN g > $1 - 200 THEN 'pending_confirmation' ELSE 'settled' END,
            CASE WHEN g % 3 = 0 THEN 'ethereum' ELSE 'solana' END,
            CASE WHEN g % 3 = 0 THEN '0x' || lpad(to_hex(g % 1000), 40, '0') ELSE 'Sol' || md5((g % 1000)::text) END,
            now() - ($1 - g) * interval '26 seconds', now() - ($1 - g) * interval '26 seconds'
       FROM generate_series(1, $1) g`,
    [n],
  );
  await db.query(
    `INSERT INTO payment_attempts (id, payment_intent_id, chain, tx_id, status, signed_tx, estimated_fee_usd, created_at, broadcast_at)
     SELECT 'att_' || substr(i.id, 4), i.id, i.selected_chain,
            CASE WHEN i.selected_chain = 'ethereum' THEN '0x' || md5(i.id) || md5(i.id || 'x') ELSE md5(i.id) || md5(i.id || 'y') END,
            CASE i.status WHEN 'settled' THEN 'confirmed' WHEN 'failed' THEN 'failed' WHEN 'cancelled' THEN 'failed' ELSE 'broadcasted' END,
            'signed', 0.01, i.created_at, i.created_at
       FROM payment_intents i WHERE i.id LIKE 'pi_b%'`,
  );
  await db.query(
    `INSERT INTO webhook_events (id, merchant_id, payment_intent_id, event_type, payload, status, attempts, next_attempt_at, created_at)
     SELECT 'evt_' || substr(i.id, 4), i.merchant_id, i.id, 'payment.' || i.status, '{}',
            CASE WHEN i.id LIKE '%7' THEN 'failed' ELSE 'delivered' END, 1, i.created_at, i.created_at
       FROM payment_intents i WHERE i.id LIKE 'pi_b%' ORDER BY i.created_at`,
  );
  // What autovacuum does to a table after this many inserts: statistics, and a visibility map for index-only scans.
  await db.query('VACUUM ANALYZE');
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

/** The plans of the statements `run` sends, with their execution time, as EXPLAIN ANALYZE reports them. */
async function explain(pool: Queryable, run: (db: Queryable) => Promise<unknown>): Promise<{ scans: string[]; seqScanOfIntents: boolean; executionMs: number }> {
  const plans: { Plan: PlanNode; 'Execution Time': number }[] = [];
  const explaining: Queryable = {
    query: (async (text: string, values?: unknown[]) => {
      const { rows } = await pool.query<{ 'QUERY PLAN': { Plan: PlanNode; 'Execution Time': number }[] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values);
      plans.push(rows[0]!['QUERY PLAN'][0]!);
      return { rows: [], rowCount: 0 };
    }) as Queryable['query'],
  };
  await run(explaining).catch(() => undefined);
  const all = plans.flatMap((p) => nodes(p.Plan));
  return {
    scans: [...new Set(all.filter((n) => n['Node Type'].includes('Scan')).map((n) => `${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : n['Relation Name'] ? ` ${n['Relation Name']}` : ''}`))],
    seqScanOfIntents: all.some((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'payment_intents'),
    executionMs: round(plans.reduce((sum, p) => sum + p['Execution Time'], 0), 2),
  };
}

async function timed(runs: number, fn: () => Promise<unknown>): Promise<{ p50: number; p95: number }> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  return { p50: round(percentile(times, 50), 2), p95: round(percentile(times, 95), 2) };
}

async function main(): Promise<void> {
  const server = await benchServer();
  const serverUrl = server.url;
  const db = await createBenchDatabase(serverUrl);
  const pool = createPool(db.url, 4);
  let app: FastifyInstance | undefined;
  let ctx: AppContext | undefined;
  try {
    await migrate(pool);
    const config = loadConfig({ DATABASE_URL: db.url, LOG_LEVEL: 'silent', ADMIN_RATE_LIMIT_PER_MINUTE: '0' });
    const log = pino({ level: 'silent' });
    const boss = await startQueue({ connectionString: db.url, jobTimeoutSeconds: 60, retryDelaySeconds: 5, supervise: false });
    const metrics = createMetrics({ processMetrics: false });
    const adapters = await createAdapters(config, pool, systemClock, log, metrics);
    await ensureTreasuries(pool, adapters, systemClock.now());
    await ensureTestMerchant(pool, null, systemClock.now());
    const groupCommits = createGroupCommits({ pool, clock: systemClock, boss, log, config });
    const screener = await createScreener(config, systemClock, log);
    ctx = { config, pool, clock: systemClock, log, adapters, boss, metrics, groupCommits, screener };
    app = await buildApp(ctx, { merchant: false, admin: true, readiness: { ready: true } });

    const seedStart = performance.now();
    await seed(pool, PAYMENTS);
    console.log(`seeded ${PAYMENTS} payments (attempts, events) in ${round((performance.now() - seedStart) / 1000, 1)} s`);

    const sample = (await pool.query<{ id: string; tx_id: string; destination_address: string }>(
      `SELECT i.id, a.tx_id, i.destination_address FROM payment_intents i JOIN payment_attempts a ON a.payment_intent_id = i.id
        WHERE i.selected_chain = 'ethereum' ORDER BY i.created_at LIMIT 1 OFFSET $1`,
      [Math.floor(PAYMENTS / 6)],
    )).rows[0]!;
    // Where page 1,000 (of 50) starts, as the cursor of the page before it would say.
    const deep = (await listIntents(pool, {}, null, Math.min(PAYMENTS - 1, 50_000))).at(-1)!.cursor;
    const deepCursor = Buffer.from(JSON.stringify([deep.createdAt, deep.id])).toString('base64url');
    const day = new Date(Date.now() - 10 * 86_400_000).toISOString().slice(0, 10);

    const scenarios: { name: string; url: string; filter: Parameters<typeof listIntents>[1]; after?: typeof deep }[] = [
      { name: 'first page', url: '/admin/payments', filter: {} },
      { name: 'page 1,000 (keyset cursor)', url: `/admin/payments?cursor=${deepCursor}`, filter: {}, after: deep },
      { name: 'status=manual_review (0.1%)', url: '/admin/payments?status=manual_review', filter: { status: 'manual_review' } },
      { name: 'status=settled (97%)', url: '/admin/payments?status=settled', filter: { status: 'settled' } },
      { name: 'chain=ethereum', url: '/admin/payments?chain=ethereum', filter: { chain: 'ethereum' } },
      { name: 'merchant (1 of 20)', url: '/admin/payments?merchant_id=mer_b7', filter: { merchantId: 'mer_b7' } },
      {
        name: 'one day',
        url: `/admin/payments?created_from=${day}T00:00:00.000Z&created_before=${day}T23:59:59.999Z`,
        filter: { createdFrom: new Date(`${day}T00:00:00.000Z`), createdBefore: new Date(`${day}T23:59:59.999Z`) },
      },
      { name: 'search: payment id', url: `/admin/payments?q=${sample.id}`, filter: { search: sample.id } },
      { name: 'search: tx id', url: `/admin/payments?q=${sample.tx_id}`, filter: { search: sample.tx_id } },
      { name: 'search: address (~100 payments)', url: `/admin/payments?q=${sample.destination_address}`, filter: { search: sample.destination_address } },
    ];

    const results: Record<string, unknown>[] = [];
    const line = (name: string, t: { p50: number; p95: number }, plan: string) =>
      console.log(`${name.padEnd(34)} p50 ${String(t.p50).padStart(7)} ms  p95 ${String(t.p95).padStart(7)} ms  ${plan}`);
    console.log('');
    for (const s of scenarios) {
      const http = await timed(RUNS, async () => {
        const res = await app!.inject({ method: 'GET', url: s.url });
        if (res.statusCode !== 200) throw new Error(`${s.url}: ${res.statusCode} ${res.body}`);
      });
      const plan = await explain(pool, (q) => listIntents(q, s.filter, s.after ?? null, 51));
      line(s.name, http, `${plan.seqScanOfIntents ? 'SEQ SCAN of payment_intents; ' : ''}${plan.scans.join(', ')}`);
      results.push({ name: s.name, url: s.url, http, ...plan });
    }
    const others: [string, string][] = [
      ['payment counts by status', '/admin/payment-counts'],
      ['one payment in full', `/admin/payments/${sample.id}`],
      ['treasury', '/admin/treasury'],
      ['webhook events: failed', '/admin/webhook-events?status=failed'],
      ['webhook events: all, page 2', `/admin/webhook-events?status=all&before=evt_b${String(PAYMENTS - 100).padStart(9, '0')}`],
      ['chain health history', '/admin/chain-health'],
    ];
    for (const [name, url] of others) {
      const http = await timed(RUNS, async () => {
        const res = await app!.inject({ method: 'GET', url });
        if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
      });
      line(name, http, '');
      results.push({ name, url, http });
    }
    const counts = await explain(pool, (q) => q.query('SELECT status, COUNT(*)::text AS n FROM payment_intents GROUP BY status'));
    console.log(`${''.padEnd(34)} counts plan: ${counts.scans.join(', ')} (${counts.executionMs} ms)`);
    const gauges = await timed(RUNS, () => refreshDatabaseGauges(ctx!));
    line('metrics: database gauges', gauges, '');
    results.push({ name: 'metrics: database gauges', http: gauges });

    const dir = new URL('./results/', import.meta.url);
    await mkdir(dir, { recursive: true });
    await writeFile(
      new URL('console.json', dir),
      `${JSON.stringify({ at: new Date().toISOString(), machine: { cores: cpus().length, cpu: cpus()[0]?.model ?? null, node: process.version }, payments: PAYMENTS, runs: RUNS, results }, null, 2)}\n`,
    );
    console.log('\nwritten to bench/results/console.json');
    const seq = results.filter((r) => r.seqScanOfIntents);
    if (seq.length > 0) {
      console.log(`\nSEQUENTIAL SCANS: ${seq.map((r) => r.name).join(', ')}`);
      process.exitCode = 1;
    }
  } finally {
    await app?.close();
    await ctx?.boss.stop({ graceful: false, wait: true });
    await pool.end();
    await db.drop();
    await server.stop();
  }
}

await main();

// Benchmarks: quote and payment-intent creation throughput and latency under concurrency, over real HTTP on
// loopback, against PostgreSQL (DATABASE_URL, or a fresh embedded one). Bounded: a fixed number of requests.
//   npm run bench                      defaults: 2000 quotes, 2000 intents, concurrency 32
//   BENCH_REQUESTS=5000 BENCH_CONCURRENCY=64 npm run bench
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { percentile } from '../src/workers/health/assess.js';
import { startRuntime } from '../src/runtime.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const SOL = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

async function benchDatabase(): Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }> {
  const server = process.env.DATABASE_URL;
  if (!server) {
    const dir = await mkdtemp(join(tmpdir(), 'stableroute-bench-'));
    return { env: { DATA_DIR: dir }, cleanup: () => rm(dir, { recursive: true, force: true }) };
  }
  const name = `sr_bench_${randomBytes(4).toString('hex')}`;
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    env: { DATABASE_URL: url.toString() },
    cleanup: async () => {
      const admin = new pg.Client({ connectionString: server });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

async function run(name: string, count: number, request: (i: number) => Promise<Response>) {
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < count; i = next++) {
        const t0 = performance.now();
        const res = await request(i);
        await res.arrayBuffer();
        latencies.push(performance.now() - t0);
        if (res.status >= 300) errors++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const ms = (p: number) => (percentile(latencies, p) ?? 0).toFixed(1);
  console.log(
    `${name.padEnd(22)} ${count} requests, concurrency ${CONCURRENCY}: ${(count / seconds).toFixed(0)} req/s, ` +
      `p50 ${ms(50)} ms, p95 ${ms(95)} ms, p99 ${ms(99)} ms, errors ${errors}`,
  );
}

async function main() {
  const db = await benchDatabase();
  const config = loadConfig({ ...db.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', SIM_TREASURY_USDC: '100000000' });
  const runtime = await startRuntime(config, { api: true, workers: false });
  const base = runtime.addresses.public!;
  const headers = { 'content-type': 'application/json', 'x-api-key': 'bench' };
  try {
    const quoteIds: string[] = [];
    await run('POST /quotes', REQUESTS, async () => {
      const res = await fetch(`${base}/quotes`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ amount_usd: 1.25, destination: { solana_address: SOL }, priority: 'fast' }),
      });
      const copy = res.clone();
      quoteIds.push(((await copy.json()) as { quote_id: string }).quote_id);
      return res;
    });
    await run('POST /payment_intents', REQUESTS, (i) =>
      fetch(`${base}/payment_intents`, { method: 'POST', headers, body: JSON.stringify({ quote_id: quoteIds[i], idempotency_key: `bench-${i}` }) }),
    );
    await run('idempotent replay', REQUESTS, (i) =>
      fetch(`${base}/payment_intents`, { method: 'POST', headers, body: JSON.stringify({ quote_id: quoteIds[i], idempotency_key: `bench-${i}` }) }),
    );
    await run('GET /admin/overview', Math.min(REQUESTS, 500), () => fetch(`${base}/admin/overview`));
    const memory = process.memoryUsage();
    console.log(`memory: rss ${(memory.rss / 2 ** 20).toFixed(0)} MiB, heap used ${(memory.heapUsed / 2 ** 20).toFixed(0)} MiB`);
  } finally {
    await runtime.stop();
    await db.cleanup();
  }
}

await main();

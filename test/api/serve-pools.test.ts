// `serve` runs the api and the workers in one process with a connection pool each (decision 143): a backlog that
// takes every worker connection never makes a request wait for one.
import pino from 'pino';
import type { PoolClient } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startRuntime, type Runtime } from '../../src/runtime.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/process.js';

const KEY = { 'content-type': 'application/json', 'x-api-key': 'serve-pools' };
const SOL = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

let db: TestDatabase;
let runtime: Runtime;
beforeAll(async () => {
  db = await createTestDatabase();
  const config = loadConfig({ DATABASE_URL: db.url, PORT: '0', HOST: '127.0.0.1', SIM_CONFIRM_SECONDS: '1' });
  runtime = await startRuntime(config, { api: true, workers: true }, { log: pino({ level: 'silent' }) });
});
afterAll(async () => {
  await runtime.stop();
  await db.drop();
});

async function post(path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${runtime.addresses.public}${path}`, { method: 'POST', headers: KEY, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe('serve with its workers', () => {
  it('has a pool for the api and another for the workers', () => {
    expect(runtime.pools.api).not.toBe(runtime.pools.workers);
    expect(runtime.ctx.pool).toBe(runtime.pools.api);
  });

  it('quotes and creates payments while every worker connection is taken, and the workers carry on after', async () => {
    // Every connection the workers' pool can give: the workers' own loops hold some at any time and give them back.
    const workers = runtime.pools.workers;
    const held: PoolClient[] = [];
    let intentId: string;
    try {
      while (workers.totalCount < workers.options.max || workers.idleCount > 0) held.push(await workers.connect());
      const quote = await post('/quotes', { amount_usd: 3.5, destination: { solana_address: SOL }, priority: 'fast' });
      expect(quote.status).toBe(201);
      const intent = await post('/payment_intents', { quote_id: quote.json.quote_id, idempotency_key: 'serve-pools-1' });
      expect(intent.status).toBe(201);
      expect(intent.json.status).toBe('route_selected');
      intentId = String(intent.json.payment_intent_id);
    } finally {
      for (const client of held) client.release();
    }
    const status = await waitFor(
      'the payment made while the workers had no connection to settle',
      async () => {
        const res = await fetch(`${runtime.addresses.public}/payment_intents/${intentId}`, { headers: KEY });
        const { status } = (await res.json()) as { status: string };
        return status === 'settled' && status;
      },
      30_000,
    );
    expect(status).toBe('settled');
  });
});

// DATABASE_READ_URL (decision 195): the console's payment list and counts, the exports and the metrics gauges read off a
// standby, and show it: what the standby has not replayed yet is not listed. Nothing that decides about money reads
// there: with the standby cut off, then stopped, quotes, creations, policies, balances and settlements go on on the
// primary, and the export's audit record is the primary's. The console shows the standby's lag. A primary and a
// streaming standby of the test's own.
import pino from 'pino';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startRuntime, type Runtime } from '../../src/runtime.js';
import { emptyReport, payout } from '../helpers/payout-load.js';
import { waitFor } from '../helpers/process.js';
import { startReplicatedPostgres, type ReplicatedPostgres } from '../helpers/replicated-postgres.js';

let pair: ReplicatedPostgres;
let runtime: Runtime;
let base: string;

beforeAll(async () => {
  pair = await startReplicatedPostgres({ synchronous: false });
  const config = loadConfig({
    DATABASE_URL: pair.urls.primary,
    DATABASE_READ_URL: pair.urls.standby,
    PORT: '0',
    HOST: '127.0.0.1',
    RATE_LIMIT_PER_MINUTE: '0',
    SIM_CONFIRM_SECONDS: '0.3',
    CONFIRMATION_POLL_SECONDS: '0.2',
  });
  runtime = await startRuntime(config, { api: true, workers: true }, { log: pino({ level: 'silent' }) });
  base = runtime.addresses.public!;
});
afterAll(async () => {
  await runtime?.stop();
  await pair?.remove();
});

async function get<T = Record<string, unknown>>(path: string): Promise<{ status: number; body: T }> {
  const res = await fetch(`${base}${path}`);
  const text = await res.text();
  return { status: res.status, body: (res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text) as T };
}

/** One payout made and waited for until settled (read on the primary, through the payment's own page). */
async function settledPayout(key: string, i: number): Promise<string> {
  const report = emptyReport();
  await payout(base, key, i, report);
  expect(report.violations).toEqual([]);
  const id = report.created.get(key)!;
  await waitFor(`${id} settled`, async () => (await get(`/admin/payments/${id}`)).body.status === 'settled');
  return id;
}

const listed = async () => (await get<{ data: { id: string }[] }>('/admin/payments')).body.data.map((p) => p.id);

describe('reads off the primary (DATABASE_READ_URL)', () => {
  it('lists, exports and gauges read the standby; money decisions never do; the console shows the lag', { timeout: 120_000 }, async () => {
    const first = await settledPayout('replica-1', 1);
    await pair.waitStandbyCaughtUp();
    expect(await listed()).toContain(first);
    const replica = await get<{ configured: boolean; standby: boolean; lag_seconds: number }>('/admin/read-replica');
    expect(replica.status).toBe(200);
    expect(replica.body).toMatchObject({ configured: true, standby: true });
    expect(replica.body.lag_seconds).toBeGreaterThanOrEqual(0);

    // The standby falls behind: the primary goes on deciding, the lists show what the standby has.
    await pair.detachStandby();
    const second = await settledPayout('replica-2', 2);
    expect(await listed()).toEqual([first]);
    expect((await get('/admin/payment-counts')).body).toMatchObject({ total: 1, by_status: { settled: 1 } });
    const csv = (await get<string>('/admin/exports/payments.csv?from=2000-01-01T00:00:00Z&to=2100-01-01T00:00:00Z')).body;
    expect(csv).toContain(first);
    expect(csv).not.toContain(second);
    const primary = new pg.Client({ connectionString: pair.urls.primary });
    await primary.connect();
    try {
      const audit = await primary.query("SELECT 1 FROM audit_log WHERE action = 'export.payments'");
      expect(audit.rowCount, 'the export is recorded on the primary').toBe(1);
    } finally {
      await primary.end();
    }
    await waitFor('the lag shown', async () => (await get<{ lag_seconds: number }>('/admin/read-replica')).body.lag_seconds >= 1);
    const metrics = (await get<string>('/metrics')).body;
    expect(metrics).toMatch(/^stableroute_payment_intents\{status="settled"\} 1$/m);
    expect(Number(/^stableroute_read_replica_lag_seconds (\S+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);

    // The standby gone: payouts go on; only the reads that were its answer 503.
    await pair.stopStandby('immediate');
    await settledPayout('replica-3', 3);
    expect((await get('/health')).status).toBe(200);
    const list = await get('/admin/payments');
    expect(list.status).toBe(503);
    expect(list.body.code).toBe('SERVICE_UNAVAILABLE');
  });
});

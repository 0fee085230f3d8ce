// GET /metrics: Prometheus text format whose counters and histograms move with real traffic (HTTP requests, a payment
// executed, confirmed and settled on the simulated chain, webhooks delivered to a real receiver) and whose gauges
// read the database at scrape time.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instrumentAdapter } from '../../src/chains/instrumented.js';
import type { ChainAdapter } from '../../src/chains/port.js';
import { deliverDueEvents } from '../../src/core/webhooks/delivery.js';
import { createMetrics } from '../../src/metrics/registry.js';
import { createPayment, createTestContext, KEY, type TestContext } from '../helpers/context.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { confirm, drainExecution } from '../helpers/workers.js';

const SECRET = 'metrics-test-secret';
let t: TestContext;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver(SECRET);
  t = await createTestContext({ DEV_MERCHANT_WEBHOOK_URL: receiver.url, WEBHOOK_SIGNING_SECRET: SECRET, SIM_TREASURY_USDC: '1000' });
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

/** The samples of a scrape, keyed `name{label="value",...}` exactly as written. */
async function scrape(): Promise<Map<string, number>> {
  const res = await t.app.inject({ method: 'GET', url: '/metrics' });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  const samples = new Map<string, number>();
  for (const line of res.body.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

const value = (samples: Map<string, number>, key: string) => samples.get(key) ?? 0;

describe('GET /metrics', () => {
  it('counts HTTP requests by route pattern, a payment to settlement, webhook deliveries and chain calls', async () => {
    const before = await scrape();
    const id = await createPayment(t.app, 25);
    expect((await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/no/such/route' })).statusCode).toBe(404);
    await drainExecution(t);
    t.clock.advance(30_000); // past the simulated Solana finality
    await confirm(t);
    const deps = { pool: t.db.pool, clock: t.clock, config: t.ctx.config, log: pino({ level: 'silent' }), metrics: t.ctx.metrics };
    await deliverDueEvents(deps);
    expect(receiver.events.map((e) => e.event_type)).toContain('payment.settled');

    const after = await scrape();
    const moved = (key: string) => value(after, key) - value(before, key);
    expect(moved('stableroute_http_request_duration_seconds_count{method="POST",route="/quotes",status_code="201"}')).toBe(1);
    expect(moved('stableroute_http_request_duration_seconds_count{method="POST",route="/payment_intents",status_code="201"}')).toBe(1);
    expect(moved('stableroute_http_request_duration_seconds_count{method="GET",route="/payment_intents/:id",status_code="200"}')).toBe(1);
    expect(moved('stableroute_http_request_duration_seconds_count{method="GET",route="unmatched",status_code="404"}')).toBe(1);
    // Never the raw URL: an id in a label would make a series per payment.
    expect([...after.keys()].some((k) => k.includes(id))).toBe(false);

    expect(value(after, 'stableroute_payment_intents{status="settled"}')).toBe(1);
    expect(value(after, 'stableroute_payment_intents{status="manual_review"}')).toBe(0);
    expect(moved('stableroute_payment_creation_to_settlement_seconds_count{chain="solana"}')).toBe(1);
    expect(value(after, 'stableroute_payment_creation_to_settlement_seconds_sum{chain="solana"}')).toBe(30);
    expect(moved('stableroute_payment_finality_to_settlement_seconds_count{chain="solana"}')).toBe(1);
    expect(value(after, 'stableroute_payment_finality_to_settlement_seconds_sum{chain="solana"}')).toBeGreaterThan(0);

    expect(moved('stableroute_webhook_deliveries_total{outcome="delivered"}')).toBe(receiver.events.length);
    expect(moved('stableroute_webhook_delivery_lag_seconds_count{event_type="payment.settled"}')).toBe(1);

    for (const method of ['prepareTransfers', 'broadcast', 'getStatuses']) {
      expect(moved(`stableroute_chain_rpc_duration_seconds_count{chain="solana",adapter="simulated",method="${method}"}`), method).toBeGreaterThan(0);
    }

    expect(value(after, 'stableroute_treasury_balance_usdc{chain="solana",account="available"}')).toBe(975);
    expect(value(after, 'stableroute_treasury_balance_usdc{chain="solana",account="in_flight"}')).toBe(0);
    expect(value(after, 'stableroute_treasury_native_balance{chain="solana",currency="SOL"}')).toBeGreaterThan(0);
    expect(value(after, 'stableroute_confirmation_backlog{chain="solana"}')).toBe(0);
    expect(after.has('stableroute_job_queue_depth{queue="payment-execute",state="waiting"}')).toBe(true);
    expect(after.has('process_cpu_user_seconds_total')).toBe(true);
    expect(after.has('nodejs_eventloop_lag_seconds')).toBe(true);
  });

  it('shows a transfer waiting for finality in the confirmation backlog', async () => {
    await createPayment(t.app, 5);
    await drainExecution(t);
    t.clock.advance(2_000);
    const samples = await scrape();
    expect(value(samples, 'stableroute_confirmation_backlog{chain="solana"}')).toBe(1);
    expect(value(samples, 'stableroute_confirmation_backlog_oldest_age_seconds{chain="solana"}')).toBe(2);
    expect(value(samples, 'stableroute_treasury_balance_usdc{chain="solana",account="in_flight"}')).toBe(5);
  });
});

describe('metrics registries', () => {
  it('are per app: two in one process neither collide nor share values', async () => {
    const a = createMetrics();
    const b = createMetrics();
    a.webhookDeliveries.inc({ outcome: 'delivered' });
    expect((await a.webhookDeliveries.get()).values[0]?.value).toBe(1);
    expect((await b.webhookDeliveries.get()).values).toEqual([]);
  });

  it('the chain decorator times calls and counts failures per method, and leaves local work alone', async () => {
    const metrics = createMetrics({ processMetrics: false });
    const failing = {
      chain: 'ethereum',
      kind: 'rpc',
      treasuryAddress: () => '0xabc',
      head: async () => {
        throw new Error('connection refused');
      },
      treasuryTokenBalance: async () => 5n,
    } as unknown as ChainAdapter;
    const adapter = instrumentAdapter(failing, metrics);
    await expect(adapter.head()).rejects.toThrow('connection refused');
    expect(await adapter.treasuryTokenBalance('usdc')).toBe(5n);
    expect(adapter.treasuryAddress()).toBe('0xabc');
    expect(adapter.prepareReplacement).toBeUndefined();
    const text = await metrics.registry.metrics();
    expect(text).toContain('stableroute_chain_rpc_errors_total{chain="ethereum",adapter="rpc",method="head"} 1');
    expect(text).toContain('stableroute_chain_rpc_duration_seconds_count{chain="ethereum",adapter="rpc",method="treasuryTokenBalance"} 1');
    expect(text).not.toContain('method="treasuryAddress"');
  });
});

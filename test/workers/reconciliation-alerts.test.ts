// Continuous reconciliation and operator alerts (decisions 119, 120) on the simulated chains: every run is kept as
// history (GET /admin/reconciliations, newest first, paged); a mismatch (the simulated wallet changed behind the
// ledger's back) raises one alert, listed at GET /admin/alerts, logged, and POSTed to OPERATOR_WEBHOOK_URL with both
// signatures; the alert resolves when the chain agrees again, and that is announced too.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deliverAlertNotifications } from '../../src/core/operators/alerts.js';
import { runReconciliation } from '../../src/core/treasury/reconcile-runs.js';
import { verifySignature, verifyStandardWebhook } from '../../src/webhook-client/signature.js';
import { signingKeys } from '../../src/webhook-client/secret.js';
import { createTestContext, type TestContext } from '../helpers/context.js';

const SECRET = 'operator-alert-secret-for-tests-0123456789';

interface Received {
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

let t: TestContext;
let server: Server;
const received: Received[] = [];
let answer = 204;
const lines: { msg: string; alert_kind?: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ body: Buffer.concat(chunks).toString('utf8'), headers: req.headers });
      res.statusCode = answer;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/alerts`;
  t = await createTestContext({
    OPERATOR_WEBHOOK_URL: url,
    OPERATOR_WEBHOOK_SECRET: SECRET,
    RECONCILE_INTERVAL_SECONDS: '30',
    RECONCILE_SURPLUS_GRACE_SECONDS: '60',
  });
  // A log that the test reads: the alert's pino line.
  t.ctx.log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string }) });
});

afterAll(async () => {
  await t.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const reconcileNow = () => runReconciliation(t.ctx);
const deliver = () => deliverAlertNotifications(t.ctx);

async function history(query = '') {
  const response = await t.app.inject({ method: 'GET', url: `/admin/reconciliations${query}` });
  expect(response.statusCode).toBe(200);
  return response.json() as { data: { id: number; chain: string; status: string; difference_usdc: string | null; created_at: string }[]; next_cursor: string | null };
}

async function alerts(query = '') {
  const response = await t.app.inject({ method: 'GET', url: `/admin/alerts${query}` });
  expect(response.statusCode).toBe(200);
  return response.json() as {
    data: { id: string; kind: string; chain: string; status: string; message: string; resolved_at: string | null }[];
    next_cursor: string | null;
  };
}

describe('continuous reconciliation', () => {
  it('keeps every run per chain, newest first, paged', async () => {
    expect((await reconcileNow())!.map((r) => r.status)).toEqual(['ok', 'ok']);
    // Another worker process ticking in the same period records nothing.
    t.clock.advance(20_000);
    expect(await reconcileNow()).toBeNull();
    t.clock.advance(10_000);
    await reconcileNow();
    const page = await history('?limit=3');
    expect(page.data).toHaveLength(3);
    expect(page.data.every((r) => r.status === 'ok')).toBe(true);
    expect(page.data[0]!.created_at >= page.data[2]!.created_at).toBe(true);
    expect(page.data[0]!.created_at).toBe(t.clock.now().toISOString());
    const rest = await history(`?limit=3&cursor=${page.next_cursor}`);
    expect(rest.data).toHaveLength(1);
    expect(new Set([...page.data, ...rest.data].map((r) => r.id)).size).toBe(4);
    expect((await history('?chain=solana')).data.every((r) => r.chain === 'solana')).toBe(true);
    expect((await t.app.inject({ method: 'GET', url: '/admin/reconciliations?cursor=abc' })).statusCode).toBe(400);
    expect((await alerts()).data).toEqual([]);
  });

  it('raises one alert on a mismatch, sends it signed, and resolves it when the chain agrees again', async () => {
    // USDC arrives in the simulated wallet without the ledger knowing: a surplus, which a deposit still confirming
    // also shows (decision 118), so it alerts only once it has lasted RECONCILE_SURPLUS_GRACE_SECONDS (60 s here).
    await t.db.pool.query("UPDATE sim_wallets SET initial_usdc_micros = initial_usdc_micros + 5000000 WHERE chain = 'solana'");
    t.clock.advance(30_000);
    const run = await reconcileNow();
    expect(run!.find((r) => r.chain === 'solana')!.status).toBe('mismatch');
    t.clock.advance(30_000);
    await reconcileNow();
    expect((await alerts()).data).toEqual([]); // 30 s of surplus
    t.clock.advance(30_000);
    await reconcileNow(); // 60 s: alerted
    t.clock.advance(30_000);
    await reconcileNow(); // still a mismatch: the same alert, seen again
    const open = (await alerts('?status=open')).data;
    expect(open).toHaveLength(1);
    expect(open[0]).toMatchObject({ kind: 'reconciliation_mismatch', chain: 'solana', status: 'open' });
    expect(open[0]!.message).toContain('difference 5');
    expect(lines.filter((l) => l.alert_kind === 'reconciliation_mismatch' && l.msg.startsWith('operator alert:'))).toHaveLength(1);
    expect((await history('?chain=solana&limit=1')).data[0]).toMatchObject({ status: 'mismatch', difference_usdc: '5' });

    // The receiver fails once: the notification is retried on the schedule, not before.
    answer = 500;
    expect(await deliver()).toBe(1);
    expect(await deliver()).toBe(0);
    answer = 204;
    t.clock.advance(60_000);
    expect(await deliver()).toBe(1);
    expect(received).toHaveLength(2);
    const sent = received[1]!;
    expect(JSON.parse(sent.body)).toMatchObject({ event_type: 'alert.raised', alert: { id: open[0]!.id, kind: 'reconciliation_mismatch', chain: 'solana' } });
    expect(sent.headers['webhook-id']).toBe(received[0]!.headers['webhook-id']);
    expect(verifySignature(SECRET, sent.body, String(sent.headers['x-stableroute-signature']))).toBe(true);
    expect(
      verifyStandardWebhook(
        signingKeys(SECRET).standard[0]!,
        String(sent.headers['webhook-id']),
        Number(sent.headers['webhook-timestamp']),
        sent.body,
        String(sent.headers['webhook-signature']),
      ),
    ).toBe(true);

    // The chain agrees again.
    await t.db.pool.query("UPDATE sim_wallets SET initial_usdc_micros = initial_usdc_micros - 5000000 WHERE chain = 'solana'");
    t.clock.advance(30_000);
    await reconcileNow();
    const all = (await alerts()).data;
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ status: 'resolved', resolved_at: t.clock.now().toISOString() });
    expect(await deliver()).toBe(1);
    expect(JSON.parse(received[2]!.body)).toMatchObject({ event_type: 'alert.resolved', alert: { id: open[0]!.id, status: 'resolved' } });

    // A new mismatch later is a new alert; USDC missing from the wallet alerts at the first run.
    await t.db.pool.query("UPDATE sim_wallets SET initial_usdc_micros = initial_usdc_micros - 1 WHERE chain = 'ethereum'");
    t.clock.advance(30_000);
    await reconcileNow();
    expect((await alerts('?status=open')).data.map((a) => a.chain)).toEqual(['ethereum']);
    expect((await alerts()).data).toHaveLength(2);
    const first = await alerts('?limit=1');
    expect((await alerts(`?limit=1&cursor=${first.next_cursor}`)).data.map((a) => a.chain)).toEqual(['solana']);
    expect((await t.app.inject({ method: 'GET', url: '/admin/alerts?cursor=nope' })).statusCode).toBe(400);
  });
});

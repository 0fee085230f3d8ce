// What a merchant copies from examples/, against a running service (`stableroute serve` as a child process: real
// HTTP, real workers, simulated chains): a client typed by openapi-typescript from the live /openapi.json compiles
// and pays out, and both webhook receivers, configured with the one string `stableroute webhooks secret` printed,
// accept every genuine delivery and refuse tampered and replayed ones.
import { spawn } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hexSignatureReceiver } from '../../examples/webhooks/hex-signature-receiver.js';
import type { StablerouteEvent } from '../../examples/webhooks/http.js';
import { standardWebhooksReceiver } from '../../examples/webhooks/standard-webhooks-receiver.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { freePort, runCommand, startService, waitFor, waitHealthy, type ServiceProcess } from '../helpers/process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OPENAPI_TYPESCRIPT = `${ROOT}node_modules/openapi-typescript/bin/cli.js`;
const TSC = `${ROOT}node_modules/typescript/bin/tsc`;
const KEY = { 'content-type': 'application/json', 'x-api-key': 'dev' };
/** The headers a delivery is signed with, and what the receivers read. */
const DELIVERY_HEADERS = ['content-type', 'user-agent', 'x-stableroute-signature', 'webhook-id', 'webhook-timestamp', 'webhook-signature'];

interface Delivery {
  headers: Record<string, string>;
  body: Buffer;
  /** HTTP status each receiver answered. */
  standard: number;
  hex: number;
}

interface Listening {
  url: string;
  close(): Promise<void>;
}

let db: TestDatabase;
let secret: string;
let service: ServiceProcess | undefined;
let base: string;
const servers: Listening[] = [];
const handled = { standard: [] as Array<{ id: string; event: StablerouteEvent }>, hex: [] as Array<{ id: string; event: StablerouteEvent }> };
const deliveries: Delivery[] = [];
let standardUrl: string;
let hexUrl: string;

async function listen(handler: RequestListener): Promise<Listening> {
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const listening = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  servers.push(listening);
  return listening;
}

function pick(headers: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(DELIVERY_HEADERS.filter((h) => typeof headers[h] === 'string').map((h) => [h, headers[h] as string]));
}

async function send(url: string, headers: Record<string, string>, body: Buffer | string): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

/** Runs a program to completion; a deadline instead of a hang. */
async function run(args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env } });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

beforeAll(async () => {
  db = await createTestDatabase();
  const issued = await runCommand(['webhooks', 'secret'], {});
  expect(issued.code, issued.stderr).toBe(0);
  secret = issued.stdout.trim();

  // The two example receivers, each with the secret string exactly as the service gets it.
  standardUrl = (await listen(standardWebhooksReceiver({ secret, handle: (id, event) => void handled.standard.push({ id, event }) }))).url;
  hexUrl = (await listen(hexSignatureReceiver({ secret, handle: (id, event) => void handled.hex.push({ id, event }) }))).url;
  // The merchant's webhook_url: hands every delivery, bytes and headers untouched, to both receivers and records it.
  const tee = await listen((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const delivery: Delivery = { headers: pick(request.headers), body: Buffer.concat(chunks), standard: 0, hex: 0 };
      void Promise.all([send(standardUrl, delivery.headers, delivery.body), send(hexUrl, delivery.headers, delivery.body)]).then(
        ([standard, hex]) => {
          delivery.standard = standard.status;
          delivery.hex = hex.status;
          deliveries.push(delivery);
          response.statusCode = standard.status === 200 && hex.status === 200 ? 204 : 502;
          response.end();
        },
        () => {
          response.statusCode = 502;
          response.end();
        },
      );
    });
  });

  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  service = startService(['serve'], {
    DATABASE_URL: db.url,
    PORT: String(port),
    HOST: '127.0.0.1',
    WEBHOOK_SIGNING_SECRET: secret,
    DEV_MERCHANT_WEBHOOK_URL: tee.url,
    SIM_CONFIRM_SECONDS: '1',
    CONFIRMATION_POLL_SECONDS: '0.1',
    WEBHOOK_POLL_SECONDS: '0.1',
    HEALTH_COLLECT_SECONDS: '0.5',
  });
  await waitHealthy(base, service);
}, 120_000);

afterAll(async () => {
  if (service && service.child.exitCode === null) {
    service.child.kill('SIGTERM');
    await Promise.race([service.exited, new Promise((resolve) => setTimeout(resolve, 20_000).unref())]);
    if (service.child.exitCode === null) service.child.kill('SIGKILL');
  }
  await Promise.all(servers.map((s) => s.close()));
  await db?.drop();
});

describe('the generated client', () => {
  it('openapi-typescript generates types from the live /openapi.json, and examples/ type-checks against them', { timeout: 120_000 }, async () => {
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const generated = await run([OPENAPI_TYPESCRIPT, `${base}/openapi.json`]);
    expect(generated.code, generated.stderr).toBe(0);
    // The committed types are this output; after a route schema change, `npx vitest run -u <this file>` rewrites them.
    await expect(generated.stdout).toMatchFileSnapshot('../../examples/client/stableroute-api.ts');
    const tsc = await run([TSC, '-p', 'examples/tsconfig.json']);
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.code).toBe(0);
  });

  it('creates a quote and a payment intent against the service', { timeout: 60_000 }, async () => {
    const result = await run(['--import', 'tsx', 'examples/client/create-payment.ts'], {
      STABLEROUTE_URL: base,
      STABLEROUTE_API_KEY: 'dev',
      STABLEROUTE_IDEMPOTENCY_KEY: 'example-order-1',
    });
    expect(result.code, result.stderr).toBe(0);
    const printed = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(printed).toMatchObject({ quote_id: expect.stringMatching(/^quo_/), payment_intent_id: expect.stringMatching(/^pi_/), status: 'route_selected', amount_usd: 25 });
    const read = await fetch(`${base}/payment_intents/${String(printed.payment_intent_id)}`, { headers: KEY });
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ id: printed.payment_intent_id, quote_id: printed.quote_id, idempotency_key: 'example-order-1' });
  });
});

describe('the webhook receivers', () => {
  let settled: Delivery;

  it('accept every genuine delivery of a payout and of a test event, each handled once', { timeout: 60_000 }, async () => {
    const test = await fetch(`${base}/webhooks/test`, { method: 'POST', headers: { 'x-api-key': 'dev' } });
    expect(await test.json()).toMatchObject({ delivered: true, status_code: 204 });
    const events = await waitFor(
      'the payment settled and every event delivered',
      async () => {
        const { rows } = await db.pool.query<{ id: string; event_type: string; status: string }>('SELECT id, event_type, status FROM webhook_events ORDER BY created_at');
        const settledEvent = rows.some((r) => r.event_type === 'payment.settled');
        return settledEvent && rows.every((r) => r.status === 'delivered') ? rows : null;
      },
      45_000,
    );
    const types = ['payment.broadcasted', 'payment.broadcasting', 'payment.created', 'payment.settled', 'webhook.test'];
    expect(events.map((e) => e.event_type).sort()).toEqual(types);

    // Every POST the service made was accepted by both receivers, and nothing was sent twice.
    expect(deliveries).toHaveLength(events.length);
    expect(deliveries.map((d) => [d.standard, d.hex])).toEqual(events.map(() => [200, 200]));
    expect(handled.standard.map((h) => h.id).sort()).toEqual(events.map((e) => e.id).sort());
    expect(handled.standard.map((h) => h.event.event_type).sort()).toEqual(types);
    expect(handled.hex.map((h) => h.event.event_type).sort()).toEqual(types);
    settled = deliveries.find((d) => d.body.toString().includes('"payment.settled"'))!;
    expect(settled.headers['webhook-signature']!.split(' ')[0]).toMatch(/^v1,/);
  });

  it('refuse a tampered body, id, timestamp or signature', async () => {
    const before = { standard: handled.standard.length, hex: handled.hex.length };
    const tamperedBody = settled.body.toString().replace('"amount_usd":25', '"amount_usd":2500');
    expect(tamperedBody).not.toBe(settled.body.toString());
    const attempts: Array<[string, Record<string, string>, string | Buffer]> = [
      [standardUrl, settled.headers, tamperedBody],
      [hexUrl, settled.headers, tamperedBody],
      [standardUrl, { ...settled.headers, 'webhook-id': 'evt_forged' }, settled.body],
      [standardUrl, { ...settled.headers, 'webhook-timestamp': String(Number(settled.headers['webhook-timestamp']) + 1) }, settled.body],
      [standardUrl, { ...settled.headers, 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}` }, settled.body],
      [hexUrl, { ...settled.headers, 'x-stableroute-signature': '0'.repeat(64) }, settled.body],
    ];
    for (const [url, headers, body] of attempts) expect((await send(url, headers, body)).status, `${url} ${JSON.stringify(headers)}`).toBe(400);
    expect({ standard: handled.standard.length, hex: handled.hex.length }).toEqual(before);
  });

  it('refuse a replayed delivery: acknowledged as a duplicate inside the window, rejected as stale after it', async () => {
    const before = { standard: handled.standard.length, hex: handled.hex.length };
    // Verbatim, as an attacker who captured it would send it (or as the service's own retry would look).
    expect(await send(standardUrl, settled.headers, settled.body)).toEqual({ status: 200, json: { received: true, duplicate: true } });
    expect(await send(hexUrl, settled.headers, settled.body)).toEqual({ status: 200, json: { received: true, duplicate: true } });
    // webhook-id is not covered by the hex signature; a new one does not make the body new.
    expect((await send(hexUrl, { ...settled.headers, 'webhook-id': 'evt_replayed' }, settled.body)).json).toEqual({ received: true, duplicate: true });
    expect({ standard: handled.standard.length, hex: handled.hex.length }).toEqual(before);

    // Ten minutes on, with nothing remembered (a restarted receiver), the signed timestamp alone refuses it.
    let handledLater = 0;
    const later = await listen(
      standardWebhooksReceiver({ secret, nowMs: () => Date.now() + 10 * 60_000, handle: () => void handledLater++ }),
    );
    expect(await send(later.url, settled.headers, settled.body)).toEqual({ status: 400, json: { error: 'stale or future webhook-timestamp' } });
    expect(handledLater).toBe(0);
  });
});

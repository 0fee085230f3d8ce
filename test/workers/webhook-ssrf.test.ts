// The SSRF guard of webhook delivery, against real sockets on loopback: in production mode a receiver on 127.0.0.1
// is refused (no connection is made, the attempt is recorded as failed and not retried); WEBHOOK_ALLOWED_HOSTS lets
// an operator's internal receiver through. Plus the address table, URL spellings and the onboarding check.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { merchantInputProblem } from '../../src/core/merchants/merchants.js';
import { deliverDueEvents, type WebhookDeps } from '../../src/core/webhooks/delivery.js';
import { insertEvents } from '../../src/db/queries/outbox.js';
import { newId } from '../../src/ids.js';
import {
  destinationPolicy,
  nonPublicRange,
  parseAllowList,
  resolveDestination,
  type Resolver,
} from '../../src/webhook-client/destination-guard.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;
let server: Server;
let port: number;
let connections = 0;
let requests = 0;

beforeAll(async () => {
  db = await createTestDatabase();
  server = createServer((req, res) => {
    requests++;
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterEach(async () => {
  await db.pool.query('DELETE FROM webhook_deliveries');
  await db.pool.query('DELETE FROM webhook_events');
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await db.drop();
});

const NOTHING = { delivered: 0, failed: 0, retried: 0, stored: 0 };
const PRODUCTION = { production: true, webhookSsrfGuard: true, webhookAllowedHosts: [] as string[] };

function deps(clock: ManualClock, config: Partial<WebhookDeps['config']>, extra: Partial<WebhookDeps> = {}): WebhookDeps {
  return {
    pool: db.pool,
    clock,
    config: {
      webhookSigningSecret: 'ssrf-test-secret',
      webhookRetryDelaySeconds: 5,
      webhookTimeoutSeconds: 2,
      webhookPollSeconds: 60,
      production: false,
      apiKeySalt: 'webhook-test-salt',
      webhookSsrfGuard: false,
      webhookAllowedHosts: [],
      ...config,
    },
    ...extra,
  };
}

async function merchantWithEvent(webhookUrl: string, clock: ManualClock): Promise<string> {
  const id = newId('mer');
  await db.pool.query('INSERT INTO merchants (id, name, webhook_url, created_at) VALUES ($1, $2, $3, $4)', [id, 'ssrf', webhookUrl, clock.now()]);
  return insertEvents(db.pool, [{ merchantId: id, paymentIntentId: null, type: 'webhook.test', payload: {}, at: clock.now() }]).then(([id]) => id!);
}

async function attemptsOf(eventId: string) {
  const event = (await db.pool.query('SELECT status, attempts, last_error FROM webhook_events WHERE id = $1', [eventId])).rows[0];
  const deliveries = (await db.pool.query('SELECT url, status_code, error FROM webhook_deliveries WHERE event_id = $1 ORDER BY attempt', [eventId])).rows;
  return { event, deliveries };
}

describe('delivery in production mode', () => {
  it.each([
    ['127.0.0.1', (p: number) => `http://127.0.0.1:${p}/hooks`],
    ['localhost', (p: number) => `http://localhost:${p}/hooks`],
    ['an IPv4-mapped IPv6 literal', (p: number) => `http://[::ffff:127.0.0.1]:${p}/hooks`],
    ['a decimal IPv4 spelling', (p: number) => `http://2130706433:${p}/hooks`],
    ['a hex IPv4 spelling', (p: number) => `http://0x7f.1:${p}/hooks`],
    ['an octal IPv4 spelling', (p: number) => `http://0177.0.0.1:${p}/hooks`],
  ])('refuses a receiver on loopback (%s): no connection, a failed attempt with the reason, no retry', async (_what, url) => {
    const clock = new ManualClock();
    const before = { connections, requests };
    const eventId = await merchantWithEvent(url(port), clock);
    // https is not the reason here: the guard alone refuses loopback.
    expect(await deliverDueEvents(deps(clock, { ...PRODUCTION, production: false }))).toEqual({ ...NOTHING, failed: 1 });
    const { event, deliveries } = await attemptsOf(eventId);
    expect(event).toMatchObject({ status: 'failed', attempts: 1 });
    expect(event.last_error).toMatch(/refused: .*loopback.*not retried/);
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ status_code: null });
    expect(deliveries[0].error).toMatch(/loopback/);
    expect({ connections, requests }).toEqual(before);
    clock.advance(86_400_000);
    expect(await deliverDueEvents(deps(clock, PRODUCTION))).toEqual(NOTHING);
  });

  it('refuses plain http in production even to an allowed address range unless the host is allowlisted', async () => {
    const clock = new ManualClock();
    const eventId = await merchantWithEvent(`http://receiver.internal:${port}/hooks`, clock);
    const resolver: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    expect(await deliverDueEvents(deps(clock, { ...PRODUCTION, webhookAllowedHosts: ['127.0.0.0/8'] }, { resolver }))).toEqual({ ...NOTHING, failed: 1 });
    expect((await attemptsOf(eventId)).event.last_error).toMatch(/https/);
  });

  it('delivers to an internal receiver allowed by WEBHOOK_ALLOWED_HOSTS (a CIDR range or the address)', async () => {
    for (const allowed of ['127.0.0.0/8', '127.0.0.1']) {
      const clock = new ManualClock();
      const before = requests;
      const eventId = await merchantWithEvent(`http://127.0.0.1:${port}/hooks`, clock);
      expect(await deliverDueEvents(deps(clock, { ...PRODUCTION, webhookAllowedHosts: [allowed] })), allowed).toEqual({ ...NOTHING, delivered: 1 });
      expect(requests).toBe(before + 1);
      expect((await attemptsOf(eventId)).event).toMatchObject({ status: 'delivered' });
    }
  });

  it('connects to the address it checked: one resolution per attempt, never a second lookup (DNS rebinding)', async () => {
    const clock = new ManualClock();
    let lookups = 0;
    // A name the system cannot resolve: the delivery can only reach the receiver through the checked address.
    const resolver: Resolver = async (name) => {
      lookups++;
      expect(name).toBe('rebind.invalid');
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const eventId = await merchantWithEvent(`http://rebind.invalid:${port}/hooks`, clock);
    const before = requests;
    expect(await deliverDueEvents(deps(clock, { webhookSsrfGuard: true, webhookAllowedHosts: ['127.0.0.1'] }, { resolver }))).toEqual({ ...NOTHING, delivered: 1 });
    expect(lookups).toBe(1);
    expect(requests).toBe(before + 1);
    expect((await attemptsOf(eventId)).event.status).toBe('delivered');
  });

  it('refuses a name when any of its addresses is not public, whatever comes first', async () => {
    const clock = new ManualClock();
    const resolver: Resolver = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '169.254.169.254', family: 4 },
    ];
    const eventId = await merchantWithEvent('https://mixed.example/hooks', clock);
    expect(await deliverDueEvents(deps(clock, PRODUCTION, { resolver }))).toEqual({ ...NOTHING, failed: 1 });
    expect((await attemptsOf(eventId)).event.last_error).toMatch(/169\.254\.169\.254, a link-local address/);
  });

  it('a DNS failure is an ordinary failed attempt, retried on the schedule', async () => {
    const clock = new ManualClock();
    const resolver: Resolver = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example'), { code: 'ENOTFOUND' });
    };
    const eventId = await merchantWithEvent('https://nowhere.example/hooks', clock);
    expect(await deliverDueEvents(deps(clock, PRODUCTION, { resolver }))).toEqual({ ...NOTHING, retried: 1 });
    expect((await attemptsOf(eventId)).event.last_error).toMatch(/ENOTFOUND/);
  });

  it('a stored URL with credentials is refused, and its password reaches neither the records nor the log', async () => {
    const clock = new ManualClock();
    const before = requests;
    const lines: string[] = [];
    const log = pino({ level: 'debug' }, { write: (line: string) => lines.push(line) });
    const eventId = await merchantWithEvent(`http://user:hunter2@127.0.0.1:${port}/hooks`, clock);
    expect(await deliverDueEvents(deps(clock, {}, { log }))).toEqual({ ...NOTHING, failed: 1 });
    expect(requests).toBe(before);
    const { event, deliveries } = await attemptsOf(eventId);
    expect(event.last_error).toMatch(/credentials/);
    expect(deliveries[0].url).toBe(`http://127.0.0.1:${port}/hooks`);
    expect(JSON.stringify({ event, deliveries, lines })).not.toContain('hunter2');
  });

  it('development mode (guard off by default) still delivers to loopback', async () => {
    const clock = new ManualClock();
    const eventId = await merchantWithEvent(`http://127.0.0.1:${port}/hooks`, clock);
    expect(await deliverDueEvents(deps(clock, {}))).toEqual({ ...NOTHING, delivered: 1 });
    expect((await attemptsOf(eventId)).event.status).toBe('delivered');
  });
});

describe('what the guard calls public', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['224.0.0.1', 'multicast'],
    ['192.0.2.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fc00::1', 'unique local'],
    ['fd12:3456::1', 'unique local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped link-local'],
    ['::7f00:1', 'IPv4-compatible loopback'],
    ['::ffff:0:a00:1', 'IPv4-translated private'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 link-local'],
    ['2002:7f00:1::', '6to4 loopback'],
    ['2001::1', 'teredo'],
  ])('%s is %s', (address, range) => {
    expect(nonPublicRange(address)).toContain(range);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:93.184.216.34', '64:ff9b::5db8:d822'])('%s is public', (address) => {
    expect(nonPublicRange(address)).toBeNull();
  });

  it('checks literal spellings the URL parser normalises, without DNS', async () => {
    const policy = destinationPolicy(PRODUCTION);
    const noDns: Resolver = async () => {
      throw new Error('no DNS for a literal');
    };
    for (const url of ['https://2130706433/', 'https://0x7f.1/', 'https://017700000001/', 'https://127.1/', 'https://[::ffff:7f00:1]/', 'https://[::ffff:169.254.169.254]/']) {
      await expect(resolveDestination(new URL(url), policy, noDns), url).rejects.toThrow(/loopback|link-local/);
    }
    await expect(resolveDestination(new URL('https://93.184.216.34/'), policy, noDns)).resolves.toEqual({ address: '93.184.216.34', family: 4 });
  });

  it('parses WEBHOOK_ALLOWED_HOSTS entries and refuses malformed ones', () => {
    const allow = parseAllowList(['hooks.internal', '10.0.0.0/8', 'fd00::/8', '192.168.1.5', 'Receiver.Example.']);
    expect([...allow.hosts].sort()).toEqual(['hooks.internal', 'receiver.example']);
    expect(allow.ranges).toHaveLength(3);
    for (const bad of ['10.0.0.0/33', 'http://x', 'a b', '*.example']) expect(() => parseAllowList([bad]), bad).toThrow();
  });
});

describe('onboarding', () => {
  it('refuses in production a webhook_url the guard would refuse without DNS; allows the allowlisted and public ones', () => {
    const policy = destinationPolicy(PRODUCTION);
    const problem = (url: string, p = policy) => merchantInputProblem({ name: 'Acme', webhookUrl: url }, p);
    expect(problem('http://acme.example/hooks')).toMatch(/https/);
    expect(problem('https://127.0.0.1/hooks')).toMatch(/loopback/);
    expect(problem('https://[::ffff:169.254.169.254]/hooks')).toMatch(/link-local/);
    expect(problem('https://2130706433/hooks')).toMatch(/loopback/);
    expect(problem('https://acme.example/hooks')).toBeNull();
    const internal = destinationPolicy({ ...PRODUCTION, webhookAllowedHosts: ['hooks.internal', '10.0.0.0/8'] });
    expect(problem('http://hooks.internal:8080/in', internal)).toBeNull();
    expect(problem('http://10.1.2.3/in', internal)).toBeNull();
    expect(problem('http://10.1.2.3/in')).toMatch(/https/);
  });
});

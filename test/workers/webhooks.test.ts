// Webhook delivery against a real PostgreSQL and a real HTTP receiver that checks both signatures independently.
// Time is a ManualClock: retries are driven by moving it, never by sleeping.
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { insertEvents } from '../../src/db/queries/outbox.js';
import { insertDeliveries, markEventPending } from '../../src/db/queries/webhook-events.js';
import { enableWebhookEndpoint } from '../../src/core/webhooks/endpoint.js';
import { AppError } from '../../src/domain/errors.js';
import { newId } from '../../src/ids.js';
import { deliverDueEvents, type WebhookDeps } from '../../src/core/webhooks/delivery.js';
import { signBody, signStandardWebhook, verifySignature, verifyStandardWebhook } from '../../src/webhook-client/signature.js';
import { sendTestWebhook } from '../../src/core/webhooks/test-event.js';
import { LISTENER_APPLICATION_NAME, startWebhookWorker } from '../../src/workers/webhooks.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/process.js';
import { TEST_AUDIT_CONFIG, testAudit } from '../helpers/audit.js';

const SECRET = 'whk-test-secret';
const RETRY_DELAY_SECONDS = 10;

let db: TestDatabase;
const receivers: Receiver[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
  // Each test starts from an empty outbox, so one test's pending events never reach another test's receiver.
  await db.pool.query('DELETE FROM webhook_deliveries');
  await db.pool.query('DELETE FROM webhook_events');
});
afterAll(async () => {
  await db.drop();
});

// --- helpers -------------------------------------------------------------------------------------------------

interface Received {
  headers: IncomingHttpHeaders;
  method: string;
  body: string;
  /** Checked here with node:crypto, independently of the code under test. */
  specSignatureOk: boolean;
  standardSignatureOk: boolean;
}

type Reply = number | 'hang' | { status: number; headers?: Record<string, string>; delayMs?: number };

interface Receiver {
  url: string;
  received: Received[];
  /** While set, every answer waits for it. */
  hold?: Promise<unknown>;
  close(): Promise<void>;
}

async function startReceiver(reply: (n: number) => Reply = () => 200): Promise<Receiver> {
  const received: Received[] = [];
  const server: Server = createServer((req, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const id = String(req.headers['webhook-id']);
      const timestamp = String(req.headers['webhook-timestamp']);
      received.push({
        headers: req.headers,
        method: req.method ?? '',
        body,
        specSignatureOk: req.headers['x-stableroute-signature'] === createHmac('sha256', SECRET).update(body).digest('hex'),
        standardSignatureOk:
          req.headers['webhook-signature'] ===
          `v1,${createHmac('sha256', SECRET).update(`${id}.${timestamp}.${body}`).digest('base64')}`,
      });
      const answer = reply(received.length);
      if (answer === 'hang') return;
      const { status, headers, delayMs } = typeof answer === 'number' ? { status: answer, headers: {}, delayMs: 0 } : answer;
      const send = () => res.writeHead(status, headers).end('ok');
      if (receiver.hold) void receiver.hold.then(send);
      else if (delayMs) setTimeout(send, delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  receivers.push(receiver);
  return receiver;
}

function depsWith(clock: ManualClock, overrides: Partial<WebhookDeps['config']> = {}, log?: pino.Logger): WebhookDeps {
  return {
    pool: db.pool,
    clock,
    config: {
      webhookSigningSecret: SECRET,
      webhookRetryDelaySeconds: RETRY_DELAY_SECONDS,
      webhookTimeoutSeconds: 5,
      webhookPollSeconds: 60,
      production: false,
      apiKeySalt: 'webhook-test-salt',
      webhookSsrfGuard: false,
      webhookAllowedHosts: [],
      ...overrides,
    },
    log,
  };
}

async function createMerchant(webhookUrl: string | null): Promise<string> {
  const id = newId('mer');
  await db.pool.query('INSERT INTO merchants (id, name, webhook_url, created_at) VALUES ($1, $2, $3, $4)', [
    id,
    `merchant ${id}`,
    webhookUrl,
    new Date('2026-01-01T00:00:00Z'),
  ]);
  return id;
}

async function addEvent(clock: ManualClock, merchantId: string, payload: Record<string, unknown> = { status: 'settled' }) {
  return insertEvents(db.pool, [{ merchantId, paymentIntentId: 'pi_test', type: 'payment.settled', payload, at: clock.now() }]).then(([id]) => id!);
}

/** `count` events of one merchant, a millisecond apart (claims take the oldest first); their ids, in order. */
async function eventsOf(clock: ManualClock, merchantId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    ids.push(await addEvent(clock, merchantId, { n: i }));
    clock.advance(1);
  }
  return ids;
}

/** A new merchant whose endpoint is `url`, and `count` events of it (eventsOf). */
async function eventsFor(url: string, clock: ManualClock, count: number): Promise<string[]> {
  return eventsOf(clock, await createMerchant(url), count);
}

interface EventRow {
  status: string;
  attempts: number;
  next_attempt_at: Date;
  last_error: string | null;
  delivered_at: Date | null;
}

async function eventRow(id: string): Promise<EventRow> {
  const { rows } = await db.pool.query<EventRow>(
    'SELECT status, attempts, next_attempt_at, last_error, delivered_at FROM webhook_events WHERE id = $1',
    [id],
  );
  return rows[0]!;
}

interface DeliveryRow {
  attempt: number;
  url: string;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  created_at: Date;
}

async function deliveryRows(eventId: string): Promise<DeliveryRow[]> {
  const { rows } = await db.pool.query<DeliveryRow>(
    'SELECT attempt, url, status_code, latency_ms, error, created_at FROM webhook_deliveries WHERE event_id = $1 ORDER BY attempt',
    [eventId],
  );
  return rows;
}

const NOTHING = { delivered: 0, failed: 0, retried: 0, stored: 0 };

// --- tests ---------------------------------------------------------------------------------------------------

describe('signatures', () => {
  it('verify what they sign and reject any change', () => {
    const body = '{"a":1}';
    expect(signBody(SECRET, body)).toBe(createHmac('sha256', SECRET).update(body).digest('hex'));
    expect(verifySignature(SECRET, body, signBody(SECRET, body))).toBe(true);
    expect(verifySignature(SECRET, Buffer.from(body), signBody(SECRET, body))).toBe(true);
    expect(verifySignature(SECRET, '{"a":2}', signBody(SECRET, body))).toBe(false);
    expect(verifySignature('other', body, signBody(SECRET, body))).toBe(false);
    expect(verifySignature(SECRET, body, 'not-hex')).toBe(false);
    expect(verifySignature(SECRET, body, '')).toBe(false);

    const header = signStandardWebhook(SECRET, 'evt_1', 1_700_000_000, body);
    expect(header).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(verifyStandardWebhook(SECRET, 'evt_1', 1_700_000_000, body, header)).toBe(true);
    expect(verifyStandardWebhook(SECRET, 'evt_1', 1_700_000_000, body, `v1,AAAA ${header}`)).toBe(true);
    expect(verifyStandardWebhook(SECRET, 'evt_2', 1_700_000_000, body, header)).toBe(false);
    expect(verifyStandardWebhook(SECRET, 'evt_1', 1_700_000_001, body, header)).toBe(false);
    expect(verifyStandardWebhook(SECRET, 'evt_1', 1_700_000_000, body, header.replace('v1,', 'v2,'))).toBe(false);
  });
});

describe('deliverDueEvents', () => {
  it('POSTs the exact body with both signatures and the documented headers, then marks the event delivered', async () => {
    const receiver = await startReceiver();
    const clock = new ManualClock('2026-03-01T12:00:00.000Z');
    const merchantId = await createMerchant(receiver.url);
    // Keys already in jsonb's stored order (shorter first), so the expected bytes can be written out.
    const eventId = await addEvent(clock, merchantId, { status: 'settled', amount_usd: 12.5 });
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });

    expect(await deliverDueEvents(depsWith(clock, {}, log))).toEqual({ ...NOTHING, delivered: 1 });

    expect(receiver.received).toHaveLength(1);
    const request = receiver.received[0]!;
    expect(request.method).toBe('POST');
    expect(request.body).toBe(
      `{"event_type":"payment.settled","payment_intent_id":"pi_test","merchant_id":"${merchantId}",` +
        `"payload":{"status":"settled","amount_usd":12.5}}`,
    );
    expect(request.specSignatureOk).toBe(true);
    expect(request.standardSignatureOk).toBe(true);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['user-agent']).toBe('stableroute-webhooks/0.1');
    expect(request.headers['webhook-id']).toBe(eventId);
    expect(request.headers['webhook-timestamp']).toBe(String(Date.parse('2026-03-01T12:00:00.000Z') / 1000));
    expect(request.headers['x-stableroute-signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(request.headers['x-webhook-signature']).toBe(request.headers['x-stableroute-signature']);
    expect(request.headers['x-signature']).toBe(request.headers['x-stableroute-signature']);

    const event = await eventRow(eventId);
    expect(event).toMatchObject({ status: 'delivered', attempts: 1, last_error: null });
    expect(event.delivered_at?.toISOString()).toBe('2026-03-01T12:00:00.000Z');
    const rows = await deliveryRows(eventId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ attempt: 1, url: receiver.url, status_code: 200, error: null });

    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged).toContainEqual(
      expect.objectContaining({ event_id: eventId, event_type: 'payment.settled', status: 'delivered', status_code: 200 }),
    );

    // Delivered events are never sent again.
    clock.advance(86_400_000);
    expect(await deliverDueEvents(depsWith(clock))).toEqual(NOTHING);
    expect(receiver.received).toHaveLength(1);
  });

  it('retries on the documented schedule and delivers on the third attempt, never before the retry time', async () => {
    const replies = [500, 503, 200];
    const receiver = await startReceiver((n) => replies[n - 1] ?? 200);
    const clock = new ManualClock();
    const start = clock.now().getTime();
    const eventId = await addEvent(clock, await createMerchant(receiver.url));
    const deps = depsWith(clock);

    expect(await deliverDueEvents(deps)).toEqual({ ...NOTHING, retried: 1 });
    expect(await eventRow(eventId)).toMatchObject({ status: 'pending', attempts: 1, last_error: 'HTTP 500' });
    expect((await eventRow(eventId)).next_attempt_at.getTime()).toBe(start + 10_000);

    clock.advance(10_000 - 1);
    expect(await deliverDueEvents(deps)).toEqual(NOTHING);
    expect(receiver.received).toHaveLength(1);

    clock.advance(1);
    expect(await deliverDueEvents(deps)).toEqual({ ...NOTHING, retried: 1 });
    // The second retry waits 60 times the configured delay (5 min at the default 5 s).
    expect((await eventRow(eventId)).next_attempt_at.getTime()).toBe(start + 10_000 + 600_000);

    clock.advance(600_000 - 1);
    expect(await deliverDueEvents(deps)).toEqual(NOTHING);
    expect(receiver.received).toHaveLength(2);

    clock.advance(1);
    expect(await deliverDueEvents(deps)).toEqual({ ...NOTHING, delivered: 1 });
    expect(receiver.received).toHaveLength(3);
    expect(await eventRow(eventId)).toMatchObject({ status: 'delivered', attempts: 3, last_error: null });

    // Same webhook-id on every attempt (deduplication); a fresh timestamp and signature per attempt.
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([eventId]));
    expect(receiver.received.map((r) => r.headers['webhook-timestamp'])).toEqual(
      [0, 10, 610].map((s) => String(start / 1000 + s)),
    );
    expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
    expect(receiver.received.every((r) => r.specSignatureOk && r.standardSignatureOk)).toBe(true);
    expect((await deliveryRows(eventId)).map((r) => [r.attempt, r.status_code])).toEqual([
      [1, 500],
      [2, 503],
      [3, 200],
    ]);
  });

  it('gives up after 6 POSTs (initial attempt + 5 retries) spread over hours: 1, 60, 360, 1440, 3600 x the delay', async () => {
    const receiver = await startReceiver(() => 500);
    const clock = new ManualClock();
    const eventId = await addEvent(clock, await createMerchant(receiver.url));
    const deps = depsWith(clock);
    const waits: number[] = [];

    for (let attempt = 1; attempt <= 6; attempt++) {
      const counts = await deliverDueEvents(deps);
      expect(counts).toEqual(attempt < 6 ? { ...NOTHING, retried: 1 } : { ...NOTHING, failed: 1 });
      const event = await eventRow(eventId);
      if (attempt < 6) {
        waits.push((event.next_attempt_at.getTime() - clock.now().getTime()) / 1000);
        clock.set(event.next_attempt_at);
      }
    }

    // At the default 5 s: 5 s, 5 min, 30 min, 2 h, 5 h (decision 69). Here the configured delay is 10 s.
    expect(waits).toEqual([10, 600, 3_600, 14_400, 36_000]);
    expect(await eventRow(eventId)).toMatchObject({ status: 'failed', attempts: 6, last_error: 'HTTP 500' });
    expect(receiver.received).toHaveLength(6);
    const rows = await deliveryRows(eventId);
    expect(rows.map((r) => r.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(rows.every((r) => r.status_code === 500 && r.error === 'HTTP 500' && r.url === receiver.url)).toBe(true);

    clock.advance(7 * 86_400_000);
    expect(await deliverDueEvents(deps)).toEqual(NOTHING);
    expect(receiver.received).toHaveLength(6);
  });

  it('counts a receiver that never answers within the timeout as a failed attempt', async () => {
    const receiver = await startReceiver(() => 'hang');
    const clock = new ManualClock();
    const eventId = await addEvent(clock, await createMerchant(receiver.url));

    expect(await deliverDueEvents(depsWith(clock, { webhookTimeoutSeconds: 0.2 }))).toEqual({ ...NOTHING, retried: 1 });

    expect(receiver.received).toHaveLength(1);
    const event = await eventRow(eventId);
    expect(event).toMatchObject({ status: 'pending', attempts: 1 });
    expect(event.last_error).toMatch(/timeout/);
    const [row] = await deliveryRows(eventId);
    expect(row).toMatchObject({ attempt: 1, status_code: null });
    expect(row!.error).toMatch(/timeout/);
    expect(row!.latency_ms).toBeGreaterThanOrEqual(150);
    expect(row!.latency_ms).toBeLessThan(5_000);
  });

  it('counts an unreachable URL as a failed attempt with the connection error', async () => {
    const receiver = await startReceiver();
    const url = receiver.url;
    await receiver.close();
    const clock = new ManualClock();
    const eventId = await addEvent(clock, await createMerchant(url));

    expect(await deliverDueEvents(depsWith(clock))).toEqual({ ...NOTHING, retried: 1 });
    const [row] = await deliveryRows(eventId);
    expect(row).toMatchObject({ attempt: 1, status_code: null });
    expect(row!.error).toMatch(/ECONNREFUSED/);
  });

  it('on 410 Gone fails the event at once and disables the endpoint; later events are held until an operator enables it', async () => {
    let gone = true;
    const receiver = await startReceiver(() => (gone ? 410 : 200));
    const clock = new ManualClock();
    const merchantId = await createMerchant(receiver.url);
    const eventId = await addEvent(clock, merchantId);
    clock.advance(1); // claimed oldest first
    const pendingId = await addEvent(clock, merchantId, { n: 2 });
    const deps = depsWith(clock);

    // The first 410 disables the endpoint; the other pending event is held, not sent.
    expect(await deliverDueEvents(deps, { concurrency: 1 })).toEqual({ ...NOTHING, failed: 1, stored: 1 });
    const event = await eventRow(eventId);
    expect(event).toMatchObject({ status: 'failed', attempts: 1 });
    expect(event.last_error).toMatch(/410.*disabled/);
    expect((await deliveryRows(eventId)).map((r) => r.status_code)).toEqual([410]);
    expect(await eventRow(pendingId)).toMatchObject({ status: 'stored', attempts: 0 });
    const merchant = await db.pool.query('SELECT webhook_url, webhook_disabled_at, webhook_disabled_reason FROM merchants WHERE id = $1', [merchantId]);
    expect(merchant.rows[0]).toMatchObject({ webhook_url: receiver.url, webhook_disabled_at: clock.now() });
    expect(merchant.rows[0].webhook_disabled_reason).toMatch(/410/);

    // New events are stored and held while it is disabled; the test event is refused.
    const laterId = await addEvent(clock, merchantId, { n: 3 });
    expect(await eventRow(laterId)).toMatchObject({ status: 'stored' });
    const refused = await sendTestWebhook(deps, merchantId).catch((e: unknown) => e);
    expect((refused as AppError).code).toBe('WEBHOOK_ENDPOINT_DISABLED');
    clock.advance(86_400_000);
    expect(await deliverDueEvents(deps)).toEqual(NOTHING);
    expect(receiver.received).toHaveLength(1);
    // An event of the same merchant cannot be redelivered while the endpoint is disabled.
    expect(await markEventPending(db.pool, eventId, clock.now())).toBeNull();

    // The receiver is back; an operator enables the endpoint: every held event is queued again and delivered.
    gone = false;
    expect(await enableWebhookEndpoint(db.pool, TEST_AUDIT_CONFIG, merchantId, clock.now(), testAudit())).toEqual({ merchant_id: merchantId, was_disabled: true, requeued_events: 3 });
    expect(await deliverDueEvents(deps)).toEqual({ ...NOTHING, delivered: 3 });
    for (const id of [eventId, pendingId, laterId]) expect(await eventRow(id)).toMatchObject({ status: 'delivered' });
    expect(receiver.received).toHaveLength(4);
    expect(await enableWebhookEndpoint(db.pool, TEST_AUDIT_CONFIG, merchantId, clock.now(), testAudit())).toEqual({ merchant_id: merchantId, was_disabled: false, requeued_events: 0 });
  });

  it('does not follow redirects: a 3xx is a failed attempt', async () => {
    const receiver = await startReceiver((n) => (n === 1 ? { status: 307, headers: { location: '/elsewhere' } } : 200));
    const clock = new ManualClock();
    const eventId = await addEvent(clock, await createMerchant(receiver.url));

    expect(await deliverDueEvents(depsWith(clock))).toEqual({ ...NOTHING, retried: 1 });
    expect(receiver.received).toHaveLength(1);
    expect(await eventRow(eventId)).toMatchObject({ status: 'pending', attempts: 1, last_error: 'HTTP 307' });
  });

  it('delivers each event exactly once when two workers run at the same time', async () => {
    const receiver = await startReceiver(() => ({ status: 200, delayMs: 20 }));
    const clock = new ManualClock();
    const merchantId = await createMerchant(receiver.url);
    const eventIds: string[] = [];
    for (let i = 0; i < 12; i++) eventIds.push(await addEvent(clock, merchantId, { n: i }));
    const deps = depsWith(clock);

    const [a, b] = await Promise.all([deliverDueEvents(deps), deliverDueEvents(deps)]);

    expect(a.delivered + b.delivered).toBe(12);
    expect(a.failed + a.retried + b.failed + b.retried).toBe(0);
    const ids = receiver.received.map((r) => String(r.headers['webhook-id']));
    expect(ids).toHaveLength(12);
    expect(new Set(ids)).toEqual(new Set(eventIds));
    const { rows } = await db.pool.query<{ count: string }>('SELECT count(*) FROM webhook_deliveries');
    expect(Number(rows[0]!.count)).toBe(12);
  });

  it('handles at most one batch per call', async () => {
    const receiver = await startReceiver();
    const clock = new ManualClock();
    const merchantId = await createMerchant(receiver.url);
    for (let i = 0; i < 5; i++) await addEvent(clock, merchantId, { n: i });
    const deps = depsWith(clock);

    expect(await deliverDueEvents(deps, { batchSize: 3 })).toEqual({ ...NOTHING, delivered: 3 });
    expect(await deliverDueEvents(deps, { batchSize: 3 })).toEqual({ ...NOTHING, delivered: 2 });
    expect(receiver.received).toHaveLength(5);
  });

  it('sends a claim of mixed outcomes in one transaction, each event recorded as its own answer decided', async () => {
    // One merchant's endpoint answers 200, then 410 Gone.
    const receiver = await startReceiver((n) => [200, 410][n - 1] ?? 200);
    const clock = new ManualClock();
    const ids = await eventsFor(receiver.url, clock, 5);

    // One lane, a batch of five: a single claim.
    expect(await deliverDueEvents(depsWith(clock), { batchSize: 5, concurrency: 1 })).toEqual({ delivered: 1, retried: 0, failed: 1, stored: 3 });
    const rows = await Promise.all(ids.map(eventRow));
    expect(rows.map((r) => [r.status, r.attempts])).toEqual([
      ['delivered', 1],
      ['failed', 1],
      // The claim's later events of the merchant whose endpoint answered 410 are held, not sent.
      ['stored', 0],
      ['stored', 0],
      ['stored', 0],
    ]);
    expect(receiver.received).toHaveLength(2);
    // Every row the claim changed was written by the same transaction.
    const { rows: writers } = await db.pool.query<{ n: number }>('SELECT count(DISTINCT xmin::text)::int AS n FROM webhook_events');
    expect(writers[0]!.n).toBe(1);
  });

  it("stops a claim's POSTs to an endpoint at its first failure: the rest stay pending and due, for the next claim", async () => {
    // The endpoint answers 200, then 500, then 200 to everything.
    const receiver = await startReceiver((n) => (n === 2 ? 500 : 200));
    const clock = new ManualClock();
    const ids = await eventsFor(receiver.url, clock, 5);

    expect(await deliverDueEvents(depsWith(clock), { batchSize: 5, concurrency: 1 })).toEqual({ delivered: 1, retried: 1, failed: 0, stored: 0 });
    expect((await Promise.all(ids.map(eventRow))).map((r) => [r.status, r.attempts])).toEqual([
      ['delivered', 1],
      ['pending', 1], // its retry is scheduled
      ['pending', 0], // not sent: untouched, still due
      ['pending', 0],
      ['pending', 0],
    ]);
    expect(receiver.received).toHaveLength(2);
    expect(await deliveryRows(ids[2]!)).toEqual([]);

    // The next batch sends the three that were left; the retried one waits for its time.
    expect(await deliverDueEvents(depsWith(clock), { batchSize: 5, concurrency: 1 })).toEqual({ delivered: 3, retried: 0, failed: 0, stored: 0 });
    expect((await Promise.all(ids.map(eventRow))).map((r) => r.status)).toEqual(['delivered', 'pending', 'delivered', 'delivered', 'delivered']);
    expect(receiver.received).toHaveLength(5);
  });

  it('records attempts only over pending events: one that left pending fails the whole record, which its transaction rolls back', async () => {
    const clock = new ManualClock();
    const [pendingId, deliveredId] = await eventsFor('http://127.0.0.1:9/hooks', clock, 2);
    await db.pool.query("UPDATE webhook_events SET status = 'delivered', attempts = 1, delivered_at = now() WHERE id = $1", [deliveredId]);
    const at = clock.now();
    const record = (eventId: string) => ({
      delivery: { eventId, attempt: 1, url: 'http://127.0.0.1:9/hooks', statusCode: 200, latencyMs: 1, error: null, at },
      decision: { status: 'delivered' as const, attempts: 1, deliveredAt: at },
    });
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await expect(insertDeliveries(client, [record(pendingId!), record(deliveredId!)])).rejects.toThrow(`webhook event ${deliveredId}: illegal transition pending -> delivered`);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    expect(await eventRow(pendingId!)).toMatchObject({ status: 'pending', attempts: 0 });
    expect(await deliveryRows(pendingId!)).toEqual([]);
    expect(await deliveryRows(deliveredId!)).toEqual([]);
  });

  it("claims one merchant's events at a time: an endpoint that does not answer holds up only its own", async () => {
    const fast = await startReceiver();
    // The slow endpoint answers only once the fast one has had all its events, or after 10 s (then the test fails).
    const slow = await startReceiver();
    const clock = new ManualClock();
    const slowMerchant = await createMerchant(slow.url);
    const fastMerchant = await createMerchant(fast.url);
    // Interleaved, the slow merchant's first: claims in the order of the outbox alone would mix the two.
    for (let i = 0; i < 4; i++) {
      await addEvent(clock, slowMerchant, { n: i });
      clock.advance(1);
      await addEvent(clock, fastMerchant, { n: i });
      clock.advance(1);
    }
    const gate = waitFor('the fast endpoint to have its four events', async () => fast.received.length === 4, 10_000, 5).then(
      () => true,
      () => false,
    );
    slow.hold = gate;

    expect(await deliverDueEvents(depsWith(clock), { batchSize: 8, concurrency: 2 })).toEqual({ ...NOTHING, delivered: 8 });
    expect(await gate).toBe(true); // the fast endpoint had its four while the slow one held its first
  });

  it('opens a lane only when the one before it claimed something: a few due events cost no empty transactions', async () => {
    const receiver = await startReceiver();
    const clock = new ManualClock();
    const one = await eventsFor(receiver.url, clock, 3);
    const connections = () => {
      let n = 0;
      const pool = new Proxy(db.pool, {
        get: (target, key) => (key === 'connect' ? () => (n++, target.connect()) : Reflect.get(target, key, target)),
      });
      return { deps: { ...depsWith(clock), pool }, count: () => n };
    };
    // One merchant's three events: the first lane takes them all; the second finds nothing; no more lanes open.
    let probe = connections();
    expect(await deliverDueEvents(probe.deps, { batchSize: 64, concurrency: 4 })).toEqual({ ...NOTHING, delivered: 3 });
    expect(probe.count()).toBe(2);
    // Three merchants with events due: a lane each, and one more that finds nothing.
    const more = [...(await eventsFor(receiver.url, clock, 2)), ...(await eventsFor(receiver.url, clock, 2)), ...(await eventsFor(receiver.url, clock, 2))];
    probe = connections();
    expect(await deliverDueEvents(probe.deps, { batchSize: 64, concurrency: 4 })).toEqual({ ...NOTHING, delivered: 6 });
    expect(probe.count()).toBe(4);
    // Nothing due: one look.
    probe = connections();
    expect(await deliverDueEvents(probe.deps, { batchSize: 64, concurrency: 4 })).toEqual(NOTHING);
    expect(probe.count()).toBe(1);
    expect(receiver.received.map((r) => String(r.headers['webhook-id'])).sort()).toEqual([...one, ...more].sort());
  });

  it('leaves the rest of a claim pending, and free to claim, when the worker stops between POSTs', async () => {
    const receiver = await startReceiver();
    const clock = new ManualClock();
    const eventIds = await eventsFor(receiver.url, clock, 3);
    const deps = depsWith(clock);

    let posts = 0;
    const stopAfterOne = () => posts++ < 1;
    expect(await deliverDueEvents(deps, { batchSize: 3, concurrency: 1, shouldContinue: stopAfterOne })).toEqual({ ...NOTHING, delivered: 1 });
    expect((await Promise.all(eventIds.map(eventRow))).map((e) => e.status)).toEqual(['delivered', 'pending', 'pending']);
    expect(await deliverDueEvents(deps)).toEqual({ ...NOTHING, delivered: 2 });
    expect(receiver.received.map((r) => String(r.headers['webhook-id']))).toEqual(eventIds);
  });

  it('never sends a stored event, and stores a pending one whose merchant removed its webhook_url', async () => {
    const receiver = await startReceiver();
    const clock = new ManualClock();
    const storedId = await addEvent(clock, await createMerchant(null));
    expect(await eventRow(storedId)).toMatchObject({ status: 'stored' });

    const merchantId = await createMerchant(receiver.url);
    const orphanId = await addEvent(clock, merchantId);
    await db.pool.query('UPDATE merchants SET webhook_url = NULL WHERE id = $1', [merchantId]);

    expect(await deliverDueEvents(depsWith(clock))).toEqual({ ...NOTHING, stored: 1 });
    clock.advance(86_400_000);
    expect(await deliverDueEvents(depsWith(clock))).toEqual(NOTHING);

    expect(receiver.received).toHaveLength(0);
    expect(await eventRow(storedId)).toMatchObject({ status: 'stored', attempts: 0 });
    expect(await eventRow(orphanId)).toMatchObject({ status: 'stored', attempts: 0 });
    expect(await deliveryRows(storedId)).toHaveLength(0);
    expect(await deliveryRows(orphanId)).toHaveLength(0);
  });

  it("sends to the merchant's current webhook_url", async () => {
    const oldReceiver = await startReceiver();
    const newReceiver = await startReceiver();
    const clock = new ManualClock();
    const merchantId = await createMerchant(oldReceiver.url);
    const eventId = await addEvent(clock, merchantId);
    await db.pool.query('UPDATE merchants SET webhook_url = $2 WHERE id = $1', [merchantId, newReceiver.url]);

    expect(await deliverDueEvents(depsWith(clock))).toEqual({ ...NOTHING, delivered: 1 });
    expect(oldReceiver.received).toHaveLength(0);
    expect(newReceiver.received).toHaveLength(1);
    expect((await deliveryRows(eventId))[0]!.url).toBe(newReceiver.url);
  });
});

describe('connections to a receiver (decision 74)', () => {
  /**
   * A receiver written at the TCP level, so the test decides what each connection does: `answer(n, request)` gets the
   * request's number on its connection (1, 2, ...) and returns the bytes to write back, or null to close the
   * connection without answering.
   */
  async function tcpReceiver(answer: (n: number) => string | null) {
    const seen = { connections: 0, requests: 0 };
    const sockets = new Set<Socket>();
    const server = createTcpServer((socket) => {
      seen.connections++;
      sockets.add(socket);
      let n = 0;
      let buffered = '';
      socket.on('data', (chunk: Buffer) => {
        buffered += chunk.toString('latin1');
        // Each request is headers plus a content-length body; answer once the whole of it is in.
        for (;;) {
          const end = buffered.indexOf('\r\n\r\n');
          if (end < 0) return;
          const length = Number(/content-length: (\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0);
          if (buffered.length < end + 4 + length) return;
          buffered = buffered.slice(end + 4 + length);
          seen.requests++;
          const reply = answer(++n);
          if (reply === null) {
            socket.destroy();
            return;
          }
          socket.write(reply);
        }
      });
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    receivers.push({
      url: '',
      received: [],
      close: async () => {
        for (const socket of sockets) socket.destroy();
        await new Promise((resolve) => server.close(resolve));
      },
    });
    return { url: `http://127.0.0.1:${port}/hooks`, seen };
  }
  const OK = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok';

  it('reuses one connection for attempts one after the other', async () => {
    const receiver = await tcpReceiver(() => OK);
    const clock = new ManualClock();
    await eventsFor(receiver.url, clock, 3);
    expect(await deliverDueEvents(depsWith(clock), { concurrency: 1 })).toEqual({ ...NOTHING, delivered: 3 });
    expect(receiver.seen).toEqual({ connections: 1, requests: 3 });
  });

  it('sends once more, on a new connection, when the receiver closes a kept connection as it is reused', async () => {
    // Every connection answers its first request and closes at its second, unanswered.
    const receiver = await tcpReceiver((n) => (n === 1 ? OK : null));
    const clock = new ManualClock();
    const ids = await eventsFor(receiver.url, clock, 2);
    expect(await deliverDueEvents(depsWith(clock), { concurrency: 1 })).toEqual({ ...NOTHING, delivered: 2 });
    expect(receiver.seen).toEqual({ connections: 2, requests: 3 });
    for (const id of ids) expect((await deliveryRows(id)).map((r) => r.status_code)).toEqual([200]);
  });

  it('drops a connection whose answer body is too long, and still records the status it answered', async () => {
    const big = 'x'.repeat(200 * 1024);
    const receiver = await tcpReceiver(() => `HTTP/1.1 200 OK\r\nContent-Length: ${big.length}\r\nConnection: keep-alive\r\n\r\n${big}`);
    const clock = new ManualClock();
    await eventsFor(receiver.url, clock, 2);
    expect(await deliverDueEvents(depsWith(clock), { concurrency: 1 })).toEqual({ ...NOTHING, delivered: 2 });
    expect(receiver.seen).toEqual({ connections: 2, requests: 2 });
  });
});

describe('sendTestWebhook', () => {
  it('sends a signed webhook.test event at once and reports the outcome', async () => {
    const receiver = await startReceiver();
    const clock = new ManualClock('2026-02-02T02:02:02.022Z');
    const merchantId = await createMerchant(receiver.url);

    const result = await sendTestWebhook(depsWith(clock), merchantId);

    expect(result).toMatchObject({ delivered: true, url: receiver.url, status_code: 200, error: null });
    expect(result.event_id).toMatch(/^evt_/);
    expect(result.latency_ms).toBeGreaterThanOrEqual(0);
    expect(receiver.received).toHaveLength(1);
    const request = receiver.received[0]!;
    expect(request.specSignatureOk && request.standardSignatureOk).toBe(true);
    expect(JSON.parse(request.body)).toEqual({
      event_type: 'webhook.test',
      payment_intent_id: null,
      merchant_id: merchantId,
      payload: { message: 'stableroute test event', sent_at: '2026-02-02T02:02:02.022Z' },
    });
    expect(await eventRow(result.event_id)).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(await deliveryRows(result.event_id)).toHaveLength(1);

    expect(await deliverDueEvents(depsWith(clock))).toEqual(NOTHING);
    expect(receiver.received).toHaveLength(1);
  });

  it('reports a failure and leaves the event pending for the normal retries', async () => {
    const receiver = await startReceiver((n) => (n === 1 ? 500 : 200));
    const clock = new ManualClock();
    const merchantId = await createMerchant(receiver.url);
    const deps = depsWith(clock);

    const result = await sendTestWebhook(deps, merchantId);

    expect(result).toMatchObject({ delivered: false, url: receiver.url, status_code: 500, error: 'HTTP 500' });
    const event = await eventRow(result.event_id);
    expect(event).toMatchObject({ status: 'pending', attempts: 1 });
    expect(event.next_attempt_at.getTime()).toBe(clock.now().getTime() + RETRY_DELAY_SECONDS * 1000);
    expect(await deliveryRows(result.event_id)).toHaveLength(1);

    clock.advance(RETRY_DELAY_SECONDS * 1000);
    expect(await deliverDueEvents(deps)).toEqual({ ...NOTHING, delivered: 1 });
    expect(await eventRow(result.event_id)).toMatchObject({ status: 'delivered', attempts: 2 });
  });

  it('refuses a merchant without a webhook_url and writes nothing', async () => {
    const merchantId = await createMerchant(null);
    const error = await sendTestWebhook(depsWith(new ManualClock()), merchantId).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('WEBHOOK_URL_NOT_CONFIGURED');
    const { rows } = await db.pool.query('SELECT id FROM webhook_events WHERE merchant_id = $1', [merchantId]);
    expect(rows).toHaveLength(0);
  });
});

describe('startWebhookWorker', () => {
  async function listenerPids(): Promise<number[]> {
    const { rows } = await db.pool.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = $1 AND query ILIKE 'LISTEN%'`,
      [LISTENER_APPLICATION_NAME],
    );
    return rows.map((r) => r.pid);
  }
  const waitOptions = { timeout: 5_000, interval: 20 };

  it('delivers a new event promptly on NOTIFY, survives a dropped LISTEN connection, and stops cleanly', async () => {
    const receiver = await startReceiver();
    const clock = new ManualClock();
    const merchantId = await createMerchant(receiver.url);
    // Idle while listening: the catch-up batch that follows each (re)connection is over, so an event inserted now
    // can only be picked up by its notification or by the next poll, and the poll is 60 s away.
    let idleListening = 0;
    const worker = startWebhookWorker(depsWith(clock, { webhookPollSeconds: 60 }), {
      listenReconnectMinMs: 50,
      onIdle: ({ listening }) => {
        if (listening) idleListening++;
      },
    });
    try {
      await vi.waitFor(() => expect(idleListening).toBeGreaterThan(0), waitOptions);
      const [firstPid] = await listenerPids();
      expect(firstPid).toBeDefined();

      const idleBeforeFirst = idleListening;
      const first = await addEvent(clock, merchantId);
      await vi.waitFor(async () => {
        expect((await eventRow(first)).status).toBe('delivered');
        expect(idleListening).toBeGreaterThan(idleBeforeFirst); // and the worker is parked again
      }, waitOptions);

      const idleBeforeDrop = idleListening;
      await db.pool.query('SELECT pg_terminate_backend($1)', [firstPid]);
      await vi.waitFor(async () => {
        const pids = await listenerPids();
        expect(pids).toHaveLength(1);
        expect(pids[0]).not.toBe(firstPid);
        expect(idleListening).toBeGreaterThan(idleBeforeDrop);
      }, waitOptions);

      const second = await addEvent(clock, merchantId);
      await vi.waitFor(async () => expect((await eventRow(second)).status).toBe('delivered'), waitOptions);
      expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([first, second]);
    } finally {
      await worker.stop();
    }
    expect(await listenerPids()).toHaveLength(0);
  });

  it('stop() waits for the in-flight POST and records it', async () => {
    const receiver = await startReceiver(() => 'hang');
    const clock = new ManualClock();
    const eventId = await addEvent(clock, await createMerchant(receiver.url));
    const worker = startWebhookWorker(depsWith(clock, { webhookTimeoutSeconds: 0.5 }));

    await vi.waitFor(() => expect(receiver.received).toHaveLength(1), { timeout: 5_000, interval: 10 });
    await worker.stop();

    expect(await eventRow(eventId)).toMatchObject({ status: 'pending', attempts: 1 });
    expect(await deliveryRows(eventId)).toHaveLength(1);
    expect(await worker.stop()).toBeUndefined(); // idempotent
  });
});

// Per-merchant webhook secrets: issued at onboarding (shown once, sealed at rest), so one merchant cannot forge
// another's webhooks; rotation with an overlap during which both signatures are sent; the test merchant keeps
// WEBHOOK_SIGNING_SECRET. Signatures are checked here with node:crypto and with the Standard Webhooks library.
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createMerchant, ensureTestMerchant, TEST_MERCHANT_ID } from '../../src/core/merchants/merchants.js';
import { deliverDueEvents, type WebhookDeps } from '../../src/core/webhooks/delivery.js';
import { endWebhookSecretOverlap, rotateWebhookSecret } from '../../src/core/webhooks/secrets.js';
import { insertEvents } from '../../src/db/queries/outbox.js';
import { AppError } from '../../src/domain/errors.js';
import { newId } from '../../src/ids.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { TEST_AUDIT_CONFIG, testAudit } from '../helpers/audit.js';

const CONFIGURED = 'whsec_c2hhcmVkLXNlY3JldC1vZi10aGUtdGVzdC1tZXJjaGFudA==';
const SALT = 'webhook-secrets-test-salt';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

let db: TestDatabase;
let server: Server;
let url: string;
let received: Received[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
});
afterEach(() => {
  received = [];
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await db.drop();
});

const config = {
  apiKeySalt: SALT,
  webhookSigningSecret: CONFIGURED,
  webhookRetryDelaySeconds: 5,
  webhookTimeoutSeconds: 5,
  webhookPollSeconds: 60,
  production: false,
  webhookSsrfGuard: false,
  webhookAllowedHosts: [] as string[],
  ...TEST_AUDIT_CONFIG,
};

function deps(clock: ManualClock, log?: pino.Logger, overrides: Partial<WebhookDeps['config']> = {}): WebhookDeps {
  return { pool: db.pool, clock, config: { ...config, ...overrides }, log };
}

/** The spec's hex signature, checked independently of the code under test. */
function hexOk(secret: string, r: Received): boolean {
  return r.headers['x-stableroute-signature'] === createHmac('sha256', secret).update(r.body).digest('hex');
}

/** Whether any `webhook-signature` entry is the Standard Webhooks signature under a whsec_ secret. */
function standardOk(secret: string, r: Received): boolean {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = `v1,${createHmac('sha256', key).update(`${r.headers['webhook-id']}.${r.headers['webhook-timestamp']}.${r.body}`).digest('base64')}`;
  return String(r.headers['webhook-signature']).split(' ').includes(expected);
}

async function deliverOne(clock: ManualClock, merchantId: string, log?: pino.Logger): Promise<Received> {
  await insertEvents(db.pool, [{ merchantId, paymentIntentId: 'pi_x', type: 'payment.settled', payload: { status: 'settled' }, at: clock.now() }]).then(([id]) => id!);
  expect(await deliverDueEvents(deps(clock, log))).toMatchObject({ delivered: 1 });
  return received.at(-1)!;
}

async function onboard(clock: ManualClock, name: string) {
  return createMerchant(db.pool, config, { name, webhookUrl: url }, clock.now(), testAudit());
}

describe('per-merchant webhook secrets', () => {
  it('each merchant gets its own whsec_ secret; its deliveries verify with it and with no other merchant\'s', async () => {
    const clock = new ManualClock(new Date());
    const acme = await onboard(clock, 'Acme');
    const globex = await onboard(clock, 'Globex');
    expect(acme.webhookSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(acme.webhookSecret).not.toBe(globex.webhookSecret);

    const delivery = await deliverOne(clock, acme.merchant.id);
    expect(hexOk(acme.webhookSecret, delivery)).toBe(true);
    expect(standardOk(acme.webhookSecret, delivery)).toBe(true);
    // The Standard Webhooks library takes the secret as shown at onboarding.
    expect(() => new Webhook(acme.webhookSecret).verify(delivery.body, delivery.headers as Record<string, string>)).not.toThrow();
    // Another merchant's secret, or the shared configured one, verifies nothing of Acme's.
    for (const other of [globex.webhookSecret, CONFIGURED]) {
      expect(hexOk(other, delivery)).toBe(false);
      expect(standardOk(other, delivery)).toBe(false);
      expect(() => new Webhook(other).verify(delivery.body, delivery.headers as Record<string, string>)).toThrow();
    }
    // One entry: an issued secret has no former-rule receivers to keep verifying (decision 66's second entry).
    expect(String(delivery.headers['webhook-signature']).split(' ')).toHaveLength(1);
  });

  it('is sealed at rest: the database holds neither the secret nor anything that opens under another merchant', async () => {
    const clock = new ManualClock();
    const acme = await onboard(clock, 'Sealed');
    const { rows } = await db.pool.query<{ sealed: string }>('SELECT sealed FROM webhook_secrets WHERE merchant_id = $1', [acme.merchant.id]);
    expect(rows).toHaveLength(1);
    const bare = acme.webhookSecret.slice('whsec_'.length);
    expect(rows[0]!.sealed).not.toContain(bare);
    const dump = JSON.stringify((await db.pool.query('SELECT * FROM merchants m JOIN webhook_secrets s ON s.merchant_id = m.id')).rows);
    expect(dump).not.toContain(bare);
    expect(dump).not.toContain(Buffer.from(bare, 'base64').toString('hex'));

    // Moved to another merchant's row, it does not open: that merchant's delivery fails, unsigned and unsent.
    const other = await onboard(clock, 'Victim');
    await db.pool.query('UPDATE webhook_secrets SET sealed = $2 WHERE merchant_id = $1', [other.merchant.id, rows[0]!.sealed]);
    const before = received.length;
    await insertEvents(db.pool, [{ merchantId: other.merchant.id, paymentIntentId: null, type: 'webhook.test', payload: {}, at: clock.now() }]).then(([id]) => id!);
    expect(await deliverDueEvents(deps(clock))).toMatchObject({ failed: 1 });
    expect(received).toHaveLength(before);
    const event = (await db.pool.query('SELECT last_error FROM webhook_events WHERE merchant_id = $1', [other.merchant.id])).rows[0];
    expect(event.last_error).toMatch(/does not open.*rotate/);
  });

  it('rotation: both secrets sign during the overlap (the hex header the new one), then only the new one', async () => {
    const clock = new ManualClock(new Date());
    const acme = await onboard(clock, 'Rotating');
    const rotated = await rotateWebhookSecret(db.pool, config, acme.merchant.id, clock.now(), 3600, testAudit());
    expect(rotated.webhook_secret).toMatch(/^whsec_/);
    expect(rotated.webhook_secret).not.toBe(acme.webhookSecret);
    expect(rotated.previous_valid_until).toBe(new Date(clock.now().getTime() + 3_600_000).toISOString());

    const during = await deliverOne(clock, acme.merchant.id);
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(standardOk(rotated.webhook_secret, during)).toBe(true);
    expect(standardOk(acme.webhookSecret, during)).toBe(true);
    expect(hexOk(rotated.webhook_secret, during)).toBe(true);
    for (const secret of [rotated.webhook_secret, acme.webhookSecret]) {
      expect(() => new Webhook(secret).verify(during.body, during.headers as Record<string, string>)).not.toThrow();
    }

    clock.advance(3_600_000);
    const after = await deliverOne(clock, acme.merchant.id);
    expect(standardOk(rotated.webhook_secret, after)).toBe(true);
    expect(standardOk(acme.webhookSecret, after)).toBe(false);
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
  });

  it('an operator ends the overlap early; an overlap of 0 ends it at once', async () => {
    const clock = new ManualClock();
    const acme = await onboard(clock, 'Early');
    const second = await rotateWebhookSecret(db.pool, config, acme.merchant.id, clock.now(), 86_400, testAudit());
    expect(standardOk(acme.webhookSecret, await deliverOne(clock, acme.merchant.id))).toBe(true);
    expect(await endWebhookSecretOverlap(db.pool, config, acme.merchant.id, clock.now(), testAudit())).toEqual({ merchant_id: acme.merchant.id, retired_secrets: 1 });
    const ended = await deliverOne(clock, acme.merchant.id);
    expect(standardOk(acme.webhookSecret, ended)).toBe(false);
    expect(standardOk(second.webhook_secret, ended)).toBe(true);

    const third = await rotateWebhookSecret(db.pool, config, acme.merchant.id, clock.now(), 0, testAudit());
    expect(third.previous_valid_until).toBeNull();
    const now = await deliverOne(clock, acme.merchant.id);
    expect(standardOk(second.webhook_secret, now)).toBe(false);
    expect(standardOk(third.webhook_secret, now)).toBe(true);
  });

  it('a merchant onboarded before per-merchant secrets signs with the configured secret, then moves over on rotation', async () => {
    const clock = new ManualClock();
    const id = newId('mer');
    await db.pool.query('INSERT INTO merchants (id, name, webhook_url, created_at) VALUES ($1, $2, $3, $4)', [id, 'Legacy', url, clock.now()]);
    const legacy = await deliverOne(clock, id);
    expect(hexOk(CONFIGURED, legacy)).toBe(true);
    expect(standardOk(CONFIGURED, legacy)).toBe(true);

    const rotated = await rotateWebhookSecret(db.pool, config, id, clock.now(), 600, testAudit());
    const during = await deliverOne(clock, id);
    expect(hexOk(rotated.webhook_secret, during)).toBe(true);
    expect(standardOk(rotated.webhook_secret, during)).toBe(true);
    expect(standardOk(CONFIGURED, during)).toBe(true);
    clock.advance(600_000);
    expect(standardOk(CONFIGURED, await deliverOne(clock, id))).toBe(false);
  });

  it('the test merchant keeps WEBHOOK_SIGNING_SECRET and cannot be rotated', async () => {
    const clock = new ManualClock();
    await ensureTestMerchant(db.pool, url, clock.now());
    const delivery = await deliverOne(clock, TEST_MERCHANT_ID);
    expect(hexOk(CONFIGURED, delivery)).toBe(true);
    expect(standardOk(CONFIGURED, delivery)).toBe(true);
    const refused = await rotateWebhookSecret(db.pool, config, TEST_MERCHANT_ID, clock.now(), 60, testAudit()).catch((e: unknown) => e);
    expect((refused as AppError).code).toBe('INVALID_STATE');
    const unknown = await rotateWebhookSecret(db.pool, config, 'mer_nope', clock.now(), 60, testAudit()).catch((e: unknown) => e);
    expect((unknown as AppError).code).toBe('NOT_FOUND');
  });

  it('no secret appears in the log of onboarding, rotation or delivery', async () => {
    const clock = new ManualClock();
    const lines: string[] = [];
    const log = pino({ level: 'trace' }, { write: (line: string) => lines.push(line) });
    const acme = await onboard(clock, 'Quiet');
    const rotated = await rotateWebhookSecret(db.pool, config, acme.merchant.id, clock.now(), 60, testAudit());
    await deliverOne(clock, acme.merchant.id, log);
    expect(lines.length).toBeGreaterThan(0);
    for (const secret of [acme.webhookSecret, rotated.webhook_secret]) expect(lines.join('\n')).not.toContain(secret.slice(6, 20));
  });
});

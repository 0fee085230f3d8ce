// Production authentication: only issued keys work, each as its own merchant, and only their HMAC is stored.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant } from '../../src/core/merchants/merchants.js';
import { createTestContext, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { testAudit } from '../helpers/audit.js';

const SALT = 'production-test-salt-5f0c2b8e91d7a4c3';
let t: TestContext;
let acme: { id: string; key: string };
let globex: { id: string; key: string };

beforeAll(async () => {
  t = await createTestContext({ NODE_ENV: 'production', API_KEY_SALT: SALT, WEBHOOK_SIGNING_SECRET: 'whsec-test-7d2e9a1c4b8f0e6d3a5c7b9e1f2d4a6c', AUDIT_KEY: '6e2b9d4f1a8c3e7b5d0f2a9c4e6b8d1f3a5c7e9b0d2f' });
  const issue = async (name: string) => {
    const { merchant, apiKey } = await createMerchant(t.db.pool, t.ctx.config, { name, webhookUrl: null }, t.clock.now(), testAudit());
    return { id: merchant.id, key: apiKey };
  };
  acme = await issue('Acme');
  globex = await issue('Globex');
});
afterAll(async () => t.close());

const quote = (headers: Record<string, string>) =>
  t.app.inject({
    method: 'POST',
    url: '/quotes',
    headers,
    payload: { amount_usd: 10, destination: { solana_address: SOL_ADDRESS }, priority: 'fast' },
  });

describe('production authentication', () => {
  it.each([
    ['no key', {}],
    ['an empty key', { 'x-api-key': '' }],
    ['an unknown key', { 'x-api-key': 'sr_live_not-a-key' }],
    ['a development-style key', { 'x-api-key': 'dev' }],
  ])('401 UNAUTHORIZED for %s, and nothing is stored', async (_what, headers) => {
    const res = await quote(headers);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ statusCode: 401, error: 'Unauthorized', message: expect.any(String), code: 'UNAUTHORIZED' });
    const { rows } = await t.db.pool.query('SELECT COUNT(*)::int AS n FROM quotes');
    expect(rows[0].n).toBe(0);
  });

  it('has no built-in test merchant', async () => {
    const { rows } = await t.db.pool.query("SELECT id FROM merchants WHERE id = 'mer_test'");
    expect(rows).toEqual([]);
  });

  it('stores only the HMAC-SHA256 of each key, never the key', async () => {
    const { rows } = await t.db.pool.query(
      `SELECT m.id, row_to_json(m)::text || row_to_json(k)::text AS row_text, k.key_hash
         FROM merchants m JOIN api_keys k ON k.merchant_id = m.id ORDER BY m.id`,
    );
    expect(rows).toHaveLength(2);
    for (const m of [acme, globex]) {
      const row = rows.find((r) => r.id === m.id)!;
      expect(row.key_hash).toBe(createHmac('sha256', SALT).update(m.key).digest('hex'));
      expect(row.row_text).not.toContain(m.key);
    }
  });

  it('an issued key acts as its merchant; another merchant sees neither its quote nor its intent', async () => {
    const q = await quote({ 'x-api-key': acme.key });
    expect(q.statusCode).toBe(201);
    const quoteId = q.json().quote_id as string;

    const createWith = (key: string) =>
      t.app.inject({ method: 'POST', url: '/payment_intents', headers: { 'x-api-key': key }, payload: { quote_id: quoteId, idempotency_key: 'k-1' } });
    const stolen = await createWith(globex.key);
    expect(stolen.statusCode).toBe(404);
    expect(stolen.json().code).toBe('QUOTE_NOT_FOUND');

    const created = await createWith(acme.key);
    expect(created.statusCode).toBe(201);
    const id = created.json().payment_intent_id as string;

    const own = await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: { 'x-api-key': acme.key } });
    expect(own.statusCode).toBe(200);
    expect(own.json().merchant_id).toBe(acme.id);
    for (const url of [`/payment_intents/${id}`, `/routes/debug/${id}`]) {
      const other = await t.app.inject({ method: 'GET', url, headers: { 'x-api-key': globex.key } });
      expect(other.statusCode, url).toBe(404);
      expect(other.json().code, url).toBe('PAYMENT_INTENT_NOT_FOUND');
    }
  });
});

// Webhook secrets as the Standard Webhooks reference library (`standardwebhooks`, the code Svix ships) reads them:
// a `whsec_` secret is handed to the library as configured, any other secret keeps the original rule, and the
// spec's hex signature is keyed by the configured string in both cases. The library, not our code, verifies here.
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildWebhookHeaders } from '../../src/webhook-client/request.js';
import { generateWebhookSecret, signingKeys, standardKeyOf, WebhookSecretError } from '../../src/webhook-client/secret.js';
import { refusal } from '../helpers/config.js';

const BODY = '{"event_type":"payment.settled","payment_intent_id":"pi_1","merchant_id":"mer_test","payload":{"amount_usd":12.5}}';
const KEY_BYTES = Buffer.from('0123456789abcdef0123456789abcdef', 'utf8');
const STANDARD_SECRET = `whsec_${KEY_BYTES.toString('base64')}`;
const PLAIN_SECRET = 'a-secret-that-is-not-in-whsec-form';

/** A delivery's headers as the service signs them now (the library checks the timestamp against its own clock). */
function deliveryHeaders(secret: string, id = 'evt_test1'): Record<string, string> {
  return buildWebhookHeaders(secret, id, Math.floor(Date.now() / 1000), BODY);
}

function libraryAccepts(librarySecret: string, headers: Record<string, string>, body = BODY): boolean {
  try {
    new Webhook(librarySecret).verify(body, headers);
    return true;
  } catch {
    return false;
  }
}

describe('a whsec_ secret', () => {
  it('is verified by a Standard Webhooks library given the same string', () => {
    const headers = deliveryHeaders(STANDARD_SECRET);
    expect(libraryAccepts(STANDARD_SECRET, headers)).toBe(true);
    expect(libraryAccepts(STANDARD_SECRET, headers, BODY.replace('12.5', '125'))).toBe(false);
    expect(libraryAccepts(STANDARD_SECRET, { ...headers, 'webhook-id': 'evt_other' })).toBe(false);
    expect(libraryAccepts(generateWebhookSecret(), headers)).toBe(false);
  });

  it('keys the spec hex signature with the whole configured string, as the spec says', () => {
    const headers = deliveryHeaders(STANDARD_SECRET);
    expect(headers['x-stableroute-signature']).toBe(createHmac('sha256', STANDARD_SECRET).update(BODY).digest('hex'));
  });

  it('still verifies for receivers set up under the former rule (the whole string wrapped once more)', () => {
    const headers = deliveryHeaders(STANDARD_SECRET);
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(libraryAccepts(`whsec_${Buffer.from(STANDARD_SECRET).toString('base64')}`, headers)).toBe(true);
  });

  it('decodes to its key; a malformed one is refused without showing it', () => {
    expect(standardKeyOf(STANDARD_SECRET).equals(KEY_BYTES)).toBe(true);
    expect(signingKeys(STANDARD_SECRET)).toEqual({ spec: Buffer.from(STANDARD_SECRET), standard: [KEY_BYTES, Buffer.from(STANDARD_SECRET)] });
    const malformed = [
      'whsec_',
      'whsec_not base64!',
      `whsec_${Buffer.alloc(32, 0xfb).toString('base64url')}`, // base64url, which the libraries do not decode
      `whsec_${KEY_BYTES.toString('base64').replace(/=+$/, '')}`, // padding missing
      `whsec_${Buffer.alloc(23, 1).toString('base64')}`,
      `whsec_${Buffer.alloc(65, 1).toString('base64')}`,
    ];
    for (const secret of malformed) {
      expect(() => standardKeyOf(secret), secret).toThrow(WebhookSecretError);
      const thrown = refusal({ WEBHOOK_SIGNING_SECRET: secret });
      expect(thrown.variable, secret).toBe('WEBHOOK_SIGNING_SECRET');
      if (secret.length > 'whsec_'.length + 4) expect((thrown as Error).message).not.toContain(secret.slice('whsec_'.length));
    }
    expect(loadConfig({ WEBHOOK_SIGNING_SECRET: STANDARD_SECRET }).webhookSigningSecret).toBe(STANDARD_SECRET);
  });
});

describe('any other secret', () => {
  it('keeps the original rule: UTF-8 bytes for both signatures, "whsec_" + base64(secret) for a library', () => {
    const headers = deliveryHeaders(PLAIN_SECRET);
    expect(headers['x-stableroute-signature']).toBe(createHmac('sha256', PLAIN_SECRET).update(BODY).digest('hex'));
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(libraryAccepts(`whsec_${Buffer.from(PLAIN_SECRET).toString('base64')}`, headers)).toBe(true);
    expect(signingKeys(PLAIN_SECRET)).toEqual({ spec: Buffer.from(PLAIN_SECRET), standard: [Buffer.from(PLAIN_SECRET)] });
  });
});

describe('generated secrets', () => {
  it('are whsec_ + base64 of 32 random bytes, and work with the library as issued', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(standardKeyOf(secret)).toHaveLength(32);
    expect(generateWebhookSecret()).not.toBe(secret);
    expect(generateWebhookSecret(() => KEY_BYTES)).toBe(STANDARD_SECRET);
    expect(libraryAccepts(secret, deliveryHeaders(secret))).toBe(true);
  });
});

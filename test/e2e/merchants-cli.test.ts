// `stableroute merchants ...` as operators run it, on a test database: what onboarding refuses (exit 2, nothing
// stored), and what it stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { runCommand } from '../helpers/process.js';

let db: TestDatabase;
let env: Record<string, string>;
beforeAll(async () => {
  db = await createTestDatabase();
  env = { DATABASE_URL: db.url };
});
afterAll(async () => db.drop());

const merchants = (...args: string[]) => runCommand(['merchants', ...args], env);
const count = async () => (await db.pool.query<{ n: number }>('SELECT COUNT(*)::int AS n FROM merchants')).rows[0]!.n;

describe('merchants create', () => {
  it.each([
    ['a URL without a host', ['--name', 'Acme', '--webhook-url', 'http://'], '--webhook-url'],
    ['a URL with an empty authority', ['--name', 'Acme', '--webhook-url', 'http:///hooks'], '--webhook-url'],
    ['a URL with credentials', ['--name', 'Acme', '--webhook-url', 'https://user:hunter2@acme.example/hooks'], 'credentials'],
    ['a URL that is not http(s)', ['--name', 'Acme', '--webhook-url', 'ftp://acme.example/hooks'], '--webhook-url'],
    ['a name with a newline', ['--name', 'Acme\nInc', '--webhook-url', 'https://acme.example/hooks'], 'control characters'],
    ['a name with an escape sequence', ['--name', 'Acme\u001b[2J', '--webhook-url', 'https://acme.example/hooks'], 'control characters'],
    ['an empty name', ['--name', '  ', '--webhook-url', 'https://acme.example/hooks'], '--name'],
  ])('refuses %s with exit 2 and stores nothing', async (_what, args, message) => {
    const before = await count();
    const result = await merchants('create', ...args);
    expect(result.code, result.stdout + result.stderr).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).not.toContain('hunter2');
    expect(await count()).toBe(before);
  });

  it('onboards a merchant with a valid name and URL, showing its API key and webhook secret once', async () => {
    const result = await merchants('create', '--name', 'Acme Ltd', '--webhook-url', 'https://acme.example/hooks', '--json');
    expect(result.code, result.stderr).toBe(0);
    const line = JSON.parse(result.stdout.trim().split('\n').at(-1)!) as Record<string, string>;
    expect(line).toMatchObject({ name: 'Acme Ltd', webhook_url: 'https://acme.example/hooks' });
    expect(line.merchant_id).toMatch(/^mer_/);
    expect(line.webhook_secret).toMatch(/^whsec_/);
    const stored = await db.pool.query('SELECT sealed FROM webhook_secrets WHERE merchant_id = $1', [line.merchant_id]);
    expect(stored.rows).toHaveLength(1);
    expect(stored.rows[0].sealed).not.toContain(line.webhook_secret!.slice(6));
  });

  it('in production refuses a webhook_url that is plain http or points at a private address', async () => {
    const production = {
      ...env,
      NODE_ENV: 'production',
      API_KEY_SALT: '9f8e7d6c5b4a39281706f5e4d3c2b1a0',
      WEBHOOK_SIGNING_SECRET: 'whsec_K3p7Xn0QvR2sT9uW1yZ4aB6cD8eF0gH2iJ4kL6mN8oP=',
      AUDIT_KEY: '6e2b9d4f1a8c3e7b5d0f2a9c4e6b8d1f3a5c7e9b0d2f',
    };
    for (const [url, message] of [
      ['http://acme.example/hooks', 'https'],
      ['https://169.254.169.254/latest/meta-data', 'link-local'],
      ['https://[::ffff:127.0.0.1]:3001/admin', 'loopback'],
    ] as const) {
      const before = await count();
      const result = await runCommand(['merchants', 'create', '--name', 'Acme', '--webhook-url', url], production);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(message);
      expect(await count()).toBe(before);
    }
  });
});

describe('merchants webhook-secret and webhook', () => {
  it('rotate prints a new secret once; end-overlap retires the previous one; unknown merchants are refused', async () => {
    const created = await merchants('create', '--name', 'Rotor', '--webhook-url', 'https://rotor.example/hooks', '--json');
    const { merchant_id: id, webhook_secret: first } = JSON.parse(created.stdout.trim().split('\n').at(-1)!) as Record<string, string>;

    const rotated = await merchants('webhook-secret', 'rotate', id!, '--overlap-seconds', '3600', '--json');
    expect(rotated.code, rotated.stderr).toBe(0);
    const result = JSON.parse(rotated.stdout.trim()) as Record<string, string>;
    expect(result.merchant_id).toBe(id);
    expect(result.webhook_secret).toMatch(/^whsec_/);
    expect(result.webhook_secret).not.toBe(first);
    expect(Date.parse(result.previous_valid_until!)).toBeGreaterThan(Date.now() + 3_500_000);

    const ended = await merchants('webhook-secret', 'end-overlap', id!, '--json');
    expect(ended.code, ended.stderr).toBe(0);
    expect(JSON.parse(ended.stdout.trim())).toEqual({ merchant_id: id, retired_secrets: 1 });

    const unknown = await merchants('webhook-secret', 'rotate', 'mer_unknown');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('NOT_FOUND');
    const enable = await merchants('webhook', 'enable', id!, '--json');
    expect(enable.code, enable.stderr).toBe(0);
    expect(JSON.parse(enable.stdout.trim())).toEqual({ merchant_id: id, was_disabled: false, requeued_events: 0 });
    expect((await merchants('webhook-secret', 'spin', id!)).code).toBe(2);
    expect((await merchants('webhook-secret', 'rotate', id!, '--overlap-seconds', 'soon')).code).toBe(2);
  });
});

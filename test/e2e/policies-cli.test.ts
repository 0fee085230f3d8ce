// Spending policies, address books, approvals and API keys from the operator CLI, as operators run them: each
// command a child process on one database, next to two real `stableroute api` processes (production mode). The
// daily limit holds across both processes (20 payouts at once, a limit that fits 10: exactly 10), a key revoked from
// the CLI is refused by the next request in both, and a rate limit set from the CLI answers 429 with Retry-After.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { freePort, killAll, runCommand, type ServiceProcess, startService, waitFor, waitHealthy } from '../helpers/process.js';

const SOL = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

let db: TestDatabase;
let env: Record<string, string>;
const apis: { base: string; process: ServiceProcess }[] = [];
let merchantId = '';
let firstKey = '';
let secondKey = '';

const cli = (...args: string[]) => runCommand(args, env);
const lastJson = (stdout: string) => JSON.parse(stdout.trim().split('\n').pop()!);

async function ok(...args: string[]) {
  const res = await cli(...args);
  expect({ args, code: res.code, stderr: res.stderr }).toEqual({ args, code: 0, stderr: '' });
  return lastJson(res.stdout);
}

async function call(base: string, key: string, method: string, path: string, body?: object) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

const quote = (base: string, key: string, amount: number, destination: object = { solana_address: SOL }) =>
  call(base, key, 'POST', '/quotes', { amount_usd: amount, destination, priority: 'fast' });

async function pay(base: string, key: string, amount: number, idempotencyKey: string) {
  const q = await quote(base, key, amount);
  expect(q.status).toBe(201);
  return call(base, key, 'POST', '/payment_intents', { quote_id: q.body.quote_id, idempotency_key: idempotencyKey });
}

beforeAll(async () => {
  db = await createTestDatabase();
  env = {
    DATABASE_URL: db.url,
    NODE_ENV: 'production',
    API_KEY_SALT: 'cli-policy-salt-8c3f1a6e9b2d5c7a0e4f6b1d3a9c5e2f',
    WEBHOOK_SIGNING_SECRET: 'cli-policy-secret-2a7e5c9f1b3d6a8c0e4b7f2d5a9c1e6b',
    AUDIT_KEY: '6e2b9d4f1a8c3e7b5d0f2a9c4e6b8d1f3a5c7e9b0d2f',
    SIM_TREASURY_USDC: '100000',
    // One operator (the CLI's OS user) decides here; two-operator approvals are tested in test/api/audit-four-eyes.test.ts.
    APPROVALS_REQUIRE_SECOND_OPERATOR: 'off',
    WITHDRAWAL_APPROVAL_ABOVE_USD: '1000',
  };
  const created = await ok('merchants', 'create', '--name', 'Acme', '--webhook-url', 'https://acme.example/hooks', '--json');
  merchantId = created.merchant_id;
  firstKey = created.api_key;
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const service = startService(['api'], { ...env, PORT: String(port), HOST: '127.0.0.1' });
    apis.push({ base, process: service });
    await waitHealthy(base, service);
  }
}, 120_000);

afterAll(async () => {
  await killAll(apis.map((a) => a.process));
  await db?.drop();
});

// Each command is a process that loads the whole service: the tests run few of them, independent ones at once.
const SLOW = { timeout: 240_000 };

describe('stableroute merchants keys', () => {
  it('create prints a new key once; both keys work in both api processes; list shows them without the keys', SLOW, async () => {
    const created = await ok('merchants', 'keys', 'create', merchantId, '--json');
    secondKey = created.api_key;
    expect(created).toMatchObject({ merchant_id: merchantId, status: 'active', prefix: secondKey.slice(0, 16) });
    for (const { base } of apis) for (const key of [firstKey, secondKey]) expect((await quote(base, key, 1)).status).toBe(201);

    const [list, noKey, unknown] = await Promise.all([
      cli('merchants', 'keys', 'list', merchantId, '--json'),
      cli('merchants', 'keys', 'revoke', merchantId),
      cli('merchants', 'keys', 'revoke', merchantId, '--key', 'sr_live_nope0000'),
    ]);
    expect(list.code).toBe(0);
    expect(list.stdout).not.toContain(firstKey);
    expect(list.stdout).not.toContain(secondKey);
    expect(lastJson(list.stdout).map((k: { status: string }) => k.status)).toEqual(['active', 'active']);
    expect([noKey.code, noKey.stderr]).toEqual([2, expect.stringMatching(/usage: stableroute merchants keys/)]);
    expect([unknown.code, unknown.stderr]).toEqual([1, expect.stringContaining('API_KEY_NOT_FOUND')]);
  });
});

describe('stableroute merchants policy', () => {
  it('sets a daily limit that holds across two api processes: 20 payouts at once, room for 10, exactly 10 reserved', SLOW, async () => {
    const policy = await ok('merchants', 'policy', merchantId, '--daily-limit-usd', '100', '--json');
    expect(policy).toMatchObject({ merchant_id: merchantId, daily_limit_usd: 100, sources: { daily_limit_usd: 'merchant', max_payment_usd: 'default' } });

    const quotes = await Promise.all(Array.from({ length: 20 }, () => quote(apis[0]!.base, secondKey, 10)));
    const results = await Promise.all(
      quotes.map((q, i) => call(apis[i % 2]!.base, secondKey, 'POST', '/payment_intents', { quote_id: q.body.quote_id, idempotency_key: `burst-${i}` })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(10);
    expect(results.filter((r) => r.status === 422 && r.body.code === 'POLICY_DAILY_LIMIT_EXCEEDED')).toHaveLength(10);
    const { rows } = await db.pool.query('SELECT COUNT(*)::int AS n, SUM(amount_micros)::text AS total FROM payment_intents WHERE merchant_id = $1', [merchantId]);
    expect(rows[0]).toEqual({ n: 10, total: '100000000' });

    // Printed for people too; none lifts a limit, --reset returns to the service settings.
    const [text, badAmount, unknown] = await Promise.all([
      cli('merchants', 'policy', merchantId, '--daily-limit-usd', 'none', '--max-payment-usd', '50'),
      cli('merchants', 'policy', merchantId, '--max-payment-usd', 'ten'),
      cli('merchants', 'policy', 'mer_nobody', '--max-payment-usd', '5'),
    ]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/daily limit\s+none\s+\(merchant/);
    expect(text.stdout).toMatch(/max payment\s+50 USD\s+\(merchant\)/);
    expect([badAmount.code, badAmount.stderr]).toEqual([2, expect.stringContaining('--max-payment-usd')]);
    expect([unknown.code, unknown.stderr]).toEqual([1, expect.stringContaining('MERCHANT_NOT_FOUND')]);
    expect((await quote(apis[1]!.base, secondKey, 60)).body.code).toBe('POLICY_MAX_PAYMENT_EXCEEDED');
    const reset = await ok('merchants', 'policy', merchantId, '--reset', '--json');
    expect(reset).toMatchObject({ max_payment_usd: null, daily_limit_usd: null, allowlist: false, sources: { max_payment_usd: 'default' } });
  });
});

describe('stableroute merchants addresses and intents approve|reject', () => {
  it('an allowlist follows the address book at once in the api processes', SLOW, async () => {
    await ok('merchants', 'policy', merchantId, '--allowlist', 'on', '--json');
    expect((await pay(apis[0]!.base, secondKey, 1, 'allow-1')).body.code).toBe('RECIPIENT_NOT_ALLOWED');
    const [added, bad] = await Promise.all([
      ok('merchants', 'addresses', 'add', merchantId, '--chain', 'solana', '--address', SOL, '--label', 'payroll', '--json'),
      cli('merchants', 'addresses', 'add', merchantId, '--chain', 'ethereum', '--address', SOL),
    ]);
    expect(added).toMatchObject({ chain: 'solana', address: SOL, label: 'payroll', created: true });
    expect([bad.code, bad.stderr]).toEqual([1, expect.stringContaining('INVALID_DESTINATION')]);
    expect((await pay(apis[1]!.base, secondKey, 1, 'allow-1')).status).toBe(201);
    expect((await ok('merchants', 'addresses', 'list', merchantId, '--json')).map((a: { address: string }) => a.address)).toEqual([SOL]);
    await ok('merchants', 'addresses', 'remove', merchantId, '--chain', 'solana', '--address', SOL, '--json');
    expect((await pay(apis[0]!.base, secondKey, 1, 'allow-2')).body.code).toBe('RECIPIENT_NOT_ALLOWED');
  });

  it('a payment above the threshold waits; approve queues it, reject fails it with its funds released; the ledger verifies', SLOW, async () => {
    await ok('merchants', 'policy', merchantId, '--reset', '--approval-above-usd', '5', '--json');
    const waiting = await Promise.all([pay(apis[0]!.base, secondKey, 6, 'big-1'), pay(apis[1]!.base, secondKey, 7, 'big-2')]);
    for (const w of waiting) expect(w.body).toMatchObject({ status: 'route_selected', approval: { status: 'pending' } });
    const [approveId, rejectId] = waiting.map((w) => w.body.payment_intent_id as string);

    const listed = await ok('intents', 'approvals', '--json');
    expect(listed.map((a: { payment_intent_id: string }) => a.payment_intent_id).sort()).toEqual([approveId, rejectId].sort());
    const jobs = async (id: string) =>
      (await db.pool.query("SELECT COUNT(*)::int AS n FROM pgboss.job WHERE name = 'payment-execute' AND data->>'payment_intent_id' = $1", [id])).rows[0].n;
    expect(await jobs(approveId!)).toBe(0);

    const [approved, rejected] = await Promise.all([
      ok('intents', 'approve', approveId!, '--reason', 'verified by phone', '--json'),
      ok('intents', 'reject', rejectId!, '--json'),
    ]);
    expect(approved).toEqual({ payment_intent_id: approveId, status: 'route_selected', approval: 'approved', approvals: 1, approvals_required: 1 });
    expect(rejected).toEqual({ payment_intent_id: rejectId, status: 'failed', approval: 'rejected', approvals: 0, approvals_required: 1 });
    expect(await jobs(approveId!)).toBe(1);
    const read = await call(apis[0]!.base, secondKey, 'GET', `/payment_intents/${rejectId}`);
    expect(read.body).toMatchObject({ status: 'failed', approval: { status: 'rejected' } });
    expect((read.body.ledger_entries as { type: string }[]).map((e) => e.type)).toEqual(['reserve', 'release']);

    const [again, verify] = await Promise.all([cli('intents', 'approve', rejectId!), cli('ledger', 'verify', '--json')]);
    expect([again.code, again.stderr]).toEqual([1, expect.stringContaining('INVALID_STATE')]);
    expect([verify.code, lastJson(verify.stdout).ok]).toEqual([0, true]);
  });
});

describe('revocation and rate limits from the CLI', () => {
  it('a revoked key is refused by the next request in both api processes; the other key goes on; last use is listed', SLOW, async () => {
    const prefix = firstKey.slice(0, 16);
    const revoked = await ok('merchants', 'keys', 'revoke', merchantId, '--key', prefix, '--json');
    expect(revoked).toMatchObject({ prefix, status: 'revoked', active_keys: 1 });
    for (const { base } of apis) {
      const refused = await quote(base, firstKey, 1);
      expect([refused.status, refused.body.code]).toEqual([401, 'UNAUTHORIZED']);
      expect((await quote(base, secondKey, 1)).status).toBe(201);
    }
    const keys = await waitFor('last use of both keys', async () => {
      const list = lastJson((await cli('merchants', 'keys', 'list', merchantId, '--json')).stdout) as { prefix: string; status: string; last_used_at: string | null }[];
      return list.every((k) => k.last_used_at !== null) && list;
    }, 120_000);
    expect(keys.map((k) => [k.prefix, k.status])).toEqual([
      [prefix, 'revoked'],
      [secondKey.slice(0, 16), 'active'],
    ]);
  });

  it('a merchant rate limit set from the CLI answers 429 RATE_LIMITED with Retry-After, across both processes', SLOW, async () => {
    const fresh = await ok('merchants', 'create', '--name', 'Chatty', '--webhook-url', 'https://chatty.example/hooks', '--json');
    await ok('merchants', 'policy', fresh.merchant_id, '--rate-limit-per-minute', '3', '--json');
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await call(apis[i % 2]!.base, fresh.api_key, 'GET', '/payment_intents/pi_unknown'));
    expect(answers.map((a) => a.status)).toEqual([404, 404, 404, 429]);
    expect(answers[3]!.body).toMatchObject({ statusCode: 429, error: 'Too Many Requests', code: 'RATE_LIMITED' });
    expect(Number(answers[3]!.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

// Issue 35: splitting does not beat the approval threshold (a payout batch waits whole, decided by `batches
// approve|reject`; a limit per day on what leaves unapproved), and the CLI is not a second person once operator
// accounts exist.
describe('stableroute batches approve|reject and --approval-above-usd-per-day', () => {
  const jobs = async (ids: string[]) =>
    (await db.pool.query("SELECT COUNT(*)::int AS n FROM pgboss.job WHERE name = 'payment-execute' AND data->>'payment_intent_id' = ANY($1)", [ids])).rows[0].n;
  const batch = async (key: string, amounts: number[]) => {
    const res = await call(apis[0]!.base, secondKey, 'POST', '/payout_batches', {
      idempotency_key: key,
      items: amounts.map((amount_usd, i) => ({ idempotency_key: `${key}-${i}`, amount_usd, destination: { solana_address: SOL }, priority: 'fast' })),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return { id: res.body.id as string, ids: (res.body.items as { payment_intent: { payment_intent_id: string } }[]).map((i) => i.payment_intent.payment_intent_id) };
  };

  it('a batch above the threshold waits whole, listed once; approve queues every payment, reject fails every one', SLOW, async () => {
    await ok('merchants', 'policy', merchantId, '--reset', '--approval-above-usd', '10', '--json');
    const [kept, dropped] = [await batch('cli-held-1', [4, 4, 4]), await batch('cli-held-2', [6, 6])];
    expect(await jobs([...kept.ids, ...dropped.ids])).toBe(0);
    const listed = (await ok('intents', 'approvals', '--json')) as { payout_batch_id: string | null; payments: number; amount_usd: number }[];
    expect(listed.filter((a) => a.payout_batch_id !== null)).toEqual([
      expect.objectContaining({ payout_batch_id: kept.id, payments: 3, amount_usd: 12 }),
      expect.objectContaining({ payout_batch_id: dropped.id, payments: 2, amount_usd: 12 }),
    ]);
    const [approved, rejected, unknown] = await Promise.all([
      ok('batches', 'approve', kept.id, '--reason', 'payroll', '--json'),
      ok('batches', 'reject', dropped.id, '--json'),
      cli('batches', 'approve', 'pob_unknown'),
    ]);
    expect(approved).toEqual({ payout_batch_id: kept.id, approval: 'approved', approvals: 1, approvals_required: 1, payments: 3 });
    expect(rejected).toEqual({ payout_batch_id: dropped.id, approval: 'rejected', approvals: 0, approvals_required: 1, payments: 2 });
    expect([unknown.code, unknown.stderr]).toEqual([1, expect.stringContaining('PAYOUT_BATCH_NOT_FOUND')]);
    expect(await jobs(kept.ids)).toBe(3);
    const { rows } = await db.pool.query('SELECT DISTINCT status FROM payment_intents WHERE id = ANY($1)', [dropped.ids]);
    expect(rows).toEqual([{ status: 'failed' }]);
    const usage = await cli('batches', 'approve');
    expect([usage.code, usage.stderr]).toEqual([2, expect.stringContaining('usage: stableroute batches')]);
  });

  it('--approval-above-usd-per-day holds the payment that would pass it', SLOW, async () => {
    const policy = await ok('merchants', 'policy', merchantId, '--reset', '--approval-above-usd-per-day', '10', '--json');
    expect(policy).toMatchObject({ approval_above_usd_per_day: 10, sources: { approval_above_usd_per_day: 'merchant' } });
    const text = await cli('merchants', 'policy', merchantId);
    expect(text.stdout).toMatch(/approval per day\s+10 USD\s+\(merchant/);
    // Earlier tests' payments of the last 24 hours left without approval already: one more micro waits.
    expect((await pay(apis[0]!.base, secondKey, 0.000001, 'per-day-1')).body).toMatchObject({ approval: { status: 'pending' } });
    await ok('merchants', 'policy', merchantId, '--reset', '--json');
  });

  it('once an operator account exists, the CLI cannot be the second person on a withdrawal', SLOW, async () => {
    const ada = await ok('operators', 'create', '--name', 'Ada', '--role', 'admin', '--json');
    const res = await fetch(`${apis[0]!.base}/admin/withdrawals`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ada.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ chain: 'solana', to: SOL, amount_usdc: '5000', idempotency_key: 'cli-second' }),
    });
    const withdrawal = (await res.json()) as { id: string; approval: { status: string } };
    expect([res.status, withdrawal.approval.status]).toEqual([201, 'pending']);
    const refused = await cli('intents', 'approve', withdrawal.id);
    expect([refused.code, refused.stderr]).toEqual([1, expect.stringContaining('NAMED_OPERATOR_REQUIRED')]);
    const { rows } = await db.pool.query<{ actor: string; outcome: string }>('SELECT actor, outcome FROM audit_log WHERE $1 = ANY(targets) ORDER BY seq', [withdrawal.id]);
    expect(rows).toEqual([
      { actor: ada.operator_id, outcome: 'ok' },
      { actor: expect.stringMatching(new RegExp(`^cli:${process.getuid!()}\\(`)), outcome: 'refused:NAMED_OPERATOR_REQUIRED' },
    ]);
    // A one-person shop says so: APPROVALS_ALLOW_BREAK_GLASS=on.
    const allowed = await runCommand(['intents', 'approve', withdrawal.id, '--json'], { ...env, APPROVALS_ALLOW_BREAK_GLASS: 'on' });
    expect([allowed.code, allowed.stderr]).toEqual([0, '']);
    expect(lastJson(allowed.stdout)).toMatchObject({ payment_intent_id: withdrawal.id, approval: 'approved' });
  });
});

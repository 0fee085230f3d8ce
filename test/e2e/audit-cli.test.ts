// The audit log from the outside (issue 25): CLI commands and admin requests leave hash-chained records with no
// secret in them or in any log line; `stableroute audit verify` is clean, then names the first record an UPDATE, a
// DELETE or a swap made directly in SQL broke.
import { userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { nonLoopbackAddress, send } from '../helpers/peer.js';
import { freePort, killAll, runCommand, startService, waitHealthy, type ServiceProcess } from '../helpers/process.js';

const PEER = nonLoopbackAddress();
const SALT = 'f0c1d2e3b4a5968778695a4b3c2d1e0ff0e1d2c3b4a59687';
const SIGNING = '9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f3021';
const BREAK_GLASS = '4c1f9e7d2b8a6053e1f7c9d4b2a80e6f3d5c7b9a1e2f4d6c';
const PRODUCTION = { NODE_ENV: 'production', API_KEY_SALT: SALT, WEBHOOK_SIGNING_SECRET: SIGNING, ADMIN_TOKEN: BREAK_GLASS };

let db: TestDatabase;
let service: ServiceProcess | undefined;
const secrets: string[] = [BREAK_GLASS, SALT, SIGNING];

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await killAll([service]);
  await db?.drop();
});

const cli = (args: string[]) => runCommand(args, { ...PRODUCTION, DATABASE_URL: db.url });
const last = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, string>;

describe('the audit log of a production set-up', () => {
  it('records CLI commands and admin requests, and holds no secret in a record or a log line', async () => {
    const admin = last((await cli(['operators', 'create', '--name', 'Ada', '--role', 'admin', '--json'])).stdout);
    secrets.push(admin.token!);
    const merchant = last((await cli(['merchants', 'create', '--name', 'Acme', '--webhook-url', 'https://acme.example/hooks', '--json'])).stdout);
    secrets.push(merchant.api_key!, merchant.webhook_secret!);
    const key = last((await cli(['merchants', 'keys', 'create', merchant.merchant_id!, '--json'])).stdout);
    secrets.push(key.api_key!);
    // Revoked by the whole key: only its shown prefix may go on record.
    expect((await cli(['merchants', 'keys', 'revoke', merchant.merchant_id!, '--key', key.api_key!])).code).toBe(0);
    const rotated = last((await cli(['merchants', 'webhook-secret', 'rotate', merchant.merchant_id!, '--json'])).stdout);
    secrets.push(rotated.webhook_secret!);
    // $USER is anyone's to set: the record names the OS user the kernel says runs the command (issue 35).
    expect((await runCommand(['merchants', 'policy', merchant.merchant_id!, '--max-payment-usd', '500'], { ...PRODUCTION, DATABASE_URL: db.url, USER: 'mallory', LOGNAME: 'mallory' })).code).toBe(0);
    const refused = await cli(['operators', 'disable', 'op_missing']);
    expect(refused.code).toBe(1);

    const port = await freePort();
    service = startService(['serve'], { ...PRODUCTION, DATABASE_URL: db.url, PORT: String(port), LOG_LEVEL: 'trace' });
    await waitHealthy(`http://127.0.0.1:${port}`, service);
    const headers = { host: `localhost:${port}`, authorization: `Bearer ${admin.token!}` };
    const address = await send(PEER, PEER, port, 'POST', `/admin/merchants/${merchant.merchant_id!}/addresses`, headers, { chain: 'solana', address: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM' });
    expect(address.status).toBe(201);
    expect((await send(PEER, PEER, port, 'GET', '/admin/payments', { ...headers, authorization: `Bearer ${admin.token!}x` })).status).toBe(401);
    const quote = await send(PEER, PEER, port, 'POST', '/quotes', { host: `localhost:${port}`, 'x-api-key': merchant.api_key! }, { amount_usd: 5, destination: { solana_address: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM' }, priority: 'fast' });
    expect(quote.status).toBe(201);
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);

    const { rows } = await db.pool.query<{ actor: string; action: string; outcome: string }>('SELECT actor, action, outcome FROM audit_log ORDER BY seq');
    expect(rows.map((r) => [r.actor.replace(/^cli:.*/, 'cli'), r.action, r.outcome])).toEqual([
      ['cli', 'operator.create', 'ok'],
      ['cli', 'merchant.create', 'ok'],
      ['cli', 'api_key.create', 'ok'],
      ['cli', 'api_key.revoke', 'ok'],
      ['cli', 'webhook_secret.rotate', 'ok'],
      ['cli', 'merchant.policy', 'ok'],
      ['cli', 'operator.disable', 'refused:OPERATOR_NOT_FOUND'],
      [admin.operator_id, 'address_book.add', 'ok'],
    ]);
    const cliActors = new Set(rows.filter((r) => r.actor.startsWith('cli:')).map((r) => r.actor));
    expect(cliActors).toEqual(new Set([`cli:${process.getuid!()}(${userInfo().username})`]));
    const everything = (await db.pool.query<{ t: string }>("SELECT string_agg(row_to_json(a)::text, E'\\n') AS t FROM audit_log a")).rows[0]!.t;
    const logs = service.output();
    expect(logs.length).toBeGreaterThan(1000); // trace level: every request was logged
    for (const secret of secrets) {
      expect(everything.includes(secret), 'a secret in the audit log').toBe(false);
      expect(logs.includes(secret), 'a secret in a log line').toBe(false);
    }
  }, 120_000);

  it('audit verify is clean, then names the first record an UPDATE, a DELETE or a swap broke', async () => {
    const verify = () => cli(['audit', 'verify']);
    const clean = await verify();
    expect(clean.code, clean.stdout + clean.stderr).toBe(0);
    expect(clean.stdout).toMatch(/^OK: 8 audit records/m);

    const saved = (await db.pool.query('SELECT * FROM audit_log ORDER BY seq')).rows as Record<string, unknown>[];
    const restore = async () => {
      await db.pool.query('DELETE FROM audit_log');
      for (const r of saved) {
        await db.pool.query(
          'INSERT INTO audit_log (seq, at, actor, actor_role, action, targets, details, peer, outcome, prev_hash, hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)',
          [r.seq, r.at, r.actor, r.actor_role, r.action, r.targets, r.details, r.peer, r.outcome, r.prev_hash, r.hash],
        );
      }
      expect((await verify()).code).toBe(0);
    };

    await db.pool.query(`UPDATE audit_log SET details = jsonb_set(details, '{max_payment_micros}', '"99999999"') WHERE seq = 6`);
    const updated = await verify();
    expect(updated.code).toBe(1);
    expect(updated.stdout).toMatch(/BROKEN at record 6: .*altered/);
    await restore();

    await db.pool.query('DELETE FROM audit_log WHERE seq = 3');
    const deleted = await verify();
    expect(deleted.code).toBe(1);
    expect(deleted.stdout).toMatch(/BROKEN at record 4: record 3 is missing/);
    await restore();

    // Two records swap places (their contents, keeping the numbers): the chain no longer links.
    await db.pool.query(`UPDATE audit_log a SET at = b.at, actor = b.actor, action = b.action, targets = b.targets, details = b.details,
                           outcome = b.outcome, prev_hash = b.prev_hash, hash = b.hash
                           FROM (SELECT * FROM audit_log WHERE seq IN (4, 5)) b WHERE a.seq IN (4, 5) AND b.seq = 9 - a.seq`);
    const swapped = await verify();
    expect(swapped.code).toBe(1);
    expect(swapped.stdout).toMatch(/BROKEN at record 4: /);
    await restore();

    await db.pool.query('DELETE FROM audit_log WHERE seq = 8');
    const truncated = await cli(['audit', 'verify', '--json']);
    expect(truncated.code).toBe(1);
    expect(last(truncated.stdout)).toMatchObject({ ok: false, seq: '8' });
    await restore();
  }, 120_000);
});

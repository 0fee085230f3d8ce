// The audit log from the outside (issue 25): CLI commands and admin requests leave hash-chained records with no
// secret in them or in any log line; `stableroute audit verify` is clean, then names the first record an UPDATE, a
// DELETE or a swap made directly in SQL broke. Issue 35: the head anchored outside the database (`audit head
// --json`, `verify --expect SEQ:HASH`, AUDIT_ANCHOR_FILE) catches a tail cut off with the head moved back, and
// production refuses to start without a strong AUDIT_KEY.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { nonLoopbackAddress, send } from '../helpers/peer.js';
import { freePort, killAll, runCommand, startService, waitHealthy, type ServiceProcess } from '../helpers/process.js';

const PEER = nonLoopbackAddress();
const SALT = 'f0c1d2e3b4a5968778695a4b3c2d1e0ff0e1d2c3b4a59687';
const SIGNING = '9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f3021';
const BREAK_GLASS = '4c1f9e7d2b8a6053e1f7c9d4b2a80e6f3d5c7b9a1e2f4d6c';
const AUDIT_KEY = '7e3a9c1f5b2d8e4a6c0f9b3d7e1a5c2f8b4d6e0a9c3f7b1d';
const PRODUCTION = { NODE_ENV: 'production', API_KEY_SALT: SALT, WEBHOOK_SIGNING_SECRET: SIGNING, ADMIN_TOKEN: BREAK_GLASS, AUDIT_KEY };

let db: TestDatabase;
let service: ServiceProcess | undefined;
const secrets: string[] = [BREAK_GLASS, SALT, SIGNING, AUDIT_KEY];

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

describe('the audit head anchored outside the database', () => {
  let other: TestDatabase;
  let anchor: string;
  beforeAll(async () => {
    other = await createTestDatabase();
    anchor = join(await mkdtemp(join(tmpdir(), 'sr-anchor-')), 'audit.anchor');
  });
  const starts: ServiceProcess[] = [];
  afterAll(async () => {
    await killAll(starts);
    await other?.drop();
  });
  const anchored = (args: string[], env: Record<string, string> = {}) => runCommand(args, { ...PRODUCTION, DATABASE_URL: other.url, AUDIT_ANCHOR_FILE: anchor, ...env });
  const bare = (args: string[]) => runCommand(args, { ...PRODUCTION, DATABASE_URL: other.url });

  it('prints the head, writes one anchor line per record, and a cut tail fails against the anchor and against --expect', async () => {
    for (const name of ['Ada', 'Bob']) expect((await anchored(['operators', 'create', '--name', name, '--role', 'admin', '--json'])).code).toBe(0);
    const merchant = last((await anchored(['merchants', 'create', '--name', 'Acme', '--webhook-url', 'https://acme.example/hooks', '--json'])).stdout);
    expect((await anchored(['merchants', 'policy', merchant.merchant_id!, '--max-payment-usd', '500'])).code).toBe(0);
    const records = (await other.pool.query<{ seq: string; hash: string }>('SELECT seq::text AS seq, hash FROM audit_log ORDER BY seq')).rows;
    expect(records.map((r) => r.seq)).toEqual(['1', '2', '3', '4']);

    const head = await bare(['audit', 'head', '--json']);
    expect(head.code, head.stdout + head.stderr).toBe(0);
    // seq is a string, as everywhere the audit log's sequence numbers leave the service (exact beyond 2^53).
    expect(last(head.stdout)).toEqual({ seq: '4', hash: records[3]!.hash });
    expect((await bare(['audit', 'head'])).stdout).toContain(records[3]!.hash);
    const lines = (await readFile(anchor, 'utf8')).trim().split('\n').sort();
    expect(lines).toEqual(records.map((r) => `${r.seq} ${r.hash}`).sort());

    const clean = await anchored(['audit', 'verify', '--expect', `4:${records[3]!.hash}`, '--expect', `2:${records[1]!.hash}`]);
    expect(clean.code, clean.stdout + clean.stderr).toBe(0);
    expect(clean.stdout).toMatch(/^OK: 4 audit records/m);
    const wrong = await bare(['audit', 'verify', '--expect', `3:${records[1]!.hash}`]);
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toMatch(/BROKEN at record 3: .*expected/);
    expect((await bare(['audit', 'verify', '--expect', 'four:abc'])).code).toBe(2);

    // The tail cut off and the head moved back: the chain itself is intact, so only an outside fact can tell.
    await other.pool.query('DELETE FROM audit_log WHERE seq > 2');
    await other.pool.query('UPDATE audit_head SET seq = 2, hash = $1', [records[1]!.hash]);
    expect((await bare(['audit', 'verify'])).code).toBe(0);
    const againstAnchor = await anchored(['audit', 'verify']);
    expect(againstAnchor.code).toBe(1);
    expect(againstAnchor.stdout).toMatch(/BROKEN at record [34]: .*anchor/);
    const againstHead = await bare(['audit', 'verify', '--expect', `4:${records[3]!.hash}`, '--json']);
    expect(againstHead.code).toBe(1);
    expect(last(againstHead.stdout)).toMatchObject({ ok: false, seq: '4' });
    expect(last(againstHead.stdout).problem).toMatch(/the log ends at record 2/);
  }, 120_000);

  it('production refuses to start without AUDIT_KEY, or with a weak one, naming the variable', async () => {
    const { AUDIT_KEY: _, ...withoutKey } = PRODUCTION;
    const missing = startService(['serve'], { ...withoutKey, DATABASE_URL: other.url, PORT: String(await freePort()) });
    starts.push(missing);
    expect(await missing.exited).toBe(1);
    expect(missing.output()).toMatch(/AUDIT_KEY.*required/);
    const weak = await runCommand(['audit', 'verify'], { ...PRODUCTION, AUDIT_KEY: 'audit-key-2026', DATABASE_URL: other.url });
    expect(weak.code).toBe(1);
    expect(weak.stderr).toMatch(/AUDIT_KEY: is too short/);
    const file = join(await mkdtemp(join(tmpdir(), 'sr-audit-key-')), 'audit.key');
    await writeFile(file, `${AUDIT_KEY}\n`);
    const fromFile = await runCommand(['audit', 'verify'], { ...withoutKey, AUDIT_KEY_FILE: file, DATABASE_URL: other.url });
    expect(fromFile.code, fromFile.stdout + fromFile.stderr).toBe(0);
    // An anchor file the service cannot append to would leave its records unanchored: no start.
    const unanchored = startService(['serve'], { ...PRODUCTION, AUDIT_ANCHOR_FILE: join(file, 'not-a-directory', 'audit.anchor'), DATABASE_URL: other.url, PORT: String(await freePort()) });
    starts.push(unanchored);
    expect(await unanchored.exited).toBe(1);
    expect(unanchored.output()).toMatch(/AUDIT_ANCHOR_FILE: cannot append to .*ENOTDIR/);
  }, 60_000);
});

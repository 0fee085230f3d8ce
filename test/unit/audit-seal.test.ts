// The audit log against someone who can write the database (issue 35, decisions 186, 187): the chain is keyed with
// AUDIT_KEY, which is not in the database, so a record rewritten with every later hash and the head recomputed (plain
// SHA-256, or HMAC under another key) fails the proof; a tail cut off with the head moved back fails against the
// anchor file and an expected head; an anchor line is written only once its record committed. Records written before
// the key (an upgraded database) verify unkeyed and are sealed by the first keyed one. And a record never fails on
// what a client sent: a NUL or a lone surrogate anywhere is stored (as U+FFFD) and hashed as stored.
import { createHash, createHmac } from 'node:crypto';
import { appendFile, mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { appendAudit, auditMigrationSteps, type AuditConfig, type AuditRow } from '../../src/core/operators/audit.js';
import { verifyAudit, type AuditExpectation } from '../../src/core/operators/audit-verify.js';
import { migrate } from '../../src/db/migrate.js';
import { withTransaction } from '../../src/db/pool.js';
import { testAudit } from '../helpers/audit.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const KEY = '5d1f8a3c7e9b2d4f6a0c8e1b3d5f7a9c2e4b6d8f0a1c';
let db: TestDatabase;
let dir: string;
let files = 0;
const AT = Date.parse('2026-01-01T00:00:00.000Z');

beforeAll(async () => {
  db = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'sr-audit-'));
});
afterAll(async () => db?.drop());
beforeEach(async () => {
  await db.pool.query('TRUNCATE audit_log');
  await db.pool.query("UPDATE audit_head SET seq = 0, hash = repeat('0', 64), unkeyed_through = 0, unkeyed_seal = NULL");
});

const settings = (anchorFile: string | null = null, key = KEY): AuditConfig => ({ audit: { key, anchorFile } });
const newAnchor = () => join(dir, `anchor-${++files}`);
const verify = (config: AuditConfig = settings(), expect: AuditExpectation[] = []) => verifyAudit({ pool: db.pool, config }, expect);
const sha256 = (input: string) => createHash('sha256').update(input).digest('hex');

/** JSON with sorted keys: the documented canonical form an attacker re-implements. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

type Row = Omit<AuditRow, 'prev_hash'>;

const bodyOf = (row: Omit<Row, 'seq' | 'hash'>) =>
  canonical({ at: row.at.toISOString(), actor: row.actor, actor_role: row.actor_role, action: row.action, targets: row.targets, details: row.details, peer: row.peer, outcome: row.outcome });

const rows = async () => (await db.pool.query<Row>('SELECT seq::text AS seq, at, actor, actor_role, action, targets, details, peer, outcome, hash FROM audit_log ORDER BY seq')).rows;

/** What someone with write access to the database does: change record `seq`, then recompute every hash after it and the head. */
async function rewrite(seq: number, change: Record<string, unknown>, hash: (input: string) => string): Promise<void> {
  const all = await rows();
  let prev = all.find((r) => Number(r.seq) === seq - 1)?.hash ?? '0'.repeat(64);
  for (const row of all.filter((r) => Number(r.seq) >= seq)) {
    const details = Number(row.seq) === seq ? { ...row.details, ...change } : row.details;
    const next = hash(`${row.seq}\n${prev}\n${bodyOf({ ...row, details })}`);
    await db.pool.query('UPDATE audit_log SET details = $2::jsonb, prev_hash = $3, hash = $4 WHERE seq = $1', [row.seq, JSON.stringify(details), prev, next]);
    prev = next;
  }
  await db.pool.query('UPDATE audit_head SET hash = $1', [prev]);
}

async function append(n: number, config: AuditConfig = settings(), details: Record<string, unknown> = { amount_usd: '10' }): Promise<void> {
  await withTransaction(db.pool, (tx) => appendAudit(config, tx, { ...testAudit(`test.record_${n}`), targets: [`t_${n}`], details }, 'ok', new Date(AT + n * 1000)));
}

async function cutTail(keep: number): Promise<void> {
  const kept = (await rows()).find((r) => Number(r.seq) === keep)!;
  await db.pool.query('DELETE FROM audit_log WHERE seq > $1', [keep]);
  await db.pool.query('UPDATE audit_head SET seq = $1, hash = $2', [keep, kept.hash]);
}

describe('the keyed chain', () => {
  it('a record rewritten with every later hash and the head recomputed (plain SHA-256) fails the proof', async () => {
    for (let n = 1; n <= 5; n++) await append(n);
    expect(await verify()).toMatchObject({ ok: true, records: 5, unkeyed_records: 0 });
    await rewrite(3, { amount_usd: '10000' }, sha256);
    expect(await verify()).toMatchObject({ ok: false, seq: '3', problem: expect.stringMatching(/under AUDIT_KEY/) });
  });

  it('so does a log recomputed from its first record on', async () => {
    for (let n = 1; n <= 3; n++) await append(n);
    await rewrite(1, { amount_usd: '1' }, sha256);
    expect(await verify()).toMatchObject({ ok: false, seq: '1' });
  });

  it('so does a record recomputed with HMAC under another key (a guessed one, or the development key)', async () => {
    for (let n = 1; n <= 3; n++) await append(n);
    await rewrite(2, { amount_usd: '1' }, (input) => createHmac('sha256', 'stableroute-dev-audit-key').update(input).digest('hex'));
    expect(await verify()).toMatchObject({ ok: false, seq: '2' });
  });

  it('proves nothing under another key: a log written with one key fails verification with another', async () => {
    for (let n = 1; n <= 2; n++) await append(n);
    expect(await verify(settings(null, `${KEY}x`))).toMatchObject({ ok: false, seq: '1' });
  });
});

describe('the head anchored outside the database', () => {
  it('a tail cut off with the head moved back passes the chain, and fails against the anchor file and an expected head', async () => {
    const anchor = newAnchor();
    for (let n = 1; n <= 5; n++) await append(n, settings(anchor));
    const all = await rows();
    expect((await readFile(anchor, 'utf8')).trim().split('\n')).toEqual(all.map((r) => `${r.seq} ${r.hash}`));
    const head: AuditExpectation = { seq: 5n, hash: all[4]!.hash };
    expect(await verify(settings(anchor), [head])).toMatchObject({ ok: true, records: 5, expectations: 1, anchor: { lines: 5, latest_seq: '5', unreadable: 0 } });

    await cutTail(3);
    expect(await verify()).toMatchObject({ ok: true, records: 3 });
    expect(await verify(settings(anchor))).toMatchObject({ ok: false, seq: '4', problem: expect.stringMatching(/anchor file names it, but the log ends at record 3/) });
    expect(await verify(settings(), [head])).toMatchObject({ ok: false, seq: '5', records: 3, problem: expect.stringMatching(/expected head names it, but the log ends at record 3/) });
    // An older head still in place passes.
    expect(await verify(settings(), [{ seq: 2n, hash: all[1]!.hash }])).toMatchObject({ ok: true });
    // The cut tail written again with other records (same numbers, other hashes): the anchor still tells.
    await append(4, settings(), { amount_usd: '99' });
    await append(5, settings(), { amount_usd: '99' });
    expect(await verify()).toMatchObject({ ok: true, records: 5 });
    expect(await verify(settings(anchor))).toMatchObject({ ok: false, seq: '4', problem: expect.stringMatching(/rewritten/) });
  });

  it('a record whose transaction rolled back leaves no line, and the next record takes its number with its own line', async () => {
    const anchor = newAnchor();
    await append(1, settings(anchor));
    await expect(
      withTransaction(db.pool, async (tx) => {
        await appendAudit(settings(anchor), tx, testAudit('test.undone'), 'ok', new Date(AT));
        throw new Error('rolled back after the append');
      }),
    ).rejects.toThrow('rolled back');
    expect((await readFile(anchor, 'utf8')).trim().split('\n')).toHaveLength(1);
    await append(2, settings(anchor));
    const all = await rows();
    expect((await readFile(anchor, 'utf8')).trim().split('\n')).toEqual(all.map((r) => `${r.seq} ${r.hash}`));
    expect(await verify(settings(anchor))).toMatchObject({ ok: true, records: 2, anchor: { lines: 2 } });
  });

  it('appends racing on the head each leave their one line, whole, in whatever order they committed', async () => {
    const anchor = newAnchor();
    await Promise.all(Array.from({ length: 24 }, (_, n) => append(n + 1, settings(anchor))));
    const lines = (await readFile(anchor, 'utf8')).trim().split('\n');
    expect(lines.sort()).toEqual((await rows()).map((r) => `${r.seq} ${r.hash}`).sort());
    expect(await verify(settings(anchor))).toMatchObject({ ok: true, records: 24, anchor: { lines: 24, latest_seq: '24', unreadable: 0 } });
  });

  it('the anchor is a lower bound: records without a line (a process died after its commit) pass; lines out of order and a torn line too', async () => {
    const anchor = newAnchor();
    for (let n = 1; n <= 3; n++) await append(n);
    const all = await rows();
    await appendFile(anchor, `3 ${all[2]!.hash}\n1 ${all[0]!.hash}\n2 ${all[1]!.hash.slice(0, 20)}`);
    expect(await verify(settings(anchor))).toMatchObject({ ok: true, records: 3, anchor: { lines: 2, latest_seq: '3', unreadable: 1 } });
  });
});

describe('records written before the key (an upgraded database)', () => {
  it('verify unkeyed and prove less; the first keyed record seals them; a keyed record turned unkeyed fails', async () => {
    // The database as migration 098 finds it: two records hashed with plain SHA-256.
    await db.pool.query('ALTER TABLE audit_head DROP COLUMN unkeyed_through, DROP COLUMN unkeyed_seal');
    await db.pool.query("DELETE FROM schema_migrations WHERE name = '098_audit_key.sql'");
    let prev = '0'.repeat(64);
    for (let n = 1; n <= 2; n++) {
      const row = { at: new Date(AT + n * 1000), actor: 'op_old', actor_role: 'admin', action: 'old.action', targets: [], details: { n }, peer: null, outcome: 'ok' };
      const hash = sha256(`${n}\n${prev}\n${bodyOf(row)}`);
      await db.pool.query(
        'INSERT INTO audit_log (seq, at, actor, actor_role, action, targets, details, peer, outcome, prev_hash, hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)',
        [n, row.at, row.actor, row.actor_role, row.action, row.targets, row.details, row.peer, row.outcome, prev, hash],
      );
      await db.pool.query('UPDATE audit_head SET seq = $1, hash = $2', [n, hash]);
      prev = hash;
    }
    expect(await migrate(db.pool, auditMigrationSteps(settings()))).toEqual(['098_audit_key.sql']);
    expect(await verify()).toMatchObject({ ok: true, records: 2, unkeyed_records: 2 });

    await append(3);
    await append(4);
    expect(await verify()).toMatchObject({ ok: true, records: 4, unkeyed_records: 2 });
    // An unkeyed record rewritten with its chain recomputed: the sealed boundary names the last unkeyed record's hash.
    const saved = await rows();
    await rewrite(2, { n: 20 }, sha256);
    expect(await verify()).toMatchObject({ ok: false, seq: '2', problem: expect.stringMatching(/not sealed/) });
    // Every keyed record turned back into an unkeyed one: the chain says where the key began.
    await rewrite(2, { n: 2 }, sha256);
    expect((await rows()).map((r) => r.hash).slice(0, 2)).toEqual(saved.map((r) => r.hash).slice(0, 2));
    expect(await verify()).toMatchObject({ ok: false, seq: '3', problem: expect.stringMatching(/under AUDIT_KEY/) });
  });

  it('the boundary cannot be moved: every record rewritten with plain SHA-256 and marked as written before the key fails', async () => {
    for (let n = 1; n <= 4; n++) await append(n);
    expect(await verify()).toMatchObject({ ok: true, records: 4, unkeyed_records: 0 });
    await rewrite(1, { amount_usd: '9999' }, sha256);
    await db.pool.query('UPDATE audit_head SET unkeyed_through = 4');
    expect(await verify()).toMatchObject({ ok: false, seq: '4', problem: expect.stringMatching(/not sealed under this key/) });
    // A seal the attacker computes without the key, or a mark beyond the end, fails too.
    await db.pool.query('UPDATE audit_head SET unkeyed_seal = $1', [createHmac('sha256', 'a-guess').update('unkeyed-through\n4\n').digest('hex')]);
    expect(await verify()).toMatchObject({ ok: false, seq: '4' });
    await db.pool.query('UPDATE audit_head SET unkeyed_through = 40');
    expect(await verify()).toMatchObject({ ok: false, seq: '40', problem: expect.stringMatching(/log ends at record 4/) });
  });
});

describe('what a client sent', () => {
  it('a NUL or a lone surrogate in a key or a value of the details, or in a target, is stored as U+FFFD, and the log still verifies', async () => {
    const hostile = { 'avg_confirmation_seconds\ud800': 1, reason: 'nul\u0000here', nested: { 'k\u0000': ['\udc00lone', 'pair \ud83d\ude00 ok'] } };
    await withTransaction(db.pool, (tx) =>
      appendAudit(settings(), tx, { actor: { id: 'op_x', role: 'admin', peer: '10.0.0.1' }, action: 'test.hostile', targets: ['pi_\u0000\ud800'], details: hostile }, 'refused:INVALID_REQUEST', new Date(AT)),
    );
    const stored = (await db.pool.query<{ details: Record<string, unknown>; targets: string[] }>('SELECT details, targets FROM audit_log WHERE seq = 1')).rows[0]!;
    expect(stored.details).toEqual({ 'avg_confirmation_seconds\ufffd': 1, reason: 'nul\ufffdhere', nested: { 'k\ufffd': ['\ufffdlone', 'pair \ud83d\ude00 ok'] } });
    expect(stored.targets).toEqual(['pi_\ufffd\ufffd']);
    expect(await verify()).toMatchObject({ ok: true, records: 1 });
  });

  it('details nested deeper than the bound are cut, not refused', async () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 5000; i++) deep = { d: deep };
    await append(1, settings(), { deep });
    const stored = (await db.pool.query<{ text: string }>('SELECT details::text AS text FROM audit_log WHERE seq = 1')).rows[0]!.text;
    expect(stored).toContain('[too deep]');
    expect(await verify()).toMatchObject({ ok: true, records: 1 });
  });
});

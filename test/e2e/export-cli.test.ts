// `stableroute export` run as operators run it (a child process on the service's database) writes exactly the bytes
// GET /admin/exports/*.csv answers, to stdout or to a file only its owner reads; usage mistakes are exit 2 before the
// database is touched; each export leaves an audit record under the CLI's actor.
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant } from '../../src/core/merchants/merchants.js';
import { createPayment, createTestContext, ETH_ADDRESS, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { testAudit } from '../helpers/audit.js';
import { runCommand } from '../helpers/process.js';
import { confirm, drainExecution } from '../helpers/workers.js';

let t: TestContext;
let dir: string;
let merchant: string;

beforeAll(async () => {
  t = await createTestContext({ SIM_TREASURY_USDC: '10000' });
  dir = await mkdtemp(join(tmpdir(), 'stableroute-export-'));
  merchant = (await createMerchant(t.db.pool, t.ctx.config, { name: '+Formula "Traders", Ltd', webhookUrl: null }, t.clock.now(), testAudit())).merchant.id;
  await createPayment(t.app, 10.5, { solana_address: SOL_ADDRESS });
  t.clock.advance(1000);
  await createPayment(t.app, 0.000001, { ethereum_address: ETH_ADDRESS });
  await drainExecution(t);
  for (let round = 0; round < 4; round++) {
    t.clock.advance(60_000);
    await confirm(t);
  }
  t.clock.advance(1000);
  await createPayment(t.app, 3, { solana_address: SOL_ADDRESS }, '=cmd|" /C calc"!A0');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await t.close();
});

const cli = (args: string[]) => runCommand(['export', ...args], { DATABASE_URL: t.db.url });

describe('stableroute export', () => {
  it('writes the bytes of the HTTP export, to stdout and to a file only its owner reads', async () => {
    for (const [kind, filters] of [
      ['payments', []],
      ['ledger', []],
      ['payments', ['--chain', 'solana', '--status', 'settled']],
      ['ledger', ['--merchant-id', 'mer_test', '--status', 'settled']],
    ] as [string, string[]][]) {
      const query = new URLSearchParams({ from: '2026-03-01', to: '2026-03-02T00:00:00+00:00' });
      for (let i = 0; i < filters.length; i += 2) query.set(filters[i]!.slice(2).replace('-', '_'), filters[i + 1]!);
      const http = await t.app.inject({ method: 'GET', url: `/admin/exports/${kind}.csv?${query}` });
      expect(http.statusCode, http.body).toBe(200);
      expect(http.body.split('\r\n').length, kind).toBeGreaterThanOrEqual(3); // the header and at least one row

      const args = [kind, '--from', '2026-03-01', '--to', '2026-03-02T00:00:00+00:00', ...filters];
      const toStdout = await cli(args);
      expect(toStdout.code, toStdout.stderr).toBe(0);
      expect(toStdout.stdout, `${kind} ${filters.join(' ')}`).toBe(http.body);

      const file = join(dir, `${kind}-${filters.length}.csv`);
      const toFile = await cli([...args, '--out', file]);
      expect(toFile.code, toFile.stderr).toBe(0);
      expect(toFile.stdout).toBe('');
      expect(await readFile(file, 'utf8')).toBe(http.body);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
    }
  });

  it('records each export under the CLI actor, with its filters', async () => {
    const result = await cli(['payments', '--from', '2026-03-01', '--to', '2026-03-02', '--merchant-id', merchant]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.split('\r\n')).toHaveLength(2); // the header, and the end of it: this merchant paid nothing
    const { rows } = await t.db.pool.query('SELECT actor, action, targets, details, outcome FROM audit_log ORDER BY seq DESC LIMIT 1');
    expect(rows[0]).toMatchObject({
      actor: expect.stringMatching(/^cli:/),
      action: 'export.payments',
      targets: [merchant],
      details: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z', chain: null, merchant_id: merchant, status: null },
      outcome: 'ok',
    });
  });

  it('answers a usage mistake with exit 2 and the usage, and writes no file', async () => {
    const before = (await t.db.pool.query('SELECT COUNT(*)::int AS n FROM audit_log')).rows[0].n;
    const file = join(dir, 'never.csv');
    for (const args of [
      ['payments', '--from', '2026-03-01'],
      ['invoices', '--from', '2026-03-01', '--to', '2026-03-02'],
      ['payments', '--from', '2026-03-02', '--to', '2026-03-01', '--out', file],
      ['ledger', '--from', 'March', '--to', '2026-03-02', '--out', file],
      ['ledger', '--from', '2026-03-01', '--to', '2026-03-02', '--chain', 'bitcoin', '--out', file],
    ]) {
      const result = await cli(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain('usage: stableroute export payments|ledger');
    }
    expect((await cli(['ledger', '--from', 'March', '--to', '2026-03-02'])).stderr).toContain('INVALID_FILTER: from must be an ISO 8601 day');
    await expect(stat(file)).rejects.toThrow();
    expect((await t.db.pool.query('SELECT COUNT(*)::int AS n FROM audit_log')).rows[0].n).toBe(before);
  });
});

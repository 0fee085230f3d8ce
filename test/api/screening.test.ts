// Sanctions screening at the edge (issue 29 item 1): a quote naming a listed recipient is refused as a whole with
// 422 RECIPIENT_SCREENED and stores nothing (EVM addresses whatever their case, Solana exactly), a withdrawal to one
// likewise; the list is reloaded on change by every process without a restart (this test's context and a real
// `stableroute serve` child on the same file); a list file missing at start-up stops the start, naming the variable;
// the screening provider is asked with a signed request, and its deny, its timeout (closed and open) and its errors
// mean what SCREENING_FAIL says. A reload that would weaken the list (emptied, half-written) is refused with an
// operator alert that the next good load resolves, once whatever the number of processes (issue 35); a list that
// lists nothing refuses the start.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENING_PROVIDER_REQUESTS_AT_ONCE_MAX } from '../../src/bounds.js';
import { createScreener } from '../../src/core/screening/screener.js';
import { createTestContext, ETH_ADDRESS, KEY, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { freePort, killAll, runCommand, startService, waitFor, waitHealthy, type ServiceProcess } from '../helpers/process.js';
import { startScreeningProvider, type FakeProvider } from '../helpers/screening-provider.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const evmAddress = () => `0x${randomBytes(20).toString('hex')}`;

const dir = mkdtempSync(join(tmpdir(), 'stableroute-screening-'));
const listFile = join(dir, 'sanctioned.txt');
/** Rewrites the list the way deploy tools do: a new file renamed over the old one. */
function writeList(lines: string[]) {
  const next = join(dir, `.next-${randomBytes(4).toString('hex')}`);
  writeFileSync(next, `${lines.join('\n')}\n`);
  renameSync(next, listFile);
}

const quote = (t: TestContext, destination: Record<string, string>, headers: Record<string, string> = KEY) =>
  t.app.inject({ method: 'POST', url: '/quotes', headers, payload: { amount_usd: 10, destination, priority: 'fast' } });
const countOf = async (t: TestContext, table: string) => (await t.db.pool.query<{ n: number }>(`SELECT COUNT(*)::int AS n FROM ${table}`)).rows[0]!.n;

describe('the screening list', () => {
  let t: TestContext;
  let service: ServiceProcess | undefined;
  beforeAll(async () => {
    writeList(['# OFAC SDN list, digital currency addresses', ETH_ADDRESS.toLowerCase(), `${SOL_ADDRESS.toLowerCase()} # a Solana address in the wrong case: not this one`]);
    t = await createTestContext({ SCREENING_LIST_FILE: listFile, SIM_TREASURY_USDC: '1000' });
  });
  afterAll(async () => {
    await killAll([service]);
    await t.close();
  });

  it('refuses a quote naming a listed EVM address in checksum case, as a whole, and stores nothing', async () => {
    const quotes = await countOf(t, 'quotes');
    const refused = await quote(t, { ethereum_address: ETH_ADDRESS, solana_address: SOL_ADDRESS });
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toMatchObject({ code: 'RECIPIENT_SCREENED', message: 'the recipient on ethereum is refused by sanctions screening' });
    // The list's source stays with the operator.
    expect(refused.body).not.toContain('OFAC');
    expect(await countOf(t, 'quotes')).toBe(quotes);
  });

  it('matches Solana addresses exactly, and lets unlisted recipients through', async () => {
    expect((await quote(t, { solana_address: SOL_ADDRESS })).statusCode).toBe(201);
    expect((await quote(t, { ethereum_address: evmAddress() })).statusCode).toBe(201);
  });

  it('refuses a withdrawal to a listed address and reserves nothing', async () => {
    const before = await countOf(t, 'payment_intents');
    const res = await t.app.inject({ method: 'POST', url: '/admin/withdrawals', payload: { chain: 'ethereum', to: ETH_ADDRESS, amount_usdc: '5' } });
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('RECIPIENT_SCREENED');
    expect(await countOf(t, 'payment_intents')).toBe(before);
    const treasury = (await t.app.inject({ method: 'GET', url: '/admin/treasury' })).json() as { chain: string; reserved_usdc: string }[];
    expect(treasury.find((c) => c.chain === 'ethereum')!.reserved_usdc).toBe('0');
  });

  it('refuses a payout batch item naming a listed recipient, and only that item', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/payout_batches',
      headers: KEY,
      payload: {
        idempotency_key: `screened-batch-${randomBytes(4).toString('hex')}`,
        items: [
          { amount_usd: 3, destination: { ethereum_address: ETH_ADDRESS }, priority: 'fast', idempotency_key: 'screened-item' },
          { amount_usd: 3, destination: { solana_address: SOL_ADDRESS }, priority: 'fast', idempotency_key: 'clean-item' },
        ],
      },
    });
    expect(res.statusCode).toBe(201);
    const items = res.json().items as { result: string; error?: { code: string } }[];
    expect(items.map((i) => i.result)).toEqual(['refused', 'created']);
    expect(items[0]!.error!.code).toBe('RECIPIENT_SCREENED');
  });

  it('picks up a changed list in every process without a restart', async () => {
    const port = await freePort();
    service = startService(['serve'], { DATABASE_URL: t.db.url, PORT: String(port), SCREENING_LIST_FILE: listFile, ADMIN_PORT: String(await freePort()) });
    const base = `http://127.0.0.1:${port}`;
    await waitHealthy(base, service);
    const fresh = evmAddress();
    const childQuote = async () =>
      (
        await fetch(`${base}/quotes`, {
          method: 'POST',
          headers: { ...KEY, 'content-type': 'application/json' },
          body: JSON.stringify({ amount_usd: 10, destination: { ethereum_address: fresh }, priority: 'fast' }),
        })
      ).json() as Promise<{ code?: string }>;
    expect((await childQuote()).code).not.toBe('RECIPIENT_SCREENED');
    expect((await quote(t, { ethereum_address: fresh })).statusCode).toBe(201);

    // Written 0X... in upper case: the same address (issue 35).
    writeList([ETH_ADDRESS.toLowerCase(), SOL_ADDRESS.toLowerCase(), `${fresh.toUpperCase()} # listed today`]);
    await waitFor('the child process refusing the newly listed address', async () => (await childQuote()).code === 'RECIPIENT_SCREENED', 10_000);
    await waitFor('this process refusing it', async () => (await quote(t, { ethereum_address: fresh })).statusCode === 422, 10_000);

    // A list that goes missing keeps the last good one in force.
    rmSync(listFile);
    expect((await quote(t, { ethereum_address: fresh })).statusCode).toBe(422);
    expect((await childQuote()).code).toBe('RECIPIENT_SCREENED');
  }, 90_000);

  it('refuses to start when the list file is missing, naming the variable', async () => {
    const run = await runCommand(['serve'], { DATABASE_URL: t.db.url, PORT: String(await freePort()), SCREENING_LIST_FILE: join(dir, 'missing.txt') });
    expect(run.code).not.toBe(0);
    expect(`${run.stdout}${run.stderr}`).toContain('SCREENING_LIST_FILE');
  }, 60_000);
});

describe('a reload that would weaken the list', () => {
  const guarded = join(dir, 'guarded.txt');
  const listed = Array.from({ length: 20 }, () => evmAddress());
  const fresh = evmAddress();
  const writeGuarded = (text: string) => {
    const next = join(dir, `.next-${randomBytes(4).toString('hex')}`);
    writeFileSync(next, text);
    renameSync(next, guarded);
  };
  let t: TestContext;
  beforeAll(async () => {
    writeGuarded(`# OFAC SDN\n${listed.join('\n')}\n`);
    // An operator webhook set, so each raise and resolve leaves its notification (never delivered here).
    t = await createTestContext({ SCREENING_LIST_FILE: guarded, OPERATOR_WEBHOOK_URL: 'http://127.0.0.1:9/alerts' });
  });
  afterAll(async () => t.close());

  type Alert = { id: string; kind: string; chain: string | null; message: string; status: string };
  const listAlerts = async () =>
    ((await t.app.inject({ method: 'GET', url: '/admin/alerts' })).json().data as Alert[]).filter((a) => a.kind === 'screening_list_rejected');
  const openAlert = async () => (await listAlerts()).find((a) => a.status === 'open');
  const refused = async (address: string) => (await quote(t, { ethereum_address: address })).statusCode === 422;
  const notifications = async (alertId: string) =>
    // The test's clock stands still: both are stamped alike, so they are compared as a set.
    (await t.db.pool.query<{ event_type: string }>('SELECT event_type FROM operator_alert_notifications WHERE alert_id = $1 ORDER BY event_type', [alertId])).rows.map(
      (r) => r.event_type,
    );

  it('refuses a reload that comes out empty: the last good list stays, an alert is raised, the next good load resolves it', async () => {
    expect(await refused(listed[0]!)).toBe(true);
    // What `curl ... > list` does first: the file truncated in place.
    writeFileSync(guarded, '');
    await waitFor('the emptied file read', async () => (await openAlert()) ?? !(await refused(listed[0]!)), 10_000);
    expect(await refused(listed[0]!)).toBe(true);
    const alert = (await openAlert())!;
    expect(alert).toMatchObject({ kind: 'screening_list_rejected', chain: null, status: 'open' });
    expect(alert.message).toContain('it lists no address; the last good list (20 addresses) stays in force');

    writeGuarded(`${listed.join('\n')}\n${fresh}\n`);
    await waitFor('the good list loaded and the alert resolved', async () => (await refused(fresh)) && (await listAlerts()).every((a) => a.status === 'resolved'), 10_000);
    expect(await notifications(alert.id)).toEqual(['alert.raised', 'alert.resolved']);
  });

  it('refuses a half-written reload that drops more than SCREENING_LIST_MAX_DROP_PERCENT of the addresses; a smaller drop loads', async () => {
    writeFileSync(guarded, `${listed.slice(0, 15).join('\n')}\n`);
    await waitFor('the half-written file read', async () => (await openAlert()) ?? !(await refused(listed[19]!)), 10_000);
    expect(await refused(listed[19]!)).toBe(true);
    expect((await openAlert())!.message).toContain('it drops 6 of the 21 addresses in force, more than SCREENING_LIST_MAX_DROP_PERCENT (10%)');

    // The operator takes one address off (1 of 21, under 10%): loaded, and the alert resolved.
    writeGuarded(`${listed.join('\n')}\n`);
    await waitFor('the smaller list loaded', async () => !(await refused(fresh)), 10_000);
    await waitFor('the alert resolved', async () => (await openAlert()) === undefined, 10_000);
    expect(await refused(listed[19]!)).toBe(true);
  });

  it('every process refuses the same file, and the alert is raised once and resolved once', async () => {
    const other = await createScreener(t.ctx.config, t.clock, pino({ level: 'silent' }));
    other.reportListTo({ pool: t.db.pool, clock: t.clock, log: pino({ level: 'silent' }), config: t.ctx.config });
    try {
      writeGuarded('# being downloaded\n');
      for (let round = 0; round < 2; round++) await Promise.all([t.ctx.screener.reloadList(), other.reloadList()]);
      const opened = (await listAlerts()).filter((a) => a.status === 'open');
      expect(opened).toHaveLength(1);
      const listedNow = [{ chain: 'ethereum' as const, address: listed[3]!, amountMicros: 1n }];
      expect((await other.screen(listedNow))[0]!.hit).toBe(true);

      writeGuarded(`${listed.join('\n')}\n`);
      for (let round = 0; round < 2; round++) await Promise.all([t.ctx.screener.reloadList(), other.reloadList()]);
      expect(await openAlert()).toBeUndefined();
      expect(await notifications(opened[0]!.id)).toEqual(['alert.raised', 'alert.resolved']);
    } finally {
      await other.close();
    }
  });

  it('refuses to start with a list that lists nothing, naming the variable', async () => {
    const empty = join(dir, 'empty.txt');
    writeFileSync(empty, '# OFAC SDN, nothing yet\n');
    await expect(createScreener({ ...t.ctx.config, screeningListFile: empty }, t.clock, pino({ level: 'silent' }))).rejects.toThrow(
      /SCREENING_LIST_FILE: refusing the screening list .*empty\.txt: it lists no address/,
    );
  });
});

describe('the screening provider', () => {
  let provider: FakeProvider;
  beforeAll(async () => {
    provider = await startScreeningProvider(SECRET);
  });
  afterAll(async () => provider.close());

  const withProvider = (fail: 'closed' | 'open') =>
    createTestContext({ SCREENING_URL: provider.url, SCREENING_SECRET: SECRET, SCREENING_FAIL: fail, SCREENING_TIMEOUT_SECONDS: '0.3' });

  it('is asked with a signed request; its deny refuses the quote, its allow lets it through, and answers are cached', async () => {
    const t = await withProvider('closed');
    try {
      const denied = evmAddress();
      const allowed = evmAddress();
      provider.answers.set(denied, 'deny');
      const refused = await quote(t, { ethereum_address: denied });
      expect(refused.statusCode).toBe(422);
      expect(refused.json().code).toBe('RECIPIENT_SCREENED');
      expect((await quote(t, { ethereum_address: allowed })).statusCode).toBe(201);
      const asked = provider.requests.filter((r) => r.address === denied || r.address === allowed);
      expect(asked).toEqual([
        { chain: 'ethereum', address: denied, amount_usd: 10, signed: true },
        { chain: 'ethereum', address: allowed, amount_usd: 10, signed: true },
      ]);
      // Cached: the same recipients are not asked again.
      expect((await quote(t, { ethereum_address: allowed })).statusCode).toBe(201);
      expect((await quote(t, { ethereum_address: denied })).statusCode).toBe(422);
      expect(provider.requests.filter((r) => r.address === denied || r.address === allowed)).toHaveLength(2);
    } finally {
      await t.close();
    }
  });

  it('SCREENING_FAIL=closed: a timeout, a 500 or a malformed answer refuses the recipient', async () => {
    const t = await withProvider('closed');
    try {
      for (const answer of ['hang', 'error', 'garbage'] as const) {
        const address = evmAddress();
        provider.answers.set(address, answer);
        const res = await quote(t, { ethereum_address: address });
        expect(res.statusCode, answer).toBe(422);
        expect(res.json().code).toBe('RECIPIENT_SCREENED');
      }
    } finally {
      await t.close();
    }
  });

  it('SCREENING_FAIL=open: a timeout or an error lets the recipient through; a deny still refuses', async () => {
    const t = await withProvider('open');
    try {
      for (const answer of ['hang', 'error'] as const) {
        const address = evmAddress();
        provider.answers.set(address, answer);
        expect((await quote(t, { ethereum_address: address })).statusCode, answer).toBe(201);
      }
      const denied = evmAddress();
      provider.answers.set(denied, 'deny');
      expect((await quote(t, { ethereum_address: denied })).statusCode).toBe(422);
    } finally {
      await t.close();
    }
  });
});

describe('a payout batch of junk destinations', () => {
  it('asks the provider once per distinct well-formed address, a few at a time, with no transaction open meanwhile', async () => {
    const provider = await startScreeningProvider(SECRET);
    const t = await createTestContext({
      SCREENING_URL: provider.url,
      SCREENING_SECRET: SECRET,
      SCREENING_FAIL: 'closed',
      SCREENING_TIMEOUT_SECONDS: '30',
      SIM_TREASURY_USDC: '1000000',
    });
    try {
      const valid = Array.from({ length: 20 }, () => evmAddress());
      // 1,000 items: 900 named destinations that are no address at all (each different), 100 naming 20 real addresses.
      const items = Array.from({ length: 1000 }, (_, i) => ({
        idempotency_key: `junk-${i}`,
        amount_usd: 0.01,
        priority: 'fast',
        destination:
          i % 10 === 9
            ? { ethereum_address: valid[((i - 9) / 10) % valid.length]! }
            : i % 2 === 0
              ? { ethereum_address: `0x${i.toString(16).padStart(39, '0')}` }
              : { ethereum_address: `not-an-address-${i}`, solana_address: `0OIl${i}` },
      }));
      const release = provider.hold();
      const posted = t.app.inject({ method: 'POST', url: '/payout_batches', headers: KEY, payload: { idempotency_key: 'junk-batch', items } });
      await waitFor('the provider asked', async () => provider.inFlight >= Math.min(SCREENING_PROVIDER_REQUESTS_AT_ONCE_MAX, valid.length), 10_000);
      // While the provider thinks, the batch holds no lock and no transaction.
      const { rows } = await t.db.pool.query<{ locks: number; open: number }>(
        `SELECT (SELECT COUNT(*)::int FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE l.locktype = 'advisory' AND a.datname = current_database()) AS locks,
                (SELECT COUNT(*)::int FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%') AS open`,
      );
      release();
      const res = await posted;
      expect(rows[0]).toEqual({ locks: 0, open: 0 });
      expect(res.statusCode).toBe(201);
      const answers = res.json().items as { result: string; error?: { code: string } }[];
      expect(answers.filter((a) => a.result === 'created')).toHaveLength(100);
      expect(new Set(answers.filter((a) => a.result === 'refused').map((a) => a.error!.code))).toEqual(new Set(['INVALID_DESTINATION']));
      expect(provider.requests).toHaveLength(valid.length);
      expect(new Set(provider.requests.map((r) => r.address))).toEqual(new Set(valid));
      expect(provider.maxInFlight).toBeLessThanOrEqual(SCREENING_PROVIDER_REQUESTS_AT_ONCE_MAX);
    } finally {
      await t.close();
      await provider.close();
    }
  }, 60_000);
});

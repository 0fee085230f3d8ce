// Screening right before signing (issue 29 item 1): a recipient listed after its payment was quoted and created fails
// the payment before anything is signed: `failure_reason: screening_hit`, the reservation back in available funds, an
// operator alert, an audit record, and no transaction on the (simulated) chain. A payment whose recipient is not
// listed goes on, in the same batch. With a screening provider, the screen before signing asks it again: an `allow`
// remembered from the quote is not trusted (issue 35), and its silence there means SCREENING_FAIL.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createPayment, createTestContext, KEY, type TestContext } from '../helpers/context.js';
import { waitFor } from '../helpers/process.js';
import { startScreeningProvider, type FakeProvider } from '../helpers/screening-provider.js';
import { drainExecution } from '../helpers/workers.js';

const dir = mkdtempSync(join(tmpdir(), 'stableroute-screening-'));
const listFile = join(dir, 'sanctioned.txt');
const evmAddress = () => `0x${randomBytes(20).toString('hex')}`;
const PLACEHOLDER = evmAddress();

let t: TestContext;
beforeAll(async () => {
  // A list that lists nothing refuses the start (decision 182): one address nobody here pays.
  writeFileSync(listFile, `# placeholder\n${PLACEHOLDER}\n`);
  t = await createTestContext({ SCREENING_LIST_FILE: listFile, SIM_TREASURY_USDC: '1000' });
});
afterAll(async () => t.close());

const get = async (url: string, headers: Record<string, string> = {}) => (await t.app.inject({ method: 'GET', url, headers })).json();
const treasury = async (chain: string) =>
  ((await get('/admin/treasury')) as { chain: string; available_usdc: string; reserved_usdc: string }[]).find((c) => c.chain === chain)!;
const onChain = async (id: string) =>
  (await t.db.pool.query<{ n: number }>("SELECT COUNT(*)::int AS n FROM sim_payouts WHERE ref = $1", [id])).rows[0]!.n;

describe('screening before signing', () => {
  it('fails a payment whose recipient was listed after its quote: funds released, an alert, an audit record, nothing sent', async () => {
    const listed = evmAddress();
    const clean = evmAddress();
    const hit = await createPayment(t.app, 40, { ethereum_address: listed });
    const fine = await createPayment(t.app, 2, { ethereum_address: clean });
    expect(await treasury('ethereum')).toMatchObject({ available_usdc: '958', reserved_usdc: '42' });

    // Listed in checksum-less upper case: EVM addresses match whatever their case.
    writeFileSync(listFile, `${PLACEHOLDER}\n0x${listed.slice(2).toUpperCase()} # OFAC SDN 2026-11-26\n`);
    await waitFor('the list reloaded', async () => (await t.ctx.screener.screen([{ chain: 'ethereum', address: listed, amountMicros: 1n }]))[0]!.hit, 10_000);

    await drainExecution(t);
    const failed = await get(`/payment_intents/${hit}`, KEY);
    expect(failed).toMatchObject({ status: 'failed', attempts: [] });
    expect(failed.ledger_entries.map((e: { type: string }) => e.type)).toEqual(['reserve', 'release']);
    const { rows: events } = await t.db.pool.query('SELECT event_type, payload FROM webhook_events WHERE payment_intent_id = $1 ORDER BY seq', [hit]);
    expect(events.map((e) => e.event_type)).toEqual(['payment.created', 'payment.broadcasting', 'payment.failed']);
    expect(events[2]!.payload).toMatchObject({ status: 'failed', failure_reason: 'screening_hit', amount_usd: 40 });
    // Nothing signed, nothing sent.
    expect(await onChain(hit)).toBe(0);
    expect((await get(`/payment_intents/${fine}`, KEY)).status).toBe('broadcasted');
    expect(await onChain(fine)).toBe(1);

    // The 40 reserved for the failed payment are available again; only the other payment's 2 have left (in flight).
    expect(await treasury('ethereum')).toMatchObject({ available_usdc: '998', reserved_usdc: '0' });
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);

    const alerts = (await get('/admin/alerts')).data as { kind: string; chain: string; message: string; status: string }[];
    expect(alerts).toContainEqual(expect.objectContaining({ kind: 'screening_hit', chain: 'ethereum', status: 'open' }));
    expect(alerts.find((a) => a.kind === 'screening_hit')!.message).toContain(hit);

    const { rows: audit } = await t.db.pool.query<{ actor: string; targets: string[]; details: Record<string, unknown>; outcome: string }>(
      "SELECT actor, targets, details, outcome FROM audit_log WHERE action = 'payment.screening_hit'",
    );
    expect(audit).toEqual([
      {
        actor: 'system:screening',
        targets: [hit],
        outcome: 'ok',
        details: { chain: 'ethereum', address: listed, amount_micros: '40000000', by: 'list', list_source: 'OFAC SDN 2026-11-26' },
      },
    ]);
  });
});

describe('the provider before signing', () => {
  const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
  let provider: FakeProvider;
  let p: TestContext;
  beforeAll(async () => {
    provider = await startScreeningProvider(SECRET);
    p = await createTestContext({
      SCREENING_URL: provider.url,
      SCREENING_SECRET: SECRET,
      SCREENING_FAIL: 'closed',
      SCREENING_TIMEOUT_SECONDS: '0.3',
      SIM_TREASURY_USDC: '1000',
    });
  });
  afterAll(async () => {
    await p.close();
    await provider.close();
  });
  const statusOf = async (id: string) => (await p.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY })).json();
  const asked = (address: string) => provider.requests.filter((r) => r.address === address).length;

  it('is asked again: a recipient it allowed at the quote and denies two minutes later is not signed for', async () => {
    const recipient = evmAddress();
    const id = await createPayment(p.app, 5, { ethereum_address: recipient });
    expect(asked(recipient)).toBe(1);
    provider.answers.set(recipient, 'deny');
    p.clock.advance(120_000); // well inside the 300 s an allow is remembered for quotes
    await drainExecution(p);
    expect(asked(recipient)).toBe(2);
    expect(await statusOf(id)).toMatchObject({ status: 'failed', attempts: [] });
    const { rows } = await p.db.pool.query("SELECT payload FROM webhook_events WHERE payment_intent_id = $1 AND event_type = 'payment.failed'", [id]);
    expect(rows[0]!.payload.failure_reason).toBe('screening_hit');
  });

  it('a provider that does not answer before signing refuses the recipient (SCREENING_FAIL=closed); one that allows lets it go', async () => {
    const silent = evmAddress();
    const clean = evmAddress();
    const refused = await createPayment(p.app, 3, { ethereum_address: silent });
    const paid = await createPayment(p.app, 4, { ethereum_address: clean });
    provider.answers.set(silent, 'hang');
    await drainExecution(p);
    expect((await statusOf(refused)).status).toBe('failed');
    expect((await statusOf(paid)).status).toBe('broadcasted');
    expect(asked(clean)).toBe(2);
  });
});

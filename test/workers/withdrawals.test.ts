// Withdrawals on the simulated chains (decision 121): POST /admin/withdrawals reserves from available funds under the
// payouts' lock, the execution worker signs once, the confirmation worker settles it to the `withdrawals` account;
// it shows in the books, `reconcile` and `ledger verify` stay clean, and no merchant can see it. Bad input changes
// nothing; concurrent withdrawals and payouts never overdraw; a crash between reservation and execution (and a run
// killed mid-send) pays once.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainAdapter, ChainAdapters } from '../../src/chains/port.js';
import type { ExecutionDeps } from '../../src/core/payments/execute/execute.js';
import { resumeExpiredExecutions } from '../../src/core/payments/execute/recover.js';
import { approvePayment } from '../../src/core/operators/transitions/approve.js';
import { cancelPayment } from '../../src/core/operators/transitions/cancel.js';
import { reconcile } from '../../src/core/treasury/reconcile.js';
import { EXECUTION_QUEUE, type ExecutionJob } from '../../src/jobs/queue.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createTestContext, ETH_ADDRESS, KEY, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { confirm, drainExecution, executeAlone } from '../helpers/workers.js';
import { testAudit } from '../helpers/audit.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext({ SIM_TREASURY_USDC: '1000', EXECUTION_LEASE_SECONDS: '30' });
});
afterAll(async () => t.close());

const quiet = pino({ level: 'silent' });
const withdraw = (payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url: '/admin/withdrawals', payload });
const get = async (url: string) => (await t.app.inject({ method: 'GET', url })).json();
const treasury = async (chain: string) => ((await get('/admin/treasury')) as { chain: string; available_usdc: string; reserved_usdc: string }[]).find((c) => c.chain === chain)!;
const onChain = async (id: string) =>
  (await t.db.pool.query<{ n: number }>("SELECT COUNT(*)::int AS n FROM sim_payouts WHERE ref = $1", [id])).rows[0]!.n;
const counts = async () =>
  (
    await t.db.pool.query<{ intents: number; transactions: number }>(
      'SELECT (SELECT COUNT(*)::int FROM payment_intents) AS intents, (SELECT COUNT(*)::int FROM ledger_transactions) AS transactions',
    )
  ).rows[0]!;

async function settleAll() {
  await drainExecution(t);
  t.clock.advance(200_000);
  await confirm(t);
}

describe('withdrawals', () => {
  it('reserves, signs once, settles to the withdrawals account; books, reconcile and ledger verify agree', async () => {
    const created = await withdraw({ chain: 'solana', to: SOL_ADDRESS, amount_usdc: '25.5', idempotency_key: 'wd-1' });
    expect(created.statusCode).toBe(201);
    const w = created.json();
    expect(w).toMatchObject({ chain: 'solana', to: SOL_ADDRESS, amount_usdc: '25.5', status: 'route_selected', tx_id: null });
    expect(w.id).toMatch(/^pi_/);
    expect(await treasury('solana')).toMatchObject({ available_usdc: '974.5', reserved_usdc: '25.5' });

    // The same key answers the first withdrawal; another withdrawal under it is refused.
    const replay = await withdraw({ chain: 'solana', to: SOL_ADDRESS, amount_usdc: '25.5', idempotency_key: 'wd-1' });
    expect(replay.statusCode).toBe(200);
    expect(replay.json().id).toBe(w.id);
    const reused = await withdraw({ chain: 'solana', to: SOL_ADDRESS, amount_usdc: '1', idempotency_key: 'wd-1' });
    expect(reused.statusCode).toBe(409);
    expect(reused.json().code).toBe('IDEMPOTENCY_KEY_REUSED');

    await settleAll();
    const settled = await get(`/admin/withdrawals/${w.id}`);
    expect(settled).toMatchObject({ id: w.id, status: 'settled', fee_currency: 'SOL' });
    expect(settled.tx_id).toEqual(expect.any(String));
    expect(Number(settled.fee_native)).toBeGreaterThan(0);
    expect(await onChain(w.id)).toBe(1);
    expect(await treasury('solana')).toMatchObject({ available_usdc: '974.5', reserved_usdc: '0' });

    // The books: reserve, debit, settle to `withdrawals`, fee.
    const { rows } = await t.db.pool.query<{ type: string; kind: string; amount: string }>(
      `SELECT t.type, a.kind, p.amount::text FROM ledger_transactions t JOIN ledger_postings p ON p.transaction_id = t.id
         JOIN ledger_accounts a ON a.id = p.account_id WHERE t.payment_intent_id = $1 AND p.amount > 0 ORDER BY t.id`,
      [w.id],
    );
    expect(rows.map((r) => `${r.type}:${r.kind}`)).toEqual(['reserve:treasury_reserved', 'debit:treasury_in_flight', 'settle:withdrawals', 'fee:network_fees']);
    expect(rows[2]!.amount).toBe('25500000');
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
    expect((await reconcile(t.db.pool, t.ctx.adapters)).map((r) => r.status)).toEqual(['ok', 'ok']);

    // Listed for the operator; invisible to merchants (404, as another merchant's payment), no webhook event, not a payment in the overview.
    expect((await get('/admin/withdrawals')).data.map((x: { id: string }) => x.id)).toEqual([w.id]);
    const asMerchant = await t.app.inject({ method: 'GET', url: `/payment_intents/${w.id}`, headers: KEY });
    expect(asMerchant.statusCode).toBe(404);
    expect(asMerchant.json().code).toBe('PAYMENT_INTENT_NOT_FOUND');
    expect((await t.app.inject({ method: 'GET', url: `/routes/debug/${w.id}`, headers: KEY })).statusCode).toBe(404);
    expect((await t.db.pool.query('SELECT 1 FROM webhook_events WHERE payment_intent_id = $1', [w.id])).rowCount).toBe(0);
    expect((await get('/admin/overview')).payments).toMatchObject({ total: 0, settled: 0, total_volume_usd: 0 });
    expect((await t.app.inject({ method: 'GET', url: '/admin/withdrawals/pi_unknown' })).statusCode).toBe(404);
    // The operator's payment views show it with the rest (owner mer_operator), and its ledger postings.
    const record = await t.app.inject({ method: 'GET', url: `/admin/payments/${w.id}` });
    expect(record.statusCode, record.body).toBe(200);
    expect(record.json()).toMatchObject({ id: w.id, merchant_id: 'mer_operator', status: 'settled' });
  });

  it.each([
    ['an unknown chain', { chain: 'bitcoin', to: SOL_ADDRESS, amount_usdc: '1' }, 'INVALID_CHAIN'],
    ['an invalid address', { chain: 'ethereum', to: '0x1234', amount_usdc: '1' }, 'INVALID_DESTINATION'],
    ['an address of the other chain', { chain: 'ethereum', to: SOL_ADDRESS, amount_usdc: '1' }, 'INVALID_DESTINATION'],
    ['the treasury itself', { chain: 'solana', to: 'TREASURY', amount_usdc: '1' }, 'INVALID_DESTINATION'],
    ['a zero amount', { chain: 'solana', to: SOL_ADDRESS, amount_usdc: '0' }, 'INVALID_AMOUNT'],
    ['a negative amount', { chain: 'solana', to: SOL_ADDRESS, amount_usdc: '-5' }, 'INVALID_AMOUNT'],
    ['more than 6 decimals', { chain: 'solana', to: SOL_ADDRESS, amount_usdc: '1.0000001' }, 'INVALID_AMOUNT'],
    ['not a number', { chain: 'solana', to: SOL_ADDRESS, amount_usdc: 'ten' }, 'INVALID_AMOUNT'],
    ['a JSON number', { chain: 'solana', to: SOL_ADDRESS, amount_usdc: 5 }, 'INVALID_AMOUNT'],
    ['no destination', { chain: 'solana', amount_usdc: '1' }, 'INVALID_DESTINATION'],
    ['more than available', { chain: 'solana', to: SOL_ADDRESS, amount_usdc: '974.500001' }, 'INSUFFICIENT_BALANCE'],
  ])('refuses %s with a 400, changing nothing', async (_name, payload, code) => {
    const before = await counts();
    const body: Record<string, unknown> = { ...payload };
    if (body.to === 'TREASURY') body.to = t.ctx.adapters.solana!.treasuryAddress();
    const response = await withdraw(body);
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe(code);
    expect(await counts()).toEqual(before);
    expect(await treasury('solana')).toMatchObject({ available_usdc: '974.5', reserved_usdc: '0' });
  });

  it('concurrent withdrawals and payouts never overdraw available', async () => {
    // Ethereum holds 1000 available: 10 payouts and 10 withdrawals of 100 race for it; exactly 10 can be reserved.
    const quotes = await Promise.all(
      Array.from({ length: 10 }, async () =>
        (
          await t.app.inject({ method: 'POST', url: '/quotes', headers: KEY, payload: { amount_usd: 100, destination: { ethereum_address: ETH_ADDRESS }, priority: 'fast' } })
        ).json().quote_id as string,
      ),
    );
    const results = await Promise.all([
      ...quotes.map((quoteId, i) =>
        t.app.inject({ method: 'POST', url: '/payment_intents', headers: KEY, payload: { quote_id: quoteId, idempotency_key: `race-${i}` } }),
      ),
      ...quotes.map((_q, i) => withdraw({ chain: 'ethereum', to: ETH_ADDRESS, amount_usdc: '100', idempotency_key: `race-wd-${i}` })),
    ]);
    const accepted = results.filter((r) => r.statusCode === 201);
    const refused = results.filter((r) => r.statusCode !== 201);
    expect(accepted).toHaveLength(10);
    expect(refused.every((r) => r.statusCode === 400 && r.json().code === 'INSUFFICIENT_BALANCE')).toBe(true);
    expect(await treasury('ethereum')).toMatchObject({ available_usdc: '0', reserved_usdc: '1000' });
    // And the rest of their lives settles them all, with the books clean.
    await settleAll();
    expect(await treasury('ethereum')).toMatchObject({ available_usdc: '0', reserved_usdc: '0' });
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
    expect((await reconcile(t.db.pool, t.ctx.adapters)).map((r) => r.status)).toEqual(['ok', 'ok']);
  });

  it('a crash between reservation and execution, and a run killed mid-send, pay once', async () => {
    // Reserved and queued, then the process dies before any worker ran the job: the job is still queued.
    const w = (await withdraw({ chain: 'solana', to: SOL_ADDRESS, amount_usdc: '10', idempotency_key: 'wd-crash' })).json();
    const [job] = await t.boss.fetch<ExecutionJob>(EXECUTION_QUEUE, { batchSize: 1, ignoreStartAfter: true });
    expect(job!.data).toEqual({ payment_intent_id: w.id, attempt: 1 });

    // The next worker runs it and dies mid-send (its broadcast never returns; its lease runs out)...
    let open!: () => void;
    let entered!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const inSend = new Promise<void>((resolve) => (entered = resolve));
    const solana: ChainAdapter = {
      ...t.ctx.adapters.solana!,
      async broadcast(signed) {
        entered();
        await gate;
        return t.ctx.adapters.solana!.broadcast(signed);
      },
    };
    const deps = (adapters: ChainAdapters): ExecutionDeps => ({ ...t.ctx, adapters, log: quiet });
    const dead = executeAlone(deps({ ...t.ctx.adapters, solana }), job!.data);
    await inSend;
    await t.db.pool.query("UPDATE execution_leases SET expires_at = now() - interval '1 second' WHERE payment_intent_id = $1", [w.id]);
    // ...the sweeper resumes it with the same signed bytes, and pg-boss delivering the job once more changes nothing.
    expect(await resumeExpiredExecutions(deps(t.ctx.adapters))).toEqual({ resumed: 1, abandoned: 0 });
    await executeAlone(deps(t.ctx.adapters), job!.data);
    open();
    await dead;
    await settleAll();
    expect(await get(`/admin/withdrawals/${w.id}`)).toMatchObject({ status: 'settled' });
    const attempts = await t.db.pool.query('SELECT 1 FROM payment_attempts WHERE payment_intent_id = $1', [w.id]);
    expect(attempts.rowCount).toBe(1);
    expect(await onChain(w.id)).toBe(1);
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
    expect((await reconcile(t.db.pool, t.ctx.adapters)).map((r) => r.status)).toEqual(['ok', 'ok']);
  });

  it('lists withdrawals newest first, a page at a time, with a next cursor only when a next page exists', async () => {
    for (const key of ['wd-page-1', 'wd-page-2']) {
      expect((await withdraw({ chain: 'solana', to: SOL_ADDRESS, amount_usdc: '1', idempotency_key: key })).statusCode).toBe(201);
    }
    const all = (await get('/admin/withdrawals?limit=100')) as { data: { id: string }[]; next_cursor: string | null };
    expect(all.next_cursor).toBeNull();
    // A page exactly as long as what is left has no next page.
    expect(await get(`/admin/withdrawals?limit=${all.data.length}`)).toMatchObject({ next_cursor: null });
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page = (await get(`/admin/withdrawals?limit=1${cursor ? `&cursor=${cursor}` : ''}`)) as { data: { id: string }[]; next_cursor: string | null };
      expect(page.data).toHaveLength(1);
      paged.push(page.data[0]!.id);
      cursor = page.next_cursor;
    } while (cursor !== null);
    expect(paged).toEqual(all.data.map((w) => w.id));
  });
});

// Issue 35: four-eyes cannot be beaten by splitting. No sequence of withdrawals moves more than
// WITHDRAWAL_APPROVAL_ABOVE_USD without a second operator within WITHDRAWAL_APPROVAL_WINDOW_SECONDS (every operator,
// every chain); a withdrawal whose funds came back (failed, cancelled) no longer counts, nor one a second operator
// approved.
describe('withdrawals above the threshold within the rolling window', () => {
  let w: TestContext;
  beforeAll(async () => {
    w = await createTestContext({ SIM_TREASURY_USDC: '100000', WITHDRAWAL_APPROVAL_ABOVE_USD: '100', WITHDRAWAL_APPROVAL_WINDOW_SECONDS: '3600' });
  });
  afterAll(async () => w.close());

  let n = 0;
  const take = async (chain: 'ethereum' | 'solana', usdc: string) => {
    const res = await w.app.inject({
      method: 'POST',
      url: '/admin/withdrawals',
      payload: { chain, to: chain === 'solana' ? SOL_ADDRESS : ETH_ADDRESS, amount_usdc: usdc, idempotency_key: `window-${++n}` },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; approval?: { status: string } };
  };
  const held = (x: { approval?: { status: string } }) => x.approval?.status === 'pending';
  const nextWindow = () => w.clock.advance(3600_000 + 1);

  it('five withdrawals of 100 with a threshold of 100: the first goes, the second and later ones wait', async () => {
    const five = [];
    for (let i = 0; i < 5; i++) five.push(await take(i % 2 ? 'ethereum' : 'solana', '100'));
    expect(five.map(held)).toEqual([false, true, true, true, true]);
    // Waiting ones do not count: they have not left. Approved by a second operator, they do not count either.
    const approved = await approvePayment(w.ctx, five[1]!.id, { audit: testAudit('payment.approve', { id: 'op_second', role: 'approver', peer: null }) });
    expect(approved.approval).toBe('approved');
    expect(held(await take('solana', '0.000001'))).toBe(true);
    nextWindow();
  });

  it('a withdrawal whose funds came back no longer counts; the window rolls', async () => {
    const first = await take('solana', '80');
    expect(held(first)).toBe(false);
    expect(held(await take('ethereum', '30'))).toBe(true);
    await cancelPayment(w.ctx, first.id, testAudit());
    expect(held(await take('ethereum', '30'))).toBe(false);
    // 30 left within the hour: 71 more would pass 100.
    w.clock.advance(1800_000);
    expect(held(await take('solana', '71'))).toBe(true);
    // An hour after the 30 left, it no longer counts.
    w.clock.advance(1800_001);
    expect(held(await take('solana', '100'))).toBe(false);
    nextWindow();
  });

  it('concurrent withdrawals on two chains cannot both slip under the threshold', async () => {
    for (let round = 0; round < 5; round++) {
      const all = await Promise.all(Array.from({ length: 6 }, (_, i) => take(i % 2 ? 'ethereum' : 'solana', '60')));
      expect(all.filter((x) => !held(x))).toHaveLength(1);
      nextWindow();
    }
  });
});

// Deposits and returned payouts on the simulated chains: each transfer into a treasury is booked once (a crash
// between booking and moving the scan position included), a returned payout is its payment's one refund whichever
// path books it (the scanner's match, an operator's attach, both at once), and the books and the chain agree.
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recordExternalTransfers, type ExternalTransfer } from '../../src/chains/simulated/external-transfer.js';
import { attachRefund } from '../../src/core/treasury/deposits/attach.js';
import { scanChain, scanDeposits } from '../../src/core/treasury/deposits/scan.js';
import { reconcile } from '../../src/core/treasury/reconcile.js';
import type { Chain } from '../../src/domain/chain.js';
import { movements } from '../../src/ledger/movements.js';
import { postMany } from '../../src/ledger/store.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createPayment, createTestContext, ETH_ADDRESS, KEY, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { runCommand } from '../helpers/process.js';
import { confirm, drainExecution } from '../helpers/workers.js';
import { testAudit } from '../helpers/audit.js';

const quiet = pino({ level: 'silent' });
const OTHER_SOL = 'Gh9ZwEmdLJ8DscKNTkTqPbNwLNNBjuSzaG9Vp2KGtKJr';

let t: TestContext;
beforeEach(async () => {
  t = await createTestContext({ SIM_CONFIRM_SECONDS: '10' });
});
afterEach(async () => t.close());

const scan = () => scanDeposits({ ...t.ctx, log: quiet });
const treasury = (chain: Chain) => t.ctx.adapters[chain]!.treasuryAddress();

async function send(transfers: Omit<ExternalTransfer, 'at'>[]): Promise<string[]> {
  return recordExternalTransfers(t.db.pool, t.ctx.config.simSeed, transfers.map((x) => ({ ...x, at: t.clock.now() })));
}

async function available(chain: Chain): Promise<number> {
  const overview = await t.app.inject({ method: 'GET', url: '/admin/overview' });
  return overview.json().treasury_balances.find((b: { chain: string }) => b.chain === chain).available_balance as number;
}

async function settledPayment(amountUsd: number, destination = SOL_ADDRESS): Promise<string> {
  const id = await createPayment(t.app, amountUsd, { solana_address: destination });
  await drainExecution(t);
  t.clock.advance(11_000);
  await confirm(t);
  const status = (await t.db.pool.query('SELECT status FROM payment_intents WHERE id = $1', [id])).rows[0].status;
  expect(status).toBe('settled');
  return id;
}

async function entries(id: string): Promise<{ type: string; amount: number }[]> {
  const read = await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY });
  return read.json().ledger_entries.map((e: { type: string; amount: number }) => ({ type: e.type, amount: e.amount }));
}

async function refundEvents(id: string): Promise<Record<string, unknown>[]> {
  const { rows } = await t.db.pool.query("SELECT payload FROM webhook_events WHERE payment_intent_id = $1 AND event_type = 'payment.refunded'", [id]);
  return rows.map((r) => r.payload);
}

async function expectCleanBooks(): Promise<void> {
  const report = await verifyLedger(t.db.pool);
  expect(report.problems).toEqual([]);
  for (const r of await reconcile(t.db.pool, t.ctx.adapters)) expect(r.status, JSON.stringify(r)).toBe('ok');
}

describe('deposits on the simulated chains', () => {
  it('books a USDC and a native deposit once: available rises, the chain agrees, the admin list shows them', async () => {
    const before = await available('solana');
    const nativeBefore = await t.ctx.adapters.solana!.treasuryNativeBalance();
    await send([
      { chain: 'solana', from: OTHER_SOL, to: treasury('solana'), currency: 'USDC', amountUnits: 250_000_000n },
      { chain: 'solana', from: OTHER_SOL, to: treasury('solana'), currency: 'native', amountUnits: 2_000_000_000n },
      // To somebody else: nothing for the treasury.
      { chain: 'solana', from: OTHER_SOL, to: SOL_ADDRESS, currency: 'USDC', amountUnits: 5_000_000n },
    ]);
    expect((await scan()).booked).toBe(2);
    expect((await scan()).booked).toBe(0);
    expect(await available('solana')).toBe(before + 250);
    expect(await t.ctx.adapters.solana!.treasuryNativeBalance()).toBe(nativeBefore + 2_000_000_000n);
    const native = await t.db.pool.query("SELECT SUM(balance)::text AS balance FROM ledger_accounts WHERE chain = 'solana' AND kind = 'treasury_native'");
    expect(BigInt(native.rows[0].balance)).toBe(nativeBefore + 2_000_000_000n);
    await expectCleanBooks();

    const list = await t.app.inject({ method: 'GET', url: '/admin/deposits?limit=1' });
    expect(list.statusCode).toBe(200);
    expect(list.json().data).toEqual([expect.objectContaining({ chain: 'solana', currency: 'SOL', amount: '2', status: 'native', booked_as: 'funding' })]);
    const next = await t.app.inject({ method: 'GET', url: `/admin/deposits?limit=1&before=${list.json().next_before}` });
    expect(next.json().data).toEqual([expect.objectContaining({ currency: 'USDC', amount: '250', status: 'funding', from_address: OTHER_SOL })]);
    expect(next.json().next_before).toBeNull();
    const overview = await t.app.inject({ method: 'GET', url: '/admin/overview' });
    expect(overview.json().recent_deposits).toHaveLength(2);
    expect((await t.app.inject({ method: 'GET', url: '/admin/deposits?status=nope' })).statusCode).toBe(400);
    expect((await t.app.inject({ method: 'GET', url: '/admin/deposits?before=x' })).json().code).toBe('INVALID_FILTER');
  });

  it('books once when the scanner crashes after booking, before the position moves', async () => {
    const before = await available('ethereum');
    await send([{ chain: 'ethereum', from: ETH_ADDRESS, to: treasury('ethereum'), currency: 'USDC', amountUnits: 40_000_000n }]);
    const crash = new Error('crash after booking');
    await expect(
      scanChain({ ...t.ctx, log: quiet }, 'ethereum', {
        afterBooking: async () => {
          throw crash;
        },
      }),
    ).rejects.toBe(crash);
    expect(await available('ethereum')).toBe(before + 40);
    // The restarted scanner reads the same page again: nothing more is booked, and the position moves on.
    expect((await scan()).booked).toBe(0);
    expect(await available('ethereum')).toBe(before + 40);
    const rows = await t.db.pool.query("SELECT COUNT(*)::int AS n FROM inbound_transfers WHERE chain = 'ethereum'");
    expect(rows.rows[0].n).toBe(1);
    await expectCleanBooks();
  });

  it('books a deposit and a return arriving in one block: the return is the payment\'s one refund entry and event', async () => {
    const id = await settledPayment(12.5);
    const before = await available('solana');
    await send([
      { chain: 'solana', from: OTHER_SOL, to: treasury('solana'), currency: 'USDC', amountUnits: 100_000_000n },
      { chain: 'solana', from: SOL_ADDRESS, to: treasury('solana'), currency: 'USDC', amountUnits: 12_500_000n },
    ]);
    expect((await scan()).booked).toBe(2);
    expect(await available('solana')).toBe(before + 112.5);
    expect((await entries(id)).filter((e) => e.type === 'refund')).toEqual([{ type: 'refund', amount: 12.5 }]);
    const events = await refundEvents(id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ status: 'settled', refund: { amount_usd: 12.5, from_address: SOL_ADDRESS } });
    const read = await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY });
    expect(read.json().status).toBe('settled');
    const list = (await t.app.inject({ method: 'GET', url: '/admin/deposits' })).json().data;
    expect(list.map((d: { status: string }) => d.status).sort()).toEqual(['funding', 'matched']);

    // An operator attaching it again, or attaching another transfer to the refunded payment, is refused.
    const [returnTx] = await send([{ chain: 'solana', from: SOL_ADDRESS, to: treasury('solana'), currency: 'USDC', amountUnits: 12_500_000n }]);
    await scan();
    await expect(attachRefund(t.ctx, id, returnTx!, testAudit())).rejects.toMatchObject({ code: 'INVALID_STATE' });
    expect(await refundEvents(id)).toHaveLength(1);
    await expectCleanBooks();
  });

  it('lists an unmatched return for the operator, who attaches it by CLI once', async () => {
    const id = await settledPayment(10);
    const before = await available('solana');
    // Less than the payout: not matched automatically (decision 125).
    const [partial] = await send([{ chain: 'solana', from: SOL_ADDRESS, to: treasury('solana'), currency: 'USDC', amountUnits: 7_000_000n }]);
    await scan();
    expect(await available('solana')).toBe(before + 7);
    const unmatched = (await t.app.inject({ method: 'GET', url: '/admin/deposits?status=unmatched' })).json().data;
    expect(unmatched).toEqual([expect.objectContaining({ tx_id: partial, status: 'unmatched', payment_intent_id: null })]);

    const env = { DATABASE_URL: t.db.url };
    const wrongTx = await runCommand(['intents', 'refund', id, '--tx', 'nosuchtx'], env);
    expect(wrongTx.code).toBe(1);
    const attached = await runCommand(['intents', 'refund', id, '--tx', partial!, '--json'], env);
    expect(attached.code, attached.stderr).toBe(0);
    expect(JSON.parse(attached.stdout.trim().split('\n').at(-1)!)).toMatchObject({ payment_intent_id: id, refund_usdc: '7' });
    const again = await runCommand(['intents', 'refund', id, '--tx', partial!], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('INVALID_STATE');

    expect(await available('solana')).toBe(before + 7); // re-classified, not booked twice
    expect((await entries(id)).filter((e) => e.type === 'refund')).toEqual([{ type: 'refund', amount: 7 }]);
    expect(await refundEvents(id)).toHaveLength(1);
    expect((await t.app.inject({ method: 'GET', url: '/admin/deposits?status=unmatched' })).json().data).toEqual([]);

    // The payout's exact amount arriving afterwards is no second refund: the payment was refunded.
    await send([{ chain: 'solana', from: SOL_ADDRESS, to: treasury('solana'), currency: 'USDC', amountUnits: 10_000_000n }]);
    await scan();
    expect((await entries(id)).filter((e) => e.type === 'refund')).toHaveLength(1);
    expect(await available('solana')).toBe(before + 17);
    await expectCleanBooks();
  });

  it('POST /admin/payments/:id/refund attaches like the CLI: 200 once, then 409; 404 and 400 change nothing', async () => {
    const id = await settledPayment(6);
    const [partial] = await send([{ chain: 'solana', from: SOL_ADDRESS, to: treasury('solana'), currency: 'USDC', amountUnits: 2_000_000n }]);
    await scan();
    const attach = (payload: unknown, target = id) => t.app.inject({ method: 'POST', url: `/admin/payments/${target}/refund`, payload: payload as object });
    expect((await attach({})).json().code).toBe('INVALID_REQUEST');
    expect((await attach({ tx_id: partial }, 'pi_nope')).json().code).toBe('PAYMENT_INTENT_NOT_FOUND');
    expect((await attach({ tx_id: 'unseen' })).statusCode).toBe(404);
    const first = await attach({ tx_id: partial });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toEqual({ payment_intent_id: id, status: 'settled', tx_id: partial, refund_usdc: '2' });
    const second = await attach({ tx_id: partial });
    expect(second.statusCode).toBe(409);
    expect(second.json().code).toBe('INVALID_STATE');
    expect((await entries(id)).filter((e) => e.type === 'refund')).toEqual([{ type: 'refund', amount: 2 }]);
    await expectCleanBooks();
  });

  it('refunds a payment once when two attaches race, and leaves an ambiguous return to the operator', async () => {
    const first = await settledPayment(5);
    const second = await settledPayment(5);
    const [a, b] = await send([
      { chain: 'solana', from: SOL_ADDRESS, to: treasury('solana'), currency: 'USDC', amountUnits: 5_000_000n },
      { chain: 'solana', from: SOL_ADDRESS, to: treasury('solana'), currency: 'USDC', amountUnits: 4_000_000n },
    ]);
    await scan();
    const statuses = (await t.app.inject({ method: 'GET', url: '/admin/deposits?status=unmatched' })).json().data.map((d: { status: string }) => d.status);
    expect(statuses.sort()).toEqual(['ambiguous', 'unmatched']);

    const outcomes = await Promise.allSettled([attachRefund(t.ctx, first, a!, testAudit()), attachRefund(t.ctx, first, b!, testAudit()), attachRefund(t.ctx, second, a!, testAudit())]);
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    expect(won.length).toBeGreaterThanOrEqual(1);
    expect(won.length).toBeLessThanOrEqual(2);
    const refunds = await t.db.pool.query("SELECT payment_intent_id, COUNT(*)::int AS n FROM ledger_transactions WHERE type = 'refund' GROUP BY 1");
    for (const row of refunds.rows) expect(row.n).toBe(1);
    const attachedTx = await t.db.pool.query("SELECT tx_id, COUNT(*)::int AS n FROM inbound_transfers WHERE payment_intent_id IS NOT NULL GROUP BY 1");
    for (const row of attachedTx.rows) expect(row.n).toBe(1);
    expect(refunds.rows.length).toBe(won.length);
    await expectCleanBooks();
  });

  it('refunds a payment once when the scanner\'s match and an operator\'s attach race', async () => {
    for (let round = 0; round < 3; round++) {
      const id = await settledPayment(10);
      const [partial] = await send([{ chain: 'solana', from: SOL_ADDRESS, to: treasury('solana'), currency: 'USDC', amountUnits: 4_000_000n }]);
      await scan();
      // The exact amount arrives while the operator attaches the partial return to the same payment.
      await send([{ chain: 'solana', from: SOL_ADDRESS, to: treasury('solana'), currency: 'USDC', amountUnits: 10_000_000n }]);
      const before = await available('solana');
      const [scanned, attached] = await Promise.allSettled([scan(), attachRefund(t.ctx, id, partial!, testAudit())]);
      expect(scanned.status).toBe('fulfilled');
      const refunds = await entries(id);
      expect(refunds.filter((e) => e.type === 'refund')).toHaveLength(1);
      expect(await refundEvents(id)).toHaveLength(1);
      // Whoever won, the exact amount is in available once and the partial return is not counted twice.
      expect(await available('solana')).toBe(before + 10);
      if (attached.status === 'fulfilled') expect(refunds.find((e) => e.type === 'refund')!.amount).toBe(4);
      else expect(refunds.find((e) => e.type === 'refund')!.amount).toBe(10);
    }
    await expectCleanBooks();
  });

  it('simulate transfer: the CLI writes to the simulator, and the scan books it', async () => {
    const before = await available('ethereum');
    const env = { DATABASE_URL: t.db.url };
    const usage = await runCommand(['simulate', 'transfer', '--chain', 'ethereum', '--from', ETH_ADDRESS, '--to', treasury('ethereum')], env);
    expect(usage.code).toBe(2);
    const bad = await runCommand(['simulate', 'transfer', '--chain', 'ethereum', '--from', 'nope', '--to', treasury('ethereum'), '--usdc', '1'], env);
    expect(bad.code).toBe(2);
    const fromTreasury = await runCommand(['simulate', 'transfer', '--chain', 'ethereum', '--from', treasury('ethereum'), '--to', ETH_ADDRESS, '--usdc', '1'], env);
    expect(fromTreasury.code).toBe(1);
    expect(fromTreasury.stderr).toContain('sends only payouts');
    const sent = await runCommand(
      ['simulate', 'transfer', '--chain', 'ethereum', '--from', ETH_ADDRESS, '--to', treasury('ethereum'), '--usdc', '3.25', '--native', '0.5', '--json'],
      env,
    );
    expect(sent.code, sent.stderr).toBe(0);
    expect(JSON.parse(sent.stdout.trim().split('\n').at(-1)!).tx_ids).toHaveLength(2);
    expect((await scan()).booked).toBe(2);
    expect(await available('ethereum')).toBe(before + 3.25);
    await expectCleanBooks();
  });
});

describe('ledger verify sees inbound transfers', () => {
  it('fails on a refund no inbound transfer explains, and on a transfer booked for another amount', async () => {
    await send([{ chain: 'solana', from: OTHER_SOL, to: treasury('solana'), currency: 'USDC', amountUnits: 9_000_000n }]);
    await scan();
    expect((await verifyLedger(t.db.pool)).ok).toBe(true);

    await t.db.pool.query('UPDATE inbound_transfers SET amount = amount + 1');
    expect((await verifyLedger(t.db.pool)).problems.map((p) => p.check)).toEqual(['inbound_transfer_booked_once']);
    await t.db.pool.query('UPDATE inbound_transfers SET amount = amount - 1');

    const id = await settledPayment(3);
    const client = await t.db.pool.connect();
    try {
      await postMany(client, [{ movement: movements.refund('solana', 3_000_000n, 'USDC'), context: { paymentIntentId: id, at: t.clock.now() } }]);
    } finally {
      client.release();
    }
    expect((await verifyLedger(t.db.pool)).problems.map((p) => p.check)).toEqual(['refund_is_one_inbound_transfer']);
    const cli = await runCommand(['ledger', 'verify'], { DATABASE_URL: t.db.url });
    expect(cli.code).toBe(1);
    expect(cli.stdout).toContain('refund_is_one_inbound_transfer');
  });
});

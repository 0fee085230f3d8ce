// Reconciliation against in-flight transfers (decision 117): a shortfall is explained only by in-flight transfers the
// chain reports landed (included or final) and the books have not settled yet, never by transfers merely signed or
// pending. On the simulated Solana chain with a slow finality (600 s), so the test decides when a transfer lands:
// a wallet short of 150 with 200 in flight that has not landed is a mismatch and keeps the alert open; a wallet short
// of what landed unbooked (a payout, then a withdrawal too) is `in_flight`, and short of more than landed (though not
// of more than is in flight) a mismatch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile } from '../../src/core/treasury/reconcile.js';
import { runReconciliation } from '../../src/core/treasury/reconcile-runs.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createPayment, createTestContext, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { confirm, drainExecution } from '../helpers/workers.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext({ SIM_TREASURY_USDC: '1000', SIM_CONFIRM_SECONDS: '600', RECONCILE_INTERVAL_SECONDS: '1' });
});
afterAll(async () => t.close());

/** One recorded run (a run per period: the clock moves a period first), Solana's verdict. */
async function solanaRun() {
  t.clock.advance(1_000);
  const run = await runReconciliation(t.ctx);
  return run!.find((r) => r.chain === 'solana')!;
}
const takeFromWallet = (usdc: number) =>
  t.db.pool.query("UPDATE sim_wallets SET initial_usdc_micros = initial_usdc_micros - $1 WHERE chain = 'solana'", [BigInt(usdc * 1e6)]);
const openAlerts = async () =>
  ((await t.app.inject({ method: 'GET', url: '/admin/alerts?status=open' })).json() as { data: { id: string; chain: string; message: string }[] }).data;

describe('reconciliation with transfers in flight', () => {
  it('a shortfall that in-flight transfers that have not landed cannot explain is a mismatch, and the alert stays open', async () => {
    // USDC leaves the wallet behind the ledger's back: holdings 1000, chain 850.
    await takeFromWallet(150);
    expect(await solanaRun()).toMatchObject({ status: 'mismatch', ledger_usdc: '1000', in_flight_usdc: '0', difference_usdc: '-150' });
    const [alert] = await openAlerts();
    expect(alert).toMatchObject({ chain: 'solana' });

    // 200 goes in flight (signed and sent), but nothing has landed: the node holds it pending.
    await createPayment(t.app, 200, { solana_address: SOL_ADDRESS });
    await drainExecution(t);
    const run = await solanaRun();
    expect(run).toMatchObject({ ledger_usdc: '1000', in_flight_usdc: '200', on_chain_usdc: '850', difference_usdc: '-150' });
    expect(run.status).toBe('mismatch');
    expect(run.landed_usdc).toBe('0');
    const still = await openAlerts();
    expect(still.map((a) => a.id)).toEqual([alert!.id]);
    expect(still[0]!.message).toContain('0 landed');
  });

  it('a shortfall of no more than what landed and is not booked yet is in_flight; beyond it, a mismatch', async () => {
    // The wallet gets its 150 back: the books agree again and the alert resolves.
    await takeFromWallet(-150);
    expect(await solanaRun()).toMatchObject({ status: 'ok', difference_usdc: '0', landed_usdc: null });
    expect(await openAlerts()).toEqual([]);

    // The payout is final on chain (the wallet holds 800), not settled in the books: the shortfall is explained.
    t.clock.advance(601_000);
    expect(await solanaRun()).toMatchObject({ status: 'in_flight', on_chain_usdc: '800', difference_usdc: '-200', in_flight_usdc: '200', landed_usdc: '200' });
    expect(await openAlerts()).toEqual([]);

    // A withdrawal goes in flight too, pending in the node: 250 in flight, 200 landed.
    const withdrawal = await t.app.inject({ method: 'POST', url: '/admin/withdrawals', payload: { chain: 'solana', to: SOL_ADDRESS, amount_usdc: '50' } });
    expect(withdrawal.statusCode, withdrawal.body).toBe(201);
    await drainExecution(t);
    expect(await solanaRun()).toMatchObject({ status: 'in_flight', in_flight_usdc: '250', difference_usdc: '-200', landed_usdc: '200' });

    // 30 more leave the wallet: short of 230, less than in flight but more than landed. Nothing explains the 30.
    await takeFromWallet(30);
    expect(await solanaRun()).toMatchObject({ status: 'mismatch', in_flight_usdc: '250', difference_usdc: '-230', landed_usdc: '200' });
    expect((await openAlerts()).map((a) => a.chain)).toEqual(['solana']);
    await takeFromWallet(-30);

    // The withdrawal lands as well: 250 short, 250 landed; the alert resolves. The on-demand view says the same.
    t.clock.advance(601_000);
    expect(await solanaRun()).toMatchObject({ status: 'in_flight', ledger_usdc: '1000', on_chain_usdc: '750', difference_usdc: '-250', landed_usdc: '250' });
    expect(await openAlerts()).toEqual([]);
    expect((await t.app.inject({ method: 'GET', url: '/admin/reconciliation' })).json()[1]).toMatchObject({ chain: 'solana', status: 'in_flight', landed_usdc: '250' });

    // A node that cannot say what landed leaves the shortfall unexplained either way: `error`, which leaves alerts as
    // they are (decision 119).
    const solana = t.ctx.adapters.solana!;
    const mute = { ...t.ctx.adapters, solana: { ...solana, getStatuses: async () => Promise.reject(new Error('connect ECONNREFUSED')) } };
    const [, unknown] = await reconcile(t.db.pool, mute);
    expect(unknown).toMatchObject({ status: 'error', difference_usdc: '-250', landed_usdc: null });
    expect(unknown!.error).toContain('ECONNREFUSED');

    // Settled in the books: ok, nothing left to explain, and the chain is not asked about transfers.
    await confirm(t);
    expect(await solanaRun()).toMatchObject({ status: 'ok', in_flight_usdc: '0', difference_usdc: '0', landed_usdc: null });
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
  });
});

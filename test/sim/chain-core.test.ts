// The real core (execution and confirmation, as the workers run them) against the simulated chain world: payments on
// both chains settle once each, with and without the chain faults of issue 37.
import { afterEach, describe, expect, it } from 'vitest';
import { resolveManualReview } from '../../src/core/operators/transitions/resolve.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { testAudit } from '../helpers/audit.js';
import { createPayment } from '../helpers/context.js';
import { confirm, drainExecution } from '../helpers/workers.js';
import { agreeing, booksAgainstChains, ethRecipient, landedPerPayment, runUntilFinal, simWorld, solRecipient, type SimWorld } from './chain-world.js';

let world: SimWorld | undefined;
afterEach(async () => {
  await world?.t.close();
  world = undefined;
});

describe('the core against the simulated chain world', () => {
  it('settles payments on both chains, each paid once on chain, the books matching the chains', async () => {
    const w = (world = await simWorld());
    const { app } = w.t;
    const ids = [
      await createPayment(app, 10, { ethereum_address: ethRecipient() }),
      await createPayment(app, 20, { ethereum_address: ethRecipient() }),
      await createPayment(app, 30, { solana_address: solRecipient() }),
      await createPayment(app, 40, { solana_address: solRecipient() }),
    ];
    const final = await runUntilFinal(w, 15_000, 40);
    expect(ids.map((id) => final.get(id))).toEqual(['settled', 'settled', 'settled', 'settled']);
    const landed = landedPerPayment(w.sim);
    expect(ids.map((id) => landed.get(id))).toEqual([1, 1, 1, 1]);
    expect(w.sim.landedTransfers().every((l) => l.state === 'final')).toBe(true);
    expect((await verifyLedger(w.t.db.pool)).ok).toBe(true);
    expect(await booksAgainstChains(w)).toEqual(await agreeing(w));
    for (const chain of ['ethereum', 'solana']) {
      const adapter = w.sim.adapters[chain]!;
      const { rows } = await w.t.db.pool.query<{ n: string }>(
        `SELECT COALESCE(SUM(amount_micros), 0)::text AS n FROM payment_intents WHERE selected_chain = $1 AND status = 'settled'`,
        [chain],
      );
      const paid = w.sim.landedTransfers().filter((l) => l.chain === chain).reduce((sum, l) => sum + l.amountMicros, 0n);
      expect(paid).toBe(BigInt(rows[0]!.n));
      expect(await adapter.treasuryTokenBalance('usdc')).toBe(1_000_000_000_000n - paid);
    }
  });

  it('under every chain fault, no payment is paid twice and every one ends settled or failed', { timeout: 120_000 }, async () => {
    const w = (world = await simWorld());
    const { app } = w.t;
    w.faults.arm('chain.send_timeout_after_accept', 2);
    w.faults.arm('chain.nonce_too_low', 1);
    w.faults.arm('chain.already_known', 1);
    w.faults.arm('chain.blockhash_expired_but_landed', 1);
    w.faults.arm('chain.node_lags', 4);
    w.faults.arm('chain.reorg_below_finality', 3);
    w.faults.arm('chain.dropped_from_pool', 2);
    w.faults.arm('chain.batch_reverted_by_recipient', 1);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await createPayment(app, 5 + i, { ethereum_address: ethRecipient() }));
    for (let i = 0; i < 4; i++) ids.push(await createPayment(app, 5 + i, { solana_address: solRecipient() }));
    const final = await runUntilFinal(w, 15_000, 80);
    expect(ids.map((id) => final.get(id)).filter((s) => s !== 'settled' && s !== 'failed')).toEqual([]);
    const landed = landedPerPayment(w.sim);
    for (const id of ids) {
      expect(landed.get(id) ?? 0, id).toBeLessThanOrEqual(1);
      expect(landed.get(id) ?? 0, id).toBe(final.get(id) === 'settled' ? 1 : 0);
    }
    expect((await verifyLedger(w.t.db.pool)).ok).toBe(true);
    expect(await booksAgainstChains(w)).toEqual(await agreeing(w));
    // Every fault armed was injected somewhere along the way.
    const kinds = ['chain.send_timeout_after_accept', 'chain.nonce_too_low', 'chain.already_known', 'chain.blockhash_expired_but_landed', 'chain.node_lags', 'chain.reorg_below_finality', 'chain.dropped_from_pool', 'chain.batch_reverted_by_recipient'] as const;
    expect(Object.fromEntries(kinds.map((kind) => [kind, w.faults.armed(kind)]))).toEqual(Object.fromEntries(kinds.map((kind) => [kind, 0])));
  });

  /**
   * A transfer stranded by a fee spike goes to manual review; the spike ends and it is mined, but a lagging node shows
   * the operator it still pending, so the operator replaces it. `replacementLands`: a reorganisation takes the
   * original away and the replacement is mined instead; otherwise the node refuses the replacement (nonce too low).
   */
  async function replacedWhileMined(replacementLands: boolean) {
    const w = (world = await simWorld({ STUCK_AFTER_SECONDS: '60' }));
    const id = await createPayment(w.t.app, 25, { ethereum_address: ethRecipient() });
    await drainExecution(w.t);
    w.sim.congest('ethereum', 10n ** 16n);
    w.t.clock.advance(61_000);
    await confirm(w.t);
    expect(await statusOf(w, id)).toBe('manual_review');
    w.sim.congest('ethereum', null);
    w.t.clock.advance(12_000);
    w.sim.tick();
    expect(w.sim.landedTransfers()).toMatchObject([{ paymentId: id, state: 'included' }]);
    w.faults.arm('chain.node_lags');
    if (replacementLands) w.faults.arm('chain.replacement_lands');
    const resolved = await resolveManualReview(w.t.ctx, id, 'replace', { audit: testAudit('payment.resolve', { id: 'op_ada', role: 'operator', peer: null }) });
    expect(resolved).toMatchObject({ status: 'broadcasted' });
    expect(w.faults.armed('chain.node_lags') + w.faults.armed('chain.replacement_lands')).toBe(0);
    const final = await runUntilFinal(w, 15_000, 40);
    return { w, id, final, resolved };
  }

  async function statusOf(w: SimWorld, id: string): Promise<string> {
    return (await w.t.db.pool.query<{ status: string }>('SELECT status FROM payment_intents WHERE id = $1', [id])).rows[0]!.status;
  }

  it('a replacement the chain refuses because the original was mined: settled once, from the original', async () => {
    const { w, id, final } = await replacedWhileMined(false);
    expect(final.get(id)).toBe('settled');
    const landed = w.sim.landedTransfers().filter((l) => l.paymentId === id);
    expect(landed).toHaveLength(1);
    expect(w.sim.signedTransactions().map((r) => r.replacementOf !== null)).toEqual([false, true]);
    expect(landed[0]!.txId).toBe(w.sim.signedTransactions()[0]!.txId);
    expect((await verifyLedger(w.t.db.pool)).ok).toBe(true);
    expect(await booksAgainstChains(w)).toEqual(await agreeing(w));
  });

  it('chain.replacement_lands: the replacement mined instead of the included original: settled once, from the replacement', async () => {
    const { w, id, final, resolved } = await replacedWhileMined(true);
    expect(final.get(id)).toBe('settled');
    const landed = w.sim.landedTransfers().filter((l) => l.paymentId === id);
    expect(landed).toHaveLength(1);
    expect(landed[0]!.txId).toBe(resolved.tx_id);
    expect((await verifyLedger(w.t.db.pool)).ok).toBe(true);
    expect(await booksAgainstChains(w)).toEqual(await agreeing(w));
  });

  it('a replaced batch that lands and reverts: its fee is booked, and its payments go out again alone', async () => {
    const w = (world = await simWorld({ STUCK_AFTER_SECONDS: '60' }));
    const ids = [await createPayment(w.t.app, 11, { ethereum_address: ethRecipient() }), await createPayment(w.t.app, 12, { ethereum_address: ethRecipient() })];
    await drainExecution(w.t, 1000, { together: true });
    expect(w.sim.signedTransactions().map((r) => [...r.paymentIds].sort())).toEqual([[...ids].sort()]);
    w.sim.congest('ethereum', 10n ** 16n);
    w.t.clock.advance(61_000);
    await confirm(w.t);
    // The spike ends as the operator replaces the batch: the original is mined first, and a recipient refuses it.
    w.sim.congest('ethereum', null);
    w.faults.arm('chain.batch_reverted_by_recipient');
    w.t.clock.advance(12_000);
    w.sim.tick();
    expect(w.sim.minedTransactions().map((m) => [m.reverted, m.paymentIds.length])).toEqual([[true, 2]]);
    const audit = testAudit('payment.resolve', { id: 'op_ada', role: 'operator', peer: null });
    expect(await resolveManualReview(w.t.ctx, ids[0]!, 'replace', { audit })).toMatchObject({ status: 'broadcasted' });
    const final = await runUntilFinal(w, 15_000, 40);
    expect(ids.map((id) => final.get(id)).sort()).toEqual(['failed', 'settled']);
    const mined = w.sim.minedTransactions();
    expect(mined.map((m) => [m.reverted, m.paymentIds.length])).toEqual([[true, 2], [false, 1]]);
    expect((await verifyLedger(w.t.db.pool)).ok).toBe(true);
    expect(await booksAgainstChains(w)).toEqual(await agreeing(w));
  });
  it('chain.send_refused: a send the node refused outright is signed again on its nonce (the same bytes) and settles once', async () => {
    const w = (world = await simWorld());
    const id = await createPayment(w.t.app, 12, { ethereum_address: ethRecipient() });
    w.faults.arm('chain.send_refused', 1);
    const final = await runUntilFinal(w, 15_000, 40);
    expect(w.faults.armed('chain.send_refused')).toBe(0);
    expect(final.get(id)).toBe('settled');
    expect(landedPerPayment(w.sim).get(id)).toBe(1);
    // Both attempts carry the same transaction: refused once, then sent and mined (the two may share a simulated
    // moment, and ids are random: compared as a set).
    const { rows } = await w.t.db.pool.query<{ tx_id: string; status: string }>(
      'SELECT tx_id, status FROM payment_attempts WHERE payment_intent_id = $1 ORDER BY status',
      [id],
    );
    expect(rows.map((r) => r.status)).toEqual(['confirmed', 'failed']);
    expect(new Set(rows.map((r) => r.tx_id)).size).toBe(1);
    expect((await verifyLedger(w.t.db.pool)).ok).toBe(true);
    expect(await booksAgainstChains(w)).toEqual(await agreeing(w));
  });
});

// Seeded payments on both chains under random chain faults, the real core (execution, confirmation) against the
// simulated chains, then calm until every payment is settled or failed: the chain's side of issue 37's invariants.
import { afterEach, describe, expect, it } from 'vitest';
import { createFaultPlan, FAULT_KINDS } from '../../sim/faults/plan.js';
import { Rng } from '../../sim/rng.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createPayment } from '../helpers/context.js';
import { agreeing, booksAgainstChains, ethRecipient, landedPerPayment, runUntilFinal, simWorld, solRecipient, type SimWorld } from './chain-world.js';

let world: SimWorld | undefined;
afterEach(async () => {
  await world?.t.close();
  world = undefined;
});

/** CHAIN_SEEDS=1,2,... CHAIN_FAULT_RATE=0.4 hunt with more seeds; the default is a short, fixed set. */
const SEEDS = (process.env.CHAIN_SEEDS ?? '2,4').split(',').map(Number);

describe('seeded payments under random chain faults, the core against the simulated chains', () => {
  for (const seed of SEEDS) {
    it(`seed ${seed}: each payment paid at most once, settled ones exactly once, one payment set per nonce, no early Solana re-sign`, { timeout: 300_000 }, async () => {
      const rng = new Rng(seed);
      const rate = Number(process.env.CHAIN_FAULT_RATE ?? '0.3');
      const plan = createFaultPlan(rng.fork('faults'), Object.fromEntries(FAULT_KINDS.filter((k) => k.startsWith('chain.')).map((k) => [k, rate])));
      const w = (world = await simWorld({ STUCK_AFTER_SECONDS: '600' }, plan, seed));
      const { app } = w.t;
      const ids: string[] = [];
      const ops = rng.fork('ops');
      for (let round = 0; round < 6; round++) {
        for (let i = 0; i < 4; i++) {
          const eth = ops.chance(0.5);
          ids.push(await createPayment(app, ops.int(1, 50), eth ? { ethereum_address: ethRecipient() } : { solana_address: solRecipient() }));
        }
        await runUntilFinal(w, ops.int(1, 30) * 1000, 3);
      }
      plan.calmDown();
      const final = await runUntilFinal(w, 15_000, 200);
      const landed = landedPerPayment(w.sim);
      for (const id of ids) {
        expect(landed.get(id) ?? 0, id).toBeLessThanOrEqual(1);
        if (final.get(id) === 'settled') expect(landed.get(id) ?? 0, id).toBe(1);
        if (final.get(id) === 'failed') expect(landed.get(id) ?? 0, id).toBe(0);
      }
      // No two transactions on one (chain, treasury, nonce) that pay different payments: a cancel pays none.
      const byNonce = new Map<string, string[]>();
      for (const r of w.sim.signedTransactions()) {
        if (r.nonce === null) continue;
        const key = `${r.chain}:${r.nonce}`;
        const ps = r.purpose === 'cancel' ? 'cancel' : r.paymentIds.join(',');
        byNonce.set(key, [...(byNonce.get(key) ?? []), ps]);
      }
      for (const [key, list] of byNonce) {
        const transfers = new Set(list.filter((p) => p !== 'cancel'));
        expect(transfers.size, `${key}: ${list.join(' | ')}`).toBeLessThanOrEqual(1);
      }
      // Solana: no transaction for a payment while an earlier one for it can still land (its blockhash valid, and not
      // failed for good).
      const solana = w.sim.signedTransactions().filter((r) => r.chain === 'solana');
      for (const later of solana) {
        for (const earlier of solana) {
          if (earlier === later || earlier.seenAtHeight > later.seenAtHeight || earlier.txId === later.txId) continue;
          if (earlier.revertedFinalAt !== null && earlier.revertedFinalAt <= later.seenAtHeight) continue;
          const shared = earlier.paymentIds.filter((p) => later.paymentIds.includes(p));
          if (shared.length === 0) continue;
          expect(later.seenAtHeight, `re-signed ${shared.join(',')} at ${later.seenAtHeight}, earlier valid to ${earlier.lastValidHeight}`).toBeGreaterThan(earlier.lastValidHeight!);
        }
      }
      expect((await verifyLedger(w.t.db.pool)).problems).toEqual([]);
      expect(await booksAgainstChains(w)).toEqual(await agreeing(w));
    });
  }
});

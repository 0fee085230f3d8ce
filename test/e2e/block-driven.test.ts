// Confirmation rounds are driven by new blocks: with the periodic floor an hour away, a transfer is settled as soon
// as its chain's head moves past its finality, on the simulated chains and on the local real chains. And a round asks
// each chain about many transfers in batched calls that answer as the one-by-one calls do.
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startEthereumDevnet } from '../../src/devnet/ethereum.js';
import { startSolanaDevnet } from '../../src/devnet/solana.js';
import { signedOf } from '../../src/domain/chain.js';
import type { AttemptRow } from '../../src/db/queries/attempts.js';
import { startConfirmationWorker } from '../../src/workers/confirmation.js';
import type { Periodic } from '../../src/workers/periodic.js';
import { createPayment, createTestContext, ETH_ADDRESS, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { drainExecution } from '../helpers/workers.js';
import { devnetEnv } from '../helpers/devnet.js';
import { statusOf as transferStatus } from '../helpers/status.js';

let t: TestContext | undefined;
let worker: Periodic | undefined;
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await worker?.stop();
  worker = undefined;
  await t?.close();
  t = undefined;
  for (const stop of stops.splice(0)) await stop();
});

const statusOf = async (id: string) =>
  (await t!.db.pool.query<{ status: string }>('SELECT status FROM payment_intents WHERE id = $1', [id])).rows[0]!.status;
const attemptsOf = async (ids: string[]) =>
  (await t!.db.pool.query<AttemptRow>('SELECT tx_id, signed_tx, chain_meta, chain FROM payment_attempts WHERE payment_intent_id = ANY($1) ORDER BY id', [ids])).rows;

function startWorker(headPollSeconds: number): void {
  // The periodic floor is an hour: only a head that moves can bring the next round.
  worker = startConfirmationWorker({ ...t!.ctx, log: pino({ level: 'silent' }) }, { pollSeconds: 3600, headPollSeconds });
}

describe('block-driven confirmation', () => {
  it('on the simulated chains: settles once the clock passes finality, without waiting for the periodic poll', async () => {
    t = await createTestContext({ SIM_TREASURY_USDC: '1000' });
    const id = await createPayment(t.app, 3);
    await drainExecution(t);
    startWorker(0.05);
    // The first round ran at start: nothing was final then.
    await vi.waitFor(async () => expect(await statusOf(id)).toBe('broadcasted'), { timeout: 5_000 });
    t.clock.advance(20_000); // past Solana finality on the simulator: its head moves
    await vi.waitFor(async () => expect(await statusOf(id)).toBe('settled'), { timeout: 10_000, interval: 50 });
  });

  it('on the devnets: settles both chains as blocks come, and batched statuses answer as single ones', { timeout: 180_000 }, async () => {
    const [eth, sol] = await Promise.all([startEthereumDevnet({ blockTimeSeconds: 1 }), startSolanaDevnet({ slotMs: 50, finalizeAfterSlots: 8 })]);
    stops.push(() => eth.stop(), () => sol.stop());
    t = await createTestContext(devnetEnv(eth, sol));
    const ethIds = [await createPayment(t.app, 1, { ethereum_address: ETH_ADDRESS }), await createPayment(t.app, 2, { ethereum_address: ETH_ADDRESS })];
    const solIds = [await createPayment(t.app, 1, { solana_address: SOL_ADDRESS }), await createPayment(t.app, 2, { solana_address: SOL_ADDRESS })];
    await drainExecution(t);

    for (const [chain, ids] of [['ethereum', ethIds], ['solana', solIds]] as const) {
      const signed = (await attemptsOf(ids)).map(signedOf);
      const adapter = t.ctx.adapters[chain]!;
      // The batch answers as single lookups do. Blocks keep coming meanwhile, so each batched answer must lie between
      // the single answers read just before and just after it, in the order a transfer moves (pending, included, final).
      const before = await Promise.all(signed.map((s) => transferStatus(adapter, s)));
      const batched = await adapter.getStatuses(signed);
      const after = await Promise.all(signed.map((s) => transferStatus(adapter, s)));
      const progress = ['unknown', 'pending', 'included', 'final'];
      for (const [i, status] of batched.entries()) {
        const [from, at, to] = [before[i]!, status, after[i]!].map((s) => progress.indexOf(s.state));
        expect(at, `${chain} transfer ${i}: ${before[i]!.state} -> ${status.state} -> ${after[i]!.state}`).toBeGreaterThanOrEqual(from!);
        expect(at, `${chain} transfer ${i}: ${before[i]!.state} -> ${status.state} -> ${after[i]!.state}`).toBeLessThanOrEqual(to!);
        expect(at).toBeGreaterThanOrEqual(1); // every one of them reached the node
      }
      expect(await adapter.getStatuses([])).toEqual([]);
    }

    startWorker(0.2);
    for (const id of [...ethIds, ...solIds]) {
      await vi.waitFor(async () => expect(await statusOf(id)).toBe('settled'), { timeout: 60_000, interval: 100 });
    }
    // Ethereum tells when each transfer became final (the block of its last confirmation): every settlement is timed.
    const timed = (await t.ctx.metrics!.finalityToSettlement.get()).values.find(
      (v) => v.metricName === 'stableroute_payment_finality_to_settlement_seconds_count' && v.labels.chain === 'ethereum',
    );
    expect(timed?.value).toBe(ethIds.length);
  });
});

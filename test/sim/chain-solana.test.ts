// The simulated Solana chain's rules, and each of its faults as the core sees them: through the ChainAdapter port only.
import { getBase58Decoder } from '@solana/kit';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ChainError, type ChainAdapter, type PreparedTransfer, type SignedTransfer, type TransferRequest } from '../../src/chains/port.js';
import { ManualClock } from '../../src/clock.js';
import { createSimChains, type SimChains } from '../../sim/chain/index.js';
import { scriptedFaults } from '../../sim/chain/scripted-faults.js';
import { BLOCKHASH_VALID_BLOCKS } from '../../sim/chain/solana.js';
import { Rng } from '../../sim/rng.js';

const SLOT_MS = 400;
/** Slots from the one a transfer lands in to the one that finalizes it: the preset's seconds to finality (~13 s). */
const FINALITY_BLOCKS = 33;

function world(seed = 1) {
  const clock = new ManualClock('2026-03-01T12:00:00.000Z');
  const faults = scriptedFaults();
  const sim = createSimChains({ clock, rng: new Rng(seed), faults, chains: ['solana'] });
  const sol = sim.adapters.solana!;
  expect(Math.round((sol.typicalFinalitySeconds * 1000) / SLOT_MS)).toBe(FINALITY_BLOCKS);
  return { clock, faults, sim, sol };
}

let recipients = 0;
function recipient(): string {
  return getBase58Decoder().decode(createHash('sha256').update(`recipient ${++recipients}`).digest());
}

const request = (paymentIntentId: string, amountMicros = 1_000_000n, to = recipient()): TransferRequest => ({ paymentIntentId, to, amountMicros });

async function signOne(sol: ChainAdapter, requests: TransferRequest[]): Promise<SignedTransfer> {
  const [prepared] = (await sol.prepareTransfers(requests)) as PreparedTransfer[];
  if (!prepared || prepared instanceof ChainError) throw new Error('not prepared');
  expect(prepared.pendingNonce).toBeUndefined();
  return prepared.sign(null as never, null);
}

async function sendError(sol: ChainAdapter, signed: SignedTransfer): Promise<ChainError | null> {
  try {
    await sol.broadcast(signed);
    return null;
  } catch (error) {
    if (error instanceof ChainError) return error;
    throw error;
  }
}

const stateOf = async (sol: ChainAdapter, signed: SignedTransfer) => (await sol.getStatuses([signed]))[0]!;

function slots(clock: ManualClock, sim: SimChains, n: number): void {
  clock.advance(n * SLOT_MS);
  sim.tick();
}

describe('the simulated Solana chain', () => {
  it('lands a sent transfer in the next slot, finalized ~13 s later, moving USDC and the fee', async () => {
    const { clock, sim, sol } = world();
    const to = recipient();
    const signed = await signOne(sol, [request('pi_a', 3_000_000n, to)]);
    expect(signed.meta).toMatchObject({ lastValidBlockHeight: String(BLOCKHASH_VALID_BLOCKS) });
    await sol.broadcast(signed);
    expect(await stateOf(sol, signed)).toEqual({ state: 'unknown' });
    slots(clock, sim, 1);
    expect(await stateOf(sol, signed)).toEqual({ state: 'included', confirmations: 1 });
    slots(clock, sim, FINALITY_BLOCKS);
    expect(await stateOf(sol, signed)).toEqual({ state: 'final', feeNative: 5_000n });
    expect(sim.balanceOf('solana', to).usdcMicros).toBe(3_000_000n);
    expect(sim.landedTransfers()).toMatchObject([{ paymentId: 'pi_a', state: 'final' }]);
  });

  it('the same payments signed again on the same blockhash are the same transaction, which lands once', async () => {
    const { clock, sim, sol } = world();
    const requests = [request('pi_s')];
    const [prepared] = (await sol.prepareTransfers(requests)) as PreparedTransfer[];
    const first = await prepared!.sign(null as never, null);
    const second = await prepared!.sign(null as never, null);
    expect(second.txId).toBe(first.txId);
    await sol.broadcast(first);
    await sol.broadcast(second);
    slots(clock, sim, 2);
    await sol.broadcast(first);
    expect(sim.landedTransfers()).toHaveLength(1);
  });

  it('a transfer never sent is unknown while its blockhash may land, expired once finalized past it, and refused for good', async () => {
    const { clock, sim, sol } = world();
    const signed = await signOne(sol, [request('pi_e')]);
    slots(clock, sim, BLOCKHASH_VALID_BLOCKS + 1);
    // Past the last valid height but not finalized past it: the node refuses, and the adapter cannot yet say never.
    expect(await sendError(sol, signed)).toMatchObject({ reason: 'blockhash_expired', outcome: 'unknown' });
    expect(await stateOf(sol, signed)).toEqual({ state: 'unknown' });
    slots(clock, sim, FINALITY_BLOCKS);
    expect(await stateOf(sol, signed)).toEqual({ state: 'expired' });
    expect(await sendError(sol, signed)).toMatchObject({ reason: 'blockhash_expired', outcome: 'rejected' });
  });

  it('pays several payouts in one transaction with a batch memo, and the signature names each payment', async () => {
    const { clock, sim, sol } = world();
    const prepared = await sol.prepareTransfers([request('pi_1'), request('pi_2')]);
    expect(prepared[0]).toBe(prepared[1]);
    const signed = await (prepared[0] as PreparedTransfer).sign(null as never, null);
    expect(JSON.parse(signed.rawTx)).toMatchObject({ memo: expect.stringMatching(/^batch:/) });
    await sol.broadcast(signed);
    slots(clock, sim, 1);
    expect(sim.landedTransfers().map((l) => l.paymentId)).toEqual(['pi_1', 'pi_2']);
    expect(sim.signedTransactions()).toMatchObject([{ nonce: null, blockhash: expect.any(String), lastValidHeight: BLOCKHASH_VALID_BLOCKS, paymentIds: ['pi_1', 'pi_2'] }]);
  });

  it('books a transfer from outside into the treasury once finalized', async () => {
    const { clock, sim, sol } = world();
    const start = await sol.inboundPosition();
    sim.externalTransfer({ chain: 'solana', from: recipient(), to: sol.treasuryAddress(), currency: 'native', amountUnits: 10n ** 9n });
    expect((await sol.listInboundTransfers(start)).transfers).toEqual([]);
    slots(clock, sim, FINALITY_BLOCKS + 1);
    expect((await sol.listInboundTransfers(start)).transfers).toMatchObject([{ currency: 'native', index: 1, amountUnits: 10n ** 9n }]);
  });
});

describe('the simulated Solana chain faults, through the port', () => {
  it('chain.blockhash_expired_but_landed: the node says the blockhash expired, and the transfer lands at its last valid height', async () => {
    const { clock, sim, faults, sol } = world();
    faults.arm('chain.blockhash_expired_but_landed');
    const signed = await signOne(sol, [request('pi_b')]);
    expect(await sendError(sol, signed)).toMatchObject({ reason: 'blockhash_expired', outcome: 'unknown' });
    slots(clock, sim, BLOCKHASH_VALID_BLOCKS - 1);
    expect(await stateOf(sol, signed)).toEqual({ state: 'unknown' });
    expect(sim.landedTransfers()).toEqual([]);
    slots(clock, sim, 1);
    expect(await stateOf(sol, signed)).toMatchObject({ state: 'included' });
    slots(clock, sim, FINALITY_BLOCKS);
    expect(await stateOf(sol, signed)).toMatchObject({ state: 'final' });
  });

  it('chain.send_timeout_after_accept: the send times out, yet the transfer lands', async () => {
    const { clock, sim, faults, sol } = world();
    faults.arm('chain.send_timeout_after_accept');
    const signed = await signOne(sol, [request('pi_t')]);
    expect(await sendError(sol, signed)).toMatchObject({ reason: 'rpc_timeout', outcome: 'unknown' });
    slots(clock, sim, 1);
    expect(await stateOf(sol, signed)).toMatchObject({ state: 'included' });
  });

  it('chain.dropped_from_pool: a forgotten transfer never lands unless sent again, and expires', async () => {
    const { clock, sim, faults, sol } = world();
    const signed = await signOne(sol, [request('pi_d')]);
    await sol.broadcast(signed);
    faults.arm('chain.dropped_from_pool');
    slots(clock, sim, BLOCKHASH_VALID_BLOCKS + FINALITY_BLOCKS + 1);
    expect(faults.armed('chain.dropped_from_pool')).toBe(0);
    expect(await stateOf(sol, signed)).toEqual({ state: 'expired' });
    expect(sim.landedTransfers()).toEqual([]);
  });

  it('chain.reorg_below_finality: a confirmed transfer leaves the chain on a fork and lands again while valid', async () => {
    const { clock, sim, faults, sol } = world();
    const signed = await signOne(sol, [request('pi_o')]);
    await sol.broadcast(signed);
    slots(clock, sim, 1);
    faults.arm('chain.reorg_below_finality');
    slots(clock, sim, 1);
    expect(faults.armed('chain.reorg_below_finality')).toBe(0);
    expect(await stateOf(sol, signed)).toEqual({ state: 'unknown' });
    expect(sim.landedTransfers()).toEqual([]);
    slots(clock, sim, FINALITY_BLOCKS + 1);
    expect(await stateOf(sol, signed)).toMatchObject({ state: 'final' });
  });

  it('chain.node_lags: statuses and head from slots behind', async () => {
    const { clock, sim, faults, sol } = world();
    const signed = await signOne(sol, [request('pi_l')]);
    await sol.broadcast(signed);
    slots(clock, sim, FINALITY_BLOCKS + 2);
    const head = Number(await sol.head());
    faults.arm('chain.node_lags');
    expect(Number(await sol.head())).toBeLessThan(head);
    faults.arm('chain.node_lags');
    expect((await stateOf(sol, signed)).state).not.toBe('final');
    expect(await stateOf(sol, signed)).toMatchObject({ state: 'final' });
  });

  it('chain.batch_reverted_by_recipient: the batch fails whole with its fee paid', async () => {
    const { clock, sim, faults, sol } = world();
    const before = await sol.treasuryTokenBalance('usdc');
    const nativeBefore = await sol.treasuryNativeBalance();
    const signed = await signOne(sol, [request('pi_1'), request('pi_2'), request('pi_3')]);
    await sol.broadcast(signed);
    faults.arm('chain.batch_reverted_by_recipient');
    slots(clock, sim, FINALITY_BLOCKS + 1);
    expect(await stateOf(sol, signed)).toMatchObject({ state: 'failed', reason: 'reverted' });
    expect(await sol.treasuryTokenBalance('usdc')).toBe(before);
    expect(await sol.treasuryNativeBalance()).toBeLessThan(nativeBefore);
    expect(sim.landedTransfers()).toEqual([]);
  });
});

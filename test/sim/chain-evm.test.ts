// The simulated EVM chain's rules, and each of its faults as the core sees them: through the ChainAdapter port only.
import { getAddress } from 'viem';
import { describe, expect, it } from 'vitest';
import { ChainError, type ChainAdapter, type PreparedTransfer, type SignedTransfer, type TransferRequest } from '../../src/chains/port.js';
import { ManualClock } from '../../src/clock.js';
import { createSimChains, type SimChains } from '../../sim/chain/index.js';
import { scriptedFaults, type ScriptedFaults } from '../../sim/chain/scripted-faults.js';
import { Rng } from '../../sim/rng.js';

const BLOCK_MS = 12_000;
const FINALITY_BLOCKS = 12;

function world(seed = 1) {
  const clock = new ManualClock('2026-03-01T12:00:00.000Z');
  const faults = scriptedFaults();
  const sim = createSimChains({ clock, rng: new Rng(seed), faults, chains: ['ethereum'] });
  return { clock, faults, sim, eth: sim.adapters.ethereum! };
}

let recipients = 0;
function recipient(): string {
  return getAddress(`0x${(++recipients).toString(16).padStart(40, '7')}`);
}

const request = (paymentIntentId: string, amountMicros = 1_000_000n, to = recipient()): TransferRequest => ({ paymentIntentId, to, amountMicros });

/** Signs as the core does: the nonce it allocates from the pending count (here: the next one it hands out). */
async function signOne(eth: ChainAdapter, requests: TransferRequest[], nonce?: number): Promise<SignedTransfer> {
  const [prepared] = (await eth.prepareTransfers(requests)) as PreparedTransfer[];
  if (!prepared || prepared instanceof ChainError) throw new Error('not prepared');
  return prepared.sign(null as never, nonce ?? prepared.pendingNonce!);
}

async function sendError(eth: ChainAdapter, signed: SignedTransfer): Promise<ChainError | null> {
  try {
    await eth.broadcast(signed);
    return null;
  } catch (error) {
    if (error instanceof ChainError) return error;
    throw error;
  }
}

async function stateOf(eth: ChainAdapter, signed: SignedTransfer) {
  return (await eth.getStatuses([signed]))[0]!;
}

function blocks(clock: ManualClock, sim: SimChains, n: number): void {
  clock.advance(n * BLOCK_MS);
  sim.tick();
}

describe('the simulated EVM chain', () => {
  it('mines a sent transfer in the next block, final at depth, moving USDC and the fee', async () => {
    const { clock, sim, eth } = world();
    const to = recipient();
    const before = await eth.treasuryTokenBalance('usdc');
    const signed = await signOne(eth, [request('pi_a', 5_000_000n, to)]);
    expect(signed.meta.nonce).toBe(0);
    expect(await stateOf(eth, signed)).toEqual({ state: 'unknown' });
    await eth.broadcast(signed);
    expect(await stateOf(eth, signed)).toEqual({ state: 'pending' });
    blocks(clock, sim, 1);
    expect(await stateOf(eth, signed)).toEqual({ state: 'included', confirmations: 1 });
    expect(sim.landedTransfers()).toMatchObject([{ paymentId: 'pi_a', state: 'included', amountMicros: 5_000_000n }]);
    blocks(clock, sim, FINALITY_BLOCKS - 1);
    expect(await stateOf(eth, signed)).toMatchObject({ state: 'final', feeNative: 650_000n * 10n ** 9n });
    expect(sim.landedTransfers()).toMatchObject([{ paymentId: 'pi_a', state: 'final' }]);
    expect(await eth.treasuryTokenBalance('usdc')).toBe(before - 5_000_000n);
    expect(sim.balanceOf('ethereum', to).usdcMicros).toBe(5_000_000n);
    // Sending the same bytes again is harmless: nothing lands twice.
    await eth.broadcast(signed);
    expect(sim.landedTransfers()).toHaveLength(1);
  });

  it('counts pending nonces, and holds every transaction above a gap until the gap fills', async () => {
    const { clock, sim, eth } = world();
    const first = await signOne(eth, [request('pi_1')], 0);
    const second = await signOne(eth, [request('pi_2')], 1);
    await eth.broadcast(second);
    expect((await eth.prepareTransfers([request('pi_x')]))[0]).toMatchObject({ pendingNonce: 0 });
    blocks(clock, sim, 3);
    expect(await stateOf(eth, second)).toEqual({ state: 'pending' });
    await eth.broadcast(first);
    expect((await eth.prepareTransfers([request('pi_x')]))[0]).toMatchObject({ pendingNonce: 2 });
    blocks(clock, sim, 1);
    expect((await eth.getStatuses([first, second])).map((s) => s.state)).toEqual(['included', 'included']);
  });

  it('pays the payouts prepared together in one transaction, one signature, each payment named', async () => {
    const { clock, sim, eth } = world();
    const prepared = await eth.prepareTransfers([request('pi_1'), request('pi_2'), request('pi_3')]);
    expect(new Set(prepared).size).toBe(1);
    const signed = await (prepared[0] as PreparedTransfer).sign(null as never, 0);
    await eth.broadcast(signed);
    blocks(clock, sim, 1);
    expect(sim.landedTransfers().map((l) => l.paymentId)).toEqual(['pi_1', 'pi_2', 'pi_3']);
    expect(sim.signedTransactions()).toMatchObject([{ txId: signed.txId, nonce: 0, paymentIds: ['pi_1', 'pi_2', 'pi_3'], replacementOf: null }]);
  });

  it('replaces a pending transaction only with a fee at least 10% higher, and records the replacement', async () => {
    const { clock, sim, eth } = world();
    const requests = [request('pi_r')];
    const stuck = await signOne(eth, requests);
    await eth.broadcast(stuck);
    const replacement = await (await eth.prepareReplacement!(requests, stuck)).sign(null as never, null);
    expect(replacement.meta.nonce).toBe(stuck.meta.nonce);
    // The same nonce again at the same fee is refused as underpriced, and the adapter does not know it: unknown.
    const again = await signOne(eth, [request('pi_other')], 0);
    expect(await sendError(eth, again)).toMatchObject({ reason: 'nonce_conflict', outcome: 'unknown' });
    await eth.broadcast(replacement);
    expect(await stateOf(eth, stuck)).toEqual({ state: 'unknown' });
    blocks(clock, sim, FINALITY_BLOCKS);
    expect(await stateOf(eth, replacement)).toMatchObject({ state: 'final' });
    expect(await stateOf(eth, stuck)).toMatchObject({ state: 'failed', reason: 'nonce_conflict' });
    // Every other transaction on the stuck one's nonce names it: the refused one and the replacement.
    expect(sim.signedTransactions().map((r) => r.replacementOf)).toEqual([null, stuck.txId, stuck.txId]);
    expect(sim.landedTransfers()).toMatchObject([{ paymentId: 'pi_r', txId: replacement.txId }]);
  });

  it('refuses a replacement that would pay other transfers than the stuck one', async () => {
    const { eth } = world();
    const stuck = await signOne(eth, [request('pi_s')]);
    await expect(eth.prepareReplacement!([request('pi_s')], stuck)).rejects.toMatchObject({ reason: 'internal_error' });
  });

  it('a cancel on the stuck nonce moves nothing and leaves the transfer unable to land', async () => {
    const { clock, sim, eth } = world();
    const stuck = await signOne(eth, [request('pi_c')]);
    await eth.broadcast(stuck);
    const cancel = await (await eth.prepareCancel!(stuck)).sign(null as never, null);
    await eth.broadcast(cancel);
    blocks(clock, sim, FINALITY_BLOCKS);
    expect(await stateOf(eth, cancel)).toMatchObject({ state: 'final' });
    expect(await stateOf(eth, stuck)).toMatchObject({ state: 'failed', reason: 'nonce_conflict' });
    expect(sim.landedTransfers()).toEqual([]);
    expect(sim.signedTransactions().at(-1)).toMatchObject({ purpose: 'cancel', paymentIds: [], replacementOf: stuck.txId });
  });

  it('books a transfer from outside into the treasury once it is final, and not before', async () => {
    const { clock, sim, eth } = world();
    const start = await eth.inboundPosition();
    const txId = sim.externalTransfer({ chain: 'ethereum', from: recipient(), to: eth.treasuryAddress(), currency: 'USDC', amountUnits: 7_000_000n });
    expect((await eth.listInboundTransfers(start)).transfers).toEqual([]);
    blocks(clock, sim, FINALITY_BLOCKS);
    const scan = await eth.listInboundTransfers(start);
    expect(scan.transfers).toMatchObject([{ txId, amountUnits: 7_000_000n, currency: 'USDC' }]);
    expect((await eth.listInboundTransfers(scan.position)).transfers).toEqual([]);
  });
});

describe('the simulated EVM chain faults, through the port', () => {
  const armed = (faults: ScriptedFaults, kind: Parameters<ScriptedFaults['arm']>[0]) => {
    faults.arm(kind);
    return () => expect(faults.armed(kind)).toBe(0);
  };

  it('chain.send_timeout_after_accept: the send times out (unknown), yet the transfer lands', async () => {
    const { clock, sim, faults, eth } = world();
    const used = armed(faults, 'chain.send_timeout_after_accept');
    const signed = await signOne(eth, [request('pi_t')]);
    expect(await sendError(eth, signed)).toMatchObject({ reason: 'rpc_timeout', outcome: 'unknown' });
    used();
    blocks(clock, sim, 1);
    expect(await stateOf(eth, signed)).toMatchObject({ state: 'included' });
  });

  it('chain.dropped_from_pool: the node forgets it (unknown); sent again, it lands', async () => {
    const { clock, sim, faults, eth } = world();
    const signed = await signOne(eth, [request('pi_d')]);
    await eth.broadcast(signed);
    faults.arm('chain.dropped_from_pool');
    blocks(clock, sim, 1);
    expect(faults.armed('chain.dropped_from_pool')).toBe(0);
    expect(await stateOf(eth, signed)).toEqual({ state: 'unknown' });
    await eth.broadcast(signed);
    blocks(clock, sim, 1);
    expect(await stateOf(eth, signed)).toMatchObject({ state: 'included' });
  });

  it('chain.reorg_below_finality: an included transfer leaves the chain, then lands again', async () => {
    const { clock, sim, faults, eth } = world();
    const signed = await signOne(eth, [request('pi_o')]);
    await eth.broadcast(signed);
    blocks(clock, sim, 1);
    expect(sim.landedTransfers()).toHaveLength(1);
    faults.arm('chain.reorg_below_finality');
    blocks(clock, sim, 1);
    expect(faults.armed('chain.reorg_below_finality')).toBe(0);
    expect(await stateOf(eth, signed)).toEqual({ state: 'pending' });
    expect(sim.landedTransfers()).toEqual([]);
    expect((await eth.prepareTransfers([request('pi_x')]))[0]).toMatchObject({ pendingNonce: 1 });
    blocks(clock, sim, FINALITY_BLOCKS);
    expect(await stateOf(eth, signed)).toMatchObject({ state: 'final' });
  });

  it('chain.replacement_lands: the replacement of an included transfer takes its place in a reorganisation', async () => {
    const { clock, sim, faults, eth } = world();
    const requests = [request('pi_p')];
    const original = await signOne(eth, requests);
    await eth.broadcast(original);
    const replacement = await (await eth.prepareReplacement!(requests, original)).sign(null as never, null);
    blocks(clock, sim, 1);
    // Without the fault, the node says the nonce is used: the adapter cannot tell (unknown).
    expect(await sendError(eth, replacement)).toMatchObject({ reason: 'nonce_conflict', outcome: 'unknown' });
    faults.arm('chain.replacement_lands');
    expect(await sendError(eth, replacement)).toBeNull();
    expect(await stateOf(eth, original)).toEqual({ state: 'unknown' });
    blocks(clock, sim, FINALITY_BLOCKS);
    expect(await stateOf(eth, replacement)).toMatchObject({ state: 'final' });
    expect(await stateOf(eth, original)).toMatchObject({ state: 'failed', reason: 'nonce_conflict' });
    expect(sim.landedTransfers()).toMatchObject([{ paymentId: 'pi_p', txId: replacement.txId }]);
  });

  it('chain.nonce_too_low: the send is refused with a nonce conflict the adapter cannot settle (unknown), nothing taken', async () => {
    const { clock, sim, faults, eth } = world();
    faults.arm('chain.nonce_too_low');
    const signed = await signOne(eth, [request('pi_n')]);
    expect(await sendError(eth, signed)).toMatchObject({ reason: 'nonce_conflict', outcome: 'unknown' });
    blocks(clock, sim, 1);
    expect(await stateOf(eth, signed)).toEqual({ state: 'unknown' });
    await eth.broadcast(signed);
    blocks(clock, sim, 1);
    expect(await stateOf(eth, signed)).toMatchObject({ state: 'included' });
  });

  it('chain.already_known: a node claiming bytes it does not have answers unknown; bytes it has are a success', async () => {
    const { faults, eth } = world();
    faults.arm('chain.already_known');
    const signed = await signOne(eth, [request('pi_k')]);
    expect(await sendError(eth, signed)).toMatchObject({ reason: 'rpc_error', outcome: 'unknown' });
    expect(await stateOf(eth, signed)).toEqual({ state: 'unknown' });
    await eth.broadcast(signed);
    faults.arm('chain.already_known');
    expect(await sendError(eth, signed)).toBeNull();
  });

  it('chain.node_lags: the head and the statuses answer from blocks behind', async () => {
    const { clock, sim, faults, eth } = world();
    const signed = await signOne(eth, [request('pi_l')]);
    await eth.broadcast(signed);
    blocks(clock, sim, FINALITY_BLOCKS + 1);
    expect(await stateOf(eth, signed)).toMatchObject({ state: 'final' });
    const head = Number(await eth.head());
    faults.arm('chain.node_lags');
    expect(Number(await eth.head())).toBeLessThan(head);
    faults.arm('chain.node_lags');
    expect((await stateOf(eth, signed)).state).not.toBe('final');
    expect(await stateOf(eth, signed)).toMatchObject({ state: 'final' });
  });

  it('chain.batch_reverted_by_recipient: the batch reverts whole, its fee paid, and the frozen recipient is refused after', async () => {
    const { clock, sim, faults, eth } = world();
    const before = await eth.treasuryTokenBalance('usdc');
    const batch = [request('pi_b1'), request('pi_b2')];
    const signed = await signOne(eth, batch);
    await eth.broadcast(signed);
    faults.arm('chain.batch_reverted_by_recipient');
    blocks(clock, sim, FINALITY_BLOCKS);
    expect(await stateOf(eth, signed)).toMatchObject({ state: 'failed', reason: 'reverted' });
    expect(sim.landedTransfers()).toEqual([]);
    expect(await eth.treasuryTokenBalance('usdc')).toBe(before);
    const answers = await eth.prepareTransfers(batch);
    expect(answers.filter((a) => a instanceof ChainError)).toMatchObject([{ reason: 'reverted', outcome: 'rejected' }]);
  });
  it('chain.send_refused: the node refuses the bytes outright (rejected), its pool never holds them, and the nonce signs again', async () => {
    const { clock, sim, faults, eth } = world();
    const signed = await signOne(eth, [request('pi_r1')]);
    faults.arm('chain.send_refused');
    expect(await sendError(eth, signed)).toMatchObject({ reason: 'rpc_error', outcome: 'rejected' });
    expect(sim.signedTransactions()).toEqual([]);
    blocks(clock, sim, FINALITY_BLOCKS + 1);
    expect(await stateOf(eth, signed)).toEqual({ state: 'unknown' });
    const again = await signOne(eth, [request('pi_r2')], signed.meta.nonce as number);
    await eth.broadcast(again);
    blocks(clock, sim, FINALITY_BLOCKS + 1);
    expect(await stateOf(eth, again)).toMatchObject({ state: 'final' });
    expect(sim.signedTransactions().map((r) => r.txId)).toEqual([again.txId]);
  });
});

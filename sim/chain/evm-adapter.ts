// The ChainAdapter of a simulated EVM chain: the port as src/chains/ethereum implements it (pending nonces for the
// core to allocate, nonce and fees in the signed meta, same-nonce replacements and cancels with bumped fees, the error
// codes its errors.ts maps node answers to), over the in-memory EvmWorld. Payouts prepared together go out as batches
// of up to SIMULATED_BATCH_TRANSFERS_MAX, as with a batch contract.
import { SIMULATED_BATCH_TRANSFERS_MAX, SIMULATED_INBOUND_PAGE_TRANSFERS } from '../../src/bounds.js';
import {
  ChainError,
  onlyUsdc,
  type ChainAdapter,
  type FeeEstimate,
  type PreparedTransfer,
  type SignedTransfer,
  type TransferRequest,
} from '../../src/chains/port.js';
import { nativeToUsd } from '../../src/money.js';
import { batchFee, isRecipient, refusalOf } from './common.js';
import type { EvmWorld } from './evm.js';
import { decodeTx, signedOf, type WireTx } from './wire.js';

/** x * 1.125 rounded up, at least x + 1: the bump src/chains/ethereum/fees.ts gives a replacement. */
function bumped(value: bigint): bigint {
  const scaled = (value * 9n + 7n) / 8n;
  return scaled > value ? scaled : value + 1n;
}

/** Stands at a valid request's place until its batch is prepared. */
const REFUSED_PLACEHOLDER = new ChainError('internal_error', 'rejected', 'not prepared');

export function createEvmAdapter(world: EvmWorld): ChainAdapter {
  const { profile, treasury } = world;
  const chain = profile.chain;
  const estimate = (feeNative: bigint): FeeEstimate => ({ feeNative, feeUsd: nativeToUsd(feeNative, profile.nativeDecimals, profile.nativeUsdPrice) });

  function signer(body: Omit<WireTx, 'nonce'>, fixedNonce: number | null) {
    return async (_db: unknown, nonce: number | null): Promise<SignedTransfer> => {
      const used = fixedNonce ?? nonce;
      if (used === null) throw new ChainError('internal_error', 'rejected', 'an Ethereum transfer needs a nonce');
      const full: WireTx = { ...body, nonce: used };
      return signedOf('evm', full, { nonce: used, gas: '21000', maxFeePerGas: body.fee, maxPriorityFeePerGas: body.fee });
    };
  }

  function prepareBatch(requests: readonly TransferRequest[]): PreparedTransfer {
    const fee = batchFee(world.marketFee, requests.length);
    const body = {
      chain,
      from: treasury,
      purpose: 'transfer' as const,
      fee: fee.toString(),
      payouts: requests.map((r) => ({ to: r.to, amount: r.amountMicros.toString(), ref: r.paymentIntentId })),
    };
    return { pendingNonce: world.pendingNonce(), feeEstimate: estimate(fee), sign: signer(body, null) };
  }

  /** A transaction on `stuck`'s nonce that replaces whatever the pool holds there. */
  function outbidding(stuck: SignedTransfer, body: Omit<WireTx, 'nonce' | 'fee'>, marketFee: bigint): PreparedTransfer {
    const old = decodeTx(chain, 'evm', stuck);
    if (typeof old.nonce !== 'number') throw new ChainError('internal_error', 'rejected', 'not a signed Ethereum transfer of this adapter');
    const pendingFee = world.feeOnNonce(old.nonce) ?? BigInt(old.fee);
    const stuckFee = BigInt(old.fee) > pendingFee ? BigInt(old.fee) : pendingFee;
    const fee = bumped(stuckFee) > marketFee ? bumped(stuckFee) : marketFee;
    return { feeEstimate: estimate(fee), sign: signer({ ...body, fee: fee.toString() }, old.nonce) };
  }

  return {
    chain,
    kind: 'simulated',
    nativeCurrency: profile.nativeCurrency,
    nativeDecimals: profile.nativeDecimals,
    typicalFinalitySeconds: (profile.finalityBlocks * profile.blockMs) / 1000,
    treasuryAddress: () => treasury,
    isValidAddress: (address) => isRecipient(chain, treasury, address),
    estimateFee: async () => estimate(world.marketFee),

    async prepareTransfers(requests) {
      // The simulator's world holds USDC only.
      for (const request of requests) onlyUsdc(request.token ?? 'usdc');
      const refusals = requests.map((r) => refusalOf(chain, treasury, world.frozen, r));
      const answers: (PreparedTransfer | ChainError)[] = refusals.map((refusal) => refusal ?? REFUSED_PLACEHOLDER);
      const valid = requests.flatMap((_, k) => (refusals[k] === null ? [k] : []));
      for (let i = 0; i < valid.length; i += SIMULATED_BATCH_TRANSFERS_MAX) {
        const ks = valid.slice(i, i + SIMULATED_BATCH_TRANSFERS_MAX);
        const prepared = prepareBatch(ks.map((k) => requests[k]!));
        for (const k of ks) answers[k] = prepared;
      }
      return answers;
    },

    async prepareReplacement(requests, stuck) {
      const old = decodeTx(chain, 'evm', stuck);
      const same =
        old.purpose === 'transfer' &&
        old.payouts.length === requests.length &&
        old.payouts.every((p, i) => p.to.toLowerCase() === requests[i]!.to.toLowerCase() && BigInt(p.amount) === requests[i]!.amountMicros);
      if (!same) throw new ChainError('internal_error', 'rejected', 'the stuck transaction does not pay these transfers', { details: stuck.txId });
      return outbidding(stuck, { chain, from: treasury, purpose: 'transfer', payouts: old.payouts }, batchFee(world.marketFee, old.payouts.length));
    },

    async prepareCancel(stuck) {
      return outbidding(stuck, { chain, from: treasury, purpose: 'cancel', payouts: [] }, world.marketFee);
    },

    async broadcast(signed) {
      world.broadcast(signed);
    },
    async getStatuses(signed) {
      return world.statuses(signed);
    },
    head: async () => world.head(),
    probe: async () => ({ ok: true, latencyMs: 1, fee: estimate(world.marketFee), finalitySeconds: (profile.finalityBlocks * profile.blockMs) / 1000, congestion: 0 }),
    treasuryTokenBalance: async (token) => (onlyUsdc(token), world.tick(), world.balances.usdcOf(treasury)),
    treasuryNativeBalance: async () => (world.tick(), world.balances.nativeOf(treasury)),
    inboundPosition: async () => world.inboundPosition(),
    listInboundTransfers: async (position) => world.inboundAfter(position, SIMULATED_INBOUND_PAGE_TRANSFERS),
    // Nothing the books could have lost: the simulated world is not rolled back with the database (decision 205).
    treasuryTransactions: async () => ({ transactions: [], complete: true, nonces: null, mark: world.head(), quiet: true }),
  };
}

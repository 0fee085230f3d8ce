// The ChainAdapter of the simulated Solana chain: the port as src/chains/solana implements it (one blockhash for a
// preparation, several payouts per transaction, a memo naming the payment or the batch's hash, blockhash and last
// valid height in the signed meta, 'expired' only past that height), over the in-memory SolanaWorld.
import { createHash } from 'node:crypto';
import { SIMULATED_INBOUND_PAGE_TRANSFERS, SOLANA_BATCH_TRANSFERS_MAX } from '../../src/bounds.js';
import { ChainError, onlyUsdc, type ChainAdapter, type FeeEstimate, type PreparedTransfer, type TransferRequest } from '../../src/chains/port.js';
import { nativeToUsd } from '../../src/money.js';
import { batchFee, isRecipient, refusalOf } from './common.js';
import type { SolanaWorld } from './solana.js';
import { signedOf, type WireTx } from './wire.js';

/** As src/chains/solana/transfer.ts: a payment's own id, or a hash of a batch's, so two transactions never share bytes. */
function memoOf(requests: readonly TransferRequest[]): string {
  if (requests.length === 1) return requests[0]!.paymentIntentId;
  const hash = createHash('sha256').update(requests.map((r) => r.paymentIntentId).join('\n')).digest('base64url');
  return `batch:${hash.slice(0, 16)}`;
}

export function createSolanaAdapter(world: SolanaWorld): ChainAdapter {
  const { profile, treasury } = world;
  const chain = profile.chain;
  const estimate = (feeNative: bigint): FeeEstimate => ({ feeNative, feeUsd: nativeToUsd(feeNative, profile.nativeDecimals, profile.nativeUsdPrice) });
  const finalitySeconds = (profile.finalityBlocks * profile.blockMs) / 1000;

  function prepare(requests: readonly TransferRequest[], lifetime: { blockhash: string; lastValidHeight: number }): PreparedTransfer {
    const fee = batchFee(profile.feeNative, requests.length);
    const body: WireTx = {
      chain,
      from: treasury,
      purpose: 'transfer',
      fee: fee.toString(),
      payouts: requests.map((r) => ({ to: r.to, amount: r.amountMicros.toString(), ref: r.paymentIntentId })),
      blockhash: lifetime.blockhash,
      lastValidHeight: lifetime.lastValidHeight,
      memo: memoOf(requests),
    };
    const meta = { blockhash: lifetime.blockhash, lastValidBlockHeight: String(lifetime.lastValidHeight), payouts: requests.length };
    return { feeEstimate: estimate(fee), sign: async () => signedOf('solana', body, meta) };
  }

  return {
    chain,
    kind: 'simulated',
    nativeCurrency: profile.nativeCurrency,
    nativeDecimals: profile.nativeDecimals,
    typicalFinalitySeconds: finalitySeconds,
    treasuryAddress: () => treasury,
    isValidAddress: (address) => isRecipient(chain, treasury, address),
    estimateFee: async () => estimate(profile.feeNative),

    async prepareTransfers(requests) {
      // The simulator's world holds USDC only.
      for (const request of requests) onlyUsdc(request.token ?? 'usdc');
      const refusals = requests.map((r) => refusalOf(chain, treasury, world.frozen, r));
      const answers: (PreparedTransfer | ChainError)[] = refusals.map((refusal) => refusal ?? NOT_PREPARED);
      const valid = requests.flatMap((_, k) => (refusals[k] === null ? [k] : []));
      // One blockhash for the whole call, as the real adapter reads it once.
      const lifetime = world.latestBlockhash();
      for (let i = 0; i < valid.length; i += SOLANA_BATCH_TRANSFERS_MAX) {
        const ks = valid.slice(i, i + SOLANA_BATCH_TRANSFERS_MAX);
        const prepared = prepare(ks.map((k) => requests[k]!), lifetime);
        for (const k of ks) answers[k] = prepared;
      }
      return answers;
    },

    async broadcast(signed) {
      world.broadcast(signed);
    },
    async getStatuses(signed) {
      return world.statuses(signed);
    },
    head: async () => world.head(),
    probe: async () => ({ ok: true, latencyMs: 1, fee: estimate(profile.feeNative), finalitySeconds, congestion: 0 }),
    treasuryTokenBalance: async (token) => (onlyUsdc(token), world.tick(), world.balances.usdcOf(treasury)),
    treasuryNativeBalance: async () => (world.tick(), world.balances.nativeOf(treasury)),
    inboundPosition: async () => world.inboundPosition(),
    listInboundTransfers: async (position) => world.inboundAfter(position, SIMULATED_INBOUND_PAGE_TRANSFERS),
    // Nothing the books could have lost: the simulated world is not rolled back with the database (decision 205).
    treasuryTransactions: async () => ({ transactions: [], complete: true, nonces: null, mark: world.head(), quiet: true }),
  };
}

/** Stands at a valid request's place until its transaction is prepared. */
const NOT_PREPARED = new ChainError('internal_error', 'rejected', 'not prepared');

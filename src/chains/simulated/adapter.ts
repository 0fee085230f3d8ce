// The simulated chains: real ChainAdapters whose "network" is a table in our database, so a transfer broadcast
// before a crash is still there afterwards. Deterministic: every random choice is a hash of SIM_SEED and the
// transaction id, so the same run replays the same way. Fault injection through SIM_FAILURE_RATE / SIM_STUCK_RATE.
import { createHash } from 'node:crypto';
import { getBase58Decoder, isAddress as isSolanaAddress } from '@solana/kit';
import { isAddress as isEthereumAddress } from 'viem';
import type { Clock } from '../../clock.js';
import type { Queryable } from '../../db/pool.js';
import { nativeToUsd } from '../../money.js';
import {
  ChainError,
  type Chain,
  type ChainAdapter,
  type FailureReason,
  type FeeEstimate,
  type HealthProbe,
  type SignedTransfer,
  type TransferRequest,
  type TxStatus,
} from '../port.js';

export interface SimulatedOptions {
  chain: Chain;
  db: Queryable;
  clock: Clock;
  seed: string;
  failureRate: number;
  stuckRate: number;
  /** Seconds to finality for both chains; null: chain-like timings. */
  confirmSeconds: number | null;
  nativeUsdPrice: number;
}

interface ChainProfile {
  nativeCurrency: 'ETH' | 'SOL';
  nativeDecimals: number;
  includedAfterSeconds: number;
  finalAfterSeconds: number;
  confirmationsToFinal: number;
  baseFeeNative: bigint;
}

const PROFILES: Record<Chain, ChainProfile> = {
  // 65k gas at ~10 gwei; included in the next 12 s block, final after 12 more confirmations.
  ethereum: {
    nativeCurrency: 'ETH',
    nativeDecimals: 18,
    includedAfterSeconds: 12,
    finalAfterSeconds: 156,
    confirmationsToFinal: 12,
    baseFeeNative: 650_000_000_000_000n,
  },
  // 5000 lamports per signature plus a priority fee; confirmed in about a slot, finalized after ~32 slots.
  solana: {
    nativeCurrency: 'SOL',
    nativeDecimals: 9,
    includedAfterSeconds: 1,
    finalAfterSeconds: 13,
    confirmationsToFinal: 32,
    baseFeeNative: 5_000n,
  },
};

const BROADCAST_FAILURES: FailureReason[] = ['insufficient_gas', 'rpc_timeout', 'nonce_conflict'];

/** A deterministic number in [0, 1) from the seed and some labels. */
function roll(seed: string, ...labels: string[]): number {
  const digest = createHash('sha256').update([seed, ...labels].join('\u0000')).digest();
  return digest.readUInt32BE(0) / 2 ** 32;
}

function digest(...parts: string[]): Buffer {
  return createHash('sha256').update(parts.join('\u0000')).digest();
}

export function simulatedTreasuryAddress(chain: Chain, seed: string): string {
  const bytes = digest(seed, 'treasury', chain);
  return chain === 'ethereum' ? `0x${bytes.subarray(0, 20).toString('hex')}` : getBase58Decoder().decode(bytes);
}

export function createSimulatedAdapter(options: SimulatedOptions): ChainAdapter {
  const { chain, db, clock, seed } = options;
  const profile = PROFILES[chain];
  const includedAfter = options.confirmSeconds === null ? profile.includedAfterSeconds : options.confirmSeconds / 4;
  const finalAfter = options.confirmSeconds === null ? profile.finalAfterSeconds : options.confirmSeconds;
  const address = simulatedTreasuryAddress(chain, seed);

  function feeFor(txId: string): bigint {
    // +-20% around the base fee, fixed per transaction.
    const jitter = BigInt(Math.floor(roll(seed, txId, 'fee') * 400)) - 200n;
    return profile.baseFeeNative + (profile.baseFeeNative * jitter) / 1000n;
  }

  function txIdFor(rawTx: string): string {
    const bytes = digest(seed, 'tx', rawTx);
    if (chain === 'ethereum') return `0x${bytes.toString('hex')}`;
    return getBase58Decoder().decode(Buffer.concat([bytes, digest(seed, 'tx2', rawTx)]));
  }

  return {
    chain,
    kind: 'simulated',
    nativeCurrency: profile.nativeCurrency,
    nativeDecimals: profile.nativeDecimals,
    typicalFinalitySeconds: finalAfter,

    treasuryAddress: () => address,

    isValidAddress: (candidate) =>
      chain === 'ethereum' ? isEthereumAddress(candidate, { strict: true }) : isSolanaAddress(candidate),

    async estimateFee(): Promise<FeeEstimate> {
      return {
        feeNative: profile.baseFeeNative,
        feeUsd: nativeToUsd(profile.baseFeeNative, profile.nativeDecimals, options.nativeUsdPrice),
      };
    },

    async signTransfer(tx: Queryable, request: TransferRequest): Promise<SignedTransfer> {
      // The n-th signature for an intent is always the same bytes: a replayed run signs identically.
      const { rows } = await tx.query<{ n: string }>(
        'SELECT COUNT(*)::text AS n FROM payment_attempts WHERE payment_intent_id = $1',
        [request.paymentIntentId],
      );
      const rawTx = JSON.stringify({
        chain,
        from: address,
        to: request.to,
        amount: request.amountMicros.toString(),
        ref: request.paymentIntentId,
        sequence: Number(rows[0]?.n ?? 0),
      });
      return { txId: txIdFor(rawTx), rawTx, meta: {} };
    },

    async broadcast(signed: SignedTransfer): Promise<void> {
      const known = await db.query('SELECT 1 FROM sim_transactions WHERE tx_id = $1', [signed.txId]);
      if (known.rowCount) return; // the chain already has these bytes: resending is harmless
      const tries = await db.query<{ tries: number }>(
        `INSERT INTO sim_broadcast_tries (tx_id, tries) VALUES ($1, 1)
         ON CONFLICT (tx_id) DO UPDATE SET tries = sim_broadcast_tries.tries + 1 RETURNING tries`,
        [signed.txId],
      );
      const attempt = String(tries.rows[0]!.tries);
      if (roll(seed, signed.txId, 'fail', attempt) < options.failureRate) {
        const reason = BROADCAST_FAILURES[Math.floor(roll(seed, signed.txId, 'reason', attempt) * BROADCAST_FAILURES.length)]!;
        if (reason === 'rpc_timeout') {
          // A timeout is an unknown outcome: half the time the node did take the transaction.
          if (roll(seed, signed.txId, 'landed', attempt) < 0.5) await record(signed);
          throw new ChainError('rpc_timeout', 'unknown', 'simulated RPC timed out', { details: `attempt ${attempt}` });
        }
        throw new ChainError(reason, 'rejected', `simulated node rejected the transaction: ${reason}`);
      }
      await record(signed);
    },

    async getStatus(signed: SignedTransfer): Promise<TxStatus> {
      const { rows } = await db.query<{ will_stick: boolean; included_at: Date; final_at: Date; fee_native: string }>(
        'SELECT will_stick, included_at, final_at, fee_native::text FROM sim_transactions WHERE tx_id = $1',
        [signed.txId],
      );
      const row = rows[0];
      if (!row) {
        // The simulated node is the whole network: bytes it refused or lost are gone unless sent again.
        const tried = await db.query('SELECT 1 FROM sim_broadcast_tries WHERE tx_id = $1', [signed.txId]);
        return tried.rowCount ? { state: 'expired' } : { state: 'unknown' };
      }
      const now = clock.now().getTime();
      if (row.will_stick || now < row.included_at.getTime()) return { state: 'pending' };
      if (now < row.final_at.getTime()) {
        const span = Math.max(1, row.final_at.getTime() - row.included_at.getTime());
        const progress = (now - row.included_at.getTime()) / span;
        return { state: 'included', confirmations: 1 + Math.floor(progress * (profile.confirmationsToFinal - 1)) };
      }
      return { state: 'final', feeNative: BigInt(row.fee_native) };
    },

    async probe(): Promise<HealthProbe> {
      // The simulated RPC itself always answers: SIM_FAILURE_RATE injects broadcast failures, not outages.
      const at = clock.now().toISOString();
      return {
        ok: true,
        latencyMs: 20 + Math.floor(roll(seed, chain, 'latency', at) * 60),
        fee: await this.estimateFee(),
        finalitySeconds: finalAfter,
        congestion: Math.round(roll(seed, chain, 'congestion', at) * 30) / 100,
      };
    },

    async treasuryUsdcBalance(): Promise<bigint> {
      const { rows } = await db.query<{ initial: string | null; sent: string }>(
        `SELECT (SELECT initial_usdc_micros::text FROM sim_wallets WHERE chain = $1) AS initial,
                (SELECT COALESCE(SUM(amount_micros), 0)::text FROM sim_transactions
                  WHERE chain = $1 AND NOT will_stick AND final_at <= $2) AS sent`,
        [chain, clock.now()],
      );
      return BigInt(rows[0]?.initial ?? '0') - BigInt(rows[0]?.sent ?? '0');
    },
  };

  async function record(signed: SignedTransfer): Promise<void> {
    const body = JSON.parse(signed.rawTx) as { to: string; amount: string };
    const now = clock.now();
    await db.query(
      `INSERT INTO sim_transactions (tx_id, chain, raw_tx, to_address, amount_micros, fee_native, will_stick, submitted_at, included_at, final_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (tx_id) DO NOTHING`,
      [
        signed.txId,
        chain,
        signed.rawTx,
        body.to,
        body.amount,
        feeFor(signed.txId).toString(),
        roll(seed, signed.txId, 'stick') < options.stuckRate,
        now,
        new Date(now.getTime() + includedAfter * 1000),
        new Date(now.getTime() + finalAfter * 1000),
      ],
    );
  }
}

/** Records the simulated wallet's opening USDC balance once, for reconciliation. */
export async function ensureSimulatedWallet(db: Queryable, chain: Chain, address: string, usdcMicros: bigint, at: Date) {
  await db.query(
    `INSERT INTO sim_wallets (chain, address, initial_usdc_micros, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (chain) DO NOTHING`,
    [chain, address, usdcMicros.toString(), at],
  );
}

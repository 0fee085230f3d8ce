// Solana's fee: a fixed 5000 lamports per signature, plus an optional priority fee of
// compute-unit price (micro-lamports) x compute-unit limit. We ask for a bounded compute-unit limit and take the
// price from the fees recent blocks were paid at, capped so that a fee spike cannot drain the treasury.
import { nativeToUsd } from '../../money.js';
import type { FeeEstimate } from '../port.js';
import { call, type RpcClient } from './rpc.js';

export const LAMPORTS_PER_SIGNATURE = 5000n;
export const SOL_DECIMALS = 9;
/** Compute units we request. Measured: ~14k with account creation, ~0.5k without (p-token); the classic token
 * program needs up to ~30k and ~6.5k; the payment's memo adds ~0.3k. The margin covers them all, and the limit also
 * prices the priority fee. */
export const COMPUTE_UNITS_TRANSFER = 20_000;
export const COMPUTE_UNITS_TRANSFER_AND_CREATE_ACCOUNT = 60_000;
export const DEFAULT_MAX_COMPUTE_UNIT_PRICE_MICRO_LAMPORTS = 1_000_000n;
/** Percentile of recent per-slot prioritization fees we pay: above the median, so we land when blocks are busy. */
const PRICE_PERCENTILE = 75;
const MICRO_LAMPORTS_PER_LAMPORT = 1_000_000n;

/**
 * Compute-unit price from getRecentPrioritizationFees, or 0 when the node does not offer it (a devnet, a restricted
 * provider). A priority fee helps landing but is never required, so its absence must not stop a payout.
 */
export async function recentComputeUnitPrice(client: RpcClient, maxMicroLamports: bigint): Promise<bigint> {
  let fees: readonly { prioritizationFee: bigint }[];
  try {
    fees = await call(client, 'getRecentPrioritizationFees', client.rpc.getRecentPrioritizationFees());
  } catch {
    return 0n;
  }
  const price = percentile(
    fees.map((f) => BigInt(f.prioritizationFee)),
    PRICE_PERCENTILE,
  );
  return price > maxMicroLamports ? maxMicroLamports : price;
}

export function priorityFeeLamports(computeUnitPriceMicroLamports: bigint, computeUnitLimit: number): bigint {
  const microLamports = computeUnitPriceMicroLamports * BigInt(computeUnitLimit);
  return (microLamports + MICRO_LAMPORTS_PER_LAMPORT - 1n) / MICRO_LAMPORTS_PER_LAMPORT;
}

/**
 * Compute units a transaction paying these payouts requests: each payout's margin, so a batch of one asks what a
 * transfer of its own always did. Summed rather than measured per batch: the margins already cover the memo and the
 * compute-budget instructions once, and the priority fee is charged on what is requested, so the sum is what we pay.
 */
export function computeUnitLimitOf(payouts: readonly { createAta: boolean }[]): number {
  return payouts.reduce((sum, p) => sum + (p.createAta ? COMPUTE_UNITS_TRANSFER_AND_CREATE_ACCOUNT : COMPUTE_UNITS_TRANSFER), 0);
}

/**
 * Network fee of one transaction: its one signature plus the priority fee on the compute units it requests. The rent of
 * a new token account (~0.002 SOL) is left out: it is not a fee, it depends on the recipient, and the real cost
 * including it is reported by getStatuses when the transaction is final. The core shares it among the payouts.
 */
export function transactionFee(computeUnitPriceMicroLamports: bigint, computeUnitLimit: number, solUsdPrice: number): FeeEstimate {
  const feeNative = LAMPORTS_PER_SIGNATURE + priorityFeeLamports(computeUnitPriceMicroLamports, computeUnitLimit);
  return { feeNative, feeUsd: nativeToUsd(feeNative, SOL_DECIMALS, solUsdPrice) };
}

/** Network fee of a transfer of its own to a recipient that already has a token account (quotes, health). */
export function transferFee(computeUnitPriceMicroLamports: bigint, solUsdPrice: number): FeeEstimate {
  return transactionFee(computeUnitPriceMicroLamports, COMPUTE_UNITS_TRANSFER, solUsdPrice);
}

function percentile(values: bigint[], p: number): bigint {
  if (values.length === 0) return 0n;
  const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] ?? 0n;
}

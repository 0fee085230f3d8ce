// What a signed transfer means now, from what its chain says about it. Pure. Every step after signing (execution,
// confirmation, abandoned jobs, operator actions) decides from this one verdict, so "can this transfer still land?"
// has one answer in the codebase.
import { familyOf, type Chain, type ChainFamily, type FailureReason, type TxStatus } from './chain.js';
import { ALONE, feeShare, type TransactionShare } from './fee-share.js';

export type TransferVerdict =
  /** Final on chain: the payout happened; the fee is what the chain charged; when, where the chain tells. */
  | { kind: 'final'; feeNative: bigint; finalAt?: Date }
  /** In a block, not final yet. */
  | { kind: 'included'; confirmations: number }
  /** The node holds it; it can still land. */
  | { kind: 'pending' }
  /**
   * Nothing is known: the node does not know the bytes (not propagated yet, or forgotten) or could not be asked.
   * Sent again, the same bytes may still land, so funds stay where they are.
   */
  | { kind: 'unknown'; reachable: boolean }
  /**
   * It provably can never land. `onChain`: it was mined and failed (a revert), so its fee is spent and its nonce used;
   * otherwise it expired or was refused for good, and nothing was spent.
   */
  | { kind: 'cannot_land'; onChain: boolean; reason: FailureReason; feeNative: bigint; detail: string };

export type VerdictKind = TransferVerdict['kind'];

/**
 * What a signed transaction of a payment is for: the payout itself, or an operator's cancel on chain (a transaction on
 * the stuck transfer's nonce that moves nothing). A cancel that is final means the transfer can never land.
 */
export type AttemptPurpose = 'transfer' | 'cancel';

/** Why a transaction that expired can never land, in the terms of its chain (docs/errors.md). */
export const EXPIRED_REASON: Record<ChainFamily, FailureReason> = {
  solana: 'blockhash_expired', // its recent blockhash is past lastValidBlockHeight
  evm: 'dropped', // no expiry on an EVM chain: the node forgot it (or never took it), and the nonce moved on
};

/**
 * `status` null: the node could not be asked. `facts.share`: the payment's place in the transaction that pays it (an
 * on-chain batch pays several; absent: one of its own), so that the verdict's fee is the part this payment books.
 */
export function transferVerdict(status: TxStatus | null, facts: { chain: Chain; share?: TransactionShare }): TransferVerdict {
  const share = facts.share ?? ALONE;
  if (status === null) return { kind: 'unknown', reachable: false };
  switch (status.state) {
    case 'final':
      return { kind: 'final', feeNative: feeShare(status.feeNative, share), ...(status.finalAt ? { finalAt: status.finalAt } : {}) };
    case 'included':
      return { kind: 'included', confirmations: status.confirmations };
    case 'pending':
      return { kind: 'pending' };
    case 'unknown':
      return { kind: 'unknown', reachable: true };
    case 'failed':
      return {
        kind: 'cannot_land',
        onChain: true,
        reason: status.reason,
        feeNative: feeShare(status.feeNative, share),
        detail: status.details ?? status.reason,
      };
    case 'expired':
      return {
        kind: 'cannot_land',
        onChain: false,
        reason: EXPIRED_REASON[familyOf(facts.chain)],
        feeNative: 0n,
        detail: 'the transaction can no longer land',
      };
    default: {
      const exhaustive: never = status;
      return exhaustive;
    }
  }
}

/** The chain has the transfer (pending, included or final): it was sent, and it may be, or is, paid out. */
export function hasReachedChain(
  verdict: TransferVerdict,
): verdict is Extract<TransferVerdict, { kind: 'final' | 'included' | 'pending' }> {
  return verdict.kind === 'final' || verdict.kind === 'included' || verdict.kind === 'pending';
}

/** Funds promised to this transfer may leave the treasury: anything but a provable "never". */
export function mayStillLand(verdict: TransferVerdict): boolean {
  return verdict.kind !== 'cannot_land';
}

// What an operator may do with a payment in its current status, and when the chain contradicts it. Pure. The console
// offers the actions; the use cases (src/core/operators/transitions/resolve.ts, cancel.ts) ask the chain before they act and
// refuse what it contradicts.
import type { Chain } from './chain.js';
import type { ErrorCode } from './errors.js';
import type { PaymentStatus } from './payment-intent.js';
import type { AttemptPurpose, TransferVerdict } from './transfer-verdict.js';

/**
 * settled / failed: what an outside check found; replace: re-sign with a higher fee (where the chain allows it);
 * retry: one more execution of a payment whose abandoned execution left nothing on chain (decision 58; refused while
 * a transfer is live); cancel_on_chain: a transaction on the stuck transfer's nonce that moves nothing, so that the
 * transfer can never land; once it is final the payment fails with its funds released (decision 63).
 */
export type Resolution = 'settled' | 'failed' | 'replace' | 'retry' | 'cancel_on_chain';
export const RESOLUTIONS: readonly Resolution[] = ['settled', 'failed', 'replace', 'retry', 'cancel_on_chain'];

/** A payment not on chain yet, or between attempts, can be cancelled (its funds are released). */
export const CANCELLABLE_STATUSES: readonly PaymentStatus[] = ['route_selected', 'retrying'];

export interface OperatorActions {
  /**
   * Resolutions of a manual_review payment. With a transfer that may still land: settled, failed, and replace and
   * cancel_on_chain where the chain can. With a cancel on chain waiting to be final: failed, and cancel_on_chain again
   * (a higher fee). With none: failed, or retry.
   */
  resolve: Resolution[];
  cancel: boolean;
}

/** What the payment's chain can do to a stuck transfer (its adapter's optional methods). */
export interface ChainAbilities {
  replace: boolean;
  cancelOnChain: boolean;
}

/** The payment's live transaction (signed or broadcast, it may still land): its transfer, a cancel of it, or none. */
export type LiveTransaction = AttemptPurpose | null;

export function operatorActions(status: PaymentStatus, chain: ChainAbilities, live: LiveTransaction): OperatorActions {
  const applies: Record<Resolution, boolean> = {
    settled: live === 'transfer',
    failed: true,
    replace: live === 'transfer' && chain.replace,
    retry: live === null,
    cancel_on_chain: live !== null && chain.cancelOnChain,
  };
  return {
    resolve: status === 'manual_review' ? RESOLUTIONS.filter((r) => applies[r]) : [],
    cancel: CANCELLABLE_STATUSES.includes(status),
  };
}

/** A transaction on the payment's nonce (its live one, or one it replaced) and what the chain says about it. */
export interface SeenTransaction {
  purpose: AttemptPurpose;
  verdict: TransferVerdict;
}

export interface Refusal {
  code: Extract<ErrorCode, 'INVALID_STATE' | 'TRANSFER_MAY_STILL_LAND'>;
  reason: string;
  /** `force` overrides it: the operator's outside check knows better than our node. */
  forceable: boolean;
}

/** How a transfer our node does not know can still be proven unable to land, on its chain. */
const PROOF_OF_NO_LANDING: Record<Chain, string> = {
  ethereum: 'an Ethereum transaction never expires: cancel it on chain, and fail it once the cancel is final',
  solana: 'wait until its blockhash has expired (about a minute): the confirmation worker then fails it',
};

/**
 * Why the chain contradicts `resolution`, or null. Pure. `failed` releases funds, so every transaction on the nonce
 * must provably never land (decision 5): `cannot_land`, or a final cancel on chain, whose nonce is then used. A
 * transfer the node does not know may still be held by another node, and sent again it may land. `settled` while the
 * chain reports the transfer can never land would book a payout that never happened, and settling a cancel would book
 * one that did not move. A cancel on chain applies only to a transfer (or cancel) that is not in a block yet.
 */
export function refusalOf(resolution: Resolution, chain: Chain, seen: readonly SeenTransaction[]): Refusal | null {
  for (const { purpose, verdict } of seen) {
    const refusal = refusalOne(resolution, chain, purpose, verdict);
    if (refusal) return refusal;
  }
  return null;
}

function refusalOne(resolution: Resolution, chain: Chain, purpose: AttemptPurpose, verdict: TransferVerdict): Refusal | null {
  const refuse = (code: Refusal['code'], reason: string, forceable: boolean): Refusal => ({ code, reason, forceable });
  const unreachable = 'the chain could not be reached to check that the transfer cannot land';
  switch (resolution) {
    case 'failed':
      if (verdict.kind === 'cannot_land' || (purpose === 'cancel' && verdict.kind === 'final')) return null;
      if (verdict.kind === 'unknown' && !verdict.reachable) return refuse('INVALID_STATE', unreachable, true);
      if (purpose === 'cancel') return refuse('TRANSFER_MAY_STILL_LAND', 'the cancel on chain is not final yet, so the transfer may still land', true);
      if (verdict.kind === 'unknown') {
        const reason = `the node does not know the transfer, but another node may still hold it: ${PROOF_OF_NO_LANDING[chain]}`;
        return refuse('TRANSFER_MAY_STILL_LAND', reason, true);
      }
      return refuse('INVALID_STATE', `the chain reports the transfer ${verdict.kind}; it may be paid out`, true);
    case 'settled':
      if (purpose === 'cancel') {
        const reason = 'a cancel on chain is under way: if the transfer lands instead, the confirmation worker settles the payment';
        return refuse('INVALID_STATE', reason, false);
      }
      if (verdict.kind !== 'cannot_land') return null;
      return refuse('INVALID_STATE', `the chain reports the transfer ${verdict.onChain ? 'failed' : 'expired'}; it was not paid out`, true);
    case 'replace':
      return purpose === 'cancel' ? refuse('INVALID_STATE', 'a cancel on chain is under way: cancel on chain again to raise its fee', false) : null;
    case 'cancel_on_chain':
      if (verdict.kind === 'final' || verdict.kind === 'included') {
        const where = verdict.kind === 'final' ? 'final' : 'in a block';
        const reason = `the chain reports the ${purpose} ${where}: nothing can replace it; the confirmation worker finishes the payment`;
        return refuse('INVALID_STATE', reason, false);
      }
      if (verdict.kind === 'cannot_land') return refuse('INVALID_STATE', 'the chain reports the transfer can no longer land: resolve it as failed', false);
      return verdict.kind === 'unknown' && !verdict.reachable ? refuse('INVALID_STATE', unreachable, false) : null;
    case 'retry':
      return null;
    default: {
      const exhaustive: never = resolution;
      return exhaustive;
    }
  }
}

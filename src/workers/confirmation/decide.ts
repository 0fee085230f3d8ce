// What the confirmation worker does with one broadcast attempt, given what the chain says. Pure.
import type { Chain, FailureReason, TxStatus } from '../../chains/port.js';
import type { PaymentStatus } from '../../domain/payment-intent.js';

export type ConfirmationAction =
  | { kind: 'settle'; feeNative: bigint }
  | { kind: 'fail'; reason: FailureReason; feeNative: bigint; detail: string }
  | { kind: 'pending_confirmation' } // included, not final yet
  | { kind: 'manual_review' } // unconfirmed past the stuck threshold
  | { kind: 'resend' } // the node does not know the transaction: send the same bytes again
  | { kind: 'wait' };

export interface ConfirmationInput {
  chain: Chain;
  intentStatus: PaymentStatus;
  chainStatus: TxStatus;
  broadcastAt: Date;
  now: Date;
  stuckAfterSeconds: number;
}

/** Why a transaction that can provably never land failed, in the terms of its chain (docs/errors.md). */
const EXPIRED_REASON: Record<Chain, FailureReason> = {
  solana: 'blockhash_expired', // its recent blockhash is past lastValidBlockHeight
  ethereum: 'dropped', // no expiry on Ethereum: the node forgot it (or never took it)
};

export function decideConfirmation(input: ConfirmationInput): ConfirmationAction {
  const { chainStatus, intentStatus } = input;
  switch (chainStatus.state) {
    case 'final':
      return { kind: 'settle', feeNative: chainStatus.feeNative };
    case 'failed':
      return { kind: 'fail', reason: chainStatus.reason, feeNative: chainStatus.feeNative, detail: chainStatus.details ?? chainStatus.reason };
    case 'expired':
      return { kind: 'fail', reason: EXPIRED_REASON[input.chain], feeNative: 0n, detail: 'the transaction can no longer land' };
    case 'included':
    case 'pending':
    case 'unknown': {
      if (intentStatus === 'manual_review') return chainStatus.state === 'unknown' ? { kind: 'resend' } : { kind: 'wait' };
      const stuck = input.now.getTime() - input.broadcastAt.getTime() > input.stuckAfterSeconds * 1000;
      if (stuck) return { kind: 'manual_review' };
      if (chainStatus.state === 'unknown') return { kind: 'resend' };
      if (chainStatus.state === 'included' && intentStatus === 'broadcasted') return { kind: 'pending_confirmation' };
      return { kind: 'wait' };
    }
    default: {
      const exhaustive: never = chainStatus;
      return exhaustive;
    }
  }
}

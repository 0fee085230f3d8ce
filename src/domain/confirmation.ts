// What the confirmation worker does with one broadcast attempt, given the chain's verdict on it. Pure.
import type { FailureReason } from './chain.js';
import type { PaymentStatus } from './payment-intent.js';
import type { AttemptPurpose, TransferVerdict } from './transfer-verdict.js';

/** Intent statuses whose broadcast attempt the confirmation worker watches (manual review included: the chain may still decide). */
export const WATCHED: readonly PaymentStatus[] = ['broadcasted', 'pending_confirmation', 'manual_review'];

export type ConfirmationAction =
  | { kind: 'settle'; feeNative: bigint }
  | { kind: 'cancelled'; feeNative: bigint } // an operator's cancel on chain is final: the transfer can never land
  | { kind: 'fail'; reason: FailureReason; feeNative: bigint; detail: string }
  /** An on-chain batch that can never land: not one payment's failure, so each of its payments is tried again alone. */
  | { kind: 'retry_alone'; reason: FailureReason; feeNative: bigint; detail: string }
  | { kind: 'pending_confirmation' } // included, not final yet
  | { kind: 'manual_review' } // unconfirmed past the stuck threshold
  | { kind: 'resend' } // the node does not know the transaction: send the same bytes again
  | { kind: 'wait' };

export interface ConfirmationInput {
  intentStatus: PaymentStatus;
  /** What the attempt's transaction is for: a final cancel fails the payment, a final transfer settles it. */
  purpose: AttemptPurpose;
  /** Payments the attempt's transaction pays: more than one for an on-chain batch. */
  txPayments: number;
  verdict: TransferVerdict;
  broadcastAt: Date;
  now: Date;
  stuckAfterSeconds: number;
}

export function decideConfirmation(input: ConfirmationInput): ConfirmationAction {
  const { verdict, intentStatus } = input;
  switch (verdict.kind) {
    case 'final':
      return input.purpose === 'cancel' ? { kind: 'cancelled', feeNative: verdict.feeNative } : { kind: 'settle', feeNative: verdict.feeNative };
    case 'cannot_land': {
      const failure = { reason: verdict.reason, feeNative: verdict.feeNative, detail: verdict.detail };
      return input.txPayments > 1 ? { kind: 'retry_alone', ...failure } : { kind: 'fail', ...failure };
    }
    case 'included':
    case 'pending':
    case 'unknown': {
      // Bytes the node does not know are sent again (harmless); a node that could not be asked is not.
      const resend = verdict.kind === 'unknown' && verdict.reachable;
      if (intentStatus === 'manual_review') return resend ? { kind: 'resend' } : { kind: 'wait' };
      const stuck = input.now.getTime() - input.broadcastAt.getTime() > input.stuckAfterSeconds * 1000;
      if (stuck) return { kind: 'manual_review' };
      if (resend) return { kind: 'resend' };
      if (verdict.kind === 'included' && intentStatus === 'broadcasted') return { kind: 'pending_confirmation' };
      return { kind: 'wait' };
    }
    default: {
      const exhaustive: never = verdict;
      return exhaustive;
    }
  }
}

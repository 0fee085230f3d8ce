// What an operator may do with a payment in its current status. Pure. The console offers these; the use cases
// (src/core/lifecycle/resolve.ts, cancel.ts) still ask the chain before they act and may refuse.
import type { PaymentStatus } from './payment-intent.js';

/**
 * settled / failed: what an outside check found; replace: re-sign with a higher fee (where the chain allows it);
 * retry: one more execution of a payment whose abandoned execution left nothing on chain (decision 100; refused while
 * a transfer is live).
 */
export type Resolution = 'settled' | 'failed' | 'replace' | 'retry';
export const RESOLUTIONS: readonly Resolution[] = ['settled', 'failed', 'replace', 'retry'];

/** A payment not on chain yet, or between attempts, can be cancelled (its funds are released). */
export const CANCELLABLE_STATUSES: readonly PaymentStatus[] = ['route_selected', 'retrying'];

export interface OperatorActions {
  /**
   * Resolutions of a manual_review payment. With a transfer that may still land: settled, failed, and replace where
   * the chain can re-sign with a higher fee. With none: failed, or retry.
   */
  resolve: Resolution[];
  cancel: boolean;
}

export function operatorActions(status: PaymentStatus, chainCanReplace: boolean, liveTransfer: boolean): OperatorActions {
  const applies: Record<Resolution, boolean> = {
    settled: liveTransfer,
    failed: true,
    replace: liveTransfer && chainCanReplace,
    retry: !liveTransfer,
  };
  return {
    resolve: status === 'manual_review' ? RESOLUTIONS.filter((r) => applies[r]) : [],
    cancel: CANCELLABLE_STATUSES.includes(status),
  };
}

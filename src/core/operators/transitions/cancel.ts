// Cancelling a payment that has not reached the chain: in route_selected, or retrying with no transaction that could
// still land. The reservation is released; a transaction that was mined and reverted still paid its gas, which is
// booked as every other failure on chain books it (decision 64). The spec has no cancellation event, so none is
// sent; the status shows on read. The chain is asked before the intent is locked; the locked re-check starts over when
// the payment moved.
import { adapterOf } from '../../../chains/port.js';
import { RECHECK_ROUNDS_MAX } from '../../../bounds.js';
import type { AuditEntry } from '../audit.js';
import { auditedRound } from './audited-round.js';
import { markApprovalsDecided } from '../../../db/queries/approvals.js';
import { signedOf } from '../../../domain/chain.js';
import { shareOf } from '../../../domain/fee-share.js';
import { readLiveAttempt, markFailed } from '../../../db/queries/attempts.js';
import { readIntent, lockIntents, type PaymentIntentRow } from '../../../db/queries/intents.js';
import { AppError } from '../../../domain/errors.js';
import { CANCELLABLE_STATUSES } from '../../../domain/operator-actions.js';
import { mayStillLand, transferVerdict, type TransferVerdict } from '../../../domain/transfer-verdict.js';
import type { LifecycleDeps } from '../../context.js';
import { CHANGED } from '../../payments/outcomes/changed.js';
import { moveAndTell } from '../../payments/outcomes/events.js';
import { postFee, releaseReservation } from '../../payments/outcomes/outcomes.js';
import type { ResolutionResult } from './resolve.js';

function cancellable(intentId: string, intent: PaymentIntentRow | null): PaymentIntentRow {
  if (!intent) throw new AppError('PAYMENT_INTENT_NOT_FOUND', `payment intent ${intentId} was not found`);
  if (!CANCELLABLE_STATUSES.includes(intent.status)) {
    throw new AppError(
      'INVALID_STATE',
      `payment intent ${intentId} is ${intent.status}; only route_selected or retrying payments can be cancelled`,
    );
  }
  return intent;
}

export async function cancelPayment(deps: LifecycleDeps, intentId: string, audit: AuditEntry): Promise<ResolutionResult> {
  for (let round = 1; round <= RECHECK_ROUNDS_MAX; round++) {
    const seen = cancellable(intentId, await readIntent(deps.pool, intentId));
    const seenLive = await readLiveAttempt(deps.pool, seen.id);
    let verdict: TransferVerdict | null = null;
    if (seenLive) {
      const status = await adapterOf(deps.adapters, seen.selected_chain).getStatuses([signedOf(seenLive)]).then(([status]) => status!, () => null);
      verdict = transferVerdict(status, { chain: seen.selected_chain, share: shareOf(seenLive) });
      if (mayStillLand(verdict)) {
        throw new AppError('INVALID_STATE', `payment intent ${intentId} has a transaction that may still land (${seenLive.tx_id})`);
      }
    }
    const result = await auditedRound(deps, audit, async (tx) => {
      const now = deps.clock.now();
      const intent = cancellable(intentId, (await lockIntents(tx, [intentId])).get(intentId) ?? null);
      const live = await readLiveAttempt(tx, intent.id, { forUpdate: true });
      if ((live?.id ?? null) !== (seenLive?.id ?? null)) return CHANGED;
      if (live) {
        // Only 'cannot_land' reaches here. Mined and reverted (onChain): the chain's reason and the fee it charged, as
        // failOnChain records them; expired or refused for good: nothing was spent.
        const reverted = verdict?.kind === 'cannot_land' && verdict.onChain ? verdict : null;
        if (reverted) {
          await markFailed(tx, live.id, reverted.reason, `${reverted.detail}; payment cancelled by an operator`, reverted.feeNative);
          await postFee(tx, deps.config.chains, intent, reverted.feeNative, now);
        } else await markFailed(tx, live.id, 'operator_failed', 'payment cancelled by an operator');
      }
      await moveAndTell(tx, [{ intent, to: 'cancelled', reason: 'operator' }], now);
      // A payment that waited for approval no longer does (decision 10); a no-op for any other.
      await markApprovalsDecided(tx, [intent.id], { status: 'cancelled', at: now, via: null, reason: 'payment cancelled' });
      await releaseReservation(tx, intent, now);
      return { payment_intent_id: intent.id, status: intent.status, tx_id: live?.tx_id ?? null };
    });
    if (result !== CHANGED) return result;
  }
  throw new AppError('INVALID_STATE', `payment intent ${intentId} changed while it was being cancelled; try again`);
}

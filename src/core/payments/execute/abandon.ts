// Executions given up on: pg-boss set the job aside (a crash or an outage outlasted every retry), or its runs kept
// dying holding the execution lease (decision 57). The intent must still reach a state someone acts on, and funds are
// never released for a payment the chain may pay or was never asked to pay (decision 58):
//   - a transfer that may still land: manual review, with the transfer marked broadcasted so the confirmation worker
//     watches it (it settles the intent when final, fails it when the chain proves it cannot land, re-sends bytes the
//     chain does not know);
//   - a transfer mined and failed (reverted): failed, with the chain's reason and its fee (decision 61); a member of a
//     reverted on-chain batch books its share and is retried alone instead (decision 176);
//   - nothing on chain (no transfer signed, or one the chain proves can never land): manual review, funds still
//     reserved. A crash loop is our fault, not the payment's: an operator retries it (`intents resolve --retry`) or
//     fails it (`--failed`), the merchant is told by payment.manual_review.
// The chain is asked before any lock is taken; the locked re-check starts over when the payment moved meanwhile.
import { adapterOf } from '../../../chains/port.js';
import { RECHECK_ROUNDS_MAX } from '../../../bounds.js';
import { withTransaction } from '../../../db/pool.js';
import { signedOf } from '../../../domain/chain.js';
import { shareOf } from '../../../domain/fee-share.js';
import { readLiveAttempt, markBroadcasted, markFailed } from '../../../db/queries/attempts.js';
import { readIntent, lockIntents } from '../../../db/queries/intents.js';
import { readExecutionFacts } from '../../../db/queries/leases.js';
import type { PaymentStatus } from '../../../domain/payment-intent.js';
import { mayStillLand, transferVerdict, type TransferVerdict } from '../../../domain/transfer-verdict.js';
import type { ExecutionJob } from '../../../jobs/queue.js';
import type { LifecycleDeps } from '../../context.js';
import { CHANGED } from '../outcomes/changed.js';
import { moveAndTell } from '../outcomes/events.js';
import { failOnChain } from '../outcomes/outcomes.js';

/** Statuses an abandoned execution can leave an intent in. */
const UNFINISHED: readonly PaymentStatus[] = ['route_selected', 'retrying', 'broadcasting'];

/** The transition reason of every abandonment that ends in manual review. */
export const ABANDONED_REASON = 'execution_abandoned';

export async function handleDeadExecution(deps: LifecycleDeps, job: ExecutionJob, options: { runId?: string } = {}): Promise<void> {
  for (let round = 1; round <= RECHECK_ROUNDS_MAX; round++) {
    // 1. Load, without locks.
    const seen = await readIntent(deps.pool, job.payment_intent_id);
    if (!seen || !UNFINISHED.includes(seen.status)) return;
    const seenLive = await readLiveAttempt(deps.pool, seen.id);
    // 2. Ask the chain about the live transfer, if any. A node that cannot be asked leaves it possible.
    const verdict: TransferVerdict | null = seenLive
      ? transferVerdict(await adapterOf(deps.adapters, seen.selected_chain).getStatuses([signedOf(seenLive)]).then(([status]) => status!, () => null), {
          chain: seen.selected_chain,
          share: shareOf(seenLive),
        })
      : null;
    // 3. Lock, re-check, decide, persist.
    const outcome = await withTransaction(deps.pool, async (tx) => {
      const now = deps.clock.now();
      const intent = (await lockIntents(tx, [job.payment_intent_id])).get(job.payment_intent_id);
      if (!intent || !UNFINISHED.includes(intent.status)) return 'done';
      // A job of an earlier attempt (its run crashed after the outcome was recorded): the current attempt is alive.
      const facts = (await readExecutionFacts(tx, [intent.id])).get(intent.id)!;
      if (1 + facts.retries !== job.attempt) return 'done';
      // A live run of this attempt (another worker resumed it) finishes the work; if it dies, the sweeper comes back.
      const lease = facts.lease;
      if (lease && lease.attempt === job.attempt && !lease.expired && lease.owner !== options.runId && intent.status === 'broadcasting') {
        deps.log.warn({ payment_intent_id: intent.id }, 'abandoned execution is running again elsewhere; left to that run');
        return 'done';
      }
      const live = await readLiveAttempt(tx, intent.id, { forUpdate: true });
      if ((live?.id ?? null) !== (seenLive?.id ?? null)) return CHANGED;
      if (live && verdict && mayStillLand(verdict)) {
        // It may land: never release funds that could be paid out. An operator decides, or the chain does.
        await markBroadcasted(tx, [live.id], now);
        if (intent.status !== 'broadcasting') await moveAndTell(tx, [{ intent, to: 'broadcasting' }], now);
        await moveAndTell(tx, [{ intent, to: 'manual_review', type: 'payment.manual_review', extra: { tx_id: live.tx_id }, reason: ABANDONED_REASON }], now);
        deps.log.error({ payment_intent_id: intent.id }, 'execution abandoned with a live transaction: manual review');
        return 'done';
      }
      if (live && verdict?.kind === 'cannot_land' && verdict.onChain) {
        // Mined and reverted: the fee was spent and the chain's reason is the story (decision 61); an on-chain batch's
        // revert is not this payment's failure, so it is retried alone, as every other path does (decision 176).
        const alone = live.tx_payments > 1;
        // A run that lost the send's answer left it retrying; the history says the batch went out before it failed.
        if (alone && intent.status !== 'broadcasting') await moveAndTell(tx, [{ intent, to: 'broadcasting' }], now);
        await failOnChain(tx, deps.config.chains, intent, live.id, verdict, now, alone ? { retryOn: deps.boss } : {});
        deps.log.error({ payment_intent_id: intent.id, reason: verdict.reason, retriedAlone: alone }, 'execution abandoned: the transfer failed on chain');
        return 'done';
      }
      // Nothing of this payment is on chain or can get there: keep the funds reserved and ask an operator.
      if (live) {
        const reason = verdict?.kind === 'cannot_land' ? verdict.reason : 'dropped';
        await markFailed(tx, live.id, reason, 'execution abandoned; the chain reports the transfer can no longer land');
      }
      await moveAndTell(tx, [{ intent, to: 'manual_review', type: 'payment.manual_review', reason: ABANDONED_REASON }], now);
      deps.log.error({ payment_intent_id: intent.id }, 'execution abandoned before anything reached the chain: manual review, funds still reserved');
      return 'done';
    });
    if (outcome !== CHANGED) return;
  }
  throw new Error(`payment ${job.payment_intent_id} kept changing while its abandoned execution was handled`);
}

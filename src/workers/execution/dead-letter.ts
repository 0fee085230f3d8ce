// Execution jobs that pg-boss gave up on (a crash or an outage outlasted every retry) land here. The intent must still
// reach a final state: failed when no transfer can land, manual review when one might. In the second case the
// transfer is marked broadcasted (it may have been sent), so the confirmation worker watches it: it settles the intent
// when the transfer is final, fails it when the chain proves it cannot land, and re-sends the bytes the chain does not
// know.
import { withTransaction } from '../../db/pool.js';
import { liveAttempt, markBroadcasted, markFailed, signedOf } from '../../db/queries/attempts.js';
import { changeStatus, findIntent } from '../../db/queries/intents.js';
import type { ExecutionJob } from '../../jobs/queue.js';
import { emitPaymentEvent, failIntent, failOnChain } from '../outcomes.js';
import type { ExecutionDeps } from './execute.js';

export async function handleDeadExecution(deps: ExecutionDeps, job: ExecutionJob): Promise<void> {
  await withTransaction(deps.pool, async (tx) => {
    const now = deps.clock.now();
    const intent = await findIntent(tx, job.payment_intent_id, { forUpdate: true });
    if (!intent || !['route_selected', 'retrying', 'broadcasting'].includes(intent.status)) return;
    const live = await liveAttempt(tx, intent.id, { forUpdate: true });
    if (live) {
      const status = await deps.adapters[intent.selected_chain].getStatus(signedOf(live)).catch(() => ({ state: 'unknown' as const }));
      if (status.state !== 'expired' && status.state !== 'failed') {
        // It may land: never release funds that could be paid out. An operator decides, or the chain does.
        await markBroadcasted(tx, live.id, now);
        if (intent.status !== 'broadcasting') intent.status = await changeStatus(tx, intent, 'broadcasting', now);
        intent.status = await changeStatus(tx, intent, 'manual_review', now, 'execution_abandoned');
        await emitPaymentEvent(tx, intent, 'payment.manual_review', now, { tx_id: live.tx_id });
        deps.log.error({ payment_intent_id: intent.id }, 'execution abandoned with a live transaction: manual review');
        return;
      }
      if (status.state === 'failed') {
        // Mined and reverted: the fee was spent and the chain's reason is the story (decision 28).
        await failOnChain(tx, intent, live.id, { ...status, detail: status.details ?? status.reason }, now);
        deps.log.error({ payment_intent_id: intent.id, reason: status.reason }, 'execution abandoned: the transfer failed on chain');
        return;
      }
      await markFailed(tx, live.id, 'internal_error', 'execution job abandoned');
    }
    await failIntent(tx, intent, 'internal_error', now);
    deps.log.error({ payment_intent_id: intent.id }, 'execution abandoned: intent failed and funds released');
  });
}

// What the chain said about the transfers earlier runs left, written for a batch in one transaction: a transfer the
// chain has is broadcast (and the run ends), one mined and failed fails its payment with the fee it spent (decision
// 61), one that can never land is over and a new transfer is signed. Each payment is written only if it is still as
// its run left it (recheck.ts); otherwise another run or an operator moved it, and the run starts over.
import type { ItemOutcome } from '../../../db/group-commit.js';
import { markBroadcasted, markFailed, type AttemptRow } from '../../../db/queries/attempts.js';
import type { PaymentIntentRow } from '../../../db/queries/intents.js';
import { isAsLeft, type LiveTransferAction } from '../../../domain/execution.js';
import { lockedStep } from '../locked-step.js';
import { CHANGED } from '../outcomes/changed.js';
import { moveAndTell } from '../outcomes/events.js';
import { failOnChain } from '../outcomes/outcomes.js';
import type { Done } from './claim.js';
import { lockForRecheck } from './recheck.js';
import type { ExecutionDeps, ExecutionRun } from './run.js';

export interface LiveVerdict {
  run: ExecutionRun;
  live: AttemptRow;
  action: Exclude<LiveTransferAction, { kind: 'resend' }>;
}

/** Per item: done, 'sign' (a new transfer is due), or CHANGED (start over). */
export async function recordLiveVerdicts(
  deps: ExecutionDeps,
  items: readonly LiveVerdict[],
): Promise<ItemOutcome<Done | 'sign' | typeof CHANGED>[]> {
  return lockedStep(deps, items, {
    lock: (tx, batch) => lockForRecheck(tx, batch.map((i) => i.run), { lockAttempts: true }),
    async write(tx, batch, locked, now) {
      const sent: { intent: PaymentIntentRow; live: AttemptRow }[] = [];
      const answers: (Done | 'sign' | typeof CHANGED)[] = [];
      for (const [k, { live, action }] of batch.entries()) {
        const { intent, facts } = locked[k]!;
        if (!intent || !isAsLeft(facts, live.id)) {
          answers.push(CHANGED);
        } else if (action.kind === 'sent') {
          sent.push({ intent, live });
          answers.push({ kind: 'done', why: 'earlier send had landed' });
        } else if (action.kind === 'superseded') {
          // It is over, whether or not a successor can be signed now.
          await markFailed(tx, live.id, action.reason, 'superseded: the chain reports it can no longer land');
          answers.push('sign');
        } else {
          await failOnChain(tx, deps.config.chains, intent, live.id, action, now, action.alone ? { retryOn: deps.boss } : {});
          answers.push({ kind: 'done', why: `the transfer failed on chain: ${action.reason}${action.alone ? '; retried alone' : ''}` });
        }
      }
      await markBroadcasted(tx, sent.map((s) => s.live.id), now);
      await moveAndTell(tx, sent.map(({ intent, live }) => ({ intent, to: 'broadcasted', type: 'payment.broadcasted', extra: { tx_id: live.tx_id } })), now);
      return answers;
    },
    onSplit: (error, batch) => deps.log.warn({ err: error, size: batch.length }, 'live transfer batch failed; writing its payments one by one'),
  });
}

// Screening again right before signing: a list can change between the quote and the payment's turn. The recipients of
// the transfers about to be signed are screened with no lock held (the provider, when set, is an HTTP call, asked
// afresh: an `allow` remembered from the quote is not trusted here, decision 183; its silence means SCREENING_FAIL); a payment
// whose recipient is refused fails under its lock, if it is still as its run left it (broadcasting, under this run's
// lease, nothing signed): `failure_reason: screening_hit`, its reservation released, an operator alert and an audit
// record, all in one transaction. Nothing is signed or sent for it.
import type { ItemOutcome } from '../../../db/group-commit.js';
import type { PaymentIntentRow } from '../../../db/queries/intents.js';
import type { Actor } from '../../../domain/actor.js';
import { isAsLeft } from '../../../domain/execution.js';
import type { ScreeningVerdict } from '../../../domain/screening.js';
import { raiseAlert } from '../../operators/alerts.js';
import { appendAudit } from '../../operators/audit.js';
import { lockedStep } from '../locked-step.js';
import { CHANGED } from '../outcomes/changed.js';
import { failIntent } from '../outcomes/outcomes.js';
import type { Done } from './claim.js';
import { lockForRecheck } from './recheck.js';
import type { ExecutionDeps, ExecutionRun } from './run.js';

/** Who fails a screened payment in the audit log: no operator, the service itself. */
export const SCREENING_ACTOR: Actor = { id: 'system:screening', role: null, peer: null };

/** The screening's verdict on each intent's recipient, in order. */
export function screenRecipients(deps: ExecutionDeps, intents: readonly PaymentIntentRow[]): Promise<ScreeningVerdict[]> {
  return deps.screener.screen(
    intents.map((i) => ({ chain: i.selected_chain, address: i.destination_address, amountMicros: i.amount_micros })),
    { fresh: true },
  );
}

export interface Screened {
  run: ExecutionRun;
  intent: PaymentIntentRow;
  verdict: Extract<ScreeningVerdict, { hit: true }>;
}

/** Fails each screened payment still as its run left it; CHANGED where another run or an operator moved it first. */
export async function failScreened(deps: ExecutionDeps, items: readonly Screened[]): Promise<ItemOutcome<Done | typeof CHANGED>[]> {
  return lockedStep(deps, items, {
    lock: (tx, batch) => lockForRecheck(tx, batch.map((s) => s.run), { lockAttempts: false }),
    async write(tx, batch, locked, now) {
      const answers: (Done | typeof CHANGED)[] = batch.map(() => CHANGED);
      for (const [k, { verdict }] of batch.entries()) {
        const { intent, facts } = locked[k]!;
        if (!intent || !isAsLeft(facts, null)) continue;
        await failIntent(tx, intent, 'screening_hit', now);
        const by = verdict.by === 'list' ? `the screening list${verdict.source ? ` (${verdict.source})` : ''}` : 'the screening provider';
        await raiseAlert(
          tx,
          deps,
          { kind: 'screening_hit', chain: intent.selected_chain, message: `payment ${intent.id} failed before signing: its recipient is refused by ${by}` },
          now,
        );
        await appendAudit(
          deps.config,
          tx,
          {
            actor: SCREENING_ACTOR,
            action: 'payment.screening_hit',
            targets: [intent.id],
            details: {
              chain: intent.selected_chain,
              address: intent.destination_address,
              amount_micros: intent.amount_micros,
              by: verdict.by,
              list_source: verdict.source,
            },
          },
          'ok',
          now,
        );
        answers[k] = { kind: 'done', why: 'screening_hit' };
      }
      return answers;
    },
    onSplit: (error, batch) => deps.log.warn({ err: error, size: batch.length }, 'screening failure batch failed; recording its payments one by one'),
  });
}

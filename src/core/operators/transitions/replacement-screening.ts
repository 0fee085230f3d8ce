// An operator's replacement of a stuck transaction signs a new transaction that pays its recipients again (every payment
// of an on-chain batch), so it is screened like a first signing: every recipient, the provider asked afresh (decision
// 184). A hit refuses it (409 REPLACEMENT_SCREENED; the CLI and the admin API record the refusal), unless two
// different operators force it: the first one's force records a request bound to the stuck transaction (409
// SCREENING_OVERRIDE_PENDING), and a different operator's force within SCREENING_OVERRIDE_SECONDS carries the
// replacement out, using the request in the replacement's own transaction (markOverrideUsed) and naming it in its audit record.
import { SCREENING_OVERRIDE_SECONDS } from '../../../bounds.js';
import { addSeconds } from '../../../clock.js';
import { withTransaction } from '../../../db/pool.js';
import type { AttemptRow } from '../../../db/queries/attempts.js';
import type { PaymentIntentRow } from '../../../db/queries/intents.js';
import { upsertOverrideRequest, type ScreeningOverrideRow } from '../../../db/queries/screening-overrides.js';
import { AppError } from '../../../domain/errors.js';
import { isNamedOperator } from '../../../domain/four-eyes.js';
import { newId } from '../../../ids.js';
import type { AuditEntry } from '../audit.js';
import type { AppContext, LifecycleDeps } from '../../context.js';
import { namedOnly, type FourEyesConfig } from './four-eyes.js';

type Deps = Pick<LifecycleDeps, 'pool' | 'clock'> & Pick<AppContext, 'screener'> & { config: FourEyesConfig };

/**
 * Screens every recipient the replacement of `stuck` pays (`paid`, its payments). Returns null when none is refused,
 * or the request of another operator to use when `force` is given and one is open; otherwise throws: the refusal, the
 * request just recorded (waiting for a second operator), or the same operator forcing twice.
 */
export async function clearReplacement(
  deps: Deps,
  stuck: AttemptRow,
  paid: readonly PaymentIntentRow[],
  options: { force: boolean; audit: AuditEntry },
): Promise<ScreeningOverrideRow | null> {
  const verdicts = await deps.screener.screen(
    paid.map((p) => ({ chain: p.selected_chain, address: p.destination_address, amountMicros: p.amount_micros })),
    { fresh: true },
  );
  const screened = paid.flatMap((p, i) => {
    const verdict = verdicts[i]!;
    if (!verdict.hit) return [];
    return [{ payment_intent_id: p.id, chain: p.selected_chain, address: p.destination_address, by: verdict.by, list_source: verdict.source }];
  });
  if (screened.length === 0) return null;
  const refusedBy = screened.map((s) => `${s.payment_intent_id} (${s.by === 'list' ? `the screening list${s.list_source ? `: ${s.list_source}` : ''}` : 'the screening provider'})`);
  const what = `transaction ${stuck.tx_id} pays ${paid.length === 1 ? 'a recipient' : 'recipients'} that sanctions screening refuses: ${refusedBy.join(', ')}`;
  if (!options.force) {
    throw new AppError(
      'REPLACEMENT_SCREENED',
      `refusing to replace: ${what}. A replacement would pay them again; two different operators can force it, each resolving it as replace with force`,
    );
  }
  const actor = options.audit.actor.id;
  // Both pairs of eyes are people's where only named operators count (decision 180).
  if (!isNamedOperator(actor) && (await namedOnly(deps.pool, deps.config))) {
    throw new AppError(
      'NAMED_OPERATOR_REQUIRED',
      `forcing a screened replacement takes two people: ${actor} is not a named operator (operator accounts exist; APPROVALS_ALLOW_BREAK_GLASS=on lets the break-glass token and the CLI force it)`,
    );
  }
  const now = deps.clock.now();
  const id = newId('sov');
  const request = await withTransaction(deps.pool, (tx) =>
    upsertOverrideRequest(
      tx,
      { id, payment_intent_id: stuck.payment_intent_id, chain: stuck.chain, tx_id: stuck.tx_id, screened, requested_by: actor, requested_at: now },
      addSeconds(now, -SCREENING_OVERRIDE_SECONDS),
    ),
  );
  if (request.requested_by !== actor) return request;
  if (request.id !== id) {
    throw new AppError('SELF_APPROVAL', `${actor} already asked to force this replacement; a different operator must force it`);
  }
  throw new AppError(
    'SCREENING_OVERRIDE_PENDING',
    `${what}. Your request to force the replacement is recorded; a different operator must force it within ${SCREENING_OVERRIDE_SECONDS / 60} minutes`,
  );
}

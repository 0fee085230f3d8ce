// Forcing a payment to failed while its transfer may still land releases funds the chain can still take: a four-eyes
// action (decision 181). `intents resolve --failed --force` (and the HTTP resolve with force) only records the request;
// the payment stays in manual_review with its funds reserved or in flight, and shows in GET /admin/approvals. Another
// operator approves it as a held payment is approved (POST /admin/payment_intents/:id/approve, `intents approve`):
// the chain is asked again without a lock, then the payment, its request and its live transfer are locked and
// re-checked; a payment that settled (or moved) meanwhile, a transfer that landed or another live transfer voids the
// request instead of failing anything. A rejection drops the request; the payment stays in manual_review.
import { adapterOf } from '../../../chains/port.js';
import { RECHECK_ROUNDS_MAX } from '../../../bounds.js';
import { withTransaction, type Queryable } from '../../../db/pool.js';
import { signedOf } from '../../../domain/chain.js';
import { shareOf } from '../../../domain/fee-share.js';
import { readLiveAttempt, readReplacedAttempts, type AttemptRow } from '../../../db/queries/attempts.js';
import {
  markForcedFailureDecided,
  insertForcedFailure,
  readPendingForcedFailure,
  markForcedFailureFirstApproval,
  type ForcedFailureRow,
} from '../../../db/queries/forced-failures.js';
import { readIntent, lockIntents, type PaymentIntentRow } from '../../../db/queries/intents.js';
import { AppError } from '../../../domain/errors.js';
import { transferVerdict, type TransferVerdict } from '../../../domain/transfer-verdict.js';
import { newId } from '../../../ids.js';
import { appendAudit } from '../audit.js';
import { CHANGED } from '../../payments/outcomes/changed.js';
import { failFromManualReview } from './fail-review.js';
import { approvalsNeeded } from '../../../domain/four-eyes.js';
import { namedOnly, stepOf, type ApprovalDeps, type ApprovalInput, type ApprovalResult } from './four-eyes.js';

/**
 * Records `requestedBy`'s request to fail `intent` over its live transfer `attempt`, in the resolving transaction. A
 * pending request about the same transfer stands (a repeated request changes nothing); one about an earlier transfer
 * is void.
 */
export async function requestForcedFailure(tx: Queryable, intent: PaymentIntentRow, attempt: AttemptRow | null, requestedBy: string, now: Date): Promise<ForcedFailureRow> {
  const pending = await readPendingForcedFailure(tx, intent.id, { forUpdate: true });
  if (pending && pending.attempt_id === (attempt?.id ?? null)) return pending;
  if (pending) await markForcedFailureDecided(tx, pending.id, { status: 'void', by: null, at: now, reason: 'another transfer is live now' });
  return insertForcedFailure(tx, { id: newId('ff'), payment_intent_id: intent.id, attempt_id: attempt?.id ?? null, requested_by: requestedBy, requested_at: now });
}

export async function hasPendingForcedFailure(db: Queryable, intentId: string): Promise<boolean> {
  return (await readPendingForcedFailure(db, intentId)) !== null;
}

async function verdictOf(deps: Pick<ApprovalDeps, 'adapters'>, attempt: AttemptRow): Promise<TransferVerdict> {
  const status = await adapterOf(deps.adapters, attempt.chain).getStatuses([signedOf(attempt)]).then(([status]) => status!, () => null);
  return transferVerdict(status, { chain: attempt.chain, share: shareOf(attempt) });
}

type Approved = ApprovalResult | { void: string };

export async function approveForcedFailure(deps: ApprovalDeps, intentId: string, input: ApprovalInput): Promise<ApprovalResult> {
  for (let round = 1; round <= RECHECK_ROUNDS_MAX; round++) {
    // 1. Load, without locks.
    const seen = await readIntent(deps.pool, intentId);
    if (!seen) throw new AppError('PAYMENT_INTENT_NOT_FOUND', `payment intent ${intentId} was not found`);
    const seenLive = await readLiveAttempt(deps.pool, intentId);
    const seenReplaced = (await readReplacedAttempts(deps.pool, [intentId])).get(intentId)!;

    // 2. Ask the chain, no lock held: has the transfer landed meanwhile?
    const verdict = seenLive && seen.status === 'manual_review' ? await verdictOf(deps, seenLive) : null;
    const others = seen.status === 'manual_review' ? await Promise.all(seenReplaced.map((a) => verdictOf(deps, a))) : [];
    const onNonce = [
      ...(seenLive && verdict ? [{ purpose: seenLive.purpose, verdict }] : []),
      ...seenReplaced.map((a, i) => ({ purpose: a.purpose, verdict: others[i]! })),
    ];
    const landed = onNonce.find((t) => t.purpose === 'transfer' && (t.verdict.kind === 'final' || t.verdict.kind === 'included'));

    // 3. Lock, re-check, decide, persist.
    const outcome = await withTransaction(deps.pool, async (tx): Promise<Approved | typeof CHANGED> => {
      const now = deps.clock.now();
      const intent = (await lockIntents(tx, [intentId])).get(intentId)!;
      const request = await readPendingForcedFailure(tx, intentId, { forUpdate: true });
      if (!request) throw new AppError('INVALID_STATE', `payment intent ${intentId} has no forced failure waiting for approval`);
      const attempt = await readLiveAttempt(tx, intentId, { forUpdate: true });
      const replaced = (await readReplacedAttempts(tx, [intentId])).get(intentId)!;
      if (intent.status !== seen.status || (attempt?.id ?? null) !== (seenLive?.id ?? null) || replaced.map((a) => a.id).join() !== seenReplaced.map((a) => a.id).join()) {
        return CHANGED;
      }
      // The payment settled (or otherwise moved on), another transfer is live, or the transfer landed: never fail it.
      const stale =
        intent.status !== 'manual_review'
          ? `it is ${intent.status} now`
          : request.attempt_id !== (attempt?.id ?? null)
            ? 'another transfer is live now'
            : landed
              ? `the chain reports its transfer ${landed.verdict.kind}; the confirmation worker settles it`
              : null;
      if (stale) {
        await markForcedFailureDecided(tx, request.id, { status: 'void', by: null, at: now, reason: stale });
        return { void: stale };
      }
      const onlyNamed = await namedOnly(tx, deps.config);
      const required = approvalsNeeded(request.requested_by, deps.config.approvalsRequireSecondOperator, onlyNamed);
      const step = stepOf(input, {
        subject: `the forced failure of ${intentId}`,
        requestedBy: request.requested_by,
        firstApprovedBy: request.first_approved_by,
        required,
        namedOnly: onlyNamed,
      });
      const result = { payment_intent_id: intent.id, approvals_required: required, requested_action: 'force_fail' as const };
      if (step === 'first') {
        await markForcedFailureFirstApproval(tx, request.id, input.audit.actor.id, now);
        await appendAudit(deps.config, tx, { ...input.audit, details: { ...input.audit.details, approval: 'first of two', requested_action: 'force_fail' } }, 'ok', now);
        return { ...result, status: intent.status, approval: 'pending', approvals: 1 };
      }
      await failFromManualReview(tx, deps.config.chains, intent, attempt, verdict, now);
      await markForcedFailureDecided(tx, request.id, { status: 'approved', by: input.audit.actor.id, at: now, reason: input.reason ?? null });
      await appendAudit(deps.config, tx, { ...input.audit, details: { ...input.audit.details, requested_action: 'force_fail' } }, 'ok', now);
      return { ...result, status: intent.status, approval: 'approved', approvals: required };
    });
    if (outcome === CHANGED) continue;
    if ('void' in outcome) throw new AppError('INVALID_STATE', `the forced failure of ${intentId} was dropped: ${outcome.void}`);
    return outcome;
  }
  throw new AppError('INVALID_STATE', `payment intent ${intentId} changed while its forced failure was being approved; try again`);
}

export async function rejectForcedFailure(deps: ApprovalDeps, intentId: string, input: ApprovalInput): Promise<ApprovalResult> {
  return withTransaction(deps.pool, async (tx) => {
    const now = deps.clock.now();
    const intent = (await lockIntents(tx, [intentId])).get(intentId);
    if (!intent) throw new AppError('PAYMENT_INTENT_NOT_FOUND', `payment intent ${intentId} was not found`);
    const request = await readPendingForcedFailure(tx, intentId, { forUpdate: true });
    if (!request) throw new AppError('INVALID_STATE', `payment intent ${intentId} has no forced failure waiting for approval`);
    await markForcedFailureDecided(tx, request.id, { status: 'rejected', by: input.audit.actor.id, at: now, reason: input.reason ?? null });
    await appendAudit(deps.config, tx, { ...input.audit, details: { ...input.audit.details, requested_action: 'force_fail' } }, 'ok', now);
    const required = approvalsNeeded(request.requested_by, deps.config.approvalsRequireSecondOperator, await namedOnly(tx, deps.config));
    return {
      payment_intent_id: intent.id,
      status: intent.status,
      approval: 'rejected',
      approvals: request.first_approved_by === null ? 0 : 1,
      approvals_required: required,
      requested_action: 'force_fail',
    };
  });
}

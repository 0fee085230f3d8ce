// Operator approval of a payment above its merchant's approval threshold (decision 10), or of a withdrawal above
// WITHDRAWAL_APPROVAL_ABOVE_USD (decisions 103, 177). The payment waits in route_selected with its funds reserved and
// no execution job. Approval queues the job in the approving transaction, so it runs exactly once and only after the
// decision commits; rejection fails the payment: the reservation is released and the merchant hears payment.failed
// with failure_reason approval_rejected. Nothing is on chain yet, so neither asks the chain: lock the intent and its
// approval, check, persist, with the audit record. Four-eyes: nobody approves what they requested, where two approvals
// are needed (APPROVALS_REQUIRE_SECOND_OPERATOR) they come from two different operators, and where a second person is
// needed the break-glass token and the CLI are nobody (decision 180). A payment of a payout batch held whole is
// decided with its batch (approve-batch.ts, decision 178).
import { withTransaction, type Queryable } from '../../../db/pool.js';
import {
  markApprovalsDecided,
  readApproval,
  listPendingApprovalRows,
  markFirstApprovals,
  type ApprovalRow,
  type PendingApproval,
} from '../../../db/queries/approvals.js';
import { lockIntents, type PaymentIntentRow } from '../../../db/queries/intents.js';
import { AppError } from '../../../domain/errors.js';
import { enqueueExecutions } from '../../../jobs/queue.js';
import { appendAudit } from '../audit.js';
import type { LifecycleDeps } from '../../context.js';
import { failIntent } from '../../payments/outcomes/outcomes.js';
import { approveForcedFailure, hasPendingForcedFailure, rejectForcedFailure } from './force-fail.js';
import {
  approvalsRequired,
  namedOnly,
  stepOf,
  viaOf,
  type ApprovalDeps,
  type ApprovalInput,
  type ApprovalResult,
  type FourEyesConfig,
} from './four-eyes.js';

export { approvalsRequired, namedOnly, type ApprovalDeps, type ApprovalInput, type ApprovalResult, type FourEyesConfig };

/** Locks the intent and its approval; refuses unless the payment still waits for a decision of its own. */
async function lockWaiting(tx: Queryable, intentId: string): Promise<{ intent: PaymentIntentRow; approval: ApprovalRow }> {
  const intent = (await lockIntents(tx, [intentId])).get(intentId);
  if (!intent) throw new AppError('PAYMENT_INTENT_NOT_FOUND', `payment intent ${intentId} was not found`);
  const approval = await readApproval(tx, intentId, { forUpdate: true });
  if (!approval) throw new AppError('INVALID_STATE', `payment intent ${intentId} does not need an approval`);
  if (approval.status !== 'pending' || intent.status !== 'route_selected') {
    throw new AppError(
      'INVALID_STATE',
      `payment intent ${intentId} is ${intent.status} and its approval ${approval.status}; only a waiting payment can be approved or rejected`,
    );
  }
  if (approval.payout_batch_id !== null) {
    throw new AppError(
      'INVALID_STATE',
      `payment intent ${intentId} waits with payout batch ${approval.payout_batch_id}, held whole: approve or reject the batch (POST /admin/payout_batches/${approval.payout_batch_id}/approve|reject)`,
    );
  }
  return { intent, approval };
}

/**
 * Approves what waits for `intentId`: its held sending (a payment or withdrawal above its threshold), or a forced
 * failure another operator requested (force-fail.ts, decision 181).
 */
export async function approvePayment(deps: ApprovalDeps, intentId: string, input: ApprovalInput): Promise<ApprovalResult> {
  if (await hasPendingForcedFailure(deps.pool, intentId)) return approveForcedFailure(deps, intentId, input);
  return withTransaction(deps.pool, async (tx) => {
    const { intent, approval } = await lockWaiting(tx, intentId);
    const now = deps.clock.now();
    const actor = input.audit.actor.id;
    const onlyNamed = await namedOnly(tx, deps.config);
    const required = approvalsRequired(approval, deps.config, onlyNamed);
    const step = stepOf(input, {
      subject: intent.id,
      requestedBy: approval.requested_by,
      firstApprovedBy: approval.first_approved_by,
      required,
      namedOnly: onlyNamed,
    });
    const result = { payment_intent_id: intent.id, status: intent.status, approvals_required: required };
    if (step === 'first') {
      await markFirstApprovals(tx, [intent.id], actor, now);
      await appendAudit(deps.config, tx, { ...input.audit, details: { ...input.audit.details, approval: 'first of two' } }, 'ok', now);
      return { ...result, approval: 'pending', approvals: 1 };
    }
    await markApprovalsDecided(tx, [intent.id], { status: 'approved', at: now, via: viaOf(input.audit), reason: input.reason ?? null, by: actor });
    await enqueueExecutions(deps.boss, tx, [{ payment_intent_id: intent.id, attempt: 1 }]);
    await appendAudit(deps.config, tx, input.audit, 'ok', now);
    return { ...result, approval: 'approved', approvals: required };
  });
}

/** Rejects what waits for `intentId`: its held sending (it fails, funds released), or a forced failure (dropped). */
export async function rejectPayment(deps: ApprovalDeps, intentId: string, input: ApprovalInput): Promise<ApprovalResult> {
  if (await hasPendingForcedFailure(deps.pool, intentId)) return rejectForcedFailure(deps, intentId, input);
  return withTransaction(deps.pool, async (tx) => {
    const { intent, approval } = await lockWaiting(tx, intentId);
    const now = deps.clock.now();
    await markApprovalsDecided(tx, [intent.id], { status: 'rejected', at: now, via: viaOf(input.audit), reason: input.reason ?? null, by: input.audit.actor.id });
    await failIntent(tx, intent, 'approval_rejected', now);
    await appendAudit(deps.config, tx, input.audit, 'ok', now);
    const given = approval.first_approved_by === null ? 0 : 1;
    const required = approvalsRequired(approval, deps.config, await namedOnly(tx, deps.config));
    return { payment_intent_id: intent.id, status: intent.status, approval: 'rejected', approvals: given, approvals_required: required };
  });
}

/** Approvals given so far: all of them once approved; while pending (or rejected), the first of two if it was given. */
export function approvalsGiven(approval: Pick<ApprovalRow, 'status' | 'first_approved_by'>, required: number): number {
  if (approval.status === 'approved') return required;
  return approval.first_approved_by === null ? 0 : 1;
}

export interface WaitingApproval extends PendingApproval {
  approvals: number;
  approvals_required: number;
}

/** What waits for an operator, oldest first, with the approvals given and needed ("1 of 2"). */
export async function listPendingApprovals(deps: Pick<LifecycleDeps, 'pool'> & { config: FourEyesConfig }, limit = 100): Promise<WaitingApproval[]> {
  const onlyNamed = await namedOnly(deps.pool, deps.config);
  return (await listPendingApprovalRows(deps.pool, limit)).map((p) => {
    const required = approvalsRequired(p, deps.config, onlyNamed);
    return { ...p, approvals: approvalsGiven({ status: 'pending', first_approved_by: p.first_approved_by }, required), approvals_required: required };
  });
}

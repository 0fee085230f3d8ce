// Operator approval of a payment above its merchant's approval threshold (decision 79). The payment waits in
// route_selected with its funds reserved and no execution job. Approval queues the job in the approving transaction,
// so it runs exactly once and only after the decision commits; rejection fails the payment: the reservation is
// released and the merchant hears payment.failed with failure_reason approval_rejected. Nothing is on chain yet, so
// neither asks the chain: lock the intent and its approval, check, persist.
import { withTransaction, type Queryable } from '../../db/pool.js';
import { decideApproval, findApproval, pendingApprovals, type ApprovalRow, type DecidedVia, type PendingApproval } from '../../db/queries/approvals.js';
import { findIntent, type PaymentIntentRow } from '../../db/queries/intents.js';
import type { PaymentStatus } from '../../domain/payment-intent.js';
import { AppError } from '../../domain/errors.js';
import { enqueueExecution } from '../../jobs/queue.js';
import type { LifecycleDeps } from './deps.js';
import { failIntent } from './outcomes.js';

export interface ApprovalResult {
  payment_intent_id: string;
  status: PaymentStatus;
  approval: ApprovalRow['status'];
}

export interface ApprovalInput {
  via: DecidedVia;
  reason?: string | null;
}

/** Locks the intent and its approval; refuses unless the payment still waits for a decision. */
async function lockWaiting(tx: Queryable, intentId: string): Promise<PaymentIntentRow> {
  const intent = await findIntent(tx, intentId, { forUpdate: true });
  if (!intent) throw new AppError('PAYMENT_INTENT_NOT_FOUND', `payment intent ${intentId} was not found`);
  const approval = await findApproval(tx, intentId, { forUpdate: true });
  if (!approval) throw new AppError('INVALID_STATE', `payment intent ${intentId} does not need an approval`);
  if (approval.status !== 'pending' || intent.status !== 'route_selected') {
    throw new AppError(
      'INVALID_STATE',
      `payment intent ${intentId} is ${intent.status} and its approval ${approval.status}; only a waiting payment can be approved or rejected`,
    );
  }
  return intent;
}

export async function approvePayment(
  deps: Pick<LifecycleDeps, 'pool' | 'boss' | 'clock'>,
  intentId: string,
  input: ApprovalInput,
): Promise<ApprovalResult> {
  return withTransaction(deps.pool, async (tx) => {
    const intent = await lockWaiting(tx, intentId);
    const now = deps.clock.now();
    await decideApproval(tx, intent.id, { status: 'approved', at: now, via: input.via, reason: input.reason ?? null });
    await enqueueExecution(deps.boss, tx, { payment_intent_id: intent.id, attempt: 1 });
    return { payment_intent_id: intent.id, status: intent.status, approval: 'approved' };
  });
}

export async function rejectPayment(deps: Pick<LifecycleDeps, 'pool' | 'clock'>, intentId: string, input: ApprovalInput): Promise<ApprovalResult> {
  return withTransaction(deps.pool, async (tx) => {
    const intent = await lockWaiting(tx, intentId);
    const now = deps.clock.now();
    await decideApproval(tx, intent.id, { status: 'rejected', at: now, via: input.via, reason: input.reason ?? null });
    await failIntent(tx, intent, 'approval_rejected', now);
    return { payment_intent_id: intent.id, status: intent.status, approval: 'rejected' };
  });
}

/** What waits for an operator, oldest first. */
export async function listPendingApprovals(deps: Pick<LifecycleDeps, 'pool'>, limit = 100): Promise<PendingApproval[]> {
  return pendingApprovals(deps.pool, limit);
}

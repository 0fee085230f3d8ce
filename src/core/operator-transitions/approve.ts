// Operator approval of a payment above its merchant's approval threshold (decision 10), or of a withdrawal above
// WITHDRAWAL_APPROVAL_ABOVE_USD (decision 103). The payment waits in route_selected with its funds reserved and no
// execution job. Approval queues the job in the approving transaction, so it runs exactly once and only after the
// decision commits; rejection fails the payment: the reservation is released and the merchant hears payment.failed
// with failure_reason approval_rejected. Nothing is on chain yet, so neither asks the chain: lock the intent and its
// approval, check, persist, with the audit record. Four-eyes: nobody approves what they requested, and where two
// approvals are needed (APPROVALS_REQUIRE_SECOND_OPERATOR) they come from two different operators.
import type { Config } from '../../config.js';
import { withTransaction, type Queryable } from '../../db/pool.js';
import {
  decideApproval,
  findApproval,
  pendingApprovals,
  recordFirstApproval,
  type ApprovalRow,
  type DecidedVia,
  type PendingApproval,
} from '../../db/queries/approvals.js';
import { lockIntents, type PaymentIntentRow } from '../../db/queries/intents.js';
import type { PaymentStatus } from '../../domain/payment-intent.js';
import { AppError } from '../../domain/errors.js';
import { enqueueExecutions } from '../../jobs/queue.js';
import { appendAudit, type AuditEntry } from '../audit.js';
import type { LifecycleDeps } from '../context.js';
import { failIntent } from '../lifecycle/outcomes.js';

export interface ApprovalResult {
  payment_intent_id: string;
  status: PaymentStatus;
  approval: ApprovalRow['status'];
  /** Approvals given so far, and needed. */
  approvals: number;
  approvals_required: number;
}

export interface ApprovalInput {
  reason?: string | null;
  /** Who decides (its actor), recorded with the decision in the same transaction. */
  audit: AuditEntry;
}

type ApprovalDeps = Pick<LifecycleDeps, 'pool' | 'boss' | 'clock'> & { config: Pick<Config, 'approvalsRequireSecondOperator' | 'audit'> };

const viaOf = (entry: AuditEntry): DecidedVia => (entry.actor.id.startsWith('cli:') ? 'cli' : 'admin_api');

/** Approvals a held payment needs: a withdrawal's requester is the first pair of eyes; a merchant's payment has none. */
export function approvalsRequired(intent: Pick<PaymentIntentRow, 'kind'>, config: Pick<Config, 'approvalsRequireSecondOperator'>): number {
  return intent.kind === 'payout' && config.approvalsRequireSecondOperator ? 2 : 1;
}

/** Locks the intent and its approval; refuses unless the payment still waits for a decision. */
async function lockWaiting(tx: Queryable, intentId: string): Promise<{ intent: PaymentIntentRow; approval: ApprovalRow }> {
  const intent = (await lockIntents(tx, [intentId])).get(intentId);
  if (!intent) throw new AppError('PAYMENT_INTENT_NOT_FOUND', `payment intent ${intentId} was not found`);
  const approval = await findApproval(tx, intentId, { forUpdate: true });
  if (!approval) throw new AppError('INVALID_STATE', `payment intent ${intentId} does not need an approval`);
  if (approval.status !== 'pending' || intent.status !== 'route_selected') {
    throw new AppError(
      'INVALID_STATE',
      `payment intent ${intentId} is ${intent.status} and its approval ${approval.status}; only a waiting payment can be approved or rejected`,
    );
  }
  return { intent, approval };
}

export async function approvePayment(deps: ApprovalDeps, intentId: string, input: ApprovalInput): Promise<ApprovalResult> {
  return withTransaction(deps.pool, async (tx) => {
    const { intent, approval } = await lockWaiting(tx, intentId);
    const now = deps.clock.now();
    const actor = input.audit.actor.id;
    const required = approvalsRequired(intent, deps.config);
    if (approval.requested_by === actor) {
      throw new AppError('SELF_APPROVAL', `${actor} requested ${intent.id}; another approver must approve it`);
    }
    if (approval.first_approved_by === actor) {
      throw new AppError('SELF_APPROVAL', `${actor} already gave the first approval of ${intent.id}; a second operator must give the other`);
    }
    const result = { payment_intent_id: intent.id, status: intent.status, approvals_required: required };
    if (required === 2 && approval.first_approved_by === null) {
      await recordFirstApproval(tx, intent.id, actor, now);
      await appendAudit(deps.config, tx, { ...input.audit, details: { ...input.audit.details, approval: 'first of two' } }, 'ok', now);
      return { ...result, approval: 'pending', approvals: 1 };
    }
    await decideApproval(tx, intent.id, { status: 'approved', at: now, via: viaOf(input.audit), reason: input.reason ?? null, by: actor });
    await enqueueExecutions(deps.boss, tx, [{ payment_intent_id: intent.id, attempt: 1 }]);
    await appendAudit(deps.config, tx, input.audit, 'ok', now);
    return { ...result, approval: 'approved', approvals: required };
  });
}

export async function rejectPayment(deps: ApprovalDeps, intentId: string, input: ApprovalInput): Promise<ApprovalResult> {
  return withTransaction(deps.pool, async (tx) => {
    const { intent, approval } = await lockWaiting(tx, intentId);
    const now = deps.clock.now();
    await decideApproval(tx, intent.id, { status: 'rejected', at: now, via: viaOf(input.audit), reason: input.reason ?? null, by: input.audit.actor.id });
    await failIntent(tx, intent, 'approval_rejected', now);
    await appendAudit(deps.config, tx, input.audit, 'ok', now);
    const given = approval.first_approved_by === null ? 0 : 1;
    return { payment_intent_id: intent.id, status: intent.status, approval: 'rejected', approvals: given, approvals_required: approvalsRequired(intent, deps.config) };
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
export async function listPendingApprovals(
  deps: Pick<LifecycleDeps, 'pool'> & { config: Pick<Config, 'approvalsRequireSecondOperator'> },
  limit = 100,
): Promise<WaitingApproval[]> {
  return (await pendingApprovals(deps.pool, limit)).map((p) => {
    const required = approvalsRequired(p, deps.config);
    return { ...p, approvals: approvalsGiven({ status: 'pending', first_approved_by: p.first_approved_by }, required), approvals_required: required };
  });
}

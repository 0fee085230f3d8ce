// A payout batch held whole (decision 178) is decided once, for every payment in it that still waits: approval queues
// all their executions in the approving transaction, rejection fails them all (approval_rejected, funds released,
// payment.failed each). Four-eyes exactly as for a payment held by its merchant's threshold (approve.ts): the batch
// has no requester; two approvals by two different operators with APPROVALS_REQUIRE_SECOND_OPERATOR, and the
// break-glass token and the CLI are nobody where a second person is needed (decision 180). Nothing is on chain yet,
// so neither asks the chain: lock the payments (id order) and their approvals, check, persist, with the audit record.
import type pg from 'pg';
import { withTransaction } from '../../../db/pool.js';
import { markApprovalsDecided, listPendingApprovalsOfBatch, markFirstApprovals, type ApprovalRow } from '../../../db/queries/approvals.js';
import { lockIntents, type PaymentIntentRow } from '../../../db/queries/intents.js';
import { readPayoutBatch } from '../../../db/queries/payout-batches.js';
import { AppError } from '../../../domain/errors.js';
import { enqueueExecutions } from '../../../jobs/queue.js';
import { appendAudit } from '../audit.js';
import { failIntent } from '../../payments/outcomes/outcomes.js';
import { approvalsRequired, namedOnly, stepOf, viaOf, type ApprovalDeps, type ApprovalInput } from './four-eyes.js';

export interface BatchApprovalResult {
  payout_batch_id: string;
  approval: 'pending' | 'approved' | 'rejected';
  approvals: number;
  approvals_required: number;
  /** The payments the decision moved (those of the batch still waiting). */
  payments: number;
}

/** Locks the batch's waiting payments and their approvals; refuses an unknown batch, or one with nothing waiting. */
async function lockHeldBatch(tx: pg.PoolClient, batchId: string): Promise<{ intents: PaymentIntentRow[]; approvals: ApprovalRow[] }> {
  if (!(await readPayoutBatch(tx, batchId))) throw new AppError('PAYOUT_BATCH_NOT_FOUND', `payout batch ${batchId} was not found`);
  // Intents first, in id order, then their approvals, as approvePayment and cancelPayment lock them.
  const seen = await listPendingApprovalsOfBatch(tx, batchId);
  const locked = await lockIntents(
    tx,
    seen.map((a) => a.payment_intent_id),
  );
  const approvals = (await listPendingApprovalsOfBatch(tx, batchId, { forUpdate: true })).filter((a) => locked.get(a.payment_intent_id)?.status === 'route_selected');
  if (approvals.length === 0) throw new AppError('INVALID_STATE', `payout batch ${batchId} has no payment waiting for approval`);
  return { intents: approvals.map((a) => locked.get(a.payment_intent_id)!), approvals };
}

export async function approvePayoutBatch(deps: ApprovalDeps, batchId: string, input: ApprovalInput): Promise<BatchApprovalResult> {
  return withTransaction(deps.pool, async (tx) => {
    const { intents, approvals } = await lockHeldBatch(tx, batchId);
    const now = deps.clock.now();
    const actor = input.audit.actor.id;
    const onlyNamed = await namedOnly(tx, deps.config);
    // Only the batch's decisions touch its approvals, so they agree on who gave the first.
    const first = approvals[0]!;
    const required = approvalsRequired(first, deps.config, onlyNamed);
    const step = stepOf(input, { subject: `payout batch ${batchId}`, requestedBy: first.requested_by, firstApprovedBy: first.first_approved_by, required, namedOnly: onlyNamed });
    const ids = intents.map((i) => i.id);
    const audit = { ...input.audit, targets: [...new Set([...input.audit.targets, ...ids])] };
    const result = { payout_batch_id: batchId, approvals_required: required, payments: ids.length };
    if (step === 'first') {
      await markFirstApprovals(tx, ids, actor, now);
      await appendAudit(deps.config, tx, { ...audit, details: { ...audit.details, approval: 'first of two' } }, 'ok', now);
      return { ...result, approval: 'pending', approvals: 1 };
    }
    await markApprovalsDecided(tx, ids, { status: 'approved', at: now, via: viaOf(input.audit), reason: input.reason ?? null, by: actor });
    await enqueueExecutions(
      deps.boss,
      tx,
      ids.map((id) => ({ payment_intent_id: id, attempt: 1 })),
    );
    await appendAudit(deps.config, tx, audit, 'ok', now);
    return { ...result, approval: 'approved', approvals: required };
  });
}

export async function rejectPayoutBatch(deps: ApprovalDeps, batchId: string, input: ApprovalInput): Promise<BatchApprovalResult> {
  return withTransaction(deps.pool, async (tx) => {
    const { intents, approvals } = await lockHeldBatch(tx, batchId);
    const now = deps.clock.now();
    const ids = intents.map((i) => i.id);
    await markApprovalsDecided(tx, ids, { status: 'rejected', at: now, via: viaOf(input.audit), reason: input.reason ?? null, by: input.audit.actor.id });
    for (const intent of intents) await failIntent(tx, intent, 'approval_rejected', now);
    await appendAudit(deps.config, tx, { ...input.audit, targets: [...new Set([...input.audit.targets, ...ids])] }, 'ok', now);
    const first = approvals[0]!;
    return {
      payout_batch_id: batchId,
      approval: 'rejected',
      approvals: first.first_approved_by === null ? 0 : 1,
      approvals_required: approvalsRequired(first, deps.config, await namedOnly(tx, deps.config)),
      payments: ids.length,
    };
  });
}

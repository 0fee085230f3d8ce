// Four-eyes for every held decision (decisions 103, 178, 180, 181): who decides, what the decision needs, and whether
// only named operators count. Shared by the approvals of payments, payout batches and forced failures.
import type { Config } from '../../../config.js';
import type { Queryable } from '../../../db/pool.js';
import type { ApprovalRow, DecidedVia } from '../../../db/queries/approvals.js';
import { readAnyActiveOperator } from '../../../db/queries/operators.js';
import { AppError } from '../../../domain/errors.js';
import { approvalsNeeded, approvalStep, type ApprovalFacts } from '../../../domain/four-eyes.js';
import type { PaymentStatus } from '../../../domain/payment-intent.js';
import type { AuditEntry } from '../audit.js';
import type { LifecycleDeps } from '../../context.js';

export interface ApprovalResult {
  payment_intent_id: string;
  status: PaymentStatus;
  approval: ApprovalRow['status'];
  /** Approvals given so far, and needed. */
  approvals: number;
  approvals_required: number;
  /** What was approved when it is not sending a held payment: a forced failure (decision 181). */
  requested_action?: 'force_fail';
}

export interface ApprovalInput {
  reason?: string | null;
  /** Who decides (its actor), recorded with the decision in the same transaction. */
  audit: AuditEntry;
}

export type FourEyesConfig = Pick<Config, 'approvalsRequireSecondOperator' | 'approvalsAllowBreakGlass' | 'production'>;

/** A forced failure's approval asks the chain again and books the failure (its fee in the chain's currency). */
export type ApprovalDeps = Pick<LifecycleDeps, 'pool' | 'boss' | 'clock' | 'adapters'> & { config: FourEyesConfig & Pick<Config, 'chains' | 'audit'> };

export const viaOf = (entry: AuditEntry): DecidedVia => (entry.actor.id.startsWith('cli:') ? 'cli' : 'admin_api');

/**
 * Whether only named operators count as a person (decision 180): in production, while an operator account can sign
 * in, unless APPROVALS_ALLOW_BREAK_GLASS is on.
 */
export async function namedOnly(db: Queryable, config: FourEyesConfig): Promise<boolean> {
  return config.production && !config.approvalsAllowBreakGlass && (await readAnyActiveOperator(db));
}

/** Approvals a held payment needs: a withdrawal's requester is the first pair of eyes; a merchant's payment has none. */
export function approvalsRequired(approval: Pick<ApprovalRow, 'requested_by'>, config: FourEyesConfig, onlyNamed: boolean): number {
  return approvalsNeeded(approval.requested_by, config.approvalsRequireSecondOperator, onlyNamed);
}

/** The four-eyes step of `input`'s actor, refused as an AppError. */
export function stepOf(input: ApprovalInput, facts: ApprovalFacts): 'first' | 'final' {
  const step = approvalStep(input.audit.actor.id, facts);
  if (step.kind === 'refuse') throw new AppError(step.code, step.message);
  return step.kind;
}


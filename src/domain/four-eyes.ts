// Four-eyes (decisions 103, 177-181): when a movement of funds waits for a second pair of eyes, and whose eyes count.
// Pure: the facts (amounts already moved without approval, who asked, whether operator accounts exist) come in.

/**
 * A withdrawal waits for a second operator when it, with the withdrawals that left without one within the rolling
 * window (every operator, every chain), would pass the threshold (decision 177): splitting cannot beat it.
 */
export function withdrawalNeedsApproval(thresholdMicros: bigint | null, amountMicros: bigint, leftWithoutApprovalMicros: bigint): boolean {
  return thresholdMicros !== null && leftWithoutApprovalMicros + amountMicros > thresholdMicros;
}

/** A named operator (op_...): a person. The break-glass token, the CLI and development callers are not (decision 180). */
export function isNamedOperator(actorId: string): boolean {
  return actorId.startsWith('op_');
}

/**
 * Approvals a held action needs. A merchant's payment has no requester: one approval, or two with
 * APPROVALS_REQUIRE_SECOND_OPERATOR. An operator's request (a withdrawal, a forced failure) is its requester's first
 * pair of eyes and needs one more; but where only named operators count (`namedOnly`), a request by the break-glass
 * token or the CLI is nobody's eyes, and needs two named approvers.
 */
export function approvalsNeeded(requestedBy: string | null, requireSecondOperator: boolean, namedOnly: boolean): number {
  if (requestedBy === null) return requireSecondOperator ? 2 : 1;
  return namedOnly && !isNamedOperator(requestedBy) ? 2 : 1;
}

export interface ApprovalFacts {
  /** What is approved, for messages: `payment intent pi_...`, `payout batch pob_...`. */
  subject: string;
  requestedBy: string | null;
  firstApprovedBy: string | null;
  required: number;
  /** Production, operator accounts exist and APPROVALS_ALLOW_BREAK_GLASS is off: only named operators count. */
  namedOnly: boolean;
}

export type ApprovalStep =
  | { kind: 'refuse'; code: 'SELF_APPROVAL' | 'NAMED_OPERATOR_REQUIRED'; message: string }
  /** The first of two approvals: recorded, nothing moves yet. */
  | { kind: 'first' }
  /** The approval that decides. */
  | { kind: 'final' };

/**
 * What `actor`'s approval does. Nobody approves what they requested, nor gives both of two approvals; and where the
 * decision takes two people (an operator's request, or two approvals), the break-glass token and the CLI count as
 * nobody while only named operators count (decision 180).
 */
export function approvalStep(actor: string, facts: ApprovalFacts): ApprovalStep {
  if (facts.requestedBy === actor) {
    return { kind: 'refuse', code: 'SELF_APPROVAL', message: `${actor} requested ${facts.subject}; another approver must approve it` };
  }
  if (facts.firstApprovedBy === actor) {
    return { kind: 'refuse', code: 'SELF_APPROVAL', message: `${actor} already gave the first approval of ${facts.subject}; a second operator must give the other` };
  }
  const fourEyes = facts.requestedBy !== null || facts.required > 1;
  if (fourEyes && facts.namedOnly && !isNamedOperator(actor)) {
    return {
      kind: 'refuse',
      code: 'NAMED_OPERATOR_REQUIRED',
      message: `${facts.subject} needs a second person: ${actor} is not a named operator (operator accounts exist; APPROVALS_ALLOW_BREAK_GLASS=on lets the break-glass token and the CLI approve)`,
    };
  }
  return facts.required === 2 && facts.firstApprovedBy === null ? { kind: 'first' } : { kind: 'final' };
}

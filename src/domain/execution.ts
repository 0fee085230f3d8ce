// What an execution run decides at each step, from what the step read under its locks (or from the chain). Pure: the
// steps in src/core/payments/execute read, call these, and write.
import type { FailureReason } from './chain.js';
import type { PaymentStatus } from './payment-intent.js';
import { attemptOf, hasAttemptsLeft } from './execution-retry.js';
import { hasReachedChain, type TransferVerdict } from './transfer-verdict.js';

/** The payment's execution lease as a claim reads it: which run holds it, for which attempt, and whether it ran out. */
export interface LeaseFacts {
  owner: string;
  attempt: number;
  /** Runs of this attempt that died holding it. */
  takeovers: number;
  expired: boolean;
}

/** What a claim reads about a payment under its lock (null intent: no such payment). */
export interface ClaimFacts {
  status: PaymentStatus | null;
  /** Times it went to retrying: the attempt the payment is at is one more. */
  retries: number;
  awaitsApproval: boolean;
  lease: LeaseFacts | null;
  /** The status of the transfer an earlier run of this attempt left, if any. */
  liveStatus: 'signed' | 'broadcasted' | null;
}

export type ClaimDecision =
  | { kind: 'done'; why: string }
  /**
   * The run takes the lease (counting `takeovers`) and the payment: to broadcasting unless it is there already, and on
   * to broadcasted at once when an earlier run's transfer was already sent (`alreadyBroadcast`: the run ends there).
   */
  | { kind: 'claim'; attempt: number; takeovers: number; toBroadcasting: boolean; alreadyBroadcast: boolean };

/**
 * Whether run `runId` of job attempt `jobAttempt` takes the payment. The attempt number comes from the payment's history,
 * not from the job: a job whose run crashed after its outcome committed is re-run by pg-boss while the next attempt's
 * job already waits, and that stale run must do nothing.
 */
export function decideClaim(facts: ClaimFacts, jobAttempt: number, runId: string): ClaimDecision {
  if (facts.status === null) return { kind: 'done', why: 'unknown intent' };
  const attempt = attemptOf(facts.retries);
  if (jobAttempt !== attempt) return { kind: 'done', why: `job of attempt ${jobAttempt}; the intent is at attempt ${attempt}` };
  // Spec: proceed only while the intent still waits for execution (or is being retried, or a crashed run left it).
  const { status } = facts;
  if (status !== 'route_selected' && status !== 'retrying' && status !== 'broadcasting') return { kind: 'done', why: `intent is ${status}` };
  // Only an approval queues this payment's job; a stray one must not send it (decision 10).
  if (status === 'route_selected' && facts.awaitsApproval) return { kind: 'done', why: 'the payment waits for an operator approval' };
  // The lease: only a run of this attempt that is still working ('broadcasting') and alive holds the payment back.
  const lease = facts.lease;
  const current = lease !== null && lease.attempt === attempt && status === 'broadcasting';
  if (current && lease.owner !== runId && !lease.expired) return { kind: 'done', why: 'another run holds the execution lease' };
  // Taking over an expired lease of this attempt counts the run that died holding it; a run that holds the lease (taken
  // at its fetch, or by a sweeper from a run that died before its claim) keeps the count.
  const own = lease !== null && lease.attempt === attempt && lease.owner === runId;
  const takeovers = own ? lease.takeovers : current ? lease.takeovers + 1 : 0;
  return { kind: 'claim', attempt, takeovers, toBroadcasting: status !== 'broadcasting', alreadyBroadcast: facts.liveStatus === 'broadcasted' };
}

/** What a claim leaves behind for the next claim of the same payment in the same batch to read. */
export function factsAfterClaim(facts: ClaimFacts, decision: Extract<ClaimDecision, { kind: 'claim' }>, runId: string): ClaimFacts {
  return {
    ...facts,
    status: decision.alreadyBroadcast ? 'broadcasted' : 'broadcasting',
    lease: { owner: runId, attempt: decision.attempt, takeovers: decision.takeovers, expired: false },
  };
}

/** What a run does with the chain's verdict on the transfer an earlier run left (signed, sent with an unknown outcome). */
export type LiveTransferAction =
  /** The chain has it: the attempt and the payment are broadcast, the run ends. */
  | { kind: 'sent' }
  /** The chain does not know the bytes: the same bytes are sent again. */
  | { kind: 'resend' }
  /**
   * Mined and failed (reverted): the fee is spent, the payment fails and its funds return (decision 61); `alone`: it
   * was an on-chain batch, and the payment is retried in a transaction of its own instead (decision 176).
   */
  | { kind: 'failed_on_chain'; reason: FailureReason; detail: string; feeNative: bigint; alone: boolean }
  /** It can never land and nothing of ours was spent: it is over, and a new transfer is signed. */
  | { kind: 'superseded'; reason: FailureReason };

export function liveTransferAction(verdict: TransferVerdict, previousFailure: FailureReason | null, txPayments: number): LiveTransferAction {
  if (hasReachedChain(verdict)) return { kind: 'sent' };
  if (verdict.kind === 'unknown') return { kind: 'resend' };
  // Its nonce used at final depth by another transaction (nothing of ours mined, nothing spent): it can never land, as
  // after an expiry, and a new transfer is signed on a fresh nonce (decision 35).
  const nonceTaken = verdict.reason === 'nonce_conflict';
  if (verdict.onChain && !nonceTaken) {
    return { kind: 'failed_on_chain', reason: verdict.reason, detail: verdict.detail, feeNative: verdict.feeNative, alone: txPayments > 1 };
  }
  return { kind: 'superseded', reason: nonceTaken ? 'nonce_conflict' : (previousFailure ?? 'dropped') };
}

/** What the run's locked re-check found: the payment, whether the run still holds its lease, and its live transfer. */
export interface RecheckFacts {
  status: PaymentStatus | null;
  holdsLease: boolean;
  liveId: string | null;
  liveStatus: 'signed' | 'broadcasted' | null;
}

/**
 * Whether the payment is as the run left it: still broadcasting, the run still holding its lease (another run took it
 * over when this one was presumed dead: that one decides now), and `liveId` its live transfer, not sent yet.
 */
export function isAsLeft(facts: RecheckFacts, liveId: string | null): boolean {
  if (facts.status !== 'broadcasting' || !facts.holdsLease) return false;
  return facts.liveId === liveId && (facts.liveId === null || facts.liveStatus === 'signed');
}

/** How a send (or the refusal to sign) came out, as the record step sees it. */
export interface SendResult {
  /** The attempt the run sent; null when it could not even sign. */
  attemptId: string | null;
  /** null: sent. */
  error: { reason: FailureReason; outcome: 'rejected' | 'unknown' } | null;
  /** Payments the sent transaction pays: more than one for an on-chain batch. */
  txPayments: number;
}

export type SendRecord =
  /** Another run or an operator moved the payment on: nothing of this run's is recorded. */
  | { kind: 'none' }
  | { kind: 'broadcasted' }
  /** The failure is recorded on the attempt (or as a refusal to sign), and the payment is retried, watched or failed. */
  | { kind: 'failed'; write: 'sign_refusal' | 'attempt_failed' | 'send_error'; then: 'retry' | 'retry_alone' | 'watch' | 'fail' };

/**
 * What the run's send means under the payment's lock. A rejection means these bytes can never land, so the attempt is
 * over; an unknown outcome keeps it live so the next run asks the chain and re-sends the same bytes. Then the payment is
 * retried (at once, when an on-chain batch was refused: its failed batch attempt has it prepared alone from then on),
 * or, out of attempts, watched (the last bytes may still land: never release funds that might be paid out) or failed.
 */
export function recordOfSend(facts: RecheckFacts, send: SendResult, jobAttempt: number, attemptsMax: number): SendRecord {
  if (facts.status !== 'broadcasting' || !facts.holdsLease) return { kind: 'none' };
  // An overlapping run took over the attempt.
  if (send.attemptId !== null && facts.liveId !== send.attemptId) return { kind: 'none' };
  const { error } = send;
  if (error === null) return send.attemptId === null ? { kind: 'none' } : { kind: 'broadcasted' };
  const write = send.attemptId === null ? 'sign_refusal' : error.outcome === 'rejected' ? 'attempt_failed' : 'send_error';
  // An on-chain batch refused whole is not one payment's failure: each of its payments is tried again, whatever its
  // budget, and alone (ExecutionFacts.alone: never in a batch again, so this happens to a payment once at most).
  if (write === 'attempt_failed' && send.txPayments > 1) return { kind: 'failed', write, then: 'retry_alone' };
  if (hasAttemptsLeft(jobAttempt, attemptsMax)) return { kind: 'failed', write, then: 'retry' };
  return { kind: 'failed', write, then: error.outcome === 'unknown' && send.attemptId !== null ? 'watch' : 'fail' };
}

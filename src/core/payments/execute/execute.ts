// Execution of payment intents: sign once, persist before sending, send, record. After a crash or a retry a run
// re-sends the persisted bytes; it signs anew only when the chain proves the old transaction can never land.
//
// The batch the poller fetched is the unit of every step, and it may hold one run (TigerBeetle's state machine). A
// round claims the batch's payments in one transaction (claim.ts); asks the chains about any transfer an earlier run
// left, each payment's own call, with no lock held (chain-calls.ts); writes what they said in one transaction
// (live-verdicts.ts); prepares the new transfers (chain reads, no lock); screens their recipients once more and fails
// the refused ones (screen.ts); and signs the rest in one transaction per chain (sign.ts). A chain is never asked
// under a row lock: a step that writes re-checks, under the locks, what the run decided from (recheck.ts), and a
// payment another run or an operator moved in between starts over in the next round.
// Then the batch's transfers are sent, and how each send came out is recorded in one transaction that also gives the
// leases back (record-sends.ts). Business failures are handled here; a run fails (its job is retried) only on an
// outage or a bug, and then alone.
import { EXECUTION_BATCH_MAX, RECHECK_ROUNDS_MAX } from '../../../bounds.js';
import { ChainError, type PreparedTransfer } from '../../../chains/port.js';
import type { ItemOutcome } from '../../../db/group-commit.js';
import { signedOf } from '../../../domain/chain.js';
import type { AttemptRow } from '../../../db/queries/attempts.js';
import type { PaymentIntentRow } from '../../../db/queries/intents.js';
import { deleteLeases } from '../../../db/queries/leases.js';
import { liveTransferAction } from '../../../domain/execution.js';
import { CHANGED } from '../outcomes/changed.js';
import { askAboutLiveTransfers, prepareTransfers, sendTransfers, type Send } from './chain-calls.js';
import { claimRuns, type Done } from './claim.js';
import { startHeartbeat } from './heartbeat.js';
import { recordLiveVerdicts, type LiveVerdict } from './live-verdicts.js';
import { recordSends, type SendOutcome } from './record-sends.js';
import { intentIdOf, runLog, type ExecutionDeps, type ExecutionRun } from './run.js';
import { failScreened, screenRecipients, type Screened } from './screen.js';
import { HELD, signTransfers, type ToSign } from './sign.js';
import { paymentSpans, type PaymentSpans } from '../payment-traces.js';
import { tracer, type SpanAttributes } from '../../../tracing/tracer.js';

export type { ExecutionDeps, ExecutionRun };

/** Where a run stands after a round. */
type Step =
  | Done
  | { kind: 'send'; attemptId: string; send: Send }
  /** The chain refused to even build the transfer. */
  | { kind: 'unsigned'; error: ChainError }
  /** An outage or a bug: the run's job fails and is retried. */
  | { kind: 'failed'; error: unknown }
  | typeof CHANGED;

/**
 * Runs each execution to its end; the answer of each run says whether its job completed. Every run holds its payment's
 * execution lease from its claim to its end (decision 57): a second run of the same attempt stops at its claim while
 * the lease is alive, and every write of a run checks, under the payment's lock, that the lease is still its own.
 */
export async function executeBatch(deps: ExecutionDeps, runs: readonly ExecutionRun[]): Promise<ItemOutcome<void>[]> {
  if (runs.length > EXECUTION_BATCH_MAX) throw new Error(`an execution batch holds at most ${EXECUTION_BATCH_MAX} runs, not ${runs.length}`);
  // A trace of its own, linked to each payment's; each payment gets a span in its own trace (payment-traces.ts).
  return tracer().inSpan('execution batch', { parent: null, attributes: { 'batch.size': runs.length } }, async (batch) => {
    const spans = await paymentSpans(deps.pool, batch, 'payment.execute', runs.map(intentIdOf));
    try {
      return await executeRuns(deps, runs, spans);
    } finally {
      spans.end();
    }
  });
}

async function executeRuns(deps: ExecutionDeps, runs: readonly ExecutionRun[], spans: PaymentSpans): Promise<ItemOutcome<void>[]> {
  const steps: Step[] = runs.map(() => CHANGED);
  const released = new Set<ExecutionRun>();
  const stopHeartbeat = startHeartbeat(deps, runs);
  try {
    let pending = runs.map((_, i) => i);
    for (let round = 1; pending.length > 0; round++) {
      if (round > RECHECK_ROUNDS_MAX) {
        for (const i of pending) steps[i] = { kind: 'failed', error: new Error(`payment ${intentIdOf(runs[i]!)} kept changing while it was being executed`) };
        break;
      }
      const answers = await roundOf(deps, pending.map((i) => runs[i]!));
      pending.forEach((i, k) => (steps[i] = answers[k]!));
      pending = pending.filter((i) => steps[i] === CHANGED);
    }
    // Send every transfer of the batch, then record how each send came out.
    const sending = runs.flatMap((run, i) => {
      const step = steps[i]!;
      return step !== CHANGED && step.kind === 'send' ? [{ i, run, step }] : [];
    });
    const sendErrors = await sendTransfers(deps, sending.map((s) => s.step.send));
    const outcomes: (SendOutcome & { i: number })[] = sending.map(({ i, run, step }, j) => ({ i, run, attemptId: step.attemptId, error: sendErrors[j]! }));
    runs.forEach((run, i) => {
      const step = steps[i]!;
      if (step !== CHANGED && step.kind === 'unsigned') outcomes.push({ i, run, attemptId: null, error: step.error });
    });
    const recorded = await recordSends(deps, outcomes);
    recorded.forEach((result, j) => {
      const { i, run, attemptId, error } = outcomes[j]!;
      if (!result.ok) steps[i] = { kind: 'failed', error: result.error };
      else {
        released.add(run);
        logOutcome(deps, run, attemptId, error, steps[i]!);
        spans.set(intentIdOf(run), spanOutcome(attemptId, error, steps[i]!));
      }
    });
  } finally {
    stopHeartbeat();
    const unreleased = runs.filter((run) => !released.has(run));
    await deleteLeases(deps.pool, unreleased.map((run) => ({ intentId: intentIdOf(run), owner: run.runId }))).catch((error: unknown) =>
      deps.log.warn({ err: error, payment_intent_ids: unreleased.map(intentIdOf) }, 'execution lease release failed; it runs out instead'),
    );
  }
  return runs.map((run, i): ItemOutcome<void> => {
    const step = steps[i]!;
    if (step !== CHANGED && step.kind === 'failed') {
      runLog(deps, run).warn({ err: step.error }, 'execution: run failed; its job is retried');
      spans.fail(intentIdOf(run), step.error);
      return { ok: false, error: step.error };
    }
    if (step !== CHANGED && step.kind === 'done') {
      runLog(deps, run).debug({ why: step.why }, 'execution: nothing to do');
      spans.set(intentIdOf(run), { 'execution.outcome': 'nothing_to_do' });
    }
    return { ok: true, value: undefined };
  });
}

/** One round: claim, ask the chains about the transfers earlier runs left and write what they said, then prepare and sign. */
async function roundOf(deps: ExecutionDeps, runs: readonly ExecutionRun[]): Promise<Step[]> {
  const steps: Step[] = runs.map(() => CHANGED);
  // `alone`: prepared in a transaction of its own, since an on-chain batch that paid it could not land (decision 176).
  const claimed: { k: number; intent: PaymentIntentRow; alone: boolean }[] = [];
  const withLive: { k: number; intent: PaymentIntentRow; live: AttemptRow; alone: boolean }[] = [];
  (await claimRuns(deps, runs)).forEach((claim, k) => {
    if (!claim.ok) steps[k] = { kind: 'failed', error: claim.error };
    else if (claim.value.kind === 'done') steps[k] = claim.value;
    else if (claim.value.live === null) claimed.push({ k, intent: claim.value.intent, alone: claim.value.alone });
    else withLive.push({ k, intent: claim.value.intent, live: claim.value.live, alone: claim.value.alone });
  });

  const verdicts = await askAboutLiveTransfers(deps, withLive);
  const toWrite: (LiveVerdict & { k: number; intent: PaymentIntentRow; alone: boolean })[] = [];
  withLive.forEach(({ k, intent, live, alone }, j) => {
    const verdict = verdicts[j]!;
    const action = verdict.ok ? liveTransferAction(verdict.value, live.failure_reason, live.tx_payments) : null;
    if (!verdict.ok) steps[k] = { kind: 'failed', error: verdict.error };
    else if (action?.kind === 'resend') steps[k] = { kind: 'send', attemptId: live.id, send: { intent, transfer: signedOf(live), resend: true } };
    else if (action) toWrite.push({ k, intent, run: runs[k]!, live, action, alone });
  });
  (await recordLiveVerdicts(deps, toWrite)).forEach((written, j) => {
    const { k, intent, live, alone } = toWrite[j]!;
    if (!written.ok) steps[k] = { kind: 'failed', error: written.error };
    // A transfer that can never land is over; when it was an on-chain batch, its successor goes alone.
    else if (written.value === 'sign') claimed.push({ k, intent, alone: alone || live.tx_payments > 1 });
    else steps[k] = written.value;
  });

  const prepared: (ToSign & { k: number })[] = [];
  (await prepareTransfers(deps, claimed)).forEach((outcome, j) => {
    const { k, intent } = claimed[j]!;
    if (!outcome.ok) steps[k] = { kind: 'failed', error: outcome.error };
    else if (outcome.value instanceof ChainError) steps[k] = { kind: 'unsigned', error: outcome.value };
    else prepared.push({ k, run: runs[k]!, intent, prepared: outcome.value });
  });

  // Screened once more right before signing (screen.ts): a refused recipient fails its payment, nothing is signed. The
  // others of an on-chain batch that paid it start over in the next round, prepared without it.
  const screened: (Screened & { k: number })[] = [];
  const refusedTransactions = new Set<PreparedTransfer>();
  (await screenRecipients(deps, prepared.map((p) => p.intent))).forEach((verdict, j) => {
    const item = prepared[j]!;
    if (!verdict.hit) return;
    screened.push({ k: item.k, run: item.run, intent: item.intent, verdict });
    refusedTransactions.add(item.prepared);
  });
  const toSign = prepared.filter((p) => !refusedTransactions.has(p.prepared));
  (await failScreened(deps, screened)).forEach((failed, j) => {
    const { k } = screened[j]!;
    steps[k] = failed.ok ? failed.value : { kind: 'failed', error: failed.error };
  });
  (await signTransfers(deps, toSign)).forEach((signed, j) => {
    const { k } = toSign[j]!;
    if (!signed.ok) steps[k] = { kind: 'failed', error: signed.error };
    else if (signed.value === CHANGED) steps[k] = CHANGED;
    else if (signed.value === HELD) steps[k] = { kind: 'done', why: 'the chain\u2019s signing is held; the job comes back later' };
    else {
      const { intent, attemptId, transfer } = signed.value;
      steps[k] = { kind: 'send', attemptId, send: { intent, transfer, resend: false } };
    }
  });
  return steps;
}

function logOutcome(deps: ExecutionDeps, run: ExecutionRun, attemptId: string | null, error: ChainError | null, step: Step): void {
  const log = runLog(deps, run);
  if (attemptId === null && error) log.warn({ reason: error.reason, err: error.shortMessage }, 'execution: could not sign');
  else if (error) log.warn({ reason: error.reason, outcome: error.outcome, err: error.shortMessage }, 'execution: broadcast failed');
  else if (step !== CHANGED && step.kind === 'send') log.info({ tx_id: step.send.transfer.txId }, 'execution: broadcasted');
}

/** How a run's send came out, for its payment's span: never the transfer's bytes, id or signature. */
function spanOutcome(attemptId: string | null, error: ChainError | null, step: Step): SpanAttributes {
  const send = step !== CHANGED && step.kind === 'send' ? step.send : null;
  const chain: SpanAttributes = { 'stableroute.chain': send?.intent.selected_chain, 'execution.resend': send?.resend, 'attempt.id': attemptId ?? undefined };
  if (attemptId === null && error) return { 'execution.outcome': 'unsigned', 'error.type': error.reason };
  if (error) return { ...chain, 'execution.outcome': 'broadcast_failed', 'error.type': error.reason };
  return { ...chain, 'execution.outcome': 'broadcasted' };
}

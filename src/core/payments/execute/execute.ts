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
 * What becomes of the lease of a run that did not finish (it failed, or an exception left the batch): `release`, for
 * a run of a pg-boss job, whose retry takes the payment up again; `run_out`, for a run with no job of its own (the
 * sweeper's), whose expired lease is all that brings the payment back to a sweep (decision 240).
 */
export type UnfinishedLease = 'release' | 'run_out';

/**
 * Runs each execution to its end; the answer of each run says whether its job completed. Every run holds its payment's
 * execution lease from its claim to its end (decision 57): a second run of the same attempt stops at its claim while
 * the lease is alive, and every write of a run checks, under the payment's lock, that the lease is still its own.
 */
export async function executeBatch(deps: ExecutionDeps, runs: readonly ExecutionRun[], unfinished: UnfinishedLease = 'release'): Promise<ItemOutcome<void>[]> {
  if (runs.length > EXECUTION_BATCH_MAX) throw new Error(`an execution batch holds at most ${EXECUTION_BATCH_MAX} runs, not ${runs.length}`);
  // A trace of its own, linked to each payment's; each payment gets a span in its own trace (payment-traces.ts).
  return tracer().inSpan('execution batch', { parent: null, attributes: { 'batch.size': runs.length } }, async (batch) => {
    const spans = await paymentSpans(deps.pool, batch, 'payment.execute', runs.map(intentIdOf));
    try {
      return await executeRuns(deps, runs, spans, unfinished);
    } finally {
      spans.end();
    }
  });
}

/** One run through the batch: where it stands after its last round, and whether its lease went back with its outcome. */
interface RunState {
  run: ExecutionRun;
  step: Step;
  released: boolean;
}

async function executeRuns(deps: ExecutionDeps, runs: readonly ExecutionRun[], spans: PaymentSpans, unfinished: UnfinishedLease): Promise<ItemOutcome<void>[]> {
  const states: RunState[] = runs.map((run) => ({ run, step: CHANGED, released: false }));
  const stopHeartbeat = startHeartbeat(deps, runs);
  try {
    let pending = states;
    for (let round = 1; pending.length > 0; round++) {
      if (round > RECHECK_ROUNDS_MAX) {
        for (const state of pending) state.step = { kind: 'failed', error: new Error(`payment ${intentIdOf(state.run)} kept changing while it was being executed`) };
        break;
      }
      await roundOf(deps, pending);
      pending = pending.filter((state) => state.step === CHANGED);
    }
    // Send every transfer of the batch, then record how each send came out.
    const sending = states.flatMap((state) => (state.step !== CHANGED && state.step.kind === 'send' ? [{ state, step: state.step }] : []));
    const sendErrors = await sendTransfers(deps, sending.map((s) => s.step.send));
    const outcomes: (SendOutcome & { state: RunState })[] = sending.map(({ state, step }, j) => ({ state, run: state.run, attemptId: step.attemptId, error: sendErrors[j]! }));
    for (const state of states) {
      if (state.step !== CHANGED && state.step.kind === 'unsigned') outcomes.push({ state, run: state.run, attemptId: null, error: state.step.error });
    }
    const recorded = await recordSends(deps, outcomes);
    recorded.forEach((result, j) => {
      const { state, attemptId, error } = outcomes[j]!;
      if (!result.ok) state.step = { kind: 'failed', error: result.error };
      else {
        state.released = true;
        logOutcome(deps, state.run, attemptId, error, state.step);
        spans.set(intentIdOf(state.run), spanOutcome(attemptId, error, state.step));
      }
    });
  } finally {
    stopHeartbeat();
    // A run that found nothing to do gives its lease back; one that did not finish keeps it to run out when no job of
    // its own will come back for the payment.
    const finished = (state: RunState) => unfinished === 'release' || (state.step !== CHANGED && state.step.kind === 'done');
    const unreleased = states.flatMap((state) => (state.released || !finished(state) ? [] : [state.run]));
    await deleteLeases(deps.pool, unreleased.map((run) => ({ intentId: intentIdOf(run), owner: run.runId }))).catch((error: unknown) =>
      deps.log.warn({ err: error, payment_intent_ids: unreleased.map(intentIdOf) }, 'execution lease release failed; it runs out instead'),
    );
  }
  return states.map(({ run, step }): ItemOutcome<void> => {
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

/**
 * One round over the runs still to go: claim, ask the chains about the transfers earlier runs left and write what they
 * said, then prepare and sign. Each run's step is where the round left it; CHANGED, it goes again next round.
 */
async function roundOf(deps: ExecutionDeps, states: readonly RunState[]): Promise<void> {
  // `alone`: prepared in a transaction of its own, since an on-chain batch that paid it could not land (decision 176).
  const claimed: { state: RunState; intent: PaymentIntentRow; alone: boolean }[] = [];
  const withLive: { state: RunState; intent: PaymentIntentRow; live: AttemptRow; alone: boolean }[] = [];
  (await claimRuns(deps, states.map((s) => s.run))).forEach((claim, k) => {
    const state = states[k]!;
    if (!claim.ok) state.step = { kind: 'failed', error: claim.error };
    else if (claim.value.kind === 'done') state.step = claim.value;
    else if (claim.value.live === null) claimed.push({ state, intent: claim.value.intent, alone: claim.value.alone });
    else withLive.push({ state, intent: claim.value.intent, live: claim.value.live, alone: claim.value.alone });
  });

  const verdicts = await askAboutLiveTransfers(deps, withLive);
  const toWrite: (LiveVerdict & { state: RunState; intent: PaymentIntentRow; alone: boolean })[] = [];
  withLive.forEach(({ state, intent, live, alone }, j) => {
    const verdict = verdicts[j]!;
    const action = verdict.ok ? liveTransferAction(verdict.value, live.failure_reason, live.tx_payments) : null;
    if (!verdict.ok) state.step = { kind: 'failed', error: verdict.error };
    else if (action?.kind === 'resend') state.step = { kind: 'send', attemptId: live.id, send: { intent, transfer: signedOf(live), resend: true } };
    else if (action) toWrite.push({ state, intent, run: state.run, live, action, alone });
  });
  (await recordLiveVerdicts(deps, toWrite)).forEach((written, j) => {
    const { state, intent, live, alone } = toWrite[j]!;
    if (!written.ok) state.step = { kind: 'failed', error: written.error };
    // A transfer that can never land is over; when it was an on-chain batch, its successor goes alone.
    else if (written.value === 'sign') claimed.push({ state, intent, alone: alone || live.tx_payments > 1 });
    else state.step = written.value;
  });

  const prepared: (ToSign & { state: RunState })[] = [];
  (await prepareTransfers(deps, claimed)).forEach((outcome, j) => {
    const { state, intent } = claimed[j]!;
    if (!outcome.ok) state.step = { kind: 'failed', error: outcome.error };
    else if (outcome.value instanceof ChainError) state.step = { kind: 'unsigned', error: outcome.value };
    else prepared.push({ state, run: state.run, intent, prepared: outcome.value });
  });

  // Screened once more right before signing (screen.ts): a refused recipient fails its payment, nothing is signed. The
  // others of an on-chain batch that paid it start over in the next round, prepared without it.
  const screened: (Screened & { state: RunState })[] = [];
  const refusedTransactions = new Set<PreparedTransfer>();
  (await screenRecipients(deps, prepared.map((p) => p.intent))).forEach((verdict, j) => {
    const item = prepared[j]!;
    if (!verdict.hit) return;
    screened.push({ state: item.state, run: item.run, intent: item.intent, verdict });
    refusedTransactions.add(item.prepared);
  });
  const toSign = prepared.filter((p) => !refusedTransactions.has(p.prepared));
  (await failScreened(deps, screened)).forEach((failed, j) => {
    screened[j]!.state.step = failed.ok ? failed.value : { kind: 'failed', error: failed.error };
  });
  (await signTransfers(deps, toSign)).forEach((signed, j) => {
    const { state } = toSign[j]!;
    if (!signed.ok) state.step = { kind: 'failed', error: signed.error };
    else if (signed.value === CHANGED) state.step = CHANGED;
    else if (signed.value === HELD) state.step = { kind: 'done', why: 'the chain\u2019s signing is held; the job comes back later' };
    else {
      const { intent, attemptId, transfer } = signed.value;
      state.step = { kind: 'send', attemptId, send: { intent, transfer, resend: false } };
    }
  });
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
